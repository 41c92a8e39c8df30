"""The running example must keep telling the article's story; these numbers are quoted."""

import numpy as np
import pytest

import attention_lib as al
from attention_lib import toy

I, CAKE, IT, WAS = (toy.token_index(t) for t in ("I", "cake", "it", "was"))


def test_sentence_and_shapes():
    assert " ".join(toy.TOKENS) + "." == toy.SENTENCE
    assert toy.X.shape == (8, 4)
    for W in (toy.W_q, toy.W_k, toy.W_v):
        assert W.shape == (4, 4)
    Q, K, V = toy.projections()
    assert Q.shape == K.shape == V.shape == (8, 4)


def test_every_number_has_one_decimal():
    # The toy model is meant to be checked by hand.
    for M in (toy.X, toy.W_q, toy.W_k, toy.W_v):
        assert np.allclose(M, np.round(M, 1))


def test_article_scores_are_reproduced():
    S = toy.scores()
    assert S[CAKE, IT] == pytest.approx(1.3)  # "cake" and "it": strong
    assert S[CAKE, I] == pytest.approx(0.4)  # "cake" and "I": much weaker
    assert S[CAKE, CAKE] == pytest.approx(1.6)  # "cake" against itself: high
    assert np.diag(S).max() == pytest.approx(1.6)
    assert S[IT, CAKE] == pytest.approx(1.8)  # the pronoun finds its referent
    assert S.max() == pytest.approx(1.8)


def test_it_attends_most_to_cake_after_scaling_and_softmax():
    _, weights = toy.attention()
    assert weights[IT].argmax() == CAKE
    assert round(weights[IT, CAKE], 2) == 0.21
    assert toy.TOKENS[weights[IT].argmin()] == "was"
    assert weights[:, CAKE].argmax() == IT  # no other query gives "cake" as much


def test_scaled_scores_are_scores_over_two():
    assert np.allclose(toy.scaled_scores(), toy.scores() / 2)
    assert np.allclose(al.softmax(toy.scaled_scores()), toy.attention()[1])


def test_movie_blend_matches_the_analogy():
    assert toy.MOVIE_INTEREST.sum() == pytest.approx(1.0)
    mood = toy.MOVIE_INTEREST @ toy.MOVIE_CARDS
    assert np.allclose(mood, [6.9, 2.4, 137.0])


def test_token_index_names_the_tokens_on_a_typo():
    with pytest.raises(ValueError, match="'cakes' is not a token"):
        toy.token_index("cakes")


def test_shared_arrays_are_read_only():
    # A notebook cell must not be able to change the running example for later cells.
    for M in (toy.X, toy.W_q, toy.W_k, toy.W_v, toy.MOVIE_CARDS):
        with pytest.raises(ValueError, match="read-only"):
            M[0, 0] = 99.0

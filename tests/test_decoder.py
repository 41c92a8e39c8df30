"""Chapter 12's decoder: every backward against finite differences, the KV cache, bad input."""

import numpy as np
import pytest

from attention_lib import decoder as D
from attention_lib import decoder_backward as B
from attention_lib import multi_head_attention
from attention_lib.backward import numerical_gradient, relative_error
from attention_lib.layers import layer_norm
from attention_lib.toy import decoder as toy_decoder

H = 2


@pytest.fixture(scope="module")
def params():
    """A small model with every weight away from its start, so no gradient is trivially 0."""
    p = D.init_params(7, d_model=6, n_ctx=5, d_ff=5, seed=1)
    rng = np.random.default_rng(3)
    for name in D.NAMES:
        if name.startswith(("b_", "ln")):
            p[name] = p[name] + rng.normal(scale=0.3, size=p[name].shape)
    return p


@pytest.fixture(scope="module")
def batch():
    ids = np.array([[1, 2, 3, 1], [0, 6, 2, 2]])  # a repeated word, and every id at once
    targets = np.array([[2, 3, 1, 0], [6, 2, 2, 5]])
    weights = np.array([[1, 1, 1, 0], [1, 1, 0.5, 1.0]])  # padding, and a half weight
    return ids, targets, weights


def test_every_gradient_of_the_model_matches_finite_differences(params, batch):
    _, grads = B.loss_and_gradients(params, H, *batch)
    for name in D.NAMES:

        def loss(x, name=name):
            changed = dict(params, **{name: x})
            return D.cross_entropy(D.forward(changed, batch[0], H)[0], *batch[1:])

        error = relative_error(grads[name], numerical_gradient(loss, params[name]))
        assert error < 1e-7, (name, error)


def test_layer_norm_backward_on_a_batch_with_odd_width():
    rng = np.random.default_rng(0)
    x, gamma, beta = rng.normal(size=(2, 3, 5)), rng.normal(size=5), rng.normal(size=5)
    dy = rng.normal(size=(2, 3, 5))  # the loss sum(LN(x) * dy) has gradient dy at the output
    dx, dgamma, dbeta = B.layer_norm_backward(x, gamma, dy)
    for got, wrt, arg in ((dx, 0, x), (dgamma, 1, gamma), (dbeta, 2, beta)):

        def loss(v, wrt=wrt):
            args = [x, gamma, beta]
            args[wrt] = v
            return np.sum(layer_norm(*args, eps=D.EPS) * dy)

        assert relative_error(got, numerical_gradient(loss, arg)) < 1e-7


def test_feed_forward_embedding_and_cross_entropy_backward():
    rng = np.random.default_rng(1)
    x, dy = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    W_1, b_1, W_2, b_2 = rng.normal(size=(4, 7)), rng.normal(size=7), rng.normal(size=(7, 4)), 0
    got = B.feed_forward_backward(x, W_1, b_1, W_2, dy)
    args = [x, W_1, b_1, W_2]
    for i, g in enumerate(got[:4]):

        def loss(v, i=i):
            a = list(args)
            a[i] = v
            return np.sum(D.feed_forward(*a, b_2) * dy)

        assert relative_error(g, numerical_gradient(loss, args[i])) < 1e-7
    assert np.allclose(got[4], dy.sum(axis=0))
    ids = np.array([[0, 2, 2]])
    dX = rng.normal(size=(1, 3, 4))
    dE = B.embedding_backward(ids, dX, 4)
    assert np.allclose(dE[2], dX[0, 1] + dX[0, 2]) and not dE[[1, 3]].any()
    logits, targets = rng.normal(size=(2, 3, 5)), np.array([[0, 4, 1], [2, 2, 3]])
    numeric = numerical_gradient(lambda z: D.cross_entropy(z, targets), logits)
    assert relative_error(B.cross_entropy_backward(logits, targets), numeric) < 1e-7


def test_multi_head_attention_backward_with_a_batch_and_a_mask():
    rng = np.random.default_rng(2)
    X, dOut = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 3, 6))
    Ws = [rng.normal(size=(6, 6)) for _ in range(4)]
    mask = np.tril(np.ones((3, 3), bool))
    got = B.multi_head_attention_backward(X, *Ws, 3, dOut, mask)

    args = [X, *Ws]
    for i, g in enumerate(got):

        def loss(v, i=i):
            a = list(args)
            a[i] = v
            return np.sum(multi_head_attention(*a, 3, mask=mask)[0] * dOut)

        assert relative_error(g, numerical_gradient(loss, args[i])) < 1e-7


def test_kv_cache_logits_equal_the_full_masked_forward(params):
    ids = np.array([3, 1, 4, 1, 5])
    logits, _ = D.forward(params, ids, H)  # (5, 7)
    cache = None
    for t, token in enumerate(ids):
        step, cache, weights = D.kv_cache_step(params, H, token, cache)
        assert np.max(np.abs(step - logits[t])) < 1e-12
        assert cache.K.shape == (H, t + 1, 3) and weights.shape == (H, t + 1)
    with pytest.raises(ValueError, match="the model has 5 positions; position 5 is beyond"):
        D.kv_cache_step(params, H, 0, cache)


def test_generate_is_deterministic_by_seed_and_greedy_takes_the_top_word(params):
    one = D.generate(params, H, [1], 4, temperature=1.0, seed=3)
    assert one == D.generate(params, H, [1], 4, temperature=1.0, seed=3)
    greedy = D.generate(params, H, [1, 2], 3)
    logits, _ = D.forward(params, np.array(greedy[:-1]), H)
    assert greedy[-1] == int(np.argmax(logits[-1])) and len(greedy) == 5


def test_sample_is_inverse_cdf_and_temperature_sharpens():
    logits = np.array([2.0, 1.0, 0.0])
    p = D.softmax(logits)
    assert D.sample(logits, 1.0, 0.0) == 0 and D.sample(logits, 1.0, p[0] + 1e-9) == 1
    assert D.sample(logits, 1.0, 0.999999) == 2
    assert D.sample(logits, 0.01, 0.99) == 0  # T -> 0 is greedy


def test_bad_input_gives_clear_errors(params):
    with pytest.raises(TypeError, match="ids must be a non-empty array of whole numbers"):
        D.forward(params, np.array([0.5, 1.0]), H)
    with pytest.raises(ValueError, match="token id 9 is not in the vocabulary of 7 words"):
        D.forward(params, np.array([1, 9]), H)
    with pytest.raises(ValueError, match="the model has 5 positions, but ids has shape"):
        D.forward(params, np.arange(6), H)
    with pytest.raises(ValueError, match="h = 4 heads must divide d_model = 6"):
        D.forward(params, np.array([1, 2]), 4)
    with pytest.raises(ValueError, match=r"targets need shape \(2,\), but they have shape"):
        D.cross_entropy(np.zeros((2, 3)), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="temperature must be a positive"):
        D.sample(np.zeros(3), 0.0, 0.5)
    with pytest.raises(ValueError, match="'pizzza' is not in the corpus's vocabulary"):
        toy_decoder.encode("I ate the pizzza")
    with pytest.raises(ValueError, match="vocab_size must be at least 1"):
        D.init_params(0)


def test_init_is_deterministic_by_seed():
    a, b = D.init_params(5, 4, 3, 6, seed=7), D.init_params(5, 4, 3, 6, seed=7)
    assert all(np.array_equal(a[k], b[k]) for k in D.NAMES)
    assert D.n_params(a) == 5 * 4 + 3 * 4 + 4 * 16 + 6 * 4 + 4 * 6 + 6 + 4 + 4 * 5 + 5 + 6 * 4


def test_the_corpus_split_and_baselines():
    train, test = toy_decoder.split()
    assert len(train.ids) + len(test.ids) == len(toy_decoder.SENTENCES) == 6000
    assert len(set(toy_decoder.SENTENCES)) == 6000  # no sentence twice, so none leaks
    assert " ".join(toy_decoder.EXAMPLE) + " delicious ." not in toy_decoder.SENTENCES
    assert (train.ids[:, 0] == toy_decoder.INDEX["<s>"]).all()
    assert np.array_equal(train.ids[:, 1:], train.targets[:, :-1])
    base = toy_decoder.baselines(train, test)
    assert base["bigram"] < base["unigram"] < np.log(len(toy_decoder.VOCAB))


def test_split_takes_other_texts_and_holds_them_out_the_same_way():
    kept = [s for s in toy_decoder.SENTENCES if "delicious" not in s.split()]
    train, test = toy_decoder.split(100, seed=1, texts=kept)
    assert (len(train.ids), len(test.ids)) == (len(kept) - 100, 100)
    assert not (train.targets == toy_decoder.INDEX["delicious"]).any()
    _, again = toy_decoder.split(100, seed=1, texts=kept)
    assert np.array_equal(again.ids, test.ids)


def test_adam_moves_each_weight_by_about_the_learning_rate():
    params, state = {"W": np.zeros(3)}, {}
    toy_decoder.adam_step(params, {"W": np.array([1e-3, -5.0, 0.0])}, state, 0.1, 1)
    assert np.allclose(params["W"], [-0.1, 0.1, 0.0], atol=1e-6)


def test_train_without_adam_takes_plain_gradient_steps():
    train, test = toy_decoder.split(100, seed=1, texts=toy_decoder.SENTENCES[:300])
    run = toy_decoder.train(train, test, steps=1, lr=0.5, seed=3, every=1, adam=False)
    start = D.init_params(len(toy_decoder.VOCAB), 32, toy_decoder.N_CTX, 64, seed=3)
    rows = np.random.default_rng(3).choice(len(train.ids), size=32, replace=False)
    _, grads = B.loss_and_gradients(start, toy_decoder.HEADS, *(a[rows] for a in train))
    assert all(np.allclose(run.params[k], start[k] - 0.5 * grads[k]) for k in start)


def test_the_corpus_script_reproduces_the_committed_file():
    import subprocess
    import sys
    from pathlib import Path

    tool = Path(__file__).resolve().parents[1] / "tools" / "authoring" / "make_corpus.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_every_sentence_of_the_corpus_is_grammatical():
    """Scan all of food.txt for the slips a template can make: "a apple", "a fries",
    "some cake" where a count noun needs "a", "the fries was", a doubled word, ..."""
    import re
    from itertools import pairwise

    from attention_lib.toy import corpus_rules as mc

    foods = {f for foods, _ in mc.KINDS.values() for f in foods.split()}
    count = foods - mc.MASS - mc.PLURAL  # singular and countable: needs "a", "the", ...
    assert mc.MASS | mc.PLURAL <= foods and not mc.MASS & mc.PLURAL
    two_eaters = re.compile(rf"\b({'|'.join(mc.EAT)}) the ")  # "X ate the A and Y ate the B"
    slips = []
    for s in toy_decoder.SENTENCES:
        w = s.split()
        pairs = list(pairwise(w))
        named = [(i, x) for i, x in enumerate(w) if x in foods]
        found = [
            any(a == b for a, b in pairs) and "a word twice in a row",
            any(a == "a" and b[0] in "aeiou" for a, b in pairs) and '"a" before a vowel',
            any(a == "an" and b[0] not in "aeiou" for a, b in pairs) and '"an" before a consonant',
            any(w[i - 1] in ("a", "an") for i, x in named if x not in count)
            and '"a" + mass/plural',
            any(w[i - 1] == "some" for i, x in named if x in count) and '"some" + a count noun',
            any(w[i - 1] not in ("the", "a", "an", "this", "of") for i, x in named if x in count)
            and "a count noun without an article",
            bool(re.match(r"(he|she) like |(I|we|they) likes ", s)) and "like/likes",
            bool(re.search(r"\b(sunday|friday|saturday)\b", s)) and "a day in lower case",
            not re.fullmatch(r"[^ ]+( [^ ]+)* \.", s) and "spacing or the final '.'",
        ]
        if named and "both" not in w:  # one food: what follows must agree with it
            i, first = named[0]
            plural, rest = first in mc.PLURAL, " ".join(w[i + 1 :])
            if not two_eaters.search(rest):
                wrong = r"\b(was|is|it)\b" if plural else r"\b(were|are|they)\b"
                found.append(bool(re.search(wrong, rest)) and "verb or pronoun disagrees")
                found.append(w[i - 1] == ("this" if plural else "these") and "this/these")
        slips += [f"{why}: {s}" for why in found if why]
    assert not slips, "\n".join(slips[:20])


def test_head_outputs_add_up_to_the_attention_sublayer_and_rebuild_forward(params):
    ids = np.array([[1, 4, 2, 3, 5], [2, 2, 6, 1, 0]])
    outputs = D.head_outputs(params, ids, 2)  # (2, h, 5, d_model)
    assert outputs.shape == (2, 2, 5, params["E"].shape[1])
    logits, _ = D.forward(params, ids, 2)
    assert np.allclose(D.forward_with_heads(params, ids, outputs), logits, atol=1e-12)
    assert np.allclose(D.last_logits(params, ids, 2), logits[:, -1], atol=1e-12)
    changed = outputs.copy()
    changed[:, 1] = 0  # one head silenced: the logits move
    assert not np.allclose(D.forward_with_heads(params, ids, changed), logits)
    with pytest.raises(ValueError, match=r"outputs must have shape \(\.\.\., h, n, d_model\)"):
        D.forward_with_heads(params, ids, outputs[:, :, :4])


def test_mean_ablation_replaces_a_head_by_its_average_over_reference_sentences():
    food = toy_decoder
    params = D.init_params(len(food.VOCAB), food.D_MODEL, food.N_CTX, food.D_FF)
    reference = toy_decoder.batch(["the cake was sweet .", "I ate the pie .", "it was sour ."])
    words = "I ate the cake".split()
    p = toy_decoder.mean_ablated(params, words, [], reference)  # nothing replaced
    assert np.allclose(p, toy_decoder.next_word_probabilities(params, words))
    ids = toy_decoder.encode(["<s>", *words])
    real = reference.ids[:, : len(ids)] != 0  # (3, 5): "it was sour ." has 4 + <s>
    by_hand = D.head_outputs(params, ids, toy_decoder.HEADS)
    ref = D.head_outputs(params, reference.ids[:, : len(ids)], toy_decoder.HEADS)
    by_hand[1] = (ref[:, 1] * real[..., None]).sum(0) / real.sum(0)[:, None]  # head 2
    expected = D.softmax(D.forward_with_heads(params, ids, by_hand)[-1])
    assert np.allclose(toy_decoder.mean_ablated(params, words, [2], reference), expected)
    assert not np.allclose(expected, p)
    with pytest.raises(ValueError, match="heads are counted from 1 to 4, got 0"):
        toy_decoder.mean_ablated(params, words, [0], reference)

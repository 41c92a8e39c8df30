"""Chapter 3: the score checkers are tested both ways, and its figures carry labels and alt text."""

import contextlib
import pathlib
import zlib

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pytest
from chapter_text import main_and_folded, prose_lines
from matplotlib.text import Text

import attention_lib as al
from attention_lib import toy
from attention_lib.checks import (
    check_scores,
    check_scores_that_change,
    unseen,  # noqa: F401  (registers the unseen cases)
)
from attention_lib.checks.base import UNSEEN, grading_seed
from attention_lib.plotting import dot_product_arrows, heatmap, score_bars, score_heatmap
from attention_lib.plotting.base import FIGURE_DPI, smallest_text_px


def swap(K):
    return np.swapaxes(K, -1, -2)


def good_scores(Q, K):
    return Q @ swap(K)


def loop_scores(Q, K):
    # A plain double loop (2-D only): correct, but it fails the batch case.
    return np.array([[q @ k for k in K] for q in Q])


def one_line(capsys, tag, status):
    line = capsys.readouterr().out
    assert line.startswith(f"[{tag}] {status}: ")
    assert line.count("\n") == 1
    return line


# --- check_scores ------------------------------------------------------------------------


def test_reference_scores_pass(capsys):
    result = check_scores(good_scores)
    assert result and result.status == "PASS"
    assert one_line(capsys, "scores", "PASS") == "[scores] PASS: all 6 cases match the reference.\n"


def test_float32_scores_pass_but_float16_ones_are_named(capsys):
    # float32 keeps about 7 digits, within the tolerance; float16 keeps about 3.
    assert check_scores(lambda Q, K: good_scores(Q, K).astype(np.float32))
    one_line(capsys, "scores", "PASS")
    assert not check_scores(lambda Q, K: good_scores(Q, K).astype(np.float16))
    assert "float16" in one_line(capsys, "scores", "FAIL")


def test_einsum_with_ellipsis_passes(capsys):
    assert check_scores(lambda Q, K: np.einsum("...id,...jd->...ij", Q, K))
    one_line(capsys, "scores", "PASS")


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda Q, K: K @ swap(Q), "you computed K Qᵀ"),
        (lambda Q, K: Q @ K, "Q @ K does not line up. Swap the last two axes of K first"),
        (lambda Q, K: swap(Q) @ K, "you computed Qᵀ K, a d_k x d_k matrix"),
        (lambda Q, K: Q * K, "you multiplied elementwise (Q * K)"),
        (lambda Q, K: (Q * K).sum(axis=-1), "query i against key i only (the diagonal)"),
        (
            lambda Q, K: (Q[..., :, None, :] * K[..., None, :, :]).sum(axis=-3),
            "you summed over the queries instead of over d_k",
        ),
        (
            lambda Q, K: (Q[..., :, None, :] * K[..., None, :, :]).sum(axis=-2),
            "you summed over the keys instead of over d_k",
        ),
        (lambda Q, K: good_scores(Q, K) / np.sqrt(Q.shape[-1]), "that is chapter 4's step"),
        (
            lambda Q, K: (
                np.exp(good_scores(Q, K)) / np.exp(good_scores(Q, K)).sum(-1, keepdims=True)
            ),
            "you applied softmax",
        ),
        (lambda Q, K: Q @ K.T, "K.T reverses every axis of K (2, 5, 4)"),
        (lambda Q, K: (K @ swap(Q)).T, "returned shape (3, 5, 2), expected (2, 3, 5)"),
        (lambda Q, K: (K @ swap(Q)).T, ".T reverses every axis, so on a batch"),
        (loop_scores, "each sentence needs its own grid of scores, shape (2, 3, 5)"),
        (lambda Q, K: K @ swap(K), "you compared the keys with each other, K Kᵀ"),
        (lambda Q, K: Q @ swap(Q), "you compared the queries with each other, Q Qᵀ"),
        (lambda Q, K: np.zeros(Q.shape[:-1] + K.shape[-2:-1]), "every score is 0"),
        (lambda Q, K: np.full(Q.shape[:-1] + K.shape[-2:-1], 2.5), "every score is 2.5"),
        (lambda Q, K: np.einsum("id,jd->ij", Q, K), "start each subscript with '...'"),
        (lambda Q, K: Q @ K.transpose(0, 2, 1), "K.transpose takes a full permutation"),
        # PyTorch's transpose(d0, d1) habit: NumPy reads (-1, -2) as a permutation of two axes.
        (lambda Q, K: Q @ K.transpose(-1, -2), "(PyTorch's transpose(d0, d1) swaps two)"),
        # Axes counted from the front: fine on a batch, an AxisError on one sentence.
        (lambda Q, K: Q @ K.swapaxes(1, 2), "Count from the end: np.swapaxes(K, -1, -2)"),
        (lambda Q, K: Q @ np.swapaxes(K, 1, 2), "axes 1 and 2 exist in a batch, not in one"),
        (lambda Q, K: Q @ (K.transpose(0, 2, 1) if K.ndim == 3 else K.T), "not with two"),
        (lambda Q, K: np.einsum("bid,bjd->bij", Q, K), "einsum subscripts do not fit"),
        (lambda Q, K: np.dot(Q, swap(K)), "np.dot pairs every sentence of the batch with"),
        # Review 03qq: squeeze is right on every batch but one of a single sentence.
        (lambda Q, K: np.squeeze(Q @ swap(K)), "squeeze drops the batch axis when the batch"),
        (lambda Q, K: (Q @ swap(K)).squeeze(), "returned shape (3, 5), expected (1, 3, 5)"),
        (lambda Q, K: np.inner(Q, K), "np.inner pairs every sentence"),
        (lambda Q, K: np.tensordot(Q, K, axes=([-1], [-1])), "np.tensordot pairs every"),
        (lambda Q, K: good_scores(Q, K)[..., :-1], "one column per key"),
        (lambda Q, K: good_scores(Q, K) + 0.1, "values differ from the reference"),
        (lambda Q, K: good_scores(Q, K).astype(int), "your scores are integers"),
        (lambda Q, K: good_scores(Q, K).astype(np.int32), "drop the integer cast"),
        (lambda Q, K: good_scores(Q, K).astype(np.float16), "your scores were cast to float16"),
        (lambda Q, K: np.float16(Q) @ np.float16(swap(K)), "a low-precision dtype"),
        (
            lambda Q, K: Q @ K.reshape(K.shape[:-2] + (K.shape[-1], K.shape[-2])),
            "K.reshape gave K the shape of its transpose, but not its numbers",
        ),
        (
            lambda Q, K: (
                good_scores(Q, K)
                / np.linalg.norm(Q, axis=-1)[..., :, None]
                / np.linalg.norm(K, axis=-1)[..., None, :]
            ),
            "that is cosine similarity",
        ),
        (
            lambda Q, K: (Q[..., :, None, :] * K[..., None, :, :]).mean(-1),
            "a dot product sums; you divided by d_k",
        ),
    ],
)
def test_each_scores_mistake_gets_its_own_hint(fn, hint, capsys):
    result = check_scores(fn)
    line = one_line(capsys, "scores", "FAIL")
    assert not result and result.status == "FAIL"
    assert hint in line
    assert "keepdims" not in line  # the softmax hint of the base machinery never leaks in


def test_the_batch_hint_names_k_t_only_when_the_answer_uses_it(capsys):
    def listed(Q, K):  # a loop that returns a Python list: never touches K.T
        return [[float(q @ k) for k in K] for q in Q]

    for fn in (loop_scores, listed):
        line = one_line_after(check_scores, fn, capsys)
        assert "works for one sentence but not for a batch" in line
        assert "K.T" not in line and "np.swapaxes(K, -1, -2)" in line
    line = one_line_after(check_scores, lambda Q, K: Q @ K.T, capsys)
    assert "(K.T reverses every axis of K (2, 5, 4))" in line


def test_no_hint_suggests_k_t_the_batch_trap(capsys):
    # The chapter warns that .T reverses every axis: a hint must not send the learner there.
    for fn in (
        lambda Q, K: Q @ K,
        lambda Q, K: K @ swap(Q),
        lambda Q, K: Q * K,
        lambda Q, K: (Q * K).sum(axis=-1),
        lambda Q, K: K @ swap(K),
        lambda Q, K: Q @ swap(Q),
    ):
        line = one_line_after(check_scores, fn, capsys)
        assert "[scores] FAIL" in line and "np.swapaxes(K, -1, -2)" in line
        assert "K.T" not in line


def test_the_library_s_attention_scores_is_ruled_out_however_it_is_reached(capsys):
    scores_alias = al.attention_scores

    def helper(Q, K):
        return al.attention_scores(Q, K)

    for fn in (
        al.attention_scores,
        lambda Q, K: al.attention_scores(Q, K),
        lambda Q, K: scores_alias(Q, K),
        lambda Q, K: helper(Q, K),
    ):
        line = one_line_after(check_scores, fn, capsys)
        assert "calls al.attention_scores, which this exercise rules out" in line


def attention_scores(Q, K):  # the learner's own function may carry the library's name
    return Q @ swap(K)


def test_a_learner_s_own_attention_scores_passes(capsys):
    assert check_scores(lambda Q, K: attention_scores(Q, K))
    one_line(capsys, "scores", "PASS")


def test_the_two_batch_axes_hint_names_only_what_the_answer_used(capsys):
    def loop_first_axis(Q, K):  # one sentence at a time: right for one batch axis only
        if Q.ndim == 2:
            return Q @ np.swapaxes(K, 0, 1)
        return np.stack([q @ np.swapaxes(k, 0, 1) for q, k in zip(Q, K, strict=True)])

    line = one_line_after(check_scores, loop_first_axis, capsys)
    assert "works with one batch axis but not with two. np.swapaxes(K, -1, -2)" in line
    assert "K.T" not in line and "K.transpose" not in line
    transposed = lambda Q, K: Q @ (K.transpose(0, 2, 1) if K.ndim == 3 else K.T)  # noqa: E731
    line = one_line_after(check_scores, transposed, capsys)
    assert "K.T reverses every axis and K.transpose(0, 2, 1) fits exactly three" in line


def one_line_after(checker, fn, capsys):
    assert not checker(fn)
    return capsys.readouterr().out


def test_a_constant_boolean_answer_is_named_as_booleans(capsys):
    line = one_line_after(
        check_scores, lambda Q, K: np.ones(Q.shape[:-1] + K.shape[-2:-1]) > 0, capsys
    )
    assert "True/False" in line and "every score is" not in line


def test_scores_stub_and_crash(capsys):
    assert check_scores(lambda Q, K: None).status == "TODO"
    assert "returned None" in one_line(capsys, "scores", "TODO")
    assert not check_scores(lambda Q, K: 1 / 0)
    line = one_line(capsys, "scores", "FAIL")
    assert "raised ZeroDivisionError: division by zero" in line
    assert "Transpose K" not in line  # not a shape error, so no shape hint
    assert not check_scores(lambda: 0)  # wrong signature: still one friendly line
    assert "raised TypeError" in one_line(capsys, "scores", "FAIL")


def test_a_printed_answer_is_named_and_a_print_beside_return_passes(capsys):
    result = check_scores(lambda Q, K: print(good_scores(Q, K)))
    out = capsys.readouterr().out
    assert result.status == "FAIL" and "you printed instead of returning" in result.message
    assert out.endswith(result.line + "\n") and "[[" in out  # the learner's print still shows
    assert check_scores(lambda Q, K: print("debug") or good_scores(Q, K))
    assert "debug" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("places", "named"),
    [(0, "whole numbers"), (1, "1 decimal "), (2, "2 decimals"), (4, "4 decimals")],
)
def test_rounded_scores_are_named_even_where_the_inputs_have_one_decimal(places, named, capsys):
    # Review 03rr: the first five cases have inputs of one decimal, so np.round(Q @ K.T, 2)
    # was exact there and passed; the sixth case has many decimals.
    assert not check_scores(lambda Q, K: np.round(good_scores(Q, K), places))
    line = one_line(capsys, "scores", "FAIL")
    assert f"your scores are rounded to {named}" in line and "Drop the np.round" in line
    if places == 2:
        assert "(on Q and K of shape (3, 4), with many decimals)" in line


# --- check_scores_that_change -----------------------------------------------------------


def rows_of(X, f):
    return np.repeat((X[:, f] != 0)[:, None], len(X), axis=1)  # (n, n): whole rows


def by_experiment(X, f):
    # Try it: nudge row f of random W_q and see which scores move. Also right.
    rng = np.random.default_rng(0)
    W_q, W_k = rng.normal(size=(2, X.shape[1], 3))
    W_q2 = W_q.copy()
    W_q2[f] += rng.normal(size=3)
    return ~np.isclose((X @ W_q2) @ (X @ W_k).T, (X @ W_q) @ (X @ W_k).T)


def by_toy_experiment(X, f):
    # Try it with the toy's own weights: fine on 4 features, a crash on 3.
    W_q2 = toy.W_q.copy()
    W_q2[f] += 0.5
    return ~np.isclose((X @ W_q2) @ (X @ toy.W_k).T, (X @ toy.W_q) @ (X @ toy.W_k).T)


def by_toy_queries(X, f):
    # Column f of the toy's queries instead of column f of X: wrong on the 8 x 4 case.
    return np.repeat(((X @ toy.W_q)[:, f] != 0)[:, None], len(X), axis=1)


def hard_coded_toy(X, f):
    # The toy sentence typed in, not the X it was given: right on the 8 x 4 cases only.
    return rows_of(toy.X, f)


def test_reference_scores_that_change_pass(capsys):
    for fn in (rows_of, by_experiment):
        assert check_scores_that_change(fn)
        assert one_line(capsys, "scores-that-change", "PASS") == (
            "[scores-that-change] PASS: all 6 cases match the reference.\n"
        )
    assert check_scores_that_change(lambda features, which: rows_of(features, which))
    capsys.readouterr()


@pytest.mark.parametrize("seed", [7, *range(20, 40)])
def test_unseen_cases_have_no_all_zero_token_and_match_an_experiment(seed, capsys):
    # An all-zero token has key 0 for any W_k, so its column can never move; with such a
    # token (seed 7 used to draw two) "whole rows" would mark scores that are fixed.
    rng = np.random.default_rng([seed, zlib.crc32(b"scores-that-change")])
    for _, (X, _f), _judge in UNSEEN["scores-that-change"](rng):
        assert X.any(axis=1).all(), X
    with grading_seed(seed):
        assert check_scores_that_change(by_experiment)
        assert check_scores_that_change(rows_of)
    assert "all 8 cases match" in capsys.readouterr().out


def test_the_toy_pointer_row_moves_the_rows_of_the_pointer_words():
    Q, K, _ = toy.projections()
    pointer = toy.FEATURES.index("pointer")
    W_q2 = toy.W_q.copy()
    W_q2[pointer] += 0.5
    moved = ~np.isclose((toy.X @ W_q2) @ K.T, Q @ K.T)
    assert np.array_equal(moved, rows_of(toy.X, pointer))
    assert [toy.TOKENS[i] for i in np.flatnonzero(moved.any(-1))] == ["the", "and", "it", "was"]


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda X, f: rows_of(X, f).T, "those are columns"),
        (lambda X, f: rows_of(X, f) | rows_of(X, f).T, "rows and columns"),
        (lambda X, f: rows_of(X, f) & rows_of(X, f).T, "only where both words have"),
        (lambda X, f: rows_of(X, f) & np.eye(len(X), dtype=bool), "only the diagonal"),
        (lambda X, f: np.repeat((X[:, f] > 0)[:, None], len(X), 1), "a negative feature"),
        (lambda X, f: np.ones((len(X), len(X)), dtype=bool), "every score?"),
        (lambda X, f: np.zeros((len(X), len(X)), dtype=bool), "X stays as it is"),
        (lambda X, f: rows_of(X, f).astype(int), "returned numbers (dtype kind 'i')"),
        (lambda X, f: np.repeat(X[:, [f]], len(X), 1), "expected a boolean array"),
        (lambda X, f: np.repeat((np.abs(X[:, f]) >= 0.5)[:, None], len(X), 1), "however small"),
        (lambda X, f: ~rows_of(X, f), "the other way round"),
        (lambda X, f: np.eye(len(X), dtype=bool)[[f] * len(X)].T, "the row of token number f"),
        (lambda X, f: X[:, f] != 0, "returned shape (8,), expected (8, 8)"),
        (lambda X, f: np.repeat((X[f] != 0)[:, None], len(X), 1), "comes from X[3], a row"),
        (lambda X, f: np.tile(X[f] != 0, (len(X), 1)), "test X[:, feature] != 0"),
        (lambda X, f: X[f] != 0, "the 4 features of token 3"),
        (lambda X, f: rows_of(X, f)[:, :-1], "One True/False per score"),
        (lambda X, f: rows_of(X, (f + 1) % X.shape[1]), "feature 0, not 3: off by one"),
        (lambda X, f: rows_of(X, f - 1), "rows of the tokens with feature 2, not 3: off by one"),
        (lambda X, f: rows_of(X, min(f + 1, X.shape[1] - 1)), "feature 2, not 1: off by one"),
        (by_toy_experiment, "Work from the arguments: here X has shape (4, 3)"),
        (hard_coded_toy, "returned shape (8, 8), expected (4, 4) (on X of shape (4, 3)"),
        (hard_coded_toy, "Work from the arguments: here X has shape (4, 3)"),
        (
            lambda X, f: np.repeat((X[:, f] != 0)[:, None], 8, axis=1),
            "returned shape (4, 8), expected (4, 4) (on X of shape (4, 3), feature 0, one "
            "token with only 0.01). Work from the arguments",
        ),
        (by_toy_queries, "your function reads W_q or W_k, and its mask is wrong"),
        (lambda X, f: rows_of(toy.X, 3), "does not change with X or feature (on 8 tokens"),
        (lambda X, f: rows_of(X, 3), "does not change with feature (on 8 tokens"),
        (  # review 03rr: any feature at all, not the one named; named before "every score?"
            lambda X, f: np.repeat((X != 0).any(axis=1)[:, None], len(X), axis=1),
            "does not change with feature (on 8 tokens like the toy sentence, row 3 of W_q): "
            "it marks every token with any non-zero feature. Only row `feature`",
        ),
    ],
)
def test_each_scores_that_change_mistake_gets_its_own_hint(fn, hint, capsys):
    result = check_scores_that_change(fn)
    line = one_line(capsys, "scores-that-change", "FAIL")
    assert not result
    assert hint in line


@pytest.mark.parametrize("t", [0.01, 0.05, 0.1, 0.19])
def test_a_thresholded_mask_fails_on_a_trace_of_the_feature(t, capsys):
    # |X[:, f]| > t instead of != 0: the other cases have no entry below 0.2, so a small
    # threshold passed them all; the 0.01 case catches any t of 0.01 or more, graded too.
    def thresholded(X, f):
        return np.repeat((np.abs(X[:, f]) > t)[:, None], len(X), axis=1)

    for seed in (None, 0, 1, 2):
        with grading_seed(seed) if seed is not None else contextlib.nullcontext():
            assert not check_scores_that_change(thresholded)
        line = one_line(capsys, "scores-that-change", "FAIL")
        assert "only 0.01" in line and "X[0, 0] = 0.01" in line
        assert "Any non-zero feature counts, however small" in line


def test_an_all_ones_nudge_is_told_the_score_it_missed(capsys):
    # W_q = W_k = I, a whole row of W_q nudged by 0.5: score (i, j) moves by 0.5 X[i, f]
    # times the sum of x_j, so the key of a token whose features sum to 0 looks fixed.
    def by_all_ones_nudge(X, f):
        W_q2 = np.eye(X.shape[1])
        W_q2[f] += 0.5
        return ~np.isclose(X @ W_q2 @ X.T, X @ X.T)

    assert not check_scores_that_change(by_all_ones_nudge)
    line = one_line(capsys, "scores-that-change", "FAIL")
    assert "score (1, 3) can change too" in line and "at right angles to key 3" in line


def test_a_positive_threshold_is_told_about_the_threshold_first(capsys):
    # X[:, f] > 0.05 slips twice (the sign and the size); the 0.01 case comes first.
    assert not check_scores_that_change(
        lambda X, f: np.repeat((X[:, f] > 0.05)[:, None], len(X), axis=1)
    )
    line = one_line(capsys, "scores-that-change", "FAIL")
    assert "Any non-zero feature counts, however small" in line and "negative" not in line


def test_the_identity_nudge_experiment_is_told_its_nudge_missed_some_keys(capsys):
    # W_q = W_k = I with entry (f, f) nudged moves only the block where both words have
    # feature f: a correct experiment, a wrong general answer. The hint must say why,
    # not claim that whole rows always move.
    def by_identity_nudge(X, f):
        W_q2 = np.eye(X.shape[1])
        W_q2[f, f] += 0.5
        return ~np.isclose(X @ W_q2 @ X.T, X @ X.T)

    pointer = toy.FEATURES.index("pointer")
    moved = by_identity_nudge(toy.X, pointer)
    assert moved.any(axis=1).sum() == 4 and not moved.all(axis=1).any()  # a 4 x 4 block
    assert not check_scores_that_change(by_identity_nudge)
    line = one_line(capsys, "scores-that-change", "FAIL")
    assert "every score in its row can change" in line and "at right angles" in line
    assert "whole row moves" not in line


def test_no_scores_that_change_hint_says_a_whole_row_always_moves(capsys):
    for fn in (
        lambda X, f: rows_of(X, f) & np.eye(len(X), dtype=bool),
        lambda X, f: np.zeros((len(X), len(X)), dtype=bool),
    ):
        assert not check_scores_that_change(fn)
        line = one_line(capsys, "scores-that-change", "FAIL")
        assert "can change" in line and "every key differently" not in line


def test_a_feature_nobody_has_changes_nothing(capsys):
    # On that case "columns" and "rows" agree (all False), so no hint may fire wrongly.
    def right_only_there(X, f):
        return rows_of(X, f) if not (X[:, f] != 0).any() else rows_of(X, f)

    assert check_scores_that_change(right_only_there)
    assert check_scores_that_change(lambda X, f: None).status == "TODO"
    capsys.readouterr()


# --- figures -----------------------------------------------------------------------------


def test_score_bars_label_the_keys_and_the_axis():
    scores = toy.scores()
    fig, alt = score_bars(scores[3], toy.TOKENS, title="row of cake", ylim=(0, 2))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(toy.TOKENS)
    assert ax.get_ylabel() == "score q · k"
    assert ax.get_ylim() == (0, 2)
    assert alt == "Bar chart: row of cake. Largest 'cake' (1.60), smallest 'was' (0.24)."
    plt.close(fig)
    with pytest.raises(ValueError, match="outside ylim"):
        score_bars(scores[3], toy.TOKENS, title="x", ylim=(0, 1))


def test_score_bars_name_the_highlighted_bar_in_a_legend_and_the_alt_text():
    fig, alt = score_bars(
        toy.scores()[5], toy.TOKENS, title="row of it", ylim=(0, 2), top_label="largest score"
    )
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["largest score"]
    assert alt.endswith("The highlighted bar is the largest score.")
    plt.close(fig)


def test_a_short_key_along_the_query_is_labelled_clear_of_the_query_arrowhead():
    keys = [[1.5, 1.5], [0.5, 0.5], [1, -1], [-1, -1]]
    fig, _ = dot_product_arrows([1, 1], keys, ["long", "short", "side", "apart"], title="t")
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("coordinate 1", "coordinate 2")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = {t.get_text().split("\n")[0]: t.get_window_extent(renderer) for t in ax.texts}
    # In data coordinates: the label of the short key lies wholly below the query's line
    # y = x (its top-left corner too), so the broad query arrow cannot cover it.
    (x0, y0), (x1, y1) = ax.transData.inverted().transform(box["short"].get_points())
    assert y1 < x0 - 0.1
    (x0, y0), _ = ax.transData.inverted().transform(box["long"].get_points())
    assert (x0, y0) >= (1.5, 1.5)  # the other keys: beside the tip, as before
    plt.close(fig)


def test_keys_beside_the_query_are_labelled_at_their_tips_away_from_it():
    keys = [[1.2, 1.8], [0.6, 0.4], [1, -1], [-1, -1]]  # 1.5x and 0.5x, turned off q
    fig, _ = dot_product_arrows([1, 1], keys, ["long", "short", "side", "apart"], title="t")
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    to_data = ax.transData.inverted().transform
    box = {t.get_text().split("\n")[0]: t.get_window_extent(renderer) for t in ax.texts}
    (x0, y0), (x1, y1) = to_data(box["short"].get_points())
    assert y1 < x0  # wholly below the query's line y = x, clear of the query arrow
    assert abs(x0 - 0.6) < 0.2 and abs(y1 - 0.4) < 0.2  # its corner at the tip (0.6, 0.4)
    (x0, y0), _ = to_data(box["long"].get_points())
    assert y0 > x0 and abs(x0 - 1.2) < 0.2 and abs(y0 - 1.8) < 0.2  # above, at its tip
    (x0, y0), (x1, y1) = to_data(box["query q"].get_points())
    assert x0 > 1 and y1 < 1.0 + 0.1  # right of and below the query's tip (1, 1)
    plt.close(fig)


def test_a_short_key_along_a_longer_key_is_labelled_beside_it_away_from_the_query():
    keys = [[1.2, 1.8], [0.4, 0.6], [1, -1], [-1, -1]]  # one ray: the short key a third
    fig, _ = dot_product_arrows([1, 1], keys, ["long", "short", "side", "apart"], title="t")
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = {t.get_text().split("\n")[0]: t for t in ax.texts}
    # The text alone (an Annotation's own extent includes its leader line).
    box = {name: Text.get_window_extent(t, renderer) for name, t in texts.items()}
    (x0, y0), (x1, y1) = ax.transData.inverted().transform(box["short"].get_points())
    assert x1 < 0 and y0 > 0.6  # up and to the left of its tip (0.4, 0.6), off the y-axis
    assert y0 > 1.5 * x1  # wholly on the far side of the keys' line y = 1.5 x from q
    assert not box["short"].overlaps(box["query q"])
    leader = texts["short"].arrow_patch  # a thin line from the label to the tip
    assert leader is not None and leader.get_linewidth() < 1
    # review 03_z: drawn from the origin, thick over thin, in its own colour, outlined.
    long_key, short_key = ax.get_lines()[1:3]
    assert short_key.get_color() != long_key.get_color()
    assert short_key.get_path_effects() and not long_key.get_path_effects()
    plt.close(fig)


def test_dot_product_arrows_label_every_key_with_its_score():
    fig, alt = dot_product_arrows(
        [1, 1], [[1.5, 1.5], [1, -1], [-1, -1]], ["same", "side", "apart"], title="t"
    )
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "same\nq·k = 3.00" in texts and "apart\nq·k = -2.00" in texts
    assert "'side' (1, -1): 0.00" in alt and alt.startswith("Arrows: t. Query q = (1, 1)")
    plt.close(fig)


@pytest.mark.parametrize(
    ("query", "keys", "labels", "match"),
    [
        ([1, 1, 1], [[1, 0]], ["a"], r"query has shape \(3,\)"),
        ([1, 1], [1, 0], ["a"], r"keys have shape \(2,\)"),
        ([1, 1], [[1, 0], [0, 1]], ["a"], "one label per key"),
        ([1, 1], [[1, 0]] * 5, list("abcde"), "at most 4 keys"),
    ],
)
def test_dot_product_arrows_reject_bad_input(query, keys, labels, match):
    with pytest.raises(ValueError, match=match):
        dot_product_arrows(query, keys, labels, title="t")


def test_keys_are_arrows_from_the_origin_and_arrows_on_one_line_differ_in_width():
    keys = [[1.5, 1.5], [0.5, 0.5], [1, -1], [-1, -1]]
    fig, _ = dot_product_arrows([1, 1], keys, list("abcd"), title="t")
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if line.get_color() != "grey"]
    lines = [line for line in lines if line.get_gid() != "right angle"]  # query, keys
    assert len(lines) == 5 and lines[0].get_color() == "black"
    keys_drawn = lines[1:]
    assert len({line.get_color() for line in keys_drawn}) == 4
    saturation = mcolors.rgb_to_hsv([mcolors.to_rgb(line.get_color()) for line in keys_drawn])
    assert saturation[:, 1].min() > 0.35  # no key is drawn in a grey
    assert [line.get_linestyle() for line in keys_drawn] == ["-", "--", "-.", ":"]
    heads = [t.arrow_patch for t in ax.texts if t.arrow_patch is not None]
    assert len(heads) == 5  # every key has an arrowhead, and so has the query
    for line in lines:  # every arrow starts at the origin, in data coordinates
        assert line.get_transform() == ax.transData
        assert (line.get_xdata()[0], line.get_ydata()[0]) == (0, 0)
    # On the line y = x: the long key, the query and the short key, widest first and
    # lowest, so the narrower ones on top leave each visible.
    long_key, query, short_key = lines[1], lines[0], lines[2]
    widths = [line.get_linewidth() for line in (long_key, query, short_key)]
    assert widths[0] > widths[1] > widths[2]
    assert long_key.get_zorder() < query.get_zorder() < short_key.get_zorder()
    assert lines[3].get_linewidth() == lines[4].get_linewidth() == 2.2  # alone: as before
    plt.close(fig)


def test_the_score_heatmap_prints_its_cell_numbers_at_9_pt():
    fig, alt = score_heatmap(toy.scores(), toy.TOKENS, title="t", cbar_label="score")
    fig.canvas.draw()
    assert smallest_text_px(fig) == 9 * FIGURE_DPI / 72  # 11.25 px in the PNG (was 10)
    cells = [t for t in fig.axes[0].texts if t.get_text() == "1.80"]
    assert len(cells) == 1 and cells[0].get_fontsize() == 9
    plt.close(fig)
    fig, plain_alt = heatmap(toy.scores(), toy.TOKENS, title="t", cbar_label="score")
    head, columns = alt.split(" Highest per column: ")
    assert head + columns[columns.index(". ") + 1 :] == plain_alt  # the rest as heatmap's
    plt.close(fig)


def test_the_score_heatmap_alt_text_names_each_columns_highest_cell():
    # Ex 3.1 asks about columns (the lowest column maximum, the bright cell of "I"):
    # a reader of the alt text alone must be able to answer it.
    scores = toy.scores()
    _, alt = score_heatmap(scores, toy.TOKENS, title="t", cbar_label="score")
    part = alt.split(" Highest per column: ")[1]
    columns, scale = part.split(". ")
    assert scale == "Colour scale (score) from 0 to 1.8."
    assert len(columns.split(", ")) == 8
    assert columns.split(", ")[0] == "'I' from 'I' (1.20)"
    assert columns.split(", ")[4] == "'and' from 'cake' (0.37)"  # the lowest top, Ex 3.1
    assert columns.split(", ")[3] == "'cake' from 'it' (1.80)"
    plt.close("all")


def test_score_heatmap_column_labels_stand_upright_only_where_they_fit():
    W_qk = toy.W_q @ toy.W_k.T  # four feature names in wide columns: upright
    fig, _ = score_heatmap(W_qk, toy.FEATURES, toy.FEATURES, title="t", figsize=(5.2, 3.9))
    assert [t.get_rotation() for t in fig.axes[0].get_xticklabels()] == [0] * 4
    plt.close(fig)
    fig, _ = score_heatmap(toy.scores(), toy.TOKENS, title="t")  # "delicious" needs a slant
    assert {t.get_rotation() for t in fig.axes[0].get_xticklabels()} == {45}
    plt.close(fig)


def test_score_bars_print_their_numbers_at_10_pt():
    fig, _ = score_bars(toy.scores()[5], toy.TOKENS, title="t", ylim=(0, 2), top_label="top")
    fig.canvas.draw()
    assert smallest_text_px(fig) == 10 * FIGURE_DPI / 72  # 12.5 px in the PNG (was 10)
    plt.close(fig)


def test_the_w_qk_heatmap_names_features_on_its_axes_and_in_its_alt_text():
    W_qk = toy.W_q @ toy.W_k.T
    fig, alt = heatmap(
        W_qk,
        toy.FEATURES,
        toy.FEATURES,
        title="Who looks for what: W_qk = W_q W_kᵀ",
        xlabel="key feature",
        ylabel="query feature",
        figsize=(5.0, 3.9),
    )
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key feature", "query feature")
    assert "Rows: query feature; columns: key feature." in alt
    assert "'pointer' -> 'food' (1.80)" in alt and "queries" not in alt
    fig.canvas.draw()  # the title, ᵀ included, stays inside the figure
    box = ax.title.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width
    plt.close(fig)
    fig, default_alt = heatmap(W_qk, toy.FEATURES, title="t")
    assert "Rows are queries, columns are keys." in default_alt
    plt.close(fig)


def test_by_token_labels_each_number_with_its_word():
    assert toy.by_token(toy.scores()[3]).startswith("I 0.40  ate 0.48")
    assert toy.by_token(np.arange(8), fmt="g").endswith("delicious 7")
    with pytest.raises(ValueError, match=r"one number per token, shape \(8,\); got \(3,\)"):
        toy.by_token([1, 2, 3])


def test_by_feature_labels_each_coordinate_with_its_feature():
    Q, K, _ = toy.projections()
    cake = toy.token_index("cake")
    assert toy.by_feature(Q[cake]) == "food 1.60  person 0.40  action 0.00  pointer 0.90"
    assert toy.by_feature([1, 2, 3, 4], fmt="g") == "food 1  person 2  action 3  pointer 4"
    with pytest.raises(ValueError, match=r"one number per feature .*shape \(4,\); got \(8,\)"):
        toy.by_feature(np.arange(8))


def test_a_short_key_on_a_long_keys_line_is_drawn_from_the_origin_thick_over_thin():
    # review 03_z: drawn from the origin, thick over thin. (It used to be shifted sideways,
    # and a vector that does not start at 0 works against the picture being taught.)
    keys = [[1.2, 1.8], [0.4, 0.6], [1, -1], [-1, -1]]
    fig, _ = dot_product_arrows([1, 1], keys, ["long", "short", "side", "apart"], title="t")
    ax = fig.axes[0]
    long_key, short_key = ax.get_lines()[1:3]
    for line in (long_key, short_key):
        assert line.get_transform() == ax.transData
        assert (line.get_xdata()[0], line.get_ydata()[0]) == (0, 0)
    assert np.allclose(short_key.get_xydata()[-1], [0.4, 0.6])
    assert short_key.get_linewidth() > long_key.get_linewidth()  # thick over thin
    assert short_key.get_zorder() > long_key.get_zorder()
    plt.close(fig)


def test_a_key_at_right_angles_to_the_query_gets_a_right_angle_mark():
    fig, _ = dot_product_arrows([1, 1], [[1, -1], [-1, -1]], ["side", "apart"], title="t")
    (mark,) = [line for line in fig.axes[0].get_lines() if line.get_gid() == "right angle"]
    corner = mark.get_xydata()  # along q, the far corner, along the key
    assert np.isclose(corner[0, 0], corner[0, 1]) and np.isclose(corner[2, 0], -corner[2, 1])
    assert np.allclose(corner[1], corner[0] + corner[2])  # a square's far corner
    plt.close(fig)
    fig, _ = dot_product_arrows([1, 1], [[1.2, 1.8], [-1, -1]], ["near", "apart"], title="t")
    assert not [line for line in fig.axes[0].get_lines() if line.get_gid() == "right angle"]
    plt.close(fig)


def test_the_marked_cell_of_a_score_heatmap_is_outlined_and_named_in_the_alt_text():
    W_qk = toy.W_q @ toy.W_k.T
    pointer, food = toy.FEATURES.index("pointer"), toy.FEATURES.index("food")
    fig, alt = score_heatmap(
        W_qk,
        toy.FEATURES,
        toy.FEATURES,
        title="t",
        cbar_label="entry of W_qk",
        mark=(pointer, food),
    )
    (box,) = fig.axes[0].patches
    (x0, y0), (x1, y1) = box.get_bbox().get_points()
    assert x0 < food < x1 and y0 < pointer < y1  # around that cell, inside its edges
    assert x1 - x0 < 1 and y1 - y0 < 1
    assert alt.endswith(" Outlined: 'pointer' -> 'food' (1.80).")
    assert "Colour scale (entry of W_qk) from 0 to 1.8." in alt
    plt.close(fig)
    fig, plain = score_heatmap(W_qk, toy.FEATURES, toy.FEATURES, title="t")
    assert not fig.axes[0].patches and "Outlined" not in plain
    plt.close(fig)
    for bad in ((4, 0), (0,), (0, -1)):
        with pytest.raises(ValueError, match=r"mark must be a \(row, column\) inside shape"):
            score_heatmap(W_qk, toy.FEATURES, toy.FEATURES, title="t", mark=bad)


# --- the page's prose ----------------------------------------------------------------------


def _chapter_cells():
    path = pathlib.Path(__file__).resolve().parents[1] / "chapters" / "03_scores.ipynb"
    return nbformat.read(path, as_version=4).cells


def test_main_line_stays_short_and_the_trained_head_is_said_to_be_picked():
    main, folded = main_and_folded(_chapter_cells())
    words = sum(len(line.split()) for line in prose_lines(main))
    # 779 in round d; 708 in 03o, 03p; 699 in 03r; 722 in 03qq, which split the three steps
    # of W_qk[pointer, food] into a list and bridged from rows to Exercise 3.1's columns;
    # 733 in 03rr, which labels the factors of 3 and says why the diagonal is worth a look;
    # 732 in 03ss; 769 in 03tt: its own edits net -2 words, but Exercise 3.4's 39-word
    # prompt now has a cell of its own (its solution runs the test it asks for), so it is
    # counted on the main line, where a reader meets it, instead of in its solution's fold
    # 775 in session 13: q_it's three-step sum became a displayed, aligned formula (an inline
    # one ran 313 px past a phone's screen); the count reads its alignment marks as words
    assert words <= 775, words
    trained_fold = next(c.source for c in folded if "In a trained model" in c.source)
    assert "picked from its 72 heads" in trained_fold and "whoever asks" in trained_fold
    assert "chapter 11" in trained_fold
    flat_fold = " ".join(trained_fold.split())
    assert "\\bar q" not in flat_fold  # review 03p: the circular mechanism sentence is cut
    assert 'every one of its 11 rows peaks at "cake"' in trained_fold
    assert "$\\sqrt{32}$ (chapter 4)" in trained_fold
    assert "lift" not in trained_fold and "softmax" not in trained_fold  # unexplained words
    assert "3rd" not in trained_fold and "median head" not in flat_fold  # review 03s: one
    assert "set by the key, whoever asks." in flat_fold and "variance" not in flat_fold
    # review 03qq: scoped to this head, with the split, a head unlike it, and the biases
    assert "In this head, most of a score is set by the key" in flat_fold
    assert "account for 90%, the row offsets for 6%, the remainders for 4%" in flat_fold
    assert "Not every head is like this: layer 1, head 3" in flat_fold
    assert "$b_q \\cdot k_j$, set by the key alone" in flat_fold
    assert "random scores" not in flat_fold  # review 03t cut the noise baseline
    exercise = next(c.source for c in _chapter_cells() if "ex-scores-read-figure" in c.source)
    assert "(folded on the website)" in exercise and "no cell above 0.45" not in exercise
    assert 'Why is the column of "cake" the brightest?' in exercise  # review 03b: reasoning
    assert "darkest" not in exercise and '"The" lacks food' not in exercise
    why_dot = next(c.source for c in folded if "Why a dot product?" in c.source)
    assert "saturates (chapter 4)" in why_dot and 'as "cake" did' not in why_dot
    assert "without limit" not in why_dot
    # review 03rr: QK-norm's trade is said; the diagonal is not a consequence of "cake"
    assert "giving up the length signal above; a learned scale" in " ".join(why_dot.split())
    flat_main = " ".join(" ".join(c.source for c in main).split())
    assert "A word need not match its own key best: the diagonal wins only" in flat_main
    assert "so the diagonal" not in flat_main
    assert "\\lVert q \\rVert \\, \\lVert k \\rVert \\cos\\theta = 1.41 \\times 2.16" in flat_main
    solution = " ".join(exercise.split())
    assert "*Food.*" in solution and "*The rest.*" in solution and "add less than" not in solution
    # review 03ss: the one-line answer first; the closest race, not a bound on what keys add
    assert '1. The key of "cake" is pure food, $(1, 0, 0, 0)$, so its column holds' in solution
    assert 'The closest race is row "was": 0.84 for "cake" against 0.68' in solution
    assert "0.98" not in solution and "make up that gap" not in solution
    # review 03ss: the fold opens on its takeaway and names the [CLS] column
    assert flat_fold.startswith(
        "````{admonition} In a trained model: one head's scores :class: dropdown "
        "In this head, most of a score is set by the key, whoever asks. The query's own part"
    )
    assert "second-highest score is at `[CLS]`" in flat_fold and "(chapter 11 studies" in flat_fold
    assert "As row offsets move no weight, the split says" in flat_fold
    # review 03tt: the split as a formula, and what a share is
    assert "$S_{ij} = \\mu + r_i + c_j + e_{ij}$" in flat_fold
    assert "divided by $\\sum_{ij} (S_{ij} - \\mu)^2$; the three shares add up to 1" in flat_fold
    flat_why = " ".join(why_dot.split())
    assert "is longer (1.00 against 0.76), scores more (1.28 against 1.05)" in flat_why
    assert "0.2\\,W_q[\\text{person}] + 1\\,W_q[\\text{pointer}]" in flat_main
    assert "lower the longer" not in flat_main  # the figure shows one obtuse key
    assert "so it gets less" not in solution  # "it" is a token here
    # review 03ss: acute but not parallel pairs score above 0 too
    assert "a query and key **under 90° apart** score above 0" in flat_main
    assert "point the same way** score" not in flat_main
    labels = next(
        c
        for c in _chapter_cells()
        if "its query seeks" in "".join(o.get("text", "") for o in c.get("outputs", []))
    )
    printed = "".join(o.get("text", "") for o in labels.outputs)
    assert "W_q: rows = a feature the word has, columns = a feature its query seeks" in printed
    assert "W_k: rows = a feature the word has, columns = a feature its key offers" in printed
    assert max(len(line) for line in printed.splitlines()) <= 80
    cells = _chapter_cells()
    assert not any("## A batch of sentences" in c.source for c in cells)
    batch = next(c.source for c in cells if "ex-scores" in c.source and "my_scores" in c.source)
    assert "`.T` reverses *every* axis" in batch and "`(4, 8, 2)`" in batch
    assert "softmax" not in next(c.source for c in folded if "ex-scores-read-figure" in c.source)


def test_the_names_fold_moved_here_from_chapter_2_into_going_further():
    cells = _chapter_cells()
    ids = [c.id for c in cells]
    # Review 03c: the names fold joined the one "Going further" section, after the summary.
    fold = cells[ids.index("c3gf0001")].source
    assert "wqkfold1" not in ids and fold.startswith("## Going further")
    assert ids.index("c3wq0001") < ids.index("425139c8") < ids.index("c3gf0001")
    assert "A^{-\\top}" in fold and ":class: dropdown" in fold
    assert "(W_q A)(W_k A^{-\\top})^\\top = W_q A A^{-1} W_k^\\top" in fold  # finding 8
    assert "Nothing in plain attention forces them to" in fold
    assert "naming one needs evidence" in fold
    assert "Rotary" not in fold and "no fixed meaning" not in fold  # review 03b cut the RoPE caveat
    asserts = cells[ids.index("wqkfold2")]
    assert "remove-cell" in asserts.metadata["tags"] and "_rope" not in asserts.source
    going_further = cells[ids.index("c3gf0001")].source
    assert "Other shapes" not in going_further  # chapters 2 and 12 cover it
    assert not any("spread[d_k]:.1f" in c.source for c in cells)  # chapter 4 runs it


def test_matmul_diagram_labels_the_rows_of_the_right_factor_and_formats_each_box():
    """Review 03d, finding 4: the rows of Kᵀ are named and Q keeps two digits, by opt-in
    options; a call without them draws exactly what it drew before."""
    from attention_lib.plotting import matmul_diagram

    Q, K, _ = toy.projections()
    it, cake = toy.token_index("it"), toy.token_index("cake")
    kw = {"names": ("Q", "Kᵀ", "scores"), "rows": toy.TOKENS, "highlight": (it, cake)}

    def texts(fig):
        return [(t.get_text(), t.get_position(), t.get_fontsize()) for t in fig.axes[0].texts]

    plain, plain_alt = matmul_diagram(Q, K.T, fmt=".1f", **kw)
    same, same_alt = matmul_diagram(Q, K.T, fmt=(".1f",) * 3, **kw)
    assert texts(plain) == texts(same) and plain_alt == same_alt
    assert all(size in (9, 10, 11, 16) for *_, size in texts(plain))  # the default sizes
    fig, alt = matmul_diagram(
        Q, K.T, fmt=(".2g", ".1f", ".1f"), right_rows=toy.FEATURES, value_size=8.5, **kw
    )
    shown = [t.get_text() for t in fig.axes[0].texts]
    assert all(f in shown for f in toy.FEATURES) and "0.24" in shown and "0.08" in shown
    assert "1.8 × 1.0 + 0.24 × 0.0 + 0.08 × 0.0 + 0.3 × 0.0 = 1.8" in alt
    assert "The rows of Kᵀ: food, person, action, pointer." in alt
    cells = [t for t in fig.axes[0].texts if t.get_text() == "0.24"]
    assert cells and all(t.get_fontsize() == 8.5 for t in cells)
    # The labels sit between "@" and the box of Kᵀ, clear of Q's numbers.
    at = next(t for t in fig.axes[0].texts if t.get_text() == "@").get_position()[0]
    food = next(t for t in fig.axes[0].texts if t.get_text() == "food" and t.get_rotation() == 0)
    assert at < food.get_position()[0]
    plt.close("all")
    with pytest.raises(ValueError, match="right_rows needs one label per row of right"):
        matmul_diagram(Q, K.T, right_rows=toy.FEATURES[:3])
    with pytest.raises(ValueError, match="fmt must be a string or three strings"):
        matmul_diagram(Q, K.T, fmt=(".1f", ".2f"))


def test_minilm_s_biases_add_a_key_only_term_and_do_not_make_the_column_share():
    """Review 03qq: the fold on layer 6, head 12 says its scores hold x_i W_qk x_jᵀ, a key-only
    b_q · k_j and a query-only x_i W_q · b_k that changes no weight; without the biases the
    column offsets still account for 87% (90% with them)."""
    from attention_lib import pretrained, trained
    from attention_lib.heads import split_heads

    model = pretrained.load_minilm()
    X, mask, tokens = model.embed([trained.SENTENCE])
    assert tokens[0] == trained.tokens()
    for layer in model.layers[:5]:  # "its x_i come out of layer 5"
        X, _ = pretrained.encoder_layer(X, layer, model.h, mask[:, None, None, :], model.eps)
    L, head, d_k = model.layers[5], 11, 32  # layer 6, head 12, counted from 1
    Q0 = split_heads(X[0] @ L.W_q, model.h)[head]  # (11, 32): x_i W_q, no bias
    K0 = split_heads(X[0] @ L.W_k, model.h)[head]
    b_q, b_k = L.b_q.reshape(model.h, d_k)[head], L.b_k.reshape(model.h, d_k)[head]
    K = K0 + b_k
    stored = trained.scores(6, 12)
    assert np.allclose((Q0 + b_q) @ K.T / np.sqrt(d_k), stored, atol=1e-5)
    inter = Q0 @ K0.T  # x_i W_qk x_jᵀ
    key_only = (K @ b_q)[None, :]  # b_q · k_j (b_q · b_k included)
    query_only = (Q0 @ b_k)[:, None]  # x_i W_q · b_k
    assert np.allclose((inter + key_only + query_only) / np.sqrt(d_k), stored, atol=1e-5)
    # The query-only term shifts a whole row: the weights do not move.
    assert np.allclose(
        al.softmax(stored - query_only / np.sqrt(d_k)), al.softmax(stored), atol=1e-6
    )
    assert key_only.std() > 0.1  # a real key-only term, not zero

    def column_share(S):
        c = S.mean(axis=0) - S.mean()
        return float((np.broadcast_to(c, S.shape) ** 2).sum() / ((S - S.mean()) ** 2).sum())

    assert round(column_share(stored), 2) == 0.90
    assert round(column_share(inter / np.sqrt(d_k)), 2) == 0.87  # "without them ... 87%"

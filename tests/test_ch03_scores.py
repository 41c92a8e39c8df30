"""Chapter 3: the score checkers are tested both ways, and its figures carry labels and alt text."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attention_lib import toy
from attention_lib.checks import check_score_by_hand, check_score_row, check_scores
from attention_lib.plotting import dot_product_arrows, score_bars


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
    assert one_line(capsys, "scores", "PASS") == "[scores] PASS: all 3 cases match the reference.\n"


def test_einsum_with_ellipsis_passes(capsys):
    assert check_scores(lambda Q, K: np.einsum("...id,...jd->...ij", Q, K))
    one_line(capsys, "scores", "PASS")


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda Q, K: K @ swap(Q), "you computed K Qᵀ"),
        (lambda Q, K: Q @ K, "Q @ K does not line up. Transpose K first"),
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
        (lambda Q, K: Q @ K.T, "works for one sentence but not for a batch"),
        (loop_scores, "transpose only the last two axes of K"),
        (lambda Q, K: np.einsum("id,jd->ij", Q, K), "start each subscript with '...'"),
        (lambda Q, K: np.dot(Q, swap(K)), "np.dot pairs every sentence of the batch"),
        (lambda Q, K: good_scores(Q, K)[..., :-1], "one column per key"),
        (lambda Q, K: good_scores(Q, K) + 0.1, "values differ from the reference"),
    ],
)
def test_each_scores_mistake_gets_its_own_hint(fn, hint, capsys):
    result = check_scores(fn)
    line = one_line(capsys, "scores", "FAIL")
    assert not result and result.status == "FAIL"
    assert hint in line
    assert "keepdims" not in line  # the softmax hint of the base machinery never leaks in


def test_scores_stub_and_crash(capsys):
    assert check_scores(lambda Q, K: None).status == "TODO"
    assert "returned None" in one_line(capsys, "scores", "TODO")
    assert not check_scores(lambda Q, K: 1 / 0)
    line = one_line(capsys, "scores", "FAIL")
    assert "raised ZeroDivisionError: division by zero" in line
    assert "Transpose K" not in line  # not a shape error, so no shape hint
    assert not check_scores(lambda: 0)  # wrong signature: still one friendly line
    assert "raised TypeError" in one_line(capsys, "scores", "FAIL")


# --- check_score_row ---------------------------------------------------------------------


def good_row(q, K):
    return np.array([sum(a * b for a, b in zip(q, k, strict=True)) for k in K])


def test_reference_row_passes(capsys):
    assert check_score_row(good_row)
    assert one_line(capsys, "score-row", "PASS") == (
        "[score-row] PASS: all 2 cases match the reference.\n"
    )
    assert check_score_row(lambda q, K: K @ q)  # the vectorised form is right too
    assert check_score_row(lambda q, K: [float(q @ k) for k in K])  # so is a plain list
    capsys.readouterr()


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda q, K: q @ K, "K has one key per row"),
        (lambda q, K: q * K, "did not add up"),
        (lambda q, K: (q * K).sum(axis=0), "added over the keys instead of over the coordinates"),
        (lambda q, K: (q * K).sum(), "into one number"),
        (
            lambda q, K: K @ q / np.linalg.norm(K, axis=-1) / np.linalg.norm(q),
            "that is the cosine similarity",
        ),
        (lambda q, K: np.array([q @ K[j] for j in range(len(K) - 1)]), "did your loop skip"),
        (lambda q, K: K @ q + 1, "values differ from the reference"),
        (lambda q, K: np.array([q @ K[j] for j in range(len(K) + 1)]), "raised IndexError"),
    ],
)
def test_each_row_mistake_gets_its_own_hint(fn, hint, capsys):
    result = check_score_row(fn)
    line = one_line(capsys, "score-row", "FAIL")
    assert not result
    assert hint in line


def test_row_stub_and_crash(capsys):
    assert check_score_row(lambda q, K: None).status == "TODO"
    one_line(capsys, "score-row", "TODO")
    assert not check_score_row(lambda q, K: {}["key"])
    assert "raised KeyError" in one_line(capsys, "score-row", "FAIL")


# --- check_score_by_hand -----------------------------------------------------------------

Q, K, _ = toy.projections()
ATE, IT = toy.token_index("ate"), toy.token_index("it")


def by_hand(answer):
    return check_score_by_hand(answer, Q, K, ATE, IT, toy.TOKENS, X=toy.X)


def test_the_right_number_passes_and_follows_the_toy(capsys):
    expected = float(Q[ATE] @ K[IT])
    assert by_hand(expected) and by_hand(round(expected, 2))
    assert f"is right ({expected:.2f})" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (Q[IT] @ K[ATE], "you swapped them"),
        (Q[ATE] @ Q[IT], "you used the query of 'it'"),
        (K[ATE] @ K[IT], "you used two keys"),
        (Q[ATE] @ K[ATE], "against its own key"),
        (Q[ATE].sum() + K[IT].sum(), "you added all 8 numbers"),
        (toy.X[ATE] @ toy.X[IT], "token vectors X"),
        (5.0, "too high"),
    ],
)
def test_each_hand_mistake_gets_its_own_hint(wrong, hint, capsys):
    assert not by_hand(float(wrong))
    assert hint in one_line(capsys, "score-by-hand", "FAIL")


def test_hand_stub_and_nonsense(capsys):
    assert by_hand(None).status == "TODO"
    one_line(capsys, "score-by-hand", "TODO")
    assert not by_hand("0.61")
    assert "expected one number" in one_line(capsys, "score-by-hand", "FAIL")


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

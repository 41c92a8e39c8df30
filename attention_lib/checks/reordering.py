"""Chapter 1 checker: predict attention's output and weights on a reordered sentence."""

from __future__ import annotations

import numpy as np

from ..core import scaled_dot_product_attention
from .base import Cases, CheckResult, Fail, known_mistakes, same, unseen_cases, verdict
from .projection_slips import _W_K, _W_Q, _W_V, _X  # the toy's (checks may not import toy)

_RERUN = (
    "you reran attention on toy.X[perm], but X is not always toy.X. Don't rerun "
    "attention: use only out, weights and perm."
)


def _attend(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``toy.self_attention(X)``: the output (n, 4) and the weights (n, n)."""
    W_q, W_k, W_v = (np.array(W, dtype=float) for W in (_W_Q, _W_K, _W_V))
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def _reordered(out: np.ndarray, weights: np.ndarray, perm) -> tuple[np.ndarray, np.ndarray]:
    """The reference: output and weights on ``X[perm]``, from those on ``X``."""
    return out[perm], weights[np.ix_(perm, perm)]


def _packed(fn, note: list):
    """Call ``fn``; return its pair as one (n, 4 + n) array, or note what is wrong with it."""

    def packed(out, weights, perm):
        try:
            result = fn(out, weights, perm)
        except IndexError as err:
            if "axis 1 with size 4" in str(err):  # out[:, perm]: the features, not words
                fix = (
                    "out[:, perm] reorders the output's 4 columns (its features); the "
                    "words are its rows: out[perm]."
                )
            elif "axis 0" in str(err):  # a table shorter than perm: not out
                fix = "Don't rerun attention: use only out, weights and perm."
            else:
                raise
            note.append(f"your function raised IndexError: {err}. {fix}")
            return np.zeros(0)
        if result is None:
            return None  # the checker says TODO
        n = len(perm)
        picked = np.asarray(weights, dtype=float)[perm, perm]  # (n,): the fancy-index slip
        note.clear()
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            what = type(result).__name__
            if isinstance(result, np.ndarray):
                what = f"one array of shape {result.shape}"
            elif isinstance(result, (tuple, list)):
                what = f"a {what} of {len(result)}"
            note.append(
                f"you returned {what}: return a pair, "
                "(output, weights), both for the reordered sentence X[perm]."
            )
            return np.zeros(0)
        try:
            first, second = (np.asarray(part, dtype=float) for part in result)
        except (TypeError, ValueError):
            note.append("your pair does not hold two arrays of numbers: (output, weights).")
            return np.zeros(0)
        if first.shape == (n, 4) and second.shape == (n, n):
            return np.concatenate([first, second], axis=1)  # (n, 4 + n)
        if first.shape == (n, n) and second.shape == (n, 4):
            note.append("you returned (weights, output): the order is (output, weights).")
        elif second.shape == (n,) and np.allclose(second, picked):
            note.append(
                "weights[perm, perm] pairs the two index lists entry by entry and picks "
                f"{n} single weights, shape ({n},): move the rows, then the columns, "
                "weights[perm][:, perm]."
            )
        else:
            note.append(
                f"your pair has shapes {first.shape} and {second.shape}; expected the "
                f"output ({n}, 4) and the weights ({n}, {n})."
            )
        return np.zeros(0)

    return packed


def _judge(got: np.ndarray, out: np.ndarray, weights: np.ndarray, perm, case: str) -> None:
    """Judge the packed pair ``got`` against the reference; name the usual slips."""
    n = len(perm)
    if got.shape != (n, 4 + n):
        raise Fail(
            f"return the pair (output, weights): shapes ({n}, 4) and ({n}, {n}) (on {case})."
        )
    mine_out, mine_w = got[:, :4], got[:, 4:]
    back = np.argsort(perm)  # the opposite reordering
    known_mistakes(
        got,
        (
            np.concatenate([out, weights], axis=1),
            "you returned the output and the weights unchanged: on X[perm] the words "
            "stand in a new order, and so must what attention computes for them.",
        ),
        (
            np.concatenate(_attend(out[perm]), axis=1),  # toy.self_attention(out[perm])
            "you fed out[perm] back into attention, but out is attention's result, not its "
            "input. Don't run attention again; reorder what you were given.",
        ),
    )
    known_mistakes(
        mine_out,
        (out, "the output is in the original order: reorder its rows as the words were."),
        (
            out[back],
            "the output's rows went the opposite way: new word k is old word perm[k], so "
            "its row is old row perm[k].",
        ),
        (
            out[:, perm] if n == 4 else out,  # the columns are features, not words
            "out[:, perm] reorders the output's columns (its features); the words are its "
            "rows: out[perm].",
        ),
    )
    same(mine_out, out[perm], f"{case}, the output")
    known_mistakes(
        mine_w,
        (weights, "the weights are in the original order: reorder them as the words were."),
        (
            weights[perm],
            "only the rows of the weights moved. Column j holds what every word takes from "
            "word j, and those words moved too: move the columns the same way.",
        ),
        (
            weights[:, perm],
            "only the columns of the weights moved: row i belongs to word i, and the "
            "words were reordered, so move the rows the same way.",
        ),
        (
            weights[perm][perm],
            "the rows moved twice and the columns not at all: weights[perm][perm] "
            "reorders the rows again. Send the second perm to the columns: "
            "weights[perm][:, perm].",
        ),
        (
            weights[perm][:, back],  # P A P: the right-hand factor is P, not P^T
            "the rows moved the right way but the columns the opposite way: that is P A P. "
            "The right-hand factor is P^T (P A P^T), which moves the columns like the rows: "
            "weights[perm][:, perm].",
        ),
        (
            weights[np.ix_(perm, perm)].T,
            "your weights are transposed: row k is what new word k takes from each word, "
            "so every row sums to 1. In yours the columns do.",
        ),
        (
            weights[np.ix_(back, back)],
            "the weights went the opposite way: new word k is old word perm[k], in the "
            "rows and in the columns.",
        ),
    )
    same(mine_w, weights[np.ix_(perm, perm)], f"{case}, the weights")


def check_reordering(fn) -> CheckResult:
    """Check ``fn(out, weights, perm)``: attention's ``(output, weights)`` on ``X[perm]``,
    predicted from ``out, weights = toy.self_attention(X)`` alone (``X`` is not given)."""
    note: list = []

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(5)
        for X, perm, case in (
            (
                np.array(_X, dtype=float),
                [3, 0, 5, 1, 2, 4, 7, 6],
                "toy.X, perm = [3, 0, 5, 1, 2, 4, 7, 6]",
            ),
            (rng.normal(size=(5, 4)), [4, 2, 0, 1, 3], "a random 5 x 4 X, perm = [4, 2, 0, 1, 3]"),
        ):
            out, weights = _attend(X)  # the run on X: all the learner gets, with perm
            got = cases.run(case, out, weights, perm)
            if note:
                raise Fail(f"{note[0]} (on {case})")
            if X.shape != (8, 4):  # not toy.X: a rerun on toy.X[perm] shows here
                rerun = np.concatenate(_attend(np.array(_X, dtype=float)[perm]), axis=1)
                known_mistakes(got, (rerun, f"{_RERUN} (on {case})"))
            _judge(got, out, weights, perm, case)

    return verdict("reordering", _packed(fn, note) if callable(fn) else fn, run)


@unseen_cases("reordering")
def _unseen(rng):  # drawn at grading time (see .unseen)
    n = int(rng.integers(3, 10))
    out, weights = _attend(rng.normal(size=(n, 4)))
    perm = rng.permutation(n)
    while np.array_equal(perm[perm], np.arange(n)):  # not its own inverse: both ways differ
        perm = rng.permutation(n)
    order = [int(k) for k in perm]  # a list of ints stays a list (checks.base._copy)

    def judge(got, case):
        _judge(got, out, weights, order, case)

    return [(f"a random {n} x 4 X, perm = {order}", (out, weights, order), judge)]

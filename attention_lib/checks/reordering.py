"""Chapter 1 checker: predict attention's output on a reordered sentence."""

from __future__ import annotations

import numpy as np

from ..core import scaled_dot_product_attention
from .base import (
    Cases,
    CheckResult,
    call,
    expect_shape,
    known_mistakes,
    same,
    unseen_cases,
    verdict,
)
from .projection_slips import _W_K, _W_Q, _W_V, _X  # the toy's (checks may not import toy)


def _attend(X: np.ndarray) -> np.ndarray:
    """``toy.self_attention(X)[0]``: the output, (n, 4)."""
    W_q, W_k, W_v = (np.array(W, dtype=float) for W in (_W_Q, _W_K, _W_V))
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]


def _reordered(X: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """The reference: attention's output on ``X[perm]``, (n, 4)."""
    return _attend(X[perm])


def check_reordering(fn) -> CheckResult:
    """Check ``fn(X, perm)``: the output of ``toy.self_attention`` on ``X[perm]``,
    predicted from its output on ``X``."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(5)
        for X, perm, case in (
            (
                np.array(_X, dtype=float),
                np.array([3, 0, 5, 1, 2, 4, 7, 6]),
                "toy.X, perm = [3, 0, 5, 1, 2, 4, 7, 6]",
            ),
            (rng.normal(size=(5, 4)), np.array([4, 2, 0, 1, 3]), "a random 5 x 4 X"),
        ):
            n = len(perm)
            cases.count += 1
            order = [int(k) for k in perm]  # a list of ints (call would make an array float)
            out = call(lambda X_copy, order=order: cases.fn(X_copy, order), case, X)
            hint = (
                " That is the shape of the weights: toy.self_attention returns "
                "(output, weights); take the output."
                if out.shape == (n, n)
                else " One output row per word, 4 numbers each."
            )
            expect_shape(out, (n, 4), case, hint)
            plain = _attend(X)  # (n, 4): the output in the original order
            known_mistakes(
                out,
                (
                    plain,
                    "these are the outputs in the original order: reorder their rows "
                    "with perm, as the words were.",
                ),
                (
                    X[perm],
                    "that is the reordered input itself: run toy.self_attention on X, "
                    "then reorder its output.",
                ),
                (
                    plain[np.argsort(perm)],
                    "the rows went the opposite way: word k of the new sentence is old "
                    "word perm[k], so its output is old row perm[k] (out[perm]); "
                    "np.argsort(perm) undoes the order.",
                ),
            )
            same(out, _reordered(X, perm), case)

    return verdict("reordering", fn, run)


@unseen_cases("reordering")
def _unseen(rng):  # drawn at grading time (see .unseen)
    n = int(rng.integers(3, 10))
    X = rng.normal(size=(n, 4))
    perm = rng.permutation(n)
    while np.array_equal(perm[perm], np.arange(n)):  # not its own inverse: both ways differ
        perm = rng.permutation(n)
    order = [int(k) for k in perm]
    return [(f"a random {n} x 4 X, perm = {order}", (X, order), _reordered(X, perm))]

"""Chapter 9's row-by-row checker: hints that rerun the learner's function on a probe case."""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, softmax
from .base import ATOL, Fail


def _product_hint(fn) -> str:
    """Which product had the wrong shapes: rerun on a case where every size is 3."""
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(3, 3, 3))  # n_q = n_k = d_k = d_v: nothing can crash
    s = 1 / np.sqrt(3)
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fn(Q.copy(), K.copy(), V.copy()), dtype=float)
    except (Exception, SystemExit):  # noqa: BLE001 - any failure: fall back to the general hint
        out = None
    blend = "the blend is p @ V: the n_k weights meet the n_k rows of V, giving d_v numbers."
    if out is not None and out.shape == (3, 3):
        if np.allclose(out, softmax(attention_scores(Q, K) * s) @ V.T, atol=ATOL):
            return f"Your scores are right; you blended with V.T, and {blend}"
        if np.allclose(out, softmax(Q @ K * s) @ V, atol=ATOL):
            return "Q[i] @ K pairs Q[i] with K's columns: the scores of row i are K @ Q[i]."
    return (
        "Row i needs Q[i] (shape (d_k,)), all of K and all of V: the scores of row i are "
        f"K @ Q[i], one per key, and {blend}"
    )


def _constant_scale(fn, t: float) -> bool:
    """Does ``fn`` multiply the scores by the same ``t`` on inputs of other sizes?

    A scale typed in as a number (2.0, the toy's √4) fits one case's √d_v or √n_k by
    chance; on other sizes it stays the same number, which no formula of the shapes does.
    """
    rng = np.random.default_rng(3)
    for n_q, n_k, d_k, d_v in ((2, 7, 9, 5), (4, 3, 6, 1)):
        Q, K, V = (
            rng.normal(size=(n_q, d_k)),
            rng.normal(size=(n_k, d_k)),
            rng.normal(size=(n_k, d_v)),
        )
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(fn(Q.copy(), K.copy(), V.copy()), dtype=float)
        except Exception:  # noqa: BLE001 - any failure: not a constant we can name
            return False
        wrong = softmax(attention_scores(Q, K) * t) @ V
        if out.shape != wrong.shape or not np.allclose(out, wrong, atol=ATOL):
            return False
    return True


def _unnormalised(out, expected, case: str) -> None:
    """Each row a positive multiple of the right one: exponentials @ V, never divided."""
    norms = np.einsum("ij,ij->i", expected, expected)  # (n_q,)
    if np.any(norms < ATOL):
        return
    c = np.einsum("ij,ij->i", out, expected) / norms  # (n_q,): each row's factor
    if np.all(c > 0) and not np.allclose(c, 1) and np.allclose(out, c[:, None] * expected):
        raise Fail(
            "your row weights do not sum to 1: divide each row's exponentials by their "
            f"sum (on {case})."
        )

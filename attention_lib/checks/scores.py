"""Chapter 3 checkers: a dot product by hand, one row of scores, and the whole Q Kᵀ."""

from __future__ import annotations

import numpy as np

from ..core import softmax
from .base import (
    Cases,
    CheckResult,
    Fail,
    check_number,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)

# Words that NumPy and Python put in the message when matrix shapes do not line up.
_SHAPE_ERRORS = ("mismatch", "not aligned", "broadcast", "subscripts")


def _run(cases: Cases, case: str, *arrays, hint: str) -> np.ndarray:
    """``cases.run``, but a shape error inside the learner's function gets ``hint``."""
    try:
        return cases.run(case, *arrays)
    except Fail as fail:
        message = str(fail)
        if message.startswith("your function raised") and any(
            word in message for word in _SHAPE_ERRORS
        ):
            # Keep the learner's own error, replace the generic tail with our hint.
            head = message.split(f"(on {case}).")[0]
            raise Fail(f"{head}(on {case}). {hint}") from None
        raise


# --- Exercise: one dot product by hand --------------------------------------------------


def check_score_by_hand(answer, Q, K, query: int, key: int, tokens, X=None) -> CheckResult:
    """Check a hand-computed score ``Q[query] · K[key]``, with hints for the usual slips.

    Parameters
    ----------
    answer : float or None
        The learner's number; ``None`` means "not answered yet".
    Q, K : ndarray of shape (n, d_k)
        The queries and keys the learner read the two vectors from.
    query, key : int
        Row of ``Q`` and row of ``K`` to compare.
    tokens : sequence of str, length n
        Token names, used in the hints.
    X : ndarray of shape (n, d_model), optional
        The token vectors; if given, "used X instead of Q and K" is recognised too.
    """
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    q, k = f"'{tokens[query]}'", f"'{tokens[key]}'"
    mistakes = [
        (
            Q[key] @ K[query],
            f"that is the score of query {k} with key {q}: you swapped them. Take the "
            f"query vector of {q} and the key vector of {k}.",
        ),
        (
            Q[query] @ Q[key],
            f"you used the query of {k}; the second vector must be its key, K[{k}].",
        ),
        (K[query] @ K[key], f"you used two keys; the first vector must be the query of {q}."),
        (Q[query] @ K[query], f"that is {q} against its own key; the key must be that of {k}."),
        (
            Q[query].sum() + K[key].sum(),
            f"you added all {Q.shape[-1] + K.shape[-1]} numbers: multiply matching "
            f"coordinates first, then add the {Q.shape[-1]} products.",
        ),
    ]
    if X is not None:
        X = np.asarray(X, dtype=float)
        mistakes.append(
            (
                X[query] @ X[key],
                "that is the dot product of the token vectors X; use the projected "
                "query Q and key K instead.",
            )
        )
    return check_number("score-by-hand", answer, float(Q[query] @ K[key]), mistakes=mistakes)


# --- Exercise: one query against every key, with a loop -----------------------------------


def check_score_row(fn) -> CheckResult:
    """Check ``fn(q, K)``: the scores of one query ``q`` (d_k,) with every key, (n_k,)."""

    def run(cases: Cases) -> None:
        hint = (
            "q @ K pairs q with the columns of K, but K has one key per row: take the "
            "dot product of q with each row K[j] (or compute K @ q)."
        )
        q = np.array([1.0, 2.0, 0.0])
        K = np.array(
            [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [2.0, 1.0, 0.0], [-1.0, 0.0, 3.0], [0.5, 0.5, 0.5]]
        )
        _check_row(cases, "q of shape (3,) and K of shape (5, 3)", q, K, hint)

        q = np.array([0.5, -1.0, 2.0, 0.0])
        K = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, -2.0, 0.5, 3.0], [4.0, 0.0, -1.0, 2.0]])
        _check_row(cases, "q of shape (4,) and K of shape (3, 4)", q, K, hint)

    return verdict("score-row", fn, run)


def _check_row(cases: Cases, case: str, q: np.ndarray, K: np.ndarray, hint: str) -> None:
    n_k, d_k = K.shape
    out = _run(cases, case, q, K, hint=hint)
    expected = K @ q  # (n_k,)
    lengths = np.linalg.norm(K, axis=-1) * np.linalg.norm(q)
    known_mistakes(
        out,
        (
            q * K,
            f"you multiplied q with each key coordinate by coordinate (shape {K.shape}) but "
            "did not add up: sum each key's products to get one score per key.",
        ),
        (
            (q * K).sum(axis=0),
            f"you added over the keys instead of over the coordinates (got {d_k} numbers "
            f"for {n_k} keys): each score is the sum over the d_k coordinates of one key.",
        ),
        (
            (q * K).sum(),
            "you added up the products of all the keys into one number: keep one sum per "
            "key, so the row has one score per key.",
        ),
        (
            expected / lengths,
            "you divided by the lengths of q and k: that is the cosine similarity. "
            "Attention uses the plain dot product, so longer vectors score higher.",
        ),
    )
    if out.shape == (n_k - 1,):
        raise Fail(
            f"returned {n_k - 1} scores for {n_k} keys (on {case}): did your loop skip a "
            "key? range(len(K)) visits every row of K."
        )
    expect_shape(out, (n_k,), case, " The row needs one score per key (per row of K).")
    same(out, expected, case)


# --- Exercise: every query against every key, batches included ----------------------------


def check_scores(fn) -> CheckResult:
    """Check ``fn(Q, K)`` against ``Q Kᵀ``: (..., n_q, d_k), (..., n_k, d_k) -> (..., n_q, n_k)."""

    def run(cases: Cases) -> None:
        Q = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, 0.0], [2.0, 1.0, 0.0, 1.0]])
        K = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 2.0, 1.0, 1.0], [1.0, 0.0, 0.0, 2.0]])
        _check_matrix(cases, "Q and K of shape (3, 4)", Q, K)

        Q = np.array([[1.0, -1.0, 0.5], [0.0, 2.0, 1.0]])
        K = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [2, -1, 0.5]], dtype=float)
        _check_matrix(cases, "Q of shape (2, 3) and K of shape (5, 3)", Q, K)

        rng = np.random.default_rng(3)
        Q = np.round(rng.normal(size=(2, 3, 4)), 1)  # a batch of 2 sentences
        K = np.round(rng.normal(size=(2, 5, 4)), 1)
        _check_matrix(cases, "a batch: Q of shape (2, 3, 4) and K of shape (2, 5, 4)", Q, K)

    return verdict("scores", fn, run)


def _check_matrix(cases: Cases, case: str, Q: np.ndarray, K: np.ndarray) -> None:
    batched = Q.ndim > 2
    if batched:
        hint = (
            "It works for one sentence but not for a batch of sentences: with leading "
            "batch axes, transpose only the last two axes of K, np.swapaxes(K, -1, -2) "
            f"(K.T reverses every axis of K {K.shape}), and use @, which multiplies "
            "sentence by sentence (with np.einsum, start each subscript with '...')."
        )
    else:
        hint = (
            f"Q has shape {Q.shape} and K has shape {K.shape}, so Q @ K does not line up. "
            "Transpose K first: Q @ K.T puts d_k on both inner sides."
        )
    out = _run(cases, case, Q, K, hint=hint)
    Kt = np.swapaxes(K, -1, -2)  # (..., d_k, n_k)
    expected = Q @ Kt  # (..., n_q, n_k)
    pairs = Q[..., :, None, :] * K[..., None, :, :]  # (..., n_q, n_k, d_k)
    mistakes = [
        (
            np.swapaxes(expected, -1, -2),
            f"rows are keys and columns are queries (on {case}): you computed K Qᵀ. "
            "Put Q first, Q @ K.T, so that row i belongs to query i.",
        ),
        (
            np.swapaxes(Q, -1, -2) @ K if Q.shape == K.shape else None,
            "you computed Qᵀ K, a d_k x d_k matrix that compares coordinates, not words. "
            "Transpose K instead: Q @ K.T.",
        ),
        (
            Q * K if Q.shape == K.shape else None,
            "you multiplied elementwise (Q * K): that pairs query i only with key i, "
            "coordinate by coordinate. Use the matrix product Q @ K.T.",
        ),
        (
            (Q * K).sum(axis=-1) if Q.shape == K.shape else None,
            "you got one number per query: query i against key i only (the diagonal). "
            "Compare every query with every key: Q @ K.T.",
        ),
        (
            pairs.sum(axis=-3),
            "you summed over the queries instead of over d_k: a dot product adds up the "
            "d_k coordinates of one query-key pair (the last axis).",
        ),
        (
            pairs.sum(axis=-2),
            "you summed over the keys instead of over d_k: a dot product adds up the "
            "d_k coordinates of one query-key pair (the last axis).",
        ),
        (
            expected / np.sqrt(Q.shape[-1]),
            "you divided by sqrt(d_k): that is chapter 4's step. Return the raw scores Q Kᵀ.",
        ),
        (
            softmax(expected),
            "your rows sum to 1: you applied softmax, which comes in chapter 5. Return "
            "the raw scores Q Kᵀ.",
        ),
    ]
    known_mistakes(out, *[(wrong, why) for wrong, why in mistakes if wrong is not None])
    if batched and out.shape == Q.shape[:-1] + K.shape[:-2] + K.shape[-2:-1]:
        raise Fail(
            f"returned shape {out.shape}, expected {expected.shape} (on {case}): np.dot "
            "pairs every sentence of the batch with every other one. Use @ (np.matmul), "
            "which keeps the sentences apart."
        )
    expect_shape(
        out,
        expected.shape,
        case,
        " The scores need one row per query and one column per key, after any batch axes.",
    )
    same(out, expected, case)

"""Chapter 3 checkers: which scores a change of W_q moves, and the whole Q Kᵀ."""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, softmax
from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned (before becoming floats)
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .names import calls_library, uses_name

# Words that NumPy and Python put in the message when matrix shapes do not line up.
_SHAPE_ERRORS = ("mismatch", "not aligned", "broadcast", "subscripts")
# NumPy's words when K.transpose(0, 2, 1) meets a K that does not have exactly three axes.
_FIXED_AXES = "axes don't match array"
_FIXED_AXES_HINT = (
    "K.transpose(0, 2, 1) names three axes, so it fits only a K with exactly three. "
    "np.swapaxes(K, -1, -2) swaps the last two axes, however many batch axes come first."
)
_EINSUM_HINT = (
    "Your einsum subscripts do not fit these shapes: start each subscript with '...', "
    "as in '...id,...jd->...ij', and it fits any number of batch axes."
)


def _run(cases: Cases, case: str, *arrays, hint: str) -> np.ndarray:
    """``cases.run``, but a shape error inside the learner's function gets ``hint``."""
    try:
        return cases.run(case, *arrays)
    except Fail as fail:
        message = str(fail)
        if not message.startswith("your function raised"):
            raise
        # Keep the learner's own error, replace the generic tail with our hint.
        head = message.split(f"(on {case}).")[0]
        if _FIXED_AXES in message:
            raise Fail(f"{head}(on {case}). {_FIXED_AXES_HINT}") from None
        if "einstein sum" in message:
            raise Fail(f"{head}(on {case}). {_EINSUM_HINT}") from None
        if any(word in message for word in _SHAPE_ERRORS):
            raise Fail(f"{head}(on {case}). {hint}") from None
        raise


# --- Exercise: which scores can change when one row of W_q changes? ----------------------


def check_scores_that_change(fn) -> CheckResult:
    """Check ``fn(X, feature)``: a bool (n, n) mask of the scores ``X W_q (X W_k)ᵀ`` that
    move when row ``feature`` of ``W_q`` is edited (and ``W_k`` is not).

    Row ``f`` of ``W_q`` enters the query of token ``i`` with weight ``X[i, f]``, and no key
    uses ``W_q``; so the whole row ``i`` of the scores can change exactly when
    ``X[i, f] != 0``. Every case, the unseen ones of grading too, gives each token at least
    one non-zero feature: an all-zero token has key 0 whatever ``W_k`` is, so its column
    could never move and "whole rows" would not be the answer.
    """

    def run(cases: Cases) -> None:
        X = np.array(  # (8, 4), with the zeros of the toy sentence
            [[0, 1, 0, 0], [0.3, 0, 1, 0], [0, 0, 0, 0.5], [1, 0, 0, 0]]
            + [[0, 0, 0.2, 0.3], [0, 0.2, 0, 1], [0, 0, 0.6, 0.2], [0.7, 0, 0.3, 0]]
        )
        _check_mask(cases, "8 tokens like the toy sentence, row 3 of W_q", X, 3)
        _check_mask(cases, "8 tokens like the toy sentence, row 1 of W_q", X, 1)
        # One negative entry: a token with -2 of a feature uses that row of W_q too.
        X = np.array([[0.0, 1.0, 0.5], [-2.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
        _check_mask(cases, "X of shape (4, 3), feature 0", X, 0)
        _check_mask(cases, "X of shape (4, 3), feature 2", X, 2)
        X = np.array([[1.0, 0.0], [0.5, 0.0], [2.0, 0.0]])
        _check_mask(cases, "X of shape (3, 2), a feature no token has", X, 1)

    return verdict("scores-that-change", fn, run)


def _check_mask(cases: Cases, case: str, X: np.ndarray, f: int) -> None:
    n = X.shape[0]
    has = X[:, f] != 0  # (n,): tokens whose query uses row f of W_q
    expected = np.repeat(has[:, None], n, axis=1)  # (n, n): whole rows
    hint = (
        f"Work from the arguments: here X has shape {X.shape}, so weights or sizes taken "
        "from the toy (4 features, 8 tokens) do not fit; build what you need from X and "
        "feature."
    )
    out = _run(cases, case, X, f, hint=hint)
    last = _LAST.get()
    kind = last[1] if last is not None and last[0] is out else "b"
    if out.shape == (n,):
        raise Fail(
            f"returned shape {out.shape}, expected {(n, n)} (on {case}): one True/False "
            "per score, so a whole row of True for each query that changes."
        )
    expect_shape(out, (n, n), case, " One True/False per score: a row per query, a column per key.")
    if kind != "b":
        raise Fail(
            f"returned numbers (dtype kind {kind!r}), expected a boolean array (on {case}): "
            "True where score (i, j) can change, False where it cannot. A comparison such "
            "as X[:, feature] != 0 gives booleans; so does .astype(bool)."
        )
    row_f = np.zeros((n, n), dtype=bool)
    if f < n:
        row_f[f] = True
    d = X.shape[1]
    # Off by one feature: the rows of the tokens that have feature f - 1 or f + 1.
    off_by_one = [
        (
            np.repeat((X[:, g] != 0)[:, None], n, axis=1).astype(float),
            f"those are the rows of the tokens with feature {g}, not {f}: off by one? "
            "`feature` is already the column of X to test, counted from 0 as NumPy "
            "does: X[:, feature].",
        )
        for g in (f - 1, f + 1)
        if 0 <= g < d
    ]
    mistakes = (
        (
            expected.T.astype(float),
            "those are columns. A column of the scores belongs to a key, and keys come from "
            "W_k, which did not change; the query of token i, row i, uses W_q.",
        ),
        (
            (expected | expected.T).astype(float),
            "rows and columns: the rows are right, but no key uses W_q, so the columns of "
            "the other tokens stay as they were.",
        ),
        (
            (expected & expected.T).astype(float),
            "only where both words have the feature? The key comes from W_k, which did not "
            "change; a changed query meets every key differently, so its whole row moves.",
        ),
        (
            (expected & np.eye(n, dtype=bool)).astype(float),
            "only the diagonal: a changed query meets every key differently, so its whole "
            "row changes, not only its score with itself.",
        ),
        (
            np.zeros((n, n), dtype=bool),
            "no score at all? X stays as it is, and so do W_k and the keys; but row f of W_q "
            "enters the query of every token with X[i, f] != 0. Those queries change, and "
            "a changed query meets every key differently.",
        ),
        (
            np.ones((n, n), dtype=bool),
            "every score? Row f of W_q enters the query of token i with weight X[i, f]; a "
            "token that has none of feature f keeps its query and its row.",
        ),
        (
            (~expected).astype(float),
            "the other way round: the rows that change are those of tokens that HAVE the "
            "feature (X[i, f] != 0).",
        ),
        (
            np.repeat((X[:, f] > 0)[:, None], n, axis=1).astype(float),
            "a negative feature counts too: with X[i, f] = -2, row f of W_q enters the query "
            "of token i with weight -2, so that row moves as well. Test X[:, f] != 0.",
        ),
        (
            row_f.astype(float),
            "that is the row of token number f. `feature` numbers a column of X (a "
            "feature), not a token: look for the tokens with X[i, feature] != 0.",
        ),
    )
    # A mistake that gives the right mask on this case (say, no token has the feature)
    # is no mistake here.
    known_mistakes(
        out.astype(float),
        *[(w.astype(float), why) for w, why in mistakes if not np.array_equal(w, expected)],
        *[(w, why) for w, why in off_by_one if not np.array_equal(w, expected)],
    )
    mask = out != 0
    whole_rows = (mask == mask[:, :1]).all()
    if whole_rows and (mask <= expected).all() and mask.sum() < expected.sum():
        missed = int(np.flatnonzero(expected[:, 0] & ~mask[:, 0])[0])
        raise Fail(
            f"whole rows, but too few (on {case}): token {missed} has X[{missed}, {f}] = "
            f"{X[missed, f]:g}, and any amount of the feature, however small, brings row "
            f"{f} of W_q into its query. Test X[:, feature] != 0."
        )
    if not np.array_equal(mask, expected) and any(uses_name(cases.fn, w) for w in ("W_q", "W_k")):
        raise Fail(
            f"your function reads W_q or W_k, and its mask is wrong (on {case}). The answer "
            "needs no weights: row f of W_q enters the query of token i with weight "
            "X[i, f], whatever W_q holds. Work from the arguments: test X[:, feature]."
        )
    same(out, expected, case)


# --- Exercise: every query against every key, batches included ----------------------------


def check_scores(fn) -> CheckResult:
    """Check ``fn(Q, K)`` against ``Q Kᵀ``: (..., n_q, d_k), (..., n_k, d_k) -> (..., n_q, n_k).

    The exercise rules out ``al.attention_scores``: calling it, under any name or from a
    helper, fails.
    """
    library = "attention_scores"
    banned = callable(fn) and (fn is attention_scores or calls_library(fn, library))

    def run(cases: Cases) -> None:
        if banned:
            raise Fail(
                "your function calls al.attention_scores, which this exercise rules out: "
                "write the product yourself, with @ and a transpose of the last two axes."
            )
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

        # Two batch axes (say, sentences x heads): a K.transpose(0, 2, 1) branch for three
        # axes, or K.T, cannot pass.
        Q = np.round(rng.normal(size=(2, 3, 2, 3)), 1)
        K = np.round(rng.normal(size=(2, 3, 4, 3)), 1)
        _check_matrix(
            cases, "two batch axes: Q of shape (2, 3, 2, 3) and K of shape (2, 3, 4, 3)", Q, K
        )

    return verdict("scores", fn, run)


def _check_matrix(cases: Cases, case: str, Q: np.ndarray, K: np.ndarray) -> None:
    batched = Q.ndim > 2
    if Q.ndim > 3:
        # Name K.T or K.transpose only when the answer uses them: a loop over the first
        # axis may use neither.
        why = [
            words
            for name, words in (
                ("T", "K.T reverses every axis"),
                ("transpose", "K.transpose(0, 2, 1) fits exactly three"),
            )
            if uses_name(cases.fn, name)
        ]
        hint = (
            "It works with one batch axis but not with two"
            + (": " + " and ".join(why) if why else "")
            + ". np.swapaxes(K, -1, -2) swaps only the last two axes, whatever comes "
            "before them, and @ keeps every batch axis apart (with np.einsum, start each "
            "subscript with '...')."
        )
    elif batched:
        used_T = f" (K.T reverses every axis of K {K.shape})" if uses_name(cases.fn, "T") else ""
        hint = (
            "It works for one sentence but not for a batch of sentences: each sentence "
            f"needs its own grid of scores, shape {Q.shape[:-1] + K.shape[-2:-1]}. Swap only "
            f"the last two axes of K, np.swapaxes(K, -1, -2){used_T}, and use @, which "
            "multiplies sentence by sentence (with np.einsum, start each subscript with "
            "'...')."
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
            K @ Kt if Q.shape == K.shape else None,
            f"you compared the keys with each other, K Kᵀ (on {case}): a score pairs a "
            "query with a key, so put Q first: Q @ K.T.",
        ),
        (
            Q @ np.swapaxes(Q, -1, -2) if Q.shape == K.shape else None,
            f"you compared the queries with each other, Q Qᵀ (on {case}): a score pairs a "
            "query with a key, so the right-hand factor is K, transposed: Q @ K.T.",
        ),
        (
            Q @ K.reshape(K.shape[:-2] + K.shape[-1:] + K.shape[-2:-1]),
            f"K.reshape gave K the shape of its transpose, but not its numbers (on {case}): "
            "a reshape keeps the entries in their order and cuts them into new rows, so a "
            "column is no longer a key. Transpose instead: np.swapaxes(K, -1, -2).",
        ),
        (
            expected / Q.shape[-1],
            "a dot product sums; you divided by d_k (a mean over the last axis?). Use "
            ".sum(-1), or Q @ K.T.",
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
        used = [f"np.{name}" for name in ("dot", "inner", "tensordot") if uses_name(cases.fn, name)]
        what = " and ".join(used) if used else "np.dot (like np.inner and np.tensordot)"
        raise Fail(
            f"returned shape {out.shape}, expected {expected.shape} (on {case}): {what} "
            "pairs every sentence of the batch with every other one. Use @ (np.matmul), "
            "which keeps the sentences apart."
        )
    expect_shape(
        out,
        expected.shape,
        case,
        " The scores need one row per query and one column per key, after any batch axes.",
    )
    last = _LAST.get()
    booleans = last is not None and last[0] is out and last[1] == "b"  # same() names those
    flat = np.asarray(out, dtype=float).ravel()
    constant = flat.size > 1 and np.allclose(flat, flat[0]) and not np.allclose(expected, flat[0])
    if constant and not booleans:
        raise Fail(
            f"every score is {flat[0]:g} (on {case}): a placeholder? Each entry should be "
            "the dot product of one query with one key, so they differ: Q @ K.T."
        )
    same(out, expected, case)

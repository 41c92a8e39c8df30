"""Chapter 3 checker: the whole Q Kᵀ, batches included (which scores a change of W_q moves
is in ``scores_change.py``)."""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, softmax
from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned (before becoming floats)
    ATOL,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .names import calls_library, uses_name
from .scores_rounding import rounded

# Words that NumPy and Python put in the message when matrix shapes do not line up.
_SHAPE_ERRORS = ("mismatch", "not aligned", "broadcast", "subscripts")
# NumPy's words when K.transpose(...) names fewer or more axes than K has: (0, 2, 1) on
# a 2-D or 4-D K, or PyTorch's habit (-1, -2) on a batch.
_FIXED_AXES = "axes don't match array"
_FIXED_AXES_HINT = (
    "NumPy's K.transpose takes a full permutation, one axis number per axis of K "
    "(PyTorch's transpose(d0, d1) swaps two). Use np.swapaxes(K, -1, -2): it swaps the "
    "last two axes, however many batch axes come first."
)
# NumPy's words for an axis number K does not have: K.swapaxes(1, 2) on one sentence.
_NO_SUCH_AXIS = "out of bounds for array of dimension"
_NO_SUCH_AXIS_HINT = (
    "Axis numbers counted from the front fit only one number of axes: axes 1 and 2 "
    "exist in a batch, not in one sentence. Count from the end: np.swapaxes(K, -1, -2) "
    "swaps the last two axes of any K."
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
        if _NO_SUCH_AXIS in message:
            raise Fail(f"{head}(on {case}). {_NO_SUCH_AXIS_HINT}") from None
        if "einstein sum" in message:
            raise Fail(f"{head}(on {case}). {_EINSUM_HINT}") from None
        if any(word in message for word in _SHAPE_ERRORS):
            raise Fail(f"{head}(on {case}). {hint}") from None
        raise


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

        # A batch of one sentence: np.squeeze(...) on the answer drops its batch axis.
        Q = np.round(rng.normal(size=(1, 3, 4)), 1)
        K = np.round(rng.normal(size=(1, 5, 4)), 1)
        _check_matrix(cases, "a batch of one: Q of shape (1, 3, 4) and K of shape (1, 5, 4)", Q, K)

        # Many decimals: on the cases above, np.round(Q @ K.T, 2) is exact and would pass.
        Q, K = rng.normal(size=(2, 3, 4))
        _check_matrix(cases, "Q and K of shape (3, 4), with many decimals", Q, K)

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
            "Swap the last two axes of K first: Q @ np.swapaxes(K, -1, -2) puts d_k on both "
            "inner sides, with or without a batch axis."
        )
    out = _run(cases, case, Q, K, hint=hint)
    Kt = np.swapaxes(K, -1, -2)  # (..., d_k, n_k)
    expected = Q @ Kt  # (..., n_q, n_k)
    pairs = Q[..., :, None, :] * K[..., None, :, :]  # (..., n_q, n_k, d_k)
    mistakes = [
        (
            np.swapaxes(expected, -1, -2),
            f"rows are keys and columns are queries (on {case}): you computed K Qᵀ. "
            "Put Q first, Q @ np.swapaxes(K, -1, -2), so that row i belongs to query i.",
        ),
        (
            np.swapaxes(Q, -1, -2) @ K if Q.shape == K.shape else None,
            "you computed Qᵀ K, a d_k x d_k matrix that compares coordinates, not words. "
            "Transpose K instead: Q @ np.swapaxes(K, -1, -2).",
        ),
        (
            Q * K if Q.shape == K.shape else None,
            "you multiplied elementwise (Q * K): that pairs query i only with key i, "
            "coordinate by coordinate. Use the matrix product Q @ np.swapaxes(K, -1, -2).",
        ),
        (
            (Q * K).sum(axis=-1) if Q.shape == K.shape else None,
            "you got one number per query: query i against key i only (the diagonal). "
            "Compare every query with every key: Q @ np.swapaxes(K, -1, -2).",
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
            "query with a key, so put Q first: Q @ np.swapaxes(K, -1, -2).",
        ),
        (
            Q @ np.swapaxes(Q, -1, -2) if Q.shape == K.shape else None,
            f"you compared the queries with each other, Q Qᵀ (on {case}): a score pairs a "
            "query with a key, so the right-hand factor is K, transposed: "
            "Q @ np.swapaxes(K, -1, -2).",
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
            ".sum(-1), or Q @ np.swapaxes(K, -1, -2).",
        ),
        (
            expected
            / (np.linalg.norm(Q, axis=-1)[..., :, None] * np.linalg.norm(K, axis=-1)[..., None, :]),
            "you divided by the lengths of q and k: that is cosine similarity, which keeps "
            "only the angle. The score keeps length too: return Q @ np.swapaxes(K, -1, -2).",
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
    flipped = np.transpose(out) if batched and np.ndim(out) == Q.ndim else None
    if flipped is not None and flipped.shape == expected.shape[:-2] + expected.shape[:-3:-1]:
        if np.allclose(flipped, np.swapaxes(expected, -1, -2)):  # (K Qᵀ).T on a batch
            raise Fail(
                f"returned shape {out.shape}, expected {expected.shape} (on {case}): .T "
                "reverses every axis, so on a batch it moves the sentence axis to the end. "
                "Compute Q @ np.swapaxes(K, -1, -2) directly, with Q first."
            )
    if batched and out.shape == Q.shape[:-1] + K.shape[:-2] + K.shape[-2:-1]:
        used = [f"np.{name}" for name in ("dot", "inner", "tensordot") if uses_name(cases.fn, name)]
        what = " and ".join(used) if used else "np.dot (like np.inner and np.tensordot)"
        raise Fail(
            f"returned shape {out.shape}, expected {expected.shape} (on {case}): {what} "
            "pairs every sentence of the batch with every other one. Use @ (np.matmul), "
            "which keeps the sentences apart."
        )
    squeezed = np.squeeze(expected)
    if out.shape == squeezed.shape != expected.shape and np.allclose(out, squeezed, atol=ATOL):
        raise Fail(
            f"returned shape {out.shape}, expected {expected.shape} (on {case}): squeeze drops "
            "the batch axis when the batch has one sentence. Drop the squeeze: "
            "Q @ np.swapaxes(K, -1, -2) already has the right shape."
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
            "the dot product of one query with one key, so they differ: Q @ np.swapaxes(K, -1, -2)."
        )
    integers = last is not None and last[0] is out and last[1] in "iu"
    if integers and not np.allclose(out, expected, atol=ATOL):
        raise Fail(
            f"your scores are integers (on {case}), so each was cut to a whole number: "
            "drop the integer cast (.astype(int), dtype=int) and keep the floats."
        )
    _low_precision(out, expected, case)
    rounded(out, expected, case)
    same(out, expected, case)


def _low_precision(out: np.ndarray, expected: np.ndarray, case: str) -> None:
    """Fail, naming the cast, on right scores held in float16 (about 3 significant digits)."""
    if np.allclose(out, expected, atol=ATOL) or not np.isfinite(out).all():
        return
    as_half = np.asarray(out, dtype=np.float16).astype(float)  # float16 holds these exactly
    near = np.allclose(out, expected, rtol=4e-3, atol=4e-3 * np.abs(expected).max())
    if np.array_equal(out, as_half) and near:  # float16 sums lose digits on small entries
        i = np.unravel_index(np.abs(out - expected).argmax(), out.shape)
        raise Fail(
            f"your scores were cast to float16 (on {case}), a low-precision dtype with "
            f"about 3 significant digits: got {out[i]:.6g}, expected {expected[i]:.6g}. "
            "Drop the cast (.astype(np.float16), dtype=np.float16) and keep float64."
        )

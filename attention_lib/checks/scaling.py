"""Chapter 4 checker: scaled scores (the variance prediction is in ``variance.py``).

The exercise asks for NumPy only: a function that reaches ``al.attention_scores`` (under
any name) is named as such; a helper of the learner's own with that name is allowed.
"""

from __future__ import annotations

import numpy as np

from ..core import softmax
from .base import Cases, CheckResult, Fail, expect_shape, known_mistakes, same, verdict
from .names import calls_library, uses_name
from .scaled_slips import EINSUM_AXES, off_everywhere


def check_scaled_scores(fn) -> CheckResult:
    """Check ``fn(Q, K)`` returns ``Q Kᵀ / sqrt(d_k)`` of shape ``(..., n_q, n_k)``.

    The cases are never square. In the first, d_k = 9, √d_k = 3, n_q = 5, n_k = 7, their
    roots, 2 and 4 (the toy's √d_k and d_k) are all different, so each wrong divisor gets
    its own hint; one width, 10, is not a perfect square, so a rounded root fails.
    """

    def run(cases: Cases) -> None:
        if calls_library(cases.fn, "attention_scores"):
            raise Fail(
                "your function calls al.attention_scores, which this exercise rules out: "
                "compute Q Kᵀ with NumPy, Q @ np.swapaxes(K, -1, -2), then divide."
            )
        rng = np.random.default_rng(4)
        Q, K = rng.normal(size=(5, 9)), rng.normal(size=(7, 9))  # n_q = 5, n_k = 7, d_k = 9
        case = "Q of shape (5, 9) and K of shape (7, 9)"
        out = _run(cases, case, Q, K)
        if out.shape == (7, 5):
            raise Fail(
                "returned shape (7, 5), which is (n_k, n_q): you computed K Qᵀ. Rows must "
                "be queries and columns keys, so compute Q @ np.swapaxes(K, -1, -2)."
            )
        expect_shape(out, (5, 7), case, _ONE_ROW_PER_QUERY)
        raw = Q @ K.T  # (5, 7)
        known_mistakes(out, *_wrong_scales(raw, d_k=9, n_q=5, n_k=7))
        off_everywhere(out, raw / 3.0, root=3.0, n_q=5, n_k=7)
        same(out, raw / 3.0, case)
        try:  # the values are right; is it an array, as asked?
            returned = cases.fn(Q.copy(), K.copy())
        except Exception:  # it answered once already: leave the type unchecked
            returned = out
        if not isinstance(returned, np.ndarray):
            raise Fail(
                f"the values are right, but your function returns a {type(returned).__name__}: "
                "return the NumPy array that Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) gives."
            )

        Q3, K3 = rng.normal(size=(2, 3, 25)), rng.normal(size=(2, 6, 25))  # batch of 2
        case = "a batch: Q of shape (2, 3, 25) and K of shape (2, 6, 25)"
        out = _run(cases, case, Q3, K3, batch=True)
        expect_shape(out, (2, 3, 6), case, _batch_shape_hint(cases.fn))
        raw = Q3 @ np.swapaxes(K3, -1, -2)  # (2, 3, 6)
        known_mistakes(
            out,
            (
                raw / 3,
                "on a batch you divided by 3: either a 3 typed in (√9, right only for the "
                "first case) or n_q, the number of queries here (Q.shape[-2]). Read d_k from "
                "this input's last axis: np.sqrt(Q.shape[-1]) = 5.",
            ),
            (
                raw / np.sqrt(3),
                "on a batch you divided by √3, but 3 = Q.shape[1] is the number of queries "
                "here: d_k is always the last axis, Q.shape[-1] = 25.",
            ),
            (
                raw / np.sqrt(2),
                "on a batch you divided by √2, but 2 = Q.shape[0] (or len(Q)) is the batch "
                "size here: d_k is always the last axis, Q.shape[-1] = 25.",
            ),
            *_wrong_scales(raw, d_k=25, n_q=3, n_k=6),
        )
        same(out, raw / 5.0, case)

        # Batch and heads, as in multi-head attention: a transpose that names three axes fails.
        Q4, K4 = rng.normal(size=(2, 3, 5, 36)), rng.normal(size=(2, 3, 7, 36))
        case = "batch and heads: Q of shape (2, 3, 5, 36) and K of shape (2, 3, 7, 36)"
        out = _run(cases, case, Q4, K4, batch=True)
        expect_shape(out, (2, 3, 5, 7), case, _batch_shape_hint(cases.fn))
        raw = Q4 @ np.swapaxes(K4, -1, -2)  # (2, 3, 5, 7)
        known_mistakes(
            out,
            (
                raw / np.sqrt(3),
                "with heads you divided by √3, but 3 = Q.shape[1] is the number of heads "
                "here: d_k is always the last axis, Q.shape[-1] = 36.",
            ),
            *_wrong_scales(raw, d_k=36, n_q=5, n_k=7),
        )
        same(out, raw / 6.0, case)

        # One query, and d_k = 10 is not a perfect square: √10 = 3.162..., not 3.
        Q1, K1 = rng.normal(size=(1, 10)), rng.normal(size=(5, 10))
        case = "one query: Q of shape (1, 10) and K of shape (5, 10)"
        out = _run(cases, case, Q1, K1)
        expect_shape(out, (1, 5), case, _ONE_ROW_PER_QUERY)
        raw = Q1 @ K1.T  # (1, 5)
        known_mistakes(
            out,
            (
                raw / 3,
                "with d_k = 10 you divided by 3, √10 rounded down to a whole number. Keep "
                "the square root as it is, np.sqrt(d_k) = 3.162..., not int(np.sqrt(d_k)).",
            ),
            *_wrong_scales(raw, d_k=10, n_q=1, n_k=5),
        )
        same(out, raw / np.sqrt(10), case)

    return verdict("scaled_scores", fn, run)


_TRANSPOSE_K = (
    "Q is (n_q, d_k) and K is (n_k, d_k): a matrix product pairs the columns of its left "
    "factor with the rows of its right one, so transpose K (not Q) to put d_k against d_k: "
    "Q @ np.swapaxes(K, -1, -2), which is Q @ K.T for 2-D arrays."
)
_ENTRY_BY_ENTRY = (
    "Q * K multiplies entry by entry, pairing query i only with key i, and fails here "
    "because there are 5 queries and 7 keys. A score pairs every query with every key: "
    "that is a matrix product, Q @ np.swapaxes(K, -1, -2)."
)
_FIXED_AXES = (
    "A transpose that names its axes, such as K.transpose(0, 2, 1), fits one number of "
    "dimensions only. Swap the last two axes whatever comes before them: "
    "np.swapaxes(K, -1, -2)."
)
_ONE_ROW_PER_QUERY = " One row per query, one column per key: Q @ np.swapaxes(K, -1, -2)."
_K_T_ON_A_BATCH = (
    "With a batch axis, K.T reverses *every* axis; swap only the last two, np.swapaxes(K, -1, -2)."
)
_TRANSPOSE_ALL = (
    "With a batch axis, a transpose without axes (K.transpose(), np.transpose(K)) reverses "
    "*every* axis; swap only the last two, np.swapaxes(K, -1, -2)."
)
_ONLY_2D = (
    "Your function works on 2-D inputs but not with a batch axis in front. Write it with "
    "operations on the last two axes, whatever comes before them: "
    "Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])."
)
_SWAPPED_WRONG_AXES = (
    "Your swapaxes swaps the wrong pair: axes counted from the front change meaning when "
    "a batch or heads come in front. Count from the end, the last two whatever comes "
    "before them: np.swapaxes(K, -1, -2)."
)
_AXIS_OUT_OF_BOUNDS = (
    "Your function names an axis this input does not have: count axes from the end, "
    "np.swapaxes(K, -1, -2), which fits 2-D inputs and batches alike."
)
_IN_PLACE = (
    "work on a new array instead: {name} = {name} / np.sqrt(d_k), not {name} /= "
    "np.sqrt(d_k), which also divides the caller's {name}."
)


def _changed_input(fn, Q: np.ndarray, K: np.ndarray) -> str:
    """Which input ``fn`` changes in place: "K" when only K changes, else "Q"."""
    q, k = Q.copy(), K.copy()
    try:
        fn(q, k)
    except Exception:  # noqa: BLE001
        return "Q"
    return "K" if np.array_equal(q, Q) and not np.array_equal(k, K) else "Q"


_NP_DOT = (
    "np.dot is a matrix product only for 2-D arrays: on a batch it pairs every sentence's "
    "queries with every sentence's keys. The @ operator (np.matmul) multiplies batch by "
    "batch: Q @ np.swapaxes(K, -1, -2)."
)
_TENSORDOT = (
    "np.tensordot sums over the axes you name and keeps every other axis of both arrays: "
    "on a batch it pairs every sentence's queries with every sentence's keys. The @ "
    "operator (np.matmul) multiplies batch by batch: Q @ np.swapaxes(K, -1, -2)."
)


def _batch_shape_hint(fn) -> str:
    """The hint for a wrong shape on a batch: np.dot's, tensordot's, or swap the last two axes."""
    if uses_name(fn, "tensordot"):
        return " " + _TENSORDOT
    if uses_name(fn, "dot"):
        return " " + _NP_DOT
    return " Transpose only the last two axes of K: np.swapaxes(K, -1, -2)."


def _hint_without_dot_t(fn) -> str:
    """A batch broke the product; ``fn`` writes neither ``.T`` nor swapaxes: name its tool."""
    if uses_name(fn, "transpose"):
        return _TRANSPOSE_ALL
    return _ONLY_2D  # a loop over rows, say: nothing to blame but the 2-D assumption


def _run(cases: Cases, case: str, Q: np.ndarray, K: np.ndarray, batch: bool = False):
    """``cases.run``, but an error inside the learner's function gets a hint for its cause."""
    try:
        return cases.run(case, Q, K)
    except Fail as fail:
        message = str(fail)
        if "changed its input array in place" in message:  # base's hint names -=, not /=
            name = _changed_input(cases.fn, Q, K)
            raise Fail(
                f"your function changed its input array {name} in place (on {case}); "
                + _IN_PLACE.format(name=name)
            ) from None
        if not message.startswith("your function raised"):
            raise
        head = message.split(f"(on {case}).")[0] + f"(on {case})."  # without the generic tail
        if "ellipsis" in message or "too many subscripts" in message:  # np.einsum's
            hint = EINSUM_AXES
        elif "axes don't match" in message:
            hint = _FIXED_AXES
        elif "AxisError" in message:
            hint = _AXIS_OUT_OF_BOUNDS
        elif "matmul" in message and batch and uses_name(cases.fn, "swapaxes"):
            hint = _SWAPPED_WRONG_AXES  # K.T, if also there, is for 2-D inputs, which passed
        elif "not aligned" in message and batch:
            hint = _NP_DOT
        elif "broadcast" in message and not batch:
            hint = _ENTRY_BY_ENTRY
        elif "matmul" in message and batch and not uses_name(cases.fn, "T"):
            hint = _hint_without_dot_t(cases.fn)
        elif "matmul" in message:
            hint = _K_T_ON_A_BATCH if batch else _TRANSPOSE_K
        else:
            raise
        raise Fail(f"{head} {hint}") from None


def _wrong_scales(raw: np.ndarray, *, d_k: int, n_q: int, n_k: int) -> list[tuple]:
    """The usual wrong scalings of ``raw = Q Kᵀ``, each with its hint."""
    root = np.sqrt(d_k)
    mistakes = [
        (
            softmax(raw / root),
            "you applied softmax: each row sums to 1. This step stops at the scaled scores "
            "Q Kᵀ / √d_k; softmax comes after it (chapter 5).",
        ),
        (
            softmax(raw),
            "you applied softmax to the raw scores: return the scaled scores "
            "Q Kᵀ / √d_k themselves, before any softmax.",
        ),
        (raw, f"you returned the raw scores Q Kᵀ: divide them by √d_k (here √{d_k} = {root:g})."),
        (
            raw / d_k,
            f"you divided by d_k = {d_k} (dividing both Q and K by √d_k does that too); "
            f"divide the product once, by √{d_k} = {root:g}.",
        ),
        (raw * root, f"you multiplied by √d_k = {root:g}; divide by it instead."),
        (
            raw / 2,
            "you divided by 2, which is √d_k only for the toy's d_k = 4. Compute d_k from "
            "the shapes: Q.shape[-1].",
        ),
        (
            raw / 4,
            "you divided by 4, the toy's d_k. Divide by the square root of this input's "
            "d_k: np.sqrt(Q.shape[-1]).",
        ),
        (
            raw / np.sqrt(n_q),
            f"you divided by √{n_q} = √n_q: d_k is the number of columns of Q, "
            "Q.shape[-1], not the number of queries (rows).",
        ),
        (
            raw / np.sqrt(n_k),
            f"you divided by √{n_k} = √n_k: d_k is the number of columns of K, "
            "K.shape[-1], not the number of keys (rows).",
        ),
        (
            raw / n_q,
            f"you divided by {n_q} = n_q, the number of queries (Q.shape[-2]): divide by "
            "√d_k, the square root of the number of columns, np.sqrt(Q.shape[-1]).",
        ),
        (
            raw / n_k,
            f"you divided by {n_k} = n_k, the number of keys (K.shape[-2]): divide by "
            "√d_k, the square root of the number of columns, np.sqrt(Q.shape[-1]).",
        ),
    ]
    slip = "** binds tighter than /: write d_k ** 0.5 or np.sqrt(d_k)."  # d_k ** 1/2
    mistakes += [(raw * 2 / d_k, f"you divided by d_k ** 1/2 = {d_k / 2:g}; {slip}")]
    mistakes += [(raw / d_k / 2, f"you divided by d_k, then by 2; {slip}")]  # listed last
    # Where a wrong divisor happens to equal √d_k, it is the answer, not a mistake.
    return [(wrong, hint) for wrong, hint in mistakes if not np.allclose(wrong, raw / root)]

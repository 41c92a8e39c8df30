"""Hints of the softmax checkers (chapters 5 and 10), kept apart so their modules stay short."""

from __future__ import annotations

import contextlib

import numpy as np

from ..core import softmax
from .base import _LAST, ATOL, Cases, Fail, fmt

_RULED_OUT = {
    "softmax_backward": "multiply out J dp yourself, with J = diag(p) - p pᵀ.",
    "softmax_jacobian": "it builds J, n x n numbers per row where the answer has n. "
    "Multiply out row j of J dp on paper: it needs no J.",
}

_AXIS_1 = (
    "axis=1 is the second axis, the last one only in a 2-D array: with a batch axis in "
    "front it sums across rows, and one row alone has no axis 1. Sum along the last "
    "axis, whatever the shape: axis=-1."
)

_AXES = {  # an axis that one row, p of shape (3,), lacks: named, with the fix
    "1": _AXIS_1,
    "-2": "axis=-2 is the second-to-last axis: on a matrix it sums down the columns, and "
    "one row alone has no axis -2. Every row is its own softmax: sum along the last axis, "
    "axis=-1.",
}

_ONE_ROW = (
    "It is right on each row alone, so it handles one row only (a J built with np.diag "
    "and np.outer, or p @ dp, fits one row). Give every row its own sum along the last "
    "axis, kept as a column with keepdims=True."
)

_ONE_D = (
    "This first case is one row, p of shape (3,) with no row axis, so p[i] is a number, "
    "not a row: your code assumes a row axis. It is right on a batch: make it handle one "
    "row too, e.g. "
    "loop with np.ndindex(p.shape[:-1]), which visits every row whatever the leading axes."
)

# What an AxisError means: an axis number that the array does not have (axis=1 on a row).
_SOFTMAX_AXIS = (
    "A 1-D row has only axis 0: use the axis argument, whose default -1 names the last "
    "axis whatever the number of dimensions."
)
_SOFTMAX_LOOP = (  # a Python loop over the entries of one row meets whole rows in a matrix
    "Your code handles one row, but in a matrix it met a whole row where it expected one "
    "number: my_softmax must also take 2-D and 3-D arrays. Use np.max, np.exp and np.sum "
    "along axis, with keepdims=True, and no Python loop."
)
_SWAPPED = (
    "The checker passes axis second: check the order of your parameters, "
    "my_softmax(x, axis=-1, temperature=1.0). With temperature second, axis=0 becomes T = 0."
)
_ANY_AXES = (  # a loop over rows, written for a matrix, meets the first case: one row
    "The first case is one row, x of shape (3,): my_softmax must handle any number of axes "
    "(one row, a matrix, a 3-D array). Use np.max, np.exp and np.sum along axis, with "
    "keepdims=True, and no Python loop."
)
_FLOAT16 = (  # chapter 5's two checkers: a float16 input (softmax) or output (entropy)
    "that is float16 rounding (about 3 significant digits), not a wrong formula. Compute "
    "in float64: do not cast to float16."
)

_BASE_2 = "your weights use base 2 (np.exp2 or 2 ** x): the base must be e: np.exp."
_HARD_ARG_MAX = (
    "you returned a one-hot row, [0, 0, 1]: this is the hard arg max: softmax keeps every "
    "weight above 0. Divide the exponentials by their sum instead."
)


def _max_slips(out: np.ndarray, x: np.ndarray) -> None:
    """Name the max divided out, subtracted after exp, or subtracted on one side only."""
    for scale, side in ((np.exp(-x.max()), "numerator"), (np.exp(x.max()), "sum")):
        if np.allclose(out, scale * softmax(x), atol=ATOL):  # exp(x - m) / sum(exp(x))
            raise Fail(
                f"for x = [1, 2, 3] your weights sum to {out.sum():.6f}, not 1: you "
                f"subtracted the max only in the {side}. Subtract the same max in the sum "
                "as in each exponential."
            )
    if np.allclose(out, softmax(x / x.max()), atol=ATOL):
        raise Fail(
            "you divided the scores by their maximum instead of subtracting it: dividing "
            "rescales the scores (like a temperature) and changes the weights. Subtract the "
            "max, x - max."
        )
    if np.any(out <= 0) and np.isclose(out.sum(), 1.0):  # (e - e.max()) / its sum
        raise Fail(
            f"for x = [1, 2, 3] a weight is zero or negative ({fmt(out)}), but softmax keeps "
            "every weight above 0: subtract the max from the scores before exp, not from "
            "the exponentials after it."
        )


_IGNORES_X = (
    "for a 2 x 3 matrix you returned the weights of x = [1, 2, 3] again: your answer "
    "ignores x. Compute the weights from the x you are given."
)


def _matrix_slips(x1: np.ndarray, x2: np.ndarray) -> tuple:
    """Known wrong answers for the 2 x 3 matrix x2: x1's weights again, or floor division."""
    floored = (  # (x - max) // T or x // T: 0.5 - 2 floors to -2 at T = 1
        softmax(np.floor(x2)),
        "for a 2 x 3 matrix your weights are those of the scores rounded down: // is "
        "floor division. Divide by T with /.",
    )
    return (softmax(x1), _IGNORES_X), floored


def _raw_output(cases, x: np.ndarray):
    """The learner's output on ``x``, untouched (None if it raises); one more case."""
    cases.count += 1
    with contextlib.suppress(Exception), np.errstate(all="ignore"):
        return cases.fn(x.copy(), -1, 1.0)


def _in_float16(cases, x: np.ndarray, out: np.ndarray) -> bool:
    """Right to float16's precision but not to ATOL: float16 arithmetic, not a wrong formula."""
    right = softmax(x)
    if np.allclose(out, right, atol=ATOL) or not np.allclose(out, right, atol=2e-3):
        return False
    raw = _raw_output(cases, x)
    x16 = x.astype(np.float16)
    e16 = np.exp(x16 - x16.max())
    return getattr(raw, "dtype", None) == np.float16 or np.allclose(out, e16 / e16.sum())


def _as_int(out: np.ndarray) -> None:
    """Name weights cast to integers (astype(int)) or floored (e // sum): each became 0."""
    last = _LAST.get()
    if last is not None and last[0] is out and last[1] in "iu":
        raise Fail(
            f"for x = [1, 2, 3] you returned integers ({fmt(out)}): a cast such as "
            "astype(int) turns every weight below 1 into 0. Return the float weights."
        )
    if not out.any():  # e // e.sum(): every weight below 1 floors to 0
        raise Fail(
            "for x = [1, 2, 3] every weight is 0: // is floor division, and each weight is "
            "below 1. Divide the exponentials by their sum with /."
        )


def _rounded(out: np.ndarray, right: np.ndarray) -> None:
    """Name right weights rounded or truncated to a few decimals (not a wrong division)."""
    for k in range(1, 6):
        places = f"{k} decimal{'s' * (k > 1)} ({fmt(out)})"
        if np.allclose(out, np.round(right, k), rtol=0, atol=1e-12):
            raise Fail(
                f"for x = [1, 2, 3] you returned the right weights rounded to {places}: "
                "return them unrounded (no np.round or round)."
            )
        if np.allclose(out, np.trunc(right * 10**k) / 10**k, rtol=0, atol=1e-12):
            raise Fail(
                f"for x = [1, 2, 3] you returned the right weights truncated to {places}: "
                "return them at full precision (no astype(int) or np.trunc on the weights)."
            )


def _explain_errors(run, hints: dict):
    """Wrap a checker's ``run``: a failure whose text holds a key of ``hints`` gets its hint."""

    def explained(cases: Cases) -> None:
        try:
            run(cases)
        except Fail as fail:
            hint = next((h for key, h in hints.items() if key in str(fail)), None)
            if hint is None:
                raise
            raise Fail(f"{fail} {hint}") from None

    return explained

"""Chapter 5 checker: a stable softmax with temperature (the entropy one is in entropy.py).

The softmax exercise asks for NumPy only: a function that calls a library's softmax (``al.softmax``
under any name, SciPy's) is named as such, as chapter 10's checker does for ``attention_backward``;
a helper of the learner's own, even one called ``softmax``, is allowed; the grader agrees.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..core import softmax
from .base import ATOL, Cases, CheckResult, Fail, expect_shape, fmt, known_mistakes, same, verdict
from .names import calls_library
from .softmax_hints import (
    _ANY_AXES,
    _BASE_2,
    _FLOAT16,
    _HARD_ARG_MAX,
    _SOFTMAX_AXIS,
    _SOFTMAX_LOOP,
    _SWAPPED,
    _as_int,
    _explain_errors,
    _in_float16,
    _matrix_slips,
    _max_slips,
    _raw_output,
    _rounded,
)
from .softmax_slips import rows_not_one


def check_softmax(fn) -> CheckResult:
    """Check ``fn(x, axis, temperature)`` against :func:`attention_lib.softmax`."""

    def run(cases: Cases) -> None:
        if cases.fn is softmax or calls_library(cases.fn, "softmax"):  # al.softmax, an alias
            raise Fail(
                "your function calls a softmax (al.softmax or another library's), which "
                "this exercise rules out: write it with np.max, np.exp and np.sum."
            )
        _takes_axis_and_temperature(cases.fn)
        x1 = np.array([1.0, 2.0, 3.0])
        out = cases.run("x = [1, 2, 3]", x1)
        added = f" {_ANY_AXES}" if out.shape == (1, *x1.shape) else ""  # np.atleast_2d
        expect_shape(out, x1.shape, "x = [1, 2, 3]", added)
        known_mistakes(
            out,
            (
                x1,
                "you returned the scores unchanged: exponentiate the shifted scores, "
                "then divide the exponentials by their sum.",
            ),
            (
                x1 / x1.sum(),
                "you divided the scores by their sum without exponentiating them, which "
                "breaks on negative scores: take exp of the shifted scores first.",
            ),
            (
                np.log(softmax(x1)),
                "you returned log-probabilities (they are negative): exponentiate the "
                "shifted scores, then divide by their sum.",
            ),
            (
                np.ones_like(x1),
                _ANY_AXES + " Every weight came out 1: each entry was normalised on its own.",
            ),
            (np.eye(3)[2], _HARD_ARG_MAX),  # one-hot on the largest score
            (np.exp2(x1) / np.exp2(x1).sum(), _BASE_2),  # 2 ** x, not e ** x
            (
                softmax(-x1),
                "your weights run backwards (the largest score gets the smallest weight): "
                "you computed max - x. Shift the other way, x - max, so that every "
                "exponent is at most 0.",
            ),
        )
        total = out.sum()
        _as_int(out)
        _rounded(out, softmax(x1))
        _max_slips(out, x1)  # x / max, e - e.max(), a one-sided shift
        if _in_float16(cases, x1, out):
            raise Fail(f"the outputs for x = [1, 2, 3] sum to {total:.6f}, not 1: {_FLOAT16}")
        if not np.isclose(total, 1.0, atol=ATOL):
            raise Fail(
                f"the outputs for x = [1, 2, 3] sum to {total:.6f}, not 1: divide "
                "each exponential by the sum of all of them."
            )
        same(out, softmax(x1), "x = [1, 2, 3]")
        raw = _raw_output(cases, x1)  # right values: but is it an array? (a case too)
        if raw is not None and not isinstance(raw, np.ndarray):
            kind = type(raw).__name__
            raise Fail(f"your function returned a {kind}: return a NumPy array (np.asarray).")

        x2 = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]])  # 2 queries x 3 keys
        case = "a 2 x 3 matrix"
        out = cases.run(case, x2)
        known_mistakes(out, *_matrix_slips(x1, x2))  # a hard-coded answer; floor division
        turned = " Transposed? Return x's own shape." if out.shape == x2.shape[::-1] else ""
        expect_shape(out, x2.shape, case, turned)
        rows, cols = out.sum(axis=1), out.sum(axis=0)
        if not np.allclose(rows, 1.0, atol=ATOL):
            if np.allclose(cols, 1.0, atol=ATOL):
                raise Fail(
                    f"rows sum to {fmt(rows)} but columns sum to 1: you normalised "
                    "over the wrong axis. Each query's row must sum to 1 (axis=-1)."
                )
            raise rows_not_one(out, case)  # names a division by the whole array's total
        known_mistakes(
            out,
            (
                _max_on_other_axis(x2, max_axis=0, axis=-1),
                "you normalised the rows but subtracted each column's maximum "
                "(axis=0): take the max along the same axis you normalise.",
            ),
        )
        same(out, softmax(x2), case)

        case = "the same matrix with axis=0"
        with np.errstate(all="ignore"):
            out = cases.run(case, x2, 0)
        expect_shape(out, x2.shape, case)
        if not np.all(np.isfinite(out)):  # my_softmax(x, temperature, axis) divides by 0
            raise Fail(f"got nan or inf for {case}. {_SWAPPED}")
        known_mistakes(
            out,
            (softmax(x2), "with axis=0 you still normalised the rows: use the axis argument."),
            (
                _max_on_other_axis(x2, max_axis=-1, axis=0),
                "with axis=0 you normalised the columns but subtracted each row's "
                "maximum (axis=-1): take the max along the same axis you normalise.",
            ),
        )
        cols, rows = out.sum(axis=0), out.sum(axis=-1)
        if not np.allclose(cols, 1.0, atol=ATOL) and np.allclose(rows, 1.0, atol=ATOL):
            raise Fail(
                f"with axis=0 your columns sum to {fmt(cols)} but your rows sum to 1: you "
                "summed along the last axis whatever axis was. Sum along axis, as you take "
                "the max."
            )
        same(out, softmax(x2, axis=0), case)

        case = "x = [1, 2, 3] with temperature=2"
        out = cases.run(case, x1, -1, 2.0)
        expect_shape(out, x1.shape, case)
        if np.allclose(out, softmax(x1), atol=ATOL):
            _t_subtracted(cases, x1)
        known_mistakes(
            out,
            (
                softmax(x1),
                "temperature=2 gave the same result as temperature=1: T is either "
                "unused or applied after exp, where dividing every exp(z) by T cancels "
                "in the normalisation. Divide the scores by T before exp.",
            ),
            (
                softmax(x1 * 2.0),
                "with temperature=2 your result is sharper, not flatter: "
                "you multiplied by T. Divide the scores by T instead.",
            ),
            (
                softmax(x1 / 4.0),
                "with temperature=2 your result is too flat: you divided the scores "
                "by T twice (by T ** 2). Divide them by T once.",
            ),
            (
                softmax(x1 / np.sqrt(2.0)),
                "with temperature=2 your result is not flat enough: you divided the "
                "scores by the square root of T. Divide them by T itself.",
            ),
        )
        total = out.sum()
        if not np.isclose(total, 1.0, atol=ATOL):
            raise Fail(
                f"with temperature=2 your rows do not sum to 1 (x = [1, 2, 3] gives "
                f"{total:.4g}): T must divide the scores in the numerator and the "
                "denominator alike. Compute e = exp((x - max) / T) once, then divide e "
                "by its own sum."
            )
        same(out, softmax(x1, temperature=2.0), case)

        big = np.array([1000.0, 1001.0, 1002.0])
        _finite_and_same(
            cases,
            "scores near 1000",
            big,
            "exp(1000) overflows. Subtract each row's "
            "maximum before exp; the result does not change.",
        )
        _finite_and_same(
            cases,
            "scores near -1000",
            -big,
            "exp(-1000) underflows to 0, and 0 / 0 is "
            "nan. Subtracting each row's maximum fixes this too.",
        )
        _finite_and_same(
            cases,
            "scores near 1000 with temperature=0.5",
            big,
            "dividing by T = 0.5 doubles the scores "
            "to about 2000, so subtracting the max of x is not enough. Subtract the max "
            "of x / T, or shift x before dividing by T.",
            temperature=0.5,
        )
        spread = np.array([[-1000.0, 0.0, 1000.0], [-1000.0, -999.0, -1001.0]])
        _finite_and_same(
            cases,
            "rows spanning -1000 to 1000",
            spread,
            "a row still overflows or underflows. "
            "Subtract each row's own maximum: not its minimum or mean, and not one "
            "maximum for the whole array.",
        )
        _finite_and_same(  # beyond np.longdouble too: only the max trick passes
            cases,
            "scores near 12000 and -12000",
            np.array([[12000.0, 12001.0, 12002.0], [-12000.0, -12001.0, -12002.0]]),
            "exp(12000) overflows even in np.longdouble, and exp(-12000) "
            "underflows to 0. A wider float only moves the limit: subtract each row's "
            "maximum before exp.",
        )

        x3 = np.random.default_rng(5).normal(scale=3.0, size=(2, 3, 4))
        for axis in (0, 1, 2, -1):
            for T in (0.5, 3.0):
                case = f"a 2 x 3 x 4 array with axis={axis}, temperature={T:g}"
                out = cases.run(case, x3, axis, T)
                expect_shape(out, x3.shape, case)
                same(out, softmax(x3, axis=axis, temperature=T), case)

    hints = {
        "raised AxisError": _SOFTMAX_AXIS,
        "truth value of an array": _SOFTMAX_LOOP,
        "not iterable (on x = [1, 2, 3])": _ANY_AXES,  # a loop over the rows of a matrix
        "array is 1-dimensional, but 2 were indexed (on x = [1, 2, 3])": _ANY_AXES,
        "tuple index out of range (on x = [1, 2, 3])": _ANY_AXES,  # x.shape[1]
    }
    return verdict("softmax", fn, _explain_errors(run, hints))


def _takes_axis_and_temperature(fn) -> None:
    """Name a signature that cannot take ``(x, axis, temperature)`` before any case runs."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or a C function: let the cases decide
        return
    try:
        signature.bind(np.zeros(3), -1, 1.0)
    except TypeError:
        raise Fail(
            f"your function's signature is {fn.__name__}{signature}, but the checker calls "
            "it with three arguments: write it as my_softmax(x, axis=-1, temperature=1.0)."
        ) from None


def _t_subtracted(cases: Cases, x: np.ndarray) -> None:
    """T had no effect: if a huge T makes every weight nan, T was subtracted, not divided."""
    with np.errstate(all="ignore"):
        out = cases.run("x = [1, 2, 3] with temperature=1000", x, -1, 1000.0)
    if not np.all(np.isfinite(out)):
        raise Fail(
            "temperature=2 gave the same result as temperature=1, and temperature=1000 "
            "gave nan: you subtracted T from the scores. A shift cancels in softmax, and "
            "exp(-1000) is 0. Divide the scores by T instead."
        )


def _max_on_other_axis(x, max_axis: int, axis: int) -> np.ndarray:
    """The slip of shifting by the maximum along one axis and normalising along another."""
    e = np.exp(x - x.max(axis=max_axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _finite_and_same(
    cases: Cases, case: str, x: np.ndarray, why: str, temperature: float = 1.0
) -> None:
    """Run one overflow-prone case: nan or inf gets the hint ``why``."""
    out = cases.run(case, x, -1, temperature)
    expect_shape(out, x.shape, case)
    if not np.all(np.isfinite(out)):
        raise Fail(f"got nan or inf for {case}: {why}")
    sums = np.sum(out, axis=-1)
    if np.any(np.isclose(sums, 0.0, atol=ATOL)):  # nan zeroed by np.nan_to_num, say
        raise Fail(
            f"for {case} a row of weights sums to {fmt(sums)}, not 1: the formula gave "
            "nan there, and replacing nan by 0 (np.nan_to_num, say) hides it. " + why
        )
    flat = np.allclose(out, np.mean(out, axis=-1, keepdims=True), atol=ATOL)
    if flat and not np.allclose(x, np.mean(x, axis=-1, keepdims=True)):
        raise Fail(
            f"for {case} every weight in a row is the same, though the scores differ: "
            "clipping or capping the scores (np.clip) erases their differences. "
            "Subtract each row's maximum instead; that keeps them."
        )
    same(out, softmax(x, temperature=temperature), case)

"""Exercise checkers: run a learner's function on fixed cases and say what went wrong.

A checker never raises. It prints exactly one line that starts with a stable tag, so a
grader can read it and a learner can act on it::

    [softmax] PASS: all 6 cases match the reference.
    [softmax] FAIL: got nan for logits near 1000: exp overflowed. Subtract each row's ...
    [softmax] TODO: your function returned None. Write its body, then run this cell again.

and returns a :class:`CheckResult`, which is truthy exactly when the exercise passed.
The hints come from recognising the usual mistakes, not from generic "wrong answer"s.
"""

from __future__ import annotations

import numpy as np

from .core import softmax

ATOL = 1e-6


class CheckResult:
    """The outcome of a checker: truthy when passed. Its line has already been printed."""

    def __init__(self, exercise: str, status: str, message: str):
        self.exercise = exercise
        self.status = status  # "PASS", "FAIL" or "TODO"
        self.message = message

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    @property
    def line(self) -> str:
        return f"[{self.exercise}] {self.status}: {self.message}"

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"CheckResult({self.line!r})"

    def _ipython_display_(self) -> None:
        """Show nothing in Jupyter: the verdict line was printed when the check ran."""


class _Fail(Exception):
    """Raised inside a checker to stop at the first mistake with its hint."""


class _Todo(Exception):
    """Raised inside a checker when the learner has not written the function yet."""


def _verdict(exercise: str, run) -> CheckResult:
    try:
        n_cases = run()
        result = CheckResult(exercise, "PASS", f"all {n_cases} cases match the reference.")
    except _Todo as todo:
        result = CheckResult(exercise, "TODO", str(todo))
    except _Fail as fail:
        result = CheckResult(exercise, "FAIL", str(fail))
    except Exception as err:  # a bug in the checker itself must not crash the notebook
        result = CheckResult(exercise, "FAIL", f"the checker could not finish: {err!r}")
    print(result.line)
    return result


def _call(fn, case: str, *args, **kwargs) -> np.ndarray:
    """Call the learner's function on a copy of the inputs and tidy up what comes back."""
    copies = [np.array(a, dtype=float) for a in args]
    try:
        with np.errstate(all="ignore"):  # the verdict explains overflow; no raw warnings
            out = fn(*copies, **kwargs)
    except Exception as err:
        hint = ""
        if "broadcast" in str(err):
            hint = " A sum over one axis needs keepdims=True to line up with the array again."
        raise _Fail(
            f"your function raised {type(err).__name__}: {err} (on {case}).{hint}"
        ) from None
    if out is None:
        raise _Todo("your function returned None. Write its body, then run this cell again.")
    for a, original in zip(copies, args, strict=True):
        if not np.array_equal(a, np.asarray(original, dtype=float)):
            raise _Fail(
                f"your function changed its input array in place (on {case}); "
                "work on a new array instead, e.g. x = x - x.max(...)."
            )
    try:
        out = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise _Fail(
            f"your function returned {type(out).__name__}, not an array of numbers (on {case})."
        ) from None
    return out


def _expect_shape(out: np.ndarray, shape: tuple, case: str, hint: str = "") -> None:
    if out.shape != shape:
        raise _Fail(f"returned shape {out.shape}, expected {shape} (on {case}).{hint}")


# --- Exercise: a numerically stable softmax with temperature -----------------------------


def check_softmax(fn) -> CheckResult:
    """Check ``fn(x, axis=-1, temperature=1.0)`` against :func:`attention_lib.softmax`."""

    def run() -> int:
        x1 = np.array([1.0, 2.0, 3.0])
        out = _call(fn, "x = [1, 2, 3]", x1)
        _expect_shape(out, x1.shape, "x = [1, 2, 3]")
        _known_mistakes(
            out,
            (
                np.log(softmax(x1)),
                "you returned log-probabilities (they are negative): exponentiate the "
                "shifted logits, then divide by their sum.",
            ),
        )
        total = out.sum()
        if not np.isclose(total, 1.0, atol=ATOL):
            raise _Fail(
                f"the outputs for x = [1, 2, 3] sum to {total:.6f}, not 1: divide "
                "each exponential by the sum of all of them."
            )
        _same(out, softmax(x1), "x = [1, 2, 3]")

        x2 = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]])  # 2 queries x 3 keys
        case = "a 2 x 3 matrix"
        out = _call(fn, case, x2)
        _expect_shape(out, x2.shape, case)
        rows, cols = out.sum(axis=1), out.sum(axis=0)
        if not np.allclose(rows, 1.0, atol=ATOL):
            if np.allclose(cols, 1.0, atol=ATOL):
                raise _Fail(
                    f"rows sum to {_fmt(rows)} but columns sum to 1: you normalised "
                    "over the wrong axis. Each query's row must sum to 1 (axis=-1)."
                )
            raise _Fail(
                f"rows of {case} sum to {_fmt(rows)}, not 1: normalise along the "
                "axis you were given, with keepdims=True."
            )
        _same(out, softmax(x2), case)

        case = "the same matrix with axis=0"
        out = _call(fn, case, x2, axis=0)
        _expect_shape(out, x2.shape, case)
        _known_mistakes(
            out,
            (softmax(x2), "with axis=0 you still normalised the rows: use the axis argument."),
        )
        _same(out, softmax(x2, axis=0), case)

        case = "x = [1, 2, 3] with temperature=2"
        out = _call(fn, case, x1, temperature=2.0)
        _expect_shape(out, x1.shape, case)
        _known_mistakes(
            out,
            (
                softmax(x1),
                "temperature=2 gave the same result as temperature=1: the "
                "temperature is ignored. Divide the logits by it before exp.",
            ),
            (
                softmax(x1 * 2.0),
                "with temperature=2 your result is sharper, not flatter: "
                "you multiplied by T. Divide the logits by T instead.",
            ),
        )
        _same(out, softmax(x1, temperature=2.0), case)

        big = np.array([1000.0, 1001.0, 1002.0])
        _finite_and_same(
            fn,
            "logits near 1000",
            big,
            "exp(1000) overflows. Subtract each row's "
            "maximum before exp; the result does not change.",
        )
        _finite_and_same(
            fn,
            "logits near -1000",
            -big,
            "exp(-1000) underflows to 0, and 0 / 0 is "
            "nan. Subtracting each row's maximum fixes this too.",
        )
        spread = np.array([[-1000.0, 0.0, 1000.0], [-1000.0, -999.0, -1001.0]])
        _finite_and_same(
            fn,
            "rows spanning -1000 to 1000",
            spread,
            "a row still overflows or underflows. "
            "Subtract each row's own maximum: not its minimum or mean, and not one "
            "maximum for the whole array.",
        )
        return 8

    return _verdict("softmax", run)


# --- Exercise: the entropy of an attention row -------------------------------------------


def check_entropy(fn) -> CheckResult:
    """Check ``fn(weights)``: entropy in nats of each row along the last axis."""

    def run() -> int:
        uniform = np.full(8, 1 / 8)
        case = "a uniform row over 8 keys"
        out = _call(fn, case, uniform)
        hint = " Sum over the last axis so one row gives one number."
        if out.size == 1:
            hint = " Drop keepdims=True: one row should give a plain number."
        _expect_shape(out, (), case, hint)
        _known_mistakes(
            out,
            (
                -np.log(8),
                "got -2.079 for a uniform row: entropy is minus the sum of "
                "p log p, so put a minus sign in front.",
            ),
            (
                np.log2(8),
                "got 3.0 for a uniform row over 8 keys: that is log base 2 "
                "(bits). Use the natural log, np.log, for nats.",
            ),
        )
        _same(out, np.log(8), case)

        one_hot = np.array([0.0, 0.0, 1.0, 0.0])
        case = "a one-hot row"
        out = _call(fn, case, one_hot)
        if not np.all(np.isfinite(out)):
            raise _Fail(
                "a one-hot row gave nan: 0 * log(0) is 0 * -inf. Count the p = 0 "
                "terms as 0, e.g. with np.where(p > 0, p * np.log(p), 0.0)."
            )
        _same(out, 0.0, case)

        case = "the row [0, 0.5, 0.5]"
        out = _call(fn, case, np.array([0.0, 0.5, 0.5]))
        _same(out, np.log(2), case)

        rows = np.array([[0.7, 0.2, 0.1], [1 / 3, 1 / 3, 1 / 3]])
        case = "a 2 x 3 matrix of rows"
        out = _call(fn, case, rows)
        _expect_shape(out, (2,), case, " Reduce over the last axis only (axis=-1).")
        expected = -np.sum(rows * np.log(rows), axis=-1)
        _same(out, expected, case)
        return 4

    return _verdict("entropy", run)


def _finite_and_same(fn, case: str, x: np.ndarray, why: str) -> None:
    """Run one overflow-prone case: nan or inf gets the hint ``why``."""
    out = _call(fn, case, x)
    _expect_shape(out, x.shape, case)
    if not np.all(np.isfinite(out)):
        raise _Fail(f"got nan or inf for {case}: {why}")
    _same(out, softmax(x), case)


def _known_mistakes(out: np.ndarray, *mistakes: tuple) -> None:
    """Fail with the hint of the first typical wrong answer that ``out`` matches."""
    for wrong, hint in mistakes:
        if np.shape(wrong) == out.shape and np.allclose(out, wrong, atol=ATOL):
            raise _Fail(hint)


def _same(out, expected, case: str) -> None:
    out, expected = np.asarray(out, dtype=float), np.asarray(expected, dtype=float)
    if not np.allclose(out, expected, atol=ATOL):
        worst = np.max(np.abs(out - expected))
        raise _Fail(
            f"values differ from the reference on {case}: got {_fmt(out)}, "
            f"expected {_fmt(expected)} (largest difference {worst:.3g})."
        )


def _fmt(a) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=3, suppress_small=True)

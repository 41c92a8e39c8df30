"""The machinery behind every exercise checker: run a learner's function, judge, report.

A checker ``run(cases)`` calls ``cases.run(description, *inputs)`` on fixed cases and raises
:class:`Fail` (a hint) at the first mistake; :func:`verdict` prints the one line it becomes.

At grading time a checker also draws **unseen cases** from the grader's seed (:func:`grading_seed`)
through the generator registered with :func:`unseen_cases`, after the fixed ones: a table of
the practice cases, or answers handed back in call order, then fails. Practice has no seed.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import numbers
import zlib
from collections.abc import Callable

import numpy as np

from .number_hints import count_hint, not_a_number

ATOL = 1e-6
# Added to an error that mentions broadcasting: the usual cause, put as a question.
BROADCAST_HINT = " If you summed or took a max over one axis, keepdims=True keeps it."
_NO_BODY = "your function returned None: write its body, ending with return; run again."
_PRINTED = "your function returned None: you printed instead of returning; end with return."

# The grader's seed (None: practice), and the last answer of :func:`call` with its first dtype kind.
_SEED: contextvars.ContextVar[int | None] = contextvars.ContextVar("seed", default=None)
_LAST: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("last", default=None)
# exercise tag -> generator(rng) of (description, inputs, expected value or judge)
UNSEEN: dict[str, Callable] = {}


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


class Fail(Exception):
    """Raised inside a checker to stop at the first mistake with its hint."""


class Todo(Exception):
    """Raised inside a checker when the learner has not written the function yet."""


class Cases:
    """Runs the learner's function case by case, and counts the cases for the PASS line."""

    def __init__(self, fn):
        self.fn = fn
        self.count = 0

    def run(self, case: str, *args) -> np.ndarray:
        self.count += 1
        return call(self.fn, case, *args)


def verdict(exercise: str, fn, run) -> CheckResult:
    """Run ``run(cases)`` on the learner's ``fn``; print and return the one-line verdict."""
    cases = Cases(fn)
    try:
        run(cases)
        seed = _SEED.get()
        if seed is not None:
            _run_unseen(exercise, cases, seed)
        result = CheckResult(exercise, "PASS", f"all {cases.count} cases match the reference.")
    except Todo as todo:
        result = CheckResult(exercise, "FAIL" if str(todo) == _PRINTED else "TODO", str(todo))
    except Fail as fail:
        result = CheckResult(exercise, "FAIL", str(fail))
    except Exception as err:  # a bug in the checker itself must not crash the notebook
        result = CheckResult(exercise, "FAIL", f"the checker could not finish: {err!r}")
    print(result.line)
    return result


@contextlib.contextmanager
def grading_seed(seed: int | None):
    """Within this block (in this thread), checkers add unseen cases drawn from ``seed``."""
    token = _SEED.set(None if seed is None else int(seed))
    try:
        yield
    finally:
        _SEED.reset(token)


def unseen_cases(exercise: str):
    """Register ``generate(rng)`` as the source of ``exercise``'s unseen cases.

    It returns ``(description, inputs, expected)`` triples; ``expected`` is the reference value
    (shape, dtype kind and values compared) or a callable ``judge(out, case)`` raising
    :class:`Fail`. One source per exercise: a second would silently win."""

    def register(generate: Callable) -> Callable:
        if exercise in UNSEEN:
            raise ValueError(f"unseen cases for {exercise!r} are registered twice")
        UNSEEN[exercise] = generate
        return generate

    return register


def _run_unseen(exercise: str, cases: Cases, seed: int) -> None:
    if exercise not in UNSEEN:
        from . import unseen  # noqa: F401 - registers the course's generators

    generate = UNSEEN.get(exercise)
    if generate is None:
        return
    rng = np.random.default_rng([seed, zlib.crc32(exercise.encode())])
    for description, inputs, expected in generate(rng):
        case = f"an unseen case ({description})"
        try:
            out = cases.run(case, *inputs)
            if callable(expected):
                expected(out, case)
            else:
                same(out, expected, case)
        except Fail as fail:
            raise Fail(
                f"{fail} Your function passes the practice cases but not this one, drawn "
                "at grading time: does it depend on the examples' particular numbers?"
            ) from None


def _copy(arg):
    """A private copy of one input: arrays become float (masks stay bool), sizes stay int."""
    if isinstance(arg, (bool, numbers.Integral, float, str)):
        return arg
    if isinstance(arg, list) and all(isinstance(a, numbers.Integral) for a in arg):
        return list(arg)  # an order of positions stays a list of ints
    arr = np.asarray(arg)
    return arr.copy() if arr.dtype == np.bool_ else np.array(arr, dtype=float)


def call(fn, case: str, *args) -> np.ndarray:
    """Call ``fn`` on copies of the inputs, positionally (any parameter names pass); tidy up."""
    copies, printed = [_copy(a) for a in args], io.StringIO()
    try:  # errstate: the verdict explains overflow; no raw warnings
        with np.errstate(all="ignore"), contextlib.redirect_stdout(printed):
            out = fn(*copies)
    except (Exception, SystemExit) as err:  # even sys.exit() must not end the notebook
        hint = BROADCAST_HINT if "broadcast" in str(err) else ""
        raise Fail(f"your function raised {type(err).__name__}: {err} (on {case}).{hint}") from None
    finally:
        print(printed.getvalue(), end="")  # the learner's own prints still show
    if out is None:  # no body yet, or one that printed its answer (a FAIL in the verdict)
        raise Todo(_PRINTED if printed.getvalue() else _NO_BODY)
    for a, original in zip(copies, args, strict=True):
        if isinstance(a, np.ndarray) and not np.array_equal(a, _copy(original)):
            raise Fail(
                f"your function changed its input array in place (on {case}); "
                "work on a new array instead (x = x / s, not x /= s; the same for -=, +=, *=)."
            )
    try:
        if np.iscomplexobj(out):
            raise Fail(f"your function returned complex numbers (on {case}); use real ones.")
        kind = np.asarray(out).dtype.kind
        out = np.asarray(out, dtype=float)
    except Fail:
        raise
    except Exception:  # a ragged tuple, a string, an object...
        raise Fail(
            f"your function returned {type(out).__name__}, not an array of numbers (on {case})."
        ) from None
    _LAST.set((out, kind))
    return out


def expect_shape(out: np.ndarray, shape: tuple, case: str, hint: str = "") -> None:
    if out.shape != shape:
        raise Fail(f"returned shape {out.shape}, expected {shape} (on {case}).{hint}")


def known_mistakes(out: np.ndarray, *mistakes: tuple) -> None:
    """Fail with the hint of the first typical wrong answer that ``out`` matches."""
    for wrong, hint in mistakes:
        if np.shape(wrong) == out.shape and np.allclose(out, wrong, atol=ATOL):
            raise Fail(hint)


def same(out, expected, case: str) -> None:
    """Fail unless ``out`` has ``expected``'s shape, kind (booleans or numbers) and values."""
    last = _LAST.get()
    kind = last[1] if last is not None and last[0] is out else None
    want = np.asarray(expected).dtype.kind
    if np.shape(out) != np.shape(expected):
        empty = " An empty array is not an answer." if np.size(out) == 0 else ""
        raise Fail(
            f"returned shape {np.shape(out)}, expected {np.shape(expected)} (on {case}).{empty}"
        )
    if kind is not None and (kind == "b") != (want == "b"):
        what = "True/False values" if kind == "b" else f"numbers of dtype kind {kind!r}"
        wanted = "a boolean array (True/False)" if want == "b" else "numbers"
        raise Fail(f"returned {what}, expected {wanted} (on {case}).")
    out, expected = np.asarray(out, dtype=float), np.asarray(expected, dtype=float)
    if not np.allclose(out, expected, atol=ATOL):
        raise Fail(f"values differ from the reference on {case}: {difference(out, expected)}.")


def difference(out: np.ndarray, expected: np.ndarray) -> str:
    """A short account of how ``out`` differs: whole values when small, else the worst entry."""
    if out.shape != expected.shape:
        return f"got shape {out.shape}, expected {expected.shape}"
    gap = np.abs(out - expected)
    gap = np.where(np.isnan(gap), np.inf, gap)
    worst = np.unravel_index(np.argmax(gap), out.shape) if out.size else None
    got, want = (out[worst], expected[worst]) if out.size else (0, 0)  # print them apart:
    p = next((p for p in range(4, 18) if f"{got:.{p}g}" != f"{want:.{p}g}"), 4)
    if out.size <= 4:
        return f"got {fmt(out, p)}, expected {fmt(expected, p)}"
    wrong = int(np.sum(~np.isclose(out, expected, atol=ATOL)))
    where = worst[0] if len(worst) == 1 else tuple(int(i) for i in worst)
    head = f"{wrong} of {out.size} entries differ; the largest gap is at index {where}"
    return f"{head}: got {got:.{p}g}, expected {want:.{p}g}"


def fmt(a, p: int = 4) -> str:
    text = np.array2string(np.asarray(a, float), formatter={"float_kind": f"{{:.{p}g}}".format})
    return " ".join(text.split())  # a matrix on one line: the verdict stays one line


def check_number(
    exercise: str,
    answer,
    expected: float,
    *,
    places: int = 2,
    mistakes: tuple = (),
    fallback: str | None = None,
    show: int | None = None,
) -> CheckResult:
    """Check a number the learner predicted or worked out by hand; print one line.

    ``answer`` passes within half a unit of ``expected``'s ``places``-th decimal (0.21 for 0.2113);
    ``places=0``: a whole count. ``mistakes``: ``(wrong_value, hint)`` pairs; ``expected`` is
    computed. ``fallback`` replaces the generic hint (may name ``{value}``, ``{side}``).
    ``show``: decimals of the true value on a PASS."""
    tol = 0.5 * 10.0**-places + 1e-12
    if isinstance(answer, np.ndarray) and answer.ndim == 0:  # np.array(3888): one number
        answer = answer[()]
    if answer is None:
        result = CheckResult(exercise, "TODO", "replace None with your number, then run again.")
    elif isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Real):
        result = CheckResult(exercise, "FAIL", not_a_number(answer, places))
    else:
        value = float(answer)
        if not np.isfinite(value):
            result = CheckResult(exercise, "FAIL", f"expected a finite number, got {answer!r}.")
        elif places == 0 and not value.is_integer():  # a count: 36.4 must not round to 36
            near = round(value)  # 4095.9999999 is float noise: say "round it", not "not 4096"
            hint = f"; round it: {near:,}" if abs(value - near) < 1e-6 else f", not {value:g}"
            result = CheckResult(exercise, "FAIL", f"this is a count: a whole number{hint}.")
        elif abs(value - expected) <= tol:
            decimals = show if show is not None else 0 if float(expected).is_integer() else places
            exact, said = f"{expected:,.{decimals}f}", _number(value)  # "36 is right." once
            line = f"{said} is right." if exact == said else f"{said} is right ({exact})."
            result = CheckResult(exercise, "PASS", line)
        else:
            hint = next((h for wrong, h in mistakes if abs(value - wrong) <= tol), None)
            hint = hint or count_hint(value, expected, places, _number(value))  # -3, 5.4e8
            if hint is None:
                side = "high" if value > expected else "low"
                hint = fallback or "{value} is too {side}; redo the calculation step by step."
                hint = hint.format(value=_number(value), side=side)
            result = CheckResult(exercise, "FAIL", hint)
    print(result.line)
    return result


def _number(value: float) -> str:
    """A learner's number as they would write it: 134,217,728 rather than 1.34218e+08."""
    if value.is_integer() and abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:g}"

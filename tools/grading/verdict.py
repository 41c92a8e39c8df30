"""Grade one submission: the student's code runs in the sandbox, the checkers run here.

For each exercise of the chapter (read from the course's committed notebook by
``tools/exercises.py``), the course's own checker is called *in this process*. For a
function exercise it gets a proxy: calling it sends the inputs to the sandboxed worker,
which calls the student's function and sends back the returned value as data. For a
number exercise the worker sends back the variable's value. The checker's verdict and
the chapter's points make the mark; nothing the student's code prints or patches can
reach them.

With a seed, each checker adds unseen cases drawn from it (``checks.base``), so a table
of the practice cases earns nothing. A call to a library function the exercise rules
out (its tripwire, :mod:`.tripwires`) earns 0 for that exercise, or only a flag when the
teacher asks for flags.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import sys
import threading
from dataclasses import dataclass, field

import exercises

from attention_lib import checks
from attention_lib.checks.base import grading_seed

from . import notebook, sandbox, static, wire
from .notebook import PREAMBLE, course_cells, names_in


class _Stdout:
    """``sys.stdout`` while grading: silent in a thread that is running a checker.

    Checkers print their verdict line; with several submissions graded at once in
    threads, ``contextlib.redirect_stdout`` would tangle, so each thread says for itself.
    """

    def __init__(self, real):
        self.real, self.local = real, threading.local()

    def write(self, text):
        return len(text) if getattr(self.local, "quiet", False) else self.real.write(text)

    def flush(self):
        self.real.flush()

    def __getattr__(self, name):
        return getattr(self.real, name)


@contextlib.contextmanager
def quiet():
    if not isinstance(sys.stdout, _Stdout):
        sys.stdout = _Stdout(sys.stdout)
    stdout = sys.stdout
    before = getattr(stdout.local, "quiet", False)
    stdout.local.quiet = True
    try:
        yield
    finally:
        stdout.local.quiet = before


@dataclass
class Result:
    student: str
    chapter: str | None
    status: list[str] = field(default_factory=list)
    points: dict[str, float | None] = field(default_factory=dict)  # None: graded by hand
    maximum: float = 0
    flags: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(p for p in self.points.values() if p)


_reference_lock = threading.Lock()
_references: dict[tuple[str, int], tuple[list, dict]] = {}


def checker_arguments(chapter: exercises.Chapter, ex: exercises.Exercise) -> tuple[list, dict]:
    """The checker's other arguments, as the course's stub cell wrote them, evaluated here.

    Literals are read directly; anything else (``X[delicious]``, ``weights``) is computed
    by running the course's own cells up to the exercise, in this process, once.
    """
    call = ast.parse(ex.call).body[0].value
    nodes = list(call.args[1:]) + [k.value for k in call.keywords]
    try:
        values = [ast.literal_eval(n) for n in nodes]
    except ValueError:
        key = (chapter.stem, ex.stub_cell)
        with _reference_lock:
            if key not in _references:
                ns: dict = {"__name__": "__course__"}
                with quiet():
                    exec(PREAMBLE.format(imports=chapter.imports), ns)
                    needed = set().union(*(names_in(ast.unparse(n))[0] for n in nodes))
                    needed |= names_in(ex.stub)[0]
                    kept = course_cells(chapter, needed, ex.stub_cell)
                    for index, source in chapter.context:
                        if index in kept:
                            exec(source, ns)
                    exec(ex.stub, ns)  # the course's stub: it may define what the call uses
                    values = [
                        eval(compile(ast.Expression(n), "<course>", "eval"), ns) for n in nodes
                    ]
                _references[key] = values
            values = copy.deepcopy(_references[key])
    args, kwargs = values[: len(call.args) - 1], {}
    for keyword, value in zip(call.keywords, values[len(call.args) - 1 :], strict=True):
        kwargs.update(value if keyword.arg is None else {keyword.arg: value})  # **labels
    return args, kwargs


class _Learner:
    """The learner's function as a checker sees it: a call into the sandbox. It carries no
    Python code of its own, so the checkers' code-reading hints (names used, a loop) read
    it as unseen rather than judging this proxy's code; the grader's tripwires and static
    checks (tools/grading/static.py) read the learner's code instead."""

    def __init__(self, worker: sandbox.Worker, ex: exercises.Exercise):
        self._worker, self._label, self.__name__ = worker, ex.label, ex.name

    def __call__(self, *args, **kwargs):
        return self._worker.call(self._label, list(args), kwargs)


def _proxy(worker: sandbox.Worker, ex: exercises.Exercise) -> _Learner:
    return _Learner(worker, ex)


def _check(chapter, ex, worker: sandbox.Worker, seed: int | None) -> checks.CheckResult:
    checker = getattr(checks, ex.checker, None)
    if checker is None:  # not re-exported: the chapter's own import cell has it
        ns: dict = {}
        with quiet():
            exec(chapter.imports, ns)
        checker = ns[ex.checker]
    args, kwargs = checker_arguments(chapter, ex)
    with quiet(), grading_seed(seed):
        if ex.kind == "function":
            return checker(_proxy(worker, ex), *args, **kwargs)
        return checker(worker.value(ex.label), *args, **kwargs)


def identify(nb: dict) -> tuple[exercises.Chapter | None, list[str]]:
    """The chapter of a notebook already read (see :func:`.notebook.identify`)."""
    return notebook.identify(nb, {c.stem: c for c in exercises.chapters()})


def grade(
    student: str,
    data: bytes,
    timeout: float,
    safe: bool,
    seed: int | None = None,
    forbidden_calls: str = "zero",
) -> Result:
    """Grade one submitted notebook (its bytes): a :class:`Result` whatever it holds.

    The notebook is read in a limited subprocess (:mod:`.static`); only its findings,
    as data, come back here. ``seed`` draws the unseen cases (None: fixed cases only);
    ``forbidden_calls`` is "zero" (a tripped rule, or an answer that breaks its exercise's
    rules on code, costs the exercise) or "flag".
    """
    try:
        found = static.examine(data)
    except static.Unreadable as err:
        result = Result(student, None, ["unreadable"])
        result.feedback.append(f"The grader could not read this notebook: {err}.")
        return result
    stem, status = found.get("chapter"), found.get("status")
    chapter = exercises.chapter(stem) if isinstance(stem, str) else None
    status = [s for s in status if isinstance(s, str)] if isinstance(status, list) else []
    result = Result(student, chapter.stem if chapter else None, status)
    if "invalid notebook" in status or "too large" in status:
        verb = "read" if "invalid notebook" in status else "grade"
        reason = wire.short(found.get("reason"))
        result.feedback.append(f"Could not {verb} the notebook: {reason}.")
        if chapter is not None:
            result.maximum = sum(e.points for e in chapter.exercises if e.kind != "text")
            result.points = {e.column: 0 for e in chapter.exercises if e.kind != "text"}
        return result
    if chapter is None:
        result.feedback.append(
            "This notebook does not say which chapter it is: hand in the copy that "
            "`make student` made (its metadata names the chapter)."
        )
        return result
    if "no identity" in status:
        result.feedback.append(
            "This notebook lacks the student copy's marks; it was matched to its chapter "
            "by its exercises, and the cells that define each answer were graded."
        )
    if "older copy" in status:
        result.feedback.append(
            "The course's exercises changed since this copy was made; it was graded "
            "against the current ones."
        )
    answers = set(found.get("answers") or [])
    broken = found.get("broken") if isinstance(found.get("broken"), dict) else {}
    result.flags = [wire.short(f, 200) for f in found.get("flags") or []]
    result.maximum = sum(e.points for e in chapter.exercises if e.kind != "text")
    setup = dict(found.get("setup") or {})
    setup["forbidden"] = {e.label: list(e.tripwires) for e in chapter.exercises if e.tripwires}
    setup["trip"] = forbidden_calls
    with sandbox.Worker(setup, timeout, sandbox=safe) as worker:
        if worker.tripwire_error and not worker.gone:
            raise RuntimeError(f"the tripwires could not be set: {worker.tripwire_error}")
        for ex in chapter.exercises:
            if ex.kind == "text":
                result.points[ex.column] = None
                result.feedback.append(f"[{ex.column}] by hand: your teacher reads this answer.")
                continue
            status_, message = judge(chapter, ex, worker, answers, seed)
            tripped = sorted(worker.trips.get(ex.label, ()))
            if tripped:
                calls = ", ".join(tripped)
                result.flags.append(f"{ex.column}: called {calls}, which the exercise rules out")
                if forbidden_calls == "zero":
                    status_ = "FAIL"
                    message = f"your function called {calls}, which this exercise rules out."
            breaks = broken.get(ex.label) if ex.code_rules else None
            if isinstance(breaks, list) and breaks:
                why = wire.short("; ".join(str(b) for b in breaks), 300)
                result.flags.append(f"{ex.column}: {why}")
                if forbidden_calls == "zero" and status_ == "PASS":
                    status_, message = "FAIL", f"{why}."
            error = worker.errors.get(ex.label)
            if error:
                if ex.label in worker.defined:
                    message += f" (Your answer cell raised {error}.)"
                if "errors" not in result.status:
                    result.status.append("errors")
            result.points[ex.column] = ex.points if status_ == "PASS" else 0
            result.feedback.append(f"[{ex.column}] {status_}: {message}")
        if worker.gone:
            result.status.append("timeout" if worker.gone.startswith("timeout") else "crashed")
        elif worker.preamble_error:
            result.status.append("sandbox error")
    return result


def judge(chapter, ex, worker: sandbox.Worker, answers, seed=None) -> tuple[str, str]:
    """``(PASS/FAIL/TODO, message)`` for one auto-graded exercise."""
    if worker.gone:
        return "FAIL", f"not graded: {worker.gone}"
    if ex.label not in answers:
        return "TODO", "no answer cell for this exercise (was it deleted?)."
    if ex.label not in worker.defined:
        error = worker.errors.get(ex.label)
        why = f" Your answer cell raised {error}." if error else ""
        return "FAIL", f"{ex.name} is not defined after your answer cell ran.{why}"
    verdict = _check(chapter, ex, worker, seed)
    if worker.gone:
        return "FAIL", f"not graded: {worker.gone}"
    return verdict.status, verdict.message

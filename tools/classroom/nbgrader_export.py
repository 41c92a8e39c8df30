"""The nbgrader export of a chapter: its source notebook in an nbgrader course directory.

    _build/classroom/nbgrader/
        nbgrader_config.py
        source/05_softmax/05_softmax.ipynb

Made from the chapter's student copy; each exercise's answer cell becomes:

* a checked exercise: an autograded answer cell whose differing lines (between the stub's
  and the solution's common first and last lines; the whole stub first when they share
  no first line, so that its set-up lines stay) are the solution, between
  ``### BEGIN SOLUTION`` and ``### END SOLUTION``, then a locked test cell with the
  exercise's points that calls the course's checker (imported afresh) and asserts that
  its CheckResult passed; a hidden part of it (``### BEGIN HIDDEN TESTS``, cut from the
  release) gives the checker a seed, so ``nbgrader autograde`` adds unseen cases;
* a free-text exercise: a manually graded markdown answer cell with its points, holding
  the course's solution text (nbgrader releases it as "YOUR ANSWER HERE").

The grading environment (the hub's image) must have ``attention_lib`` installed: the
student repository's requirements install it (see student_repo.py).

These tests run in the student's kernel, which the student's cells can change: they are
no defence against a student who means to cheat (``teaching.md`` shows how, and grades
the collected notebooks with ``make grade`` instead).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import nbformat
from common import (
    OUT,
    answer_label,
    chapter,
    fresh,
    qname,
    solution_code,
    solution_text,
    student_copy,
)

CONFIG = """\
c = get_config()  # noqa: F821 (nbgrader's config file)
c.CourseDirectory.course_id = "attention-step-by-step"
# The chapters' self-checkers run in the answer cells: a stub that raises is reported by
# the checker, never a crash, so the student notebook still runs top to bottom.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
"""

TEST = """\
# The course's checker, imported afresh, called as the chapter calls it (when grading,
# on unseen cases too).
from attention_lib.checks import {checker}
from attention_lib.checks.base import grading_seed

_seed = None
### BEGIN HIDDEN TESTS
_seed = {seed}
### END HIDDEN TESTS
with grading_seed(_seed):
    _result = {call}
assert _result, _result.line
"""


def grading(cell, grade_id: str, *, solution: bool, grade: bool, points=None, locked=False):
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta
    return cell


def answer_source(ex) -> str:
    """The stub's lines that the solution shares (first and last), the rest as solution."""
    stub = ex.stub.strip("\n").split("\n")
    solution = solution_code(ex).split("\n")
    ends = [i for i, line in enumerate(solution) if line.strip() == ex.call.strip()]
    if ends:  # the solution up to its checker call; what follows it only demonstrates
        solution = solution[: ends[0] + 1]
    head = 0
    while head < min(len(stub), len(solution)) - 1 and stub[head] == solution[head]:
        head += 1
    tail = 0
    while tail < min(len(stub), len(solution)) - head and stub[-1 - tail] == solution[-1 - tail]:
        tail += 1
    if head == 0:  # nothing shared up front (a number): the whole stub stays, setup included
        solution = stub[: len(stub) - tail] + solution
        head = len(stub) - tail
    middle = solution[head : len(solution) - tail]
    if not any(line.strip() for line in middle):
        raise ValueError(f"{ex.label}: the solution does not differ from the stub")
    indent = next(line[: len(line) - len(line.lstrip())] for line in middle if line.strip())
    lines = [
        *solution[:head],
        f"{indent}### BEGIN SOLUTION",
        *middle,
        f"{indent}### END SOLUTION",
        *solution[len(solution) - tail :],
    ]
    return "\n".join(lines)


def source_notebook(stem: str) -> nbformat.NotebookNode:
    ch = chapter(stem)
    seed = secrets.randbits(63)  # a new one each build: the release does not show it
    nb = student_copy(stem)
    cells = []
    for cell in nb.cells:
        label = answer_label(cell)
        if label is None:
            cells.append(cell)
            continue
        ex, q = ch.exercise(label), qname(label)
        if ex.kind == "text":
            cell.source = solution_text(stem, label)
            cells.append(grading(cell, f"{q}", solution=True, grade=True, points=ex.points))
            continue
        cell.source = answer_source(ex)
        cells.append(grading(cell, f"{q}-answer", solution=True, grade=False))
        test = nbformat.v4.new_code_cell(TEST.format(checker=ex.checker, call=ex.call, seed=seed))
        test.id = f"{q}-test"[:64]
        cells.append(
            grading(test, f"{q}-test", solution=False, grade=True, points=ex.points, locked=True)
        )
    nb.cells = cells
    return nb


def build(stem: str) -> Path:
    root = OUT / "nbgrader"
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(CONFIG)
    folder = fresh(root / "source" / stem)
    path = folder / f"{stem}.ipynb"
    nbformat.write(source_notebook(stem), path)
    return path

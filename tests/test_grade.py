"""The grader: right rows for good, partly wrong, crashing, hanging and broken submissions,
and the submissions themselves are never touched."""

import csv
import hashlib
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import grade  # noqa: E402
import student  # noqa: E402

CHAPTER = ROOT / "chapters" / "05_softmax.ipynb"
WRONG_SOFTMAX = """def my_softmax(x, axis=-1, temperature=1.0):
    e = np.exp(x / temperature)
    return e / e.sum(axis=axis, keepdims=True)


check_softmax(my_softmax)"""


def stub_cell(nb, name):
    return next(c for c in nb.cells if c.cell_type == "code" and f"def {name}(" in c.source)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    full = nbformat.read(CHAPTER, as_version=4)  # with solutions: every exercise passes
    blank = student.student_notebook(full)
    nbformat.write(full, folder / "ada.ipynb")
    partly = student.student_notebook(full)
    stub_cell(partly, "my_softmax").source = WRONG_SOFTMAX
    (folder / "ben").mkdir()
    nbformat.write(partly, folder / "ben" / "05_softmax.ipynb")  # folder layout
    crash = student.student_notebook(full)
    crash.cells.insert(1, nbformat.v4.new_code_cell("raise RuntimeError('my typo')"))
    nbformat.write(crash, folder / "cy.ipynb")
    hang = student.student_notebook(full)
    hang.cells.insert(2, nbformat.v4.new_code_cell("while True:\n    pass"))
    nbformat.write(hang, folder / "dee.ipynb")
    (folder / "eve.ipynb").write_text('{"cells": [ this is not json')
    nbformat.write(blank, folder / "fay.ipynb")
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*.ipynb")}
    out = tmp_path_factory.mktemp("grades")
    grade.grade(folder, out, timeout=20)
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*.ipynb")}
    with (out / "grades.csv").open() as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return rows, out, before, after


def test_exercises_are_read_from_the_committed_chapter():
    assert grade.exercises_of("05_softmax") == ["softmax", "entropy"]


def test_one_row_per_student_with_the_expected_marks(graded):
    rows, *_ = graded
    marks = {
        name: (row["status"], row["05_softmax:softmax"], row["05_softmax:entropy"], row["total"])
        for name, row in rows.items()
    }
    assert marks == {
        "ada": ("ok", "1", "1", "2"),
        "ben": ("ok", "0", "0", "0"),
        "cy": ("errors", "0", "0", "0"),
        "dee": ("timeout", "0", "0", "0"),
        "eve": ("invalid notebook", "0", "0", "0"),
        "fay": ("ok", "0", "0", "0"),
    }


def test_feedback_carries_the_checkers_hints(graded):
    _, out, *_ = graded
    ben = (out / "feedback" / "ben.txt").read_text()
    assert "[softmax] FAIL:" in ben and "Subtract each row's maximum" in ben
    assert "[entropy] TODO:" in ben
    assert "cells raised: RuntimeError" in (out / "feedback" / "cy.txt").read_text()
    assert "did not finish within 20 s" in (out / "feedback" / "dee.txt").read_text()
    assert "could not read the notebook" in (out / "feedback" / "eve.txt").read_text()
    assert "[softmax] PASS" in (out / "feedback" / "ada.txt").read_text()


def test_submissions_are_never_modified(graded):
    *_, before, after = graded
    assert before and before == after


def test_every_chapter_lists_its_auto_checked_exercises():
    # Names may contain spaces ("output element"); every chapter has at least two.
    for chapter in sorted((ROOT / "chapters").glob("*.ipynb")):
        names = grade.exercises_of(chapter.stem)
        assert len(names) >= 2, f"{chapter.name}: {names}"
    assert "output element" in grade.exercises_of("06_blending")

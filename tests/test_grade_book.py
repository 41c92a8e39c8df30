"""The gradebook loses nothing (issue 35): odd names, two notebooks, a locked or re-saved CSV.

These runs grade honest and blank copies only, so they skip the sandbox
(``safe=False``); the sandbox's walls are tested in ``test_grade_sandbox.py``.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grade import SOFTMAX, blank, grade, gradebook, read_csv, solved, verdict  # noqa: E402

MANUAL = "05:softmax-predict (manual)"
LONG = "x" * 253


def run(folder: Path, out: Path, **kwargs):
    return grade.grade(folder, out, timeout=60, safe=False, **kwargs)


def rows(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in read_csv(out)}


def type_mark(out: Path, student: str, mark: str, delimiter=",", bom=False) -> None:
    """What a teacher does: open the CSV in a spreadsheet, type a mark, save."""
    table = list(csv.reader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    row = next(r for r in table if r[0] == student)
    row[table[0].index(MANUAL)] = mark
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows(table)
    text = ("\ufeff" if bom else "") + buffer.getvalue()
    (out / "grades.csv").write_text(text, encoding="utf-8")


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    nbformat.write(solved(), folder / "ann.ipynb")
    return folder


def test_any_name_is_graded_and_its_feedback_file_is_safe(folder, tmp_path):
    names = [LONG, " =1+1", "\n=cmd", "../up", "alice", "\u0430lice", "a\u200blice"]
    for name in names[:2] + names[3:]:
        (folder / name.replace("/", "_")).mkdir()
        nbformat.write(solved(), folder / name.replace("/", "_") / "05.ipynb")
    (folder / "newline").mkdir()
    nbformat.write(solved(), folder / "newline" / "05.ipynb")
    (folder / "newline").rename(folder / "\n=cmd")
    run(folder, tmp_path / "out")
    found = rows(tmp_path / "out")
    assert len(found) == 1 + len(names)
    assert all(r["total"] == "2" for r in found.values())
    assert found[LONG]["total"] == "2" and "'\n=cmd" in found and "' =1+1" in found
    feedback = sorted(p.name for p in (tmp_path / "out" / "feedback").iterdir())
    assert len(feedback) == len(found) and all(len(n) < 100 for n in feedback)
    assert "alice.txt" in feedback and not any("/" in n or "\n" in n for n in feedback)
    for name in ("alice", "\u0430lice", "a\u200blice"):
        assert "name looks like" in found[name]["05:status"], found[name]
    assert "name looks like" not in found["ann"]["05:status"]


def test_two_notebooks_of_one_chapter_are_reported_never_graded_by_turns(folder, tmp_path):
    nbformat.write(solved(), folder / "dup.ipynb")
    (folder / "dup").mkdir()
    nbformat.write(blank(), folder / "dup" / "05_softmax.ipynb")
    marks = []
    for _ in range(3):
        run(folder, tmp_path / "out")
        marks.append(
            (rows(tmp_path / "out")["dup"][SOFTMAX], rows(tmp_path / "out")["dup"]["05:status"])
        )
    assert marks == [("0", "2 notebooks")] * 3
    text = (tmp_path / "out" / "feedback" / "dup.txt").read_text()
    assert "'dup.ipynb'" in text and "'dup/05_softmax.ipynb'" in text and "none was graded" in text


def test_a_locked_csv_loses_no_row(folder, tmp_path, monkeypatch):
    out = tmp_path / "out"
    real = gradebook.write_atomic

    def locked(path, data):
        if path.name == "grades.csv":
            raise PermissionError(13, "Permission denied")
        real(path, data)

    monkeypatch.setattr(gradebook, "write_atomic", locked)
    with pytest.raises(grade.CsvLocked, match="close the file"):
        run(folder, out)
    monkeypatch.setattr(gradebook, "write_atomic", real)
    run(folder, out)  # nothing new to grade: the CSV is written all the same
    assert rows(out)["ann"]["total"] == "2"
    code = grade.main([str(folder), "--out", str(out), "--unsafe-no-sandbox"])
    assert code == 0


@pytest.mark.parametrize(("delimiter", "bom"), [(",", True), (";", False), (";", True)])
def test_a_csv_resaved_by_a_spreadsheet_keeps_its_manual_marks(folder, tmp_path, delimiter, bom):
    out = tmp_path / "out"
    run(folder, out)
    type_mark(out, "ann", "0.5", delimiter, bom)
    nbformat.write(solved(), folder / "bob.ipynb")
    run(folder, out)
    assert rows(out)["ann"][MANUAL] == "0.5" and rows(out)["bob"]["total"] == "2"


def test_an_unreadable_csv_is_refused_not_emptied(folder, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("name|mark\nann|1\n")
    code = grade.main([str(folder), "--out", str(out), "--unsafe-no-sandbox"])
    assert code == 2 and (out / "grades.csv").read_text() == "name|mark\nann|1\n"
    err = capsys.readouterr().err
    assert "refusing to grade: grades.csv does not begin with a 'student' column" in err


def test_a_mark_typed_during_the_run_is_kept(folder, tmp_path, monkeypatch):
    out = tmp_path / "out"
    run(folder, out)
    nbformat.write(solved(), folder / "bob.ipynb")
    real = verdict.grade

    def teacher_types_meanwhile(student, *args):
        type_mark(out, "ann", "1")
        return real(student, *args)

    monkeypatch.setattr(verdict, "grade", teacher_types_meanwhile)
    run(folder, out)
    assert rows(out)["ann"][MANUAL] == "1" and rows(out)["bob"]["total"] == "2"


def test_formulas_are_escaped_after_blanks_and_line_breaks():
    for text in [" =1+1", "\n=cmd", "\t@x", "  -2", "=1"]:
        assert gradebook.safe(text).startswith("'")
        assert gradebook.unsafe(gradebook.safe(text)) == text
    assert gradebook.safe("ann") == "ann" and gradebook.safe(" ann") == " ann"

"""The student build: no solutions anywhere, no outputs, runs through, never overwrites work."""

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import exercises  # noqa: E402
from editions import student  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
VERDICT = re.compile(r"^\[[^\]\n]+\] (PASS|FAIL|TODO):", re.M)


def solution_code(nb) -> list[str]:
    """The source of every code cell inside a solution (start and end markers may share
    a cell: a written solution)."""
    regions = exercises.solution_regions(nb.cells)
    return [c.source for i, c in enumerate(nb.cells) if i in regions and c.cell_type == "code"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    assert student.build(CHAPTERS, out) == []
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_student_copy_has_no_solutions_and_no_outputs(path, built):
    original = nbformat.read(path, as_version=4)
    copy = nbformat.read(built / path.name, as_version=4)
    text = "\n".join(cell.source for cell in copy.cells)
    assert "{solution" not in text
    solutions = solution_code(original)
    assert solutions, f"{path.name} has no solution code, so this test would prove nothing"
    for source in solutions:
        assert source not in text, "a solution's code is still in the student copy"
    labels = re.findall(r":label: (ex-\S+)", "\n".join(c.source for c in original.cells))
    assert labels and all(f":label: {label}" in text for label in labels), "exercises kept"
    for cell in copy.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert "widgets" not in copy.metadata
    assert "application/vnd.jupyter.widget" not in (built / path.name).read_text()


# That every student copy runs top to bottom and each checker says TODO is checked where
# students run them: in the student repository's own environment (tests/classroom).


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_student_copy_is_marked_for_the_grader(path, built):
    copy = nbformat.read(built / path.name, as_version=4)
    nbformat.validate(copy)  # the inserted answer cells have ids of their own
    chapter = exercises.chapter(path.stem)
    assert chapter.exercises, f"{path.name} has no exercises to mark"
    assert copy.metadata[student.KEY] == {"chapter": path.stem, "version": chapter.version}
    marked = [
        (c.metadata[student.KEY]["answer"], c) for c in copy.cells if student.KEY in c.metadata
    ]
    assert [label for label, _ in marked] == [e.label for e in chapter.exercises]
    for (_, cell), ex in zip(marked, chapter.exercises, strict=True):
        if ex.kind == "text":
            assert cell.cell_type == "markdown" and "Your answer" in cell.source
        else:
            assert cell.cell_type == "code" and cell.source == ex.stub
            assert f"{ex.checker}({ex.name}" in cell.source


def test_the_version_follows_the_exercises_not_the_prose():
    course = nbformat.read(CHAPTERS[4], as_version=4)
    version = exercises.parse(course, CHAPTERS[4].stem).version
    course.cells[0].source = "# A new title\n\nNew prose."
    assert exercises.parse(course, CHAPTERS[4].stem).version == version
    stub = next(c for c in course.cells if c.cell_type == "code" and "return None" in c.source)
    stub.source = stub.source.replace("return None", "return 0")
    assert exercises.parse(course, CHAPTERS[4].stem).version != version


def test_only_the_student_build_marks_answer_cells():
    course = nbformat.read(CHAPTERS[4], as_version=4)
    course.cells[1].metadata[student.KEY] = {"answer": "ex-softmax-stable"}  # the import cell
    copy = student.student_notebook(course)  # the chapter is found from its labels
    assert copy.metadata[student.KEY]["chapter"] == CHAPTERS[4].stem
    assert student.KEY not in copy.cells[1].metadata


def test_solution_blocks_inside_markdown_are_cut_out():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# 1. T\n\n```{exercise} Q\n:label: ex-q\nWhy?\n```\n\n"
            "```{solution} ex-q\n:class: dropdown\n\nBecause.\n```\n\nAfter."
        ),
        nbformat.v4.new_markdown_cell("````{solution} ex-r\n```python\nx = 1\n```\n````\nEnd."),
    ]
    copy = student.student_notebook(nb)
    assert "Because" not in copy.cells[0].source and "After." in copy.cells[0].source
    assert "ex-q" in copy.cells[0].source  # the exercise stays
    assert copy.cells[1].source == "End."


def test_an_unclosed_solution_is_an_error_not_a_silent_cut():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("```{solution-start} ex-a\n```"),
        nbformat.v4.new_code_cell("answer = 42"),
    ]
    with pytest.raises(ValueError, match="never closed"):
        student.student_notebook(nb)


def test_it_never_overwrites_a_file_it_did_not_write_or_that_was_changed(tmp_path):
    chapter = CHAPTERS[0]
    target = tmp_path / chapter.name
    target.write_text("a student's own notebook")
    assert student.build([chapter], tmp_path)  # refused
    assert target.read_text() == "a student's own notebook"

    other = tmp_path / "fresh"
    assert student.build([chapter], other) == []
    written = (other / chapter.name).read_bytes()
    assert student.build([chapter], other) == []  # unchanged copy: safe to rewrite
    assert (other / chapter.name).read_bytes() == written

    edited = written.replace(b"return None", b"return x  # my answer", 1)
    assert edited != written
    (other / chapter.name).write_bytes(edited)
    refused = student.build([chapter], other)
    assert refused and "changed since it was written" in refused[0]
    assert (other / chapter.name).read_bytes() == edited


def test_command_line_exits_1_and_names_the_refused_file(tmp_path):
    chapter = CHAPTERS[0]
    (tmp_path / chapter.name).write_text("mine")
    tool = ROOT / "tools" / "editions" / "student.py"
    run = subprocess.run(
        [sys.executable, str(tool), "--out", str(tmp_path), str(chapter)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert f"REFUSED {tmp_path / chapter.name}: not created by this tool" in run.stderr


def test_course_site_is_staged_from_the_student_copies():
    from book import course_site

    stage = course_site.stage()
    staged = sorted((stage / "chapters").glob("*.ipynb"))
    assert [p.name for p in staged] == [p.name for p in CHAPTERS]
    for path in staged:
        assert "{solution" not in path.read_text(), f"{path.name} still has a solution"
    assert (stage / "_config.yml").resolve() == ROOT / "_config.yml"
    assert (stage / "attention_lib").resolve() == ROOT / "attention_lib"  # literalinclude

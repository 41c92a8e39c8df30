"""The otter-grader export of a chapter: a master notebook, then what ``otter assign`` makes.

    _build/classroom/otter/05_softmax/
        05_softmax.ipynb        the master notebook (questions, solutions, tests)
        requirements.txt        what Gradescope's image installs (the chapters' run time)
        attention_lib/          the course's library, shipped inside autograder.zip
        dist/                   otter assign's output: dist/student/, dist/autograder/
        autograder.zip          the zip to upload to Gradescope, or to `otter run -a`

Each exercise the course checks becomes a question whose one hidden test calls the
course's own checker, imported afresh from the library, exactly as the chapter calls it
(``check_softmax(my_softmax)``) and asserts that its CheckResult passed. Otter runs a
question's tests right after its cells, so the arguments are the notebook's at that point.
Free-text exercises become manually graded questions (``manual: true``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat
import yaml
from common import (
    OUT,
    answer_label,
    chapter,
    copy_library,
    fresh,
    model_requirement,
    qname,
    runtime_requirements,
    solution_code,
    solution_text,
    student_copy,
)
from envs import clean_env

TEST = '''""" # BEGIN TEST CONFIG
hidden: true
""" # END TEST CONFIG
def test_{q}(env):
    from attention_lib.checks import {checker}

    result = eval({call!r}, {{**env, "{checker}": {checker}}})
    assert result, result.line
'''


def raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text)


def config(stem: str) -> str:
    settings = {
        "name": stem,
        "requirements": "requirements.txt",
        "files": ["attention_lib"],
        "init_cell": False,
        "check_all_cell": False,
        "export_cell": False,
        "run_tests": True,
        "python_version": "3.11",
        "generate": {"show_stdout": True, "show_hidden": True},
        "tests": {"ok_format": False},
    }
    return "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(settings, sort_keys=False)


def question(stem: str, ex, stub_cell) -> list[nbformat.NotebookNode]:
    """The cells of one question, replacing the student copy's answer cell ``stub_cell``."""
    head = f"# BEGIN QUESTION\nname: {qname(ex.label)}\npoints: {ex.points}"
    if ex.kind == "text":
        answer = nbformat.v4.new_markdown_cell(solution_text(stem, ex.label))
        return [
            raw(head + "\nmanual: true"),
            raw("# BEGIN SOLUTION"),
            answer,
            raw("# END SOLUTION"),
            raw("# END QUESTION"),
        ]
    # The stub runs in both versions (it may set up what the checker call needs, such as
    # chapter 2's `delicious`); the solution, after it, only in the autograder's.
    code = f"{stub_cell.source}\n\n# BEGIN SOLUTION NO PROMPT\n{solution_code(ex)}\n# END SOLUTION"
    test = TEST.format(q=qname(ex.label), checker=ex.checker, call=ex.call)
    return [
        raw(head),
        raw("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(code),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        nbformat.v4.new_code_cell(test),
        raw("# END TESTS"),
        raw("# END QUESTION"),
    ]


def master(stem: str) -> nbformat.NotebookNode:
    """The otter master notebook of chapter ``stem``, made from its student copy."""
    ch = chapter(stem)
    nb = student_copy(stem)
    cells = [raw(config(stem))]
    for cell in nb.cells:
        label = answer_label(cell)
        if label is None:
            cells.append(cell)
            continue
        cells.extend(question(stem, ch.exercise(label), cell))
    nb.cells = cells
    for cell in nb.cells:  # otter assign adds its own ids and tags; start clean
        cell.pop("id", None)
    nb.nbformat_minor = 4
    return nb


def build(stem: str, venv: Path, check: bool = True) -> Path:
    """Write the master notebook of ``stem`` and run ``otter assign`` on it; return the zip.

    ``check``: otter assign runs the notebook with its solutions and fails if a test does
    not pass them (a minute or so per chapter).
    """
    folder = fresh(OUT / "otter" / stem)
    nbformat.write(master(stem), folder / f"{stem}.ipynb")
    lines = runtime_requirements(with_lab=False)
    if stem.startswith("11_"):
        lines.append(model_requirement())
    (folder / "requirements.txt").write_text("\n".join(lines) + "\n")
    copy_library(folder)
    subprocess.run(
        [str(venv / "bin" / "otter"), "assign", "--no-pdfs", f"{stem}.ipynb", "dist"]
        + ([] if check else ["--no-run-tests"]),
        cwd=folder,
        env=clean_env(venv),
        check=True,
    )
    (zipped,) = (folder / "dist" / "autograder").glob("*.zip")
    shutil.copy(zipped, folder / "autograder.zip")
    return folder / "autograder.zip"

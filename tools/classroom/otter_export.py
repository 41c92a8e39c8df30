"""The otter-grader export of a chapter: a master notebook, then what ``otter assign`` makes.

    _build/classroom/otter/05_softmax/
        05_softmax.ipynb        the master notebook (questions, solutions, tests)
        requirements.txt        what Gradescope's image installs (the chapters' run time)
        attention_lib/          the course's library, shipped inside autograder.zip
        dist/                   otter assign's output: dist/student/, dist/autograder/
        autograder.zip          the zip to upload to Gradescope, or to `otter run -a`

otter makes the assignment: the student notebook, and a question per exercise the course
checks, worth the chapter's points (free-text exercises are graded by hand,
``manual: true``). otter's own way of grading runs the tests in the student's kernel,
where the student's cells can patch them; so the zip does not grade that way. It holds
the course's grader (``grader/``: ``tools/grade.py`` with its ``grading/``, the chapter
and ``attention_lib``) and the plugin ``attention_otter`` (``otter_plugin/``), which
grades the notebook with it, as ``make grade`` does (sandboxed answer cells, verdicts
outside, unseen cases, tripwires), hands otter an empty notebook and writes the
grader's scores into otter's results. Each question's test, calling the course's
checker, is what otter needs to know the question; it never sees the student's code.
The image Gradescope builds also installs bubblewrap (``setup.sh``).
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import nbformat
import yaml
from common import (
    KEY,
    OUT,
    ROOT,
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

PLUGIN = Path(__file__).resolve().parent / "otter_plugin" / "attention_otter.py"
# What the course's grader needs, from this repository, into the zip's grader/.
GRADER_FILES = ["tools/grade.py", "tools/exercises.py", "tools/grading"]

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
    mark_answers(folder / "dist" / "student" / f"{stem}.ipynb", stem)
    (zipped,) = (folder / "dist" / "autograder").glob("*.zip")
    with_grader(zipped, folder / "autograder.zip", stem)
    plugin_on_path(venv)
    return folder / "autograder.zip"


def mark_answers(path: Path, stem: str) -> None:
    """Mark the answer cells of otter's student notebook as ``make student`` marks its
    copies (otter keeps only its own cell metadata), so the grader finds them."""
    labels = {qname(e.label): e.label for e in chapter(stem).exercises if e.kind != "text"}
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        tests = cell.metadata.get("otter", {}).get("tests", [])
        if cell.cell_type == "code" and len(tests) == 1 and tests[0] in labels:
            cell.metadata[KEY] = {"answer": labels[tests[0]]}
    nbformat.write(nb, path)


def with_grader(source: Path, target: Path, stem: str) -> None:
    """otter's zip, with the course's grader and the plugin that grades with it."""
    ch = chapter(stem)
    questions = {qname(e.label): e.column for e in ch.exercises if e.kind != "text"}
    files = {
        "attention_otter.py": PLUGIN.read_bytes(),
        "grader/questions.json": json.dumps(questions, indent=1).encode(),
        f"grader/chapters/{stem}.ipynb": (ROOT / "chapters" / f"{stem}.ipynb").read_bytes(),
    }
    for name in GRADER_FILES + ["attention_lib"]:
        path = ROOT / name
        for item in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if item.is_file() and "__pycache__" not in item.parts and item.suffix != ".pyc":
                files[f"grader/{item.relative_to(ROOT)}"] = item.read_bytes()
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename == "otter_config.json":
                config = json.loads(data)
                config["plugins"] = [{"attention_otter.AttentionGrader": {"sandbox": "required"}}]
                config["force_public_test_summary"] = False  # there are no public tests
                data = json.dumps(config, indent=2).encode()
            elif info.filename == "setup.sh":
                data = data.replace(
                    b"apt-get install -y wget", b"apt-get install -y bubblewrap wget", 1
                )
            new.writestr(info, data)
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16  # readable by the sandbox's uid 65534
            new.writestr(info, data, zipfile.ZIP_DEFLATED)


def plugin_on_path(venv: Path) -> None:
    """Let ``otter run`` in ``venv`` import the plugin (Gradescope finds it in the zip)."""
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    line = f"{PLUGIN.parent}\n"
    path = Path(site) / "attention_otter.pth"
    if not path.exists() or path.read_text() != line:
        path.write_text(line)

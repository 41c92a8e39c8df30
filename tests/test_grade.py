"""The grader: marks come from the course's checkers, never from the student's process.

The submissions are built from the student copy (``tools/editions/student.py``), as a student
would fill it in: honest, blank, partly wrong, crashing, and every attack of issue 16.
One graded run is shared by most tests (the ``graded`` fixture); the timeout and the
killed grader have runs of their own. Every attack's function is right *only if* the
attack worked, so a 0 proves it failed; the files it aimed at are hashed before and after.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import exercises  # noqa: E402
import grade  # noqa: E402
from editions import student  # noqa: E402
from grading import flags, gradebook, sandbox, verdict, wire  # noqa: E402

pytestmark = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="needs bubblewrap")

CH05 = exercises.chapter("05_softmax")
SOFTMAX = "05:softmax-stable"
ENTROPY = "05:entropy"
# Chapter 02 has a function, a number and a free-text exercise.
OTHER = exercises.chapter("02_queries_keys_values")
MARK = "ATTACK-MARKER-7f3a"  # every attack writes this, so a change it made is found
CANARY = "grader-secret-c4n4ry"
TIMEOUT = 60  # generous: a busy CI machine runs other stages beside this one
RIGHT = """
def my_softmax(x, axis=-1, temperature=1.0):
    z = (x - x.max(axis=axis, keepdims=True)) / temperature
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)
"""
UNIFORM = """

def my_softmax(x, axis=-1, temperature=1.0):
    return np.ones_like(x) / x.shape[axis]
"""
WRONG = """def my_softmax(x, axis=-1, temperature=1.0):
    e = np.exp(x / temperature)
    return e / e.sum(axis=axis, keepdims=True)


check_softmax(my_softmax)"""


def if_it_worked(condition: str) -> str:
    """An answer that is right only when ``condition`` held: the attack's success."""
    return f"""
def my_softmax(x, axis=-1, temperature=1.0):
    if not ({condition}):
        return None
    z = (x - x.max(axis=axis, keepdims=True)) / temperature
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)


check_softmax(my_softmax)
"""


def attempt(code: str) -> str:
    """``code`` run in a try block; ``worked`` says whether it raised."""
    body = "\n".join("    " + line for line in code.strip().splitlines())
    return f"worked = True\ntry:\n{body}\nexcept Exception:\n    worked = False\n"


def blank(chapter=CH05) -> nbformat.NotebookNode:
    course = nbformat.read(ROOT / "chapters" / f"{chapter.stem}.ipynb", as_version=4)
    return student.student_notebook(course, chapter.stem)


def answer_cell(nb, label: str):
    return next(c for c in nb.cells if c.metadata.get(exercises.KEY, {}).get("answer") == label)


def solved(chapter=CH05, skip=()) -> nbformat.NotebookNode:
    """The student copy with the course's own solution code in every answer cell."""
    nb = blank(chapter)
    for ex in chapter.exercises:
        if ex.kind != "text" and ex.label not in skip:
            cell = answer_cell(nb, ex.label)
            cell.source += "\n# my answer\n" + "\n".join(ex.solutions)
    return nb


def with_softmax(source: str, nb=None) -> nbformat.NotebookNode:
    nb = nb or solved(skip=["ex-softmax-stable"])
    answer_cell(nb, "ex-softmax-stable").source = source
    return nb


def digests(*folders: Path) -> dict[str, str]:
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def read_csv(out: Path) -> list[dict]:
    with (out / "grades.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def workers_left(grader: int | None = None, wait: float = 5) -> list[str]:
    """The grader's sandboxed workers still alive after ``wait`` s (reaped asynchronously)."""
    tag = f"grader-{grader or os.getpid()}".encode()
    deadline = time.monotonic() + wait
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if proc.name.isdigit() and b"grading/worker.py" in cmdline and tag in cmdline:
                found.append(proc.name)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("grading")
    folder, out = base / "submissions", base / "grades"
    folder.mkdir()
    home = Path(os.path.expanduser("~"))
    subs = {str(folder), str(out), str(home), str(ROOT)}
    assert all("'" not in s for s in subs)
    classmate = folder / "honest.ipynb"
    startup = home / ".ipython" / "profile_default" / "startup" / f"{MARK}.py"
    checks_init = ROOT / "attention_lib" / "checks" / "__init__.py"
    notebooks = {
        "honest": solved(),
        "blank": blank(),
        "partly": with_softmax(WRONG),
        "crash": with_softmax("raise RuntimeError('my typo')\n" + RIGHT),
        "print-pass": solved(skip=["ex-softmax-stable"]),
        "exec-pass": with_softmax(
            "exec(''.join(map(chr, [112, 114, 105, 110, 116])) + '(\"[softmax] PASS: ok\")')"
            + UNIFORM
        ),
        "redefine": with_softmax(
            "def check_softmax(fn):\n    print('[softmax] PASS: all 15 cases match.')\n"
            "    return True\n" + UNIFORM + "\n\ncheck_softmax(my_softmax)"
        ),
        "patch-line": with_softmax(
            "import attention_lib.checks.base as base\n"
            "base.CheckResult.line = property(lambda self: '[softmax] PASS: yes')\n"
            "base.CheckResult.status = 'PASS'\n" + UNIFORM
        ),
        "patch-import": with_softmax(UNIFORM),
        "patch-helpers": with_softmax(
            "import attention_lib.checks.softmax as s\n"
            "s.same = s.expect_shape = s.known_mistakes = lambda *a, **k: None\n"
            "s._finite_and_same = lambda *a, **k: None\n" + UNIFORM
        ),
        "checker-cell": solved(skip=["ex-softmax-stable"]),
        "library": with_softmax("my_softmax = al.softmax\n\ncheck_softmax(my_softmax)"),
        "copied": blank(),
        "steal": with_softmax(
            attempt(f"answer = open('{classmate}').read()\nworked = 'def my_softmax' in answer")
            + if_it_worked("worked")
        ),
        "rewrite": with_softmax(
            attempt(f"open('{classmate}', 'a').write('{MARK}')") + if_it_worked("worked")
        ),
        "plant": with_softmax(
            attempt(f"open('{folder / 'planted.ipynb'}', 'w').write('{MARK}')")
            + if_it_worked("worked")
        ),
        "library-write": with_softmax(
            attempt(f"open('{checks_init}', 'a').write('# {MARK}')") + if_it_worked("worked")
        ),
        "startup": with_softmax(
            attempt(
                f"import pathlib\npathlib.Path('{startup.parent}').mkdir(parents=True, "
                f"exist_ok=True)\npathlib.Path('{startup}').write_text('# {MARK}')"
            )
            + if_it_worked("worked")
        ),
        "daemon": with_softmax(
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            "        time.sleep(1)\n        try:\n"
            f"            open('{out / 'grades.csv'}', 'w').write('{MARK}')\n"
            "        finally:\n            os._exit(0)\n    os._exit(0)\n" + RIGHT
        ),
        "exfiltrate": with_softmax(
            "import os\n\n\ndef my_softmax(x, axis=-1, temperature=1.0):\n"
            "    secret = os.environ.get('GRADER_CANARY', 'none')\n"
            "    for path in [" + repr(str(folder / "secret.txt")) + "]:\n"
            "        try:\n            secret += open(path).read()\n"
            "        except OSError:\n            pass\n"
            "    raise RuntimeError('LEAK ' + secret + ' ' + 'x' * 5000)\n"
        ),
        "inplace": with_softmax(
            "def my_softmax(x, axis=-1, temperature=1.0):\n"
            "    x -= x.max(axis=axis, keepdims=True)\n"
            "    e = np.exp(x / temperature)\n"
            "    return e / e.sum(axis=axis, keepdims=True)"
        ),
        "hog": with_softmax("hog = np.ones((10**5, 10**5))\n" + RIGHT),
        "huge-output": with_softmax(
            "print('x' * 10**8)\nopen('big', 'wb').write(b'x' * 200 * 2**20)\n\n\n"
            "def my_softmax(x, axis=-1, temperature=1.0):\n    return np.zeros((4000, 4000))\n"
        ),
        "title": solved(),
        "heading": solved(),
        "explore": solved(),
        "no-identity": solved(),
        "unknown": solved(),
    }
    nb = notebooks["print-pass"]
    nb.cells.append(nbformat.v4.new_code_cell('print("[softmax] PASS: all 15 cases match.")'))
    answer_cell(nb, "ex-softmax-stable").source += "\nprint('[softmax] PASS: all 15 cases')"
    nb = notebooks["patch-import"]
    imports = next(c for c in nb.cells if c.cell_type == "code" and "check_softmax" in c.source)
    imports.source += (
        "\nimport attention_lib.checks.base as base\n"
        "base.CheckResult.status = 'PASS'\nbase.same = base.expect_shape = lambda *a: None"
    )
    nb = notebooks["checker-cell"]
    answer_cell(nb, "ex-softmax-stable").source = answer_cell(
        nb, "ex-softmax-stable"
    ).source.replace("check_softmax(my_softmax)", "check_softmax(al.softmax)")
    nb = notebooks["copied"]
    for ex in CH05.exercises:
        if ex.solutions:
            answer_cell(nb, ex.label).source = ex.solutions[0]
    nb = notebooks["title"]
    nb.cells[0].source = nb.cells[0].source.replace("# 5. Softmax", "# My homework: 3. Softmax")
    nb = notebooks["heading"]
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("# 3. Scores\n\nMy notes."))
    nb = notebooks["explore"]
    cell = answer_cell(nb, "ex-softmax-stable")
    cell.source += (
        "\n\ndef broken(x, axis=-1, temperature=1.0):\n    return x\n\n\ncheck_softmax(broken)"
    )
    index = nb.cells.index(cell)
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell("my_softmax = None\nprint(my_softmax)"))
    del notebooks["no-identity"].metadata[exercises.KEY]
    notebooks["unknown"].metadata[exercises.KEY]["chapter"] = "99_nothing"
    for name, nb in notebooks.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    (folder / "ada").mkdir()  # the folder layout: the student is the folder's name
    nbformat.write(solved(OTHER), folder / "ada" / "projections.ipynb")
    nbformat.write(solved(), folder / "ada" / "softmax.ipynb")
    number = next(e for e in OTHER.exercises if e.kind == "number")
    function = next(e for e in OTHER.exercises if e.kind == "function")
    nbformat.write(blank(OTHER), folder / "other-blank.ipynb")
    nb = solved(OTHER, skip=[number.label])
    answer_cell(nb, number.label).source += f"\n{number.name} = -1.5"
    nbformat.write(nb, folder / "other-number.ipynb")
    nb = solved(OTHER)
    answer_cell(nb, function.label).source = "raise ValueError('oops')\n" + function.solutions[0]
    nbformat.write(nb, folder / "other-crash.ipynb")
    shutil_copy(ROOT / "chapters" / "05_softmax.ipynb", folder / "original.ipynb")
    (folder / "broken.ipynb").write_text('{"cells": [ this is not json')
    (folder / "secret.txt").write_text(CANARY)
    outside = base / "outside.ipynb"
    nbformat.write(solved(), outside)
    (folder / "linked.ipynb").symlink_to(outside)
    (folder / "linked-folder").symlink_to(base, target_is_directory=True)
    for name in ["=cmd|' -C calc'!A0", "-1+2", "@sum", "+x", "Zoë Ångström\nnew line"]:
        nbformat.write(solved(), folder / f"{name}.ipynb")
    # An earlier run's row, of a student not in this folder: it must survive untouched.
    earlier = base / "earlier"
    earlier.mkdir()
    nbformat.write(solved(), earlier / "zed.ipynb")
    grade.grade(earlier, out, timeout=TIMEOUT)
    zed_before = [r for r in read_csv(out) if r["student"] == "zed"]

    before = digests(folder, ROOT / "attention_lib", ROOT / "chapters")
    venv = installed()
    os.environ["GRADER_CANARY"] = CANARY
    try:
        grade.grade(folder, out, timeout=TIMEOUT)
    finally:
        del os.environ["GRADER_CANARY"]
    csv_after_run = (out / "grades.csv").read_bytes()
    time.sleep(2)  # the daemon would have struck by now
    after = digests(folder, ROOT / "attention_lib", ROOT / "chapters")
    rows = {row["student"]: row for row in read_csv(out)}
    return {
        "rows": rows,
        "out": out,
        "folder": folder,
        "before": before,
        "after": after,
        "venv": (venv, installed()),
        "csv": (csv_after_run, (out / "grades.csv").read_bytes()),
        "zed": (zed_before, [r for r in read_csv(out) if r["student"] == "zed"]),
        "startup": startup,
    }


def installed() -> dict[str, str]:
    """Digests of the installed packages' top-level files, and of NumPy's."""
    import numpy

    site = Path(numpy.__file__).parents[1]
    found = digests(Path(numpy.__file__).parent)
    for path in site.iterdir():
        if path.is_file():
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def shutil_copy(source: Path, target: Path) -> None:
    target.write_bytes(source.read_bytes())


def feedback(graded, name: str) -> str:
    return (graded["out"] / "feedback" / gradebook.feedback_name(name)).read_text(encoding="utf-8")


def marks(graded, name: str) -> tuple[str, str, str]:
    row = graded["rows"][name]
    if not row[SOFTMAX]:  # not graded as chapter 05 at all: say what happened instead
        pytest.fail(f"{name} was not graded as chapter 05: {row}\n{feedback(graded, name)}")
    return row[SOFTMAX], row[ENTROPY], row["05:status"]


# --- Honest students -----------------------------------------------------------------------


def test_exercises_come_from_the_committed_chapter():
    ex = CH05.exercise("ex-softmax-stable")
    assert (ex.kind, ex.name, ex.checker, ex.column) == (
        "function",
        "my_softmax",
        "check_softmax",
        SOFTMAX,
    )
    assert ex.forbidden[0] == "softmax" and "attention_lib.core.softmax" in ex.tripwires
    kinds = {e.kind for e in OTHER.exercises}
    assert kinds == {"function", "number", "text"}, "chapter 02 no longer has all three kinds"
    for chapter in exercises.chapters():
        assert [e for e in chapter.exercises if e.kind != "text"], chapter.stem


def test_honest_students_get_full_marks(graded):
    for name in ["honest", "title", "heading", "explore"]:
        assert marks(graded, name) == ("1", "1", "ok"), name
        assert graded["rows"][name]["05:flags"] == "", name
        assert "FAIL" not in feedback(graded, name) and "TODO" not in feedback(graded, name)


def test_the_folder_layout_grades_two_chapters_in_one_row(graded):
    ada = graded["rows"]["ada"]
    assert marks(graded, "ada") == ("1", "1", "ok")
    auto = [e for e in OTHER.exercises if e.kind != "text"]
    prefix = f"{OTHER.number:02d}"
    assert all(ada[e.column] == "1" for e in auto) and ada[f"{prefix}:status"] == "ok"
    manual = [e.column + " (manual)" for e in OTHER.exercises if e.kind == "text"]
    assert manual and all(ada[c] == "" for c in manual), "free text is graded by hand"
    assert ada["total"] == ada["max"] == str(2 + sum(e.points for e in auto))


def test_the_other_chapter_blank_wrong_number_and_crashing(graded):
    rows, prefix = graded["rows"], f"{OTHER.number:02d}"
    auto = [e for e in OTHER.exercises if e.kind != "text"]
    number = next(e for e in auto if e.kind == "number")
    function = next(e for e in auto if e.kind == "function")
    assert rows["other-blank"]["total"] == "0" and rows["other-blank"][f"{prefix}:status"] == "ok"
    assert f"[{number.column}] TODO: replace None" in feedback(graded, "other-blank")
    wrong = rows["other-number"]
    assert wrong[number.column] == "0" and wrong["total"] == str(len(auto) - 1)
    assert f"[{number.column}] FAIL:" in feedback(graded, "other-number")
    crash = rows["other-crash"]
    assert crash[function.column] == "0" and crash[f"{prefix}:status"] == "errors"
    assert "ValueError: oops" in feedback(graded, "other-crash")


def test_blank_partly_wrong_and_crashing(graded):
    assert marks(graded, "blank") == ("0", "0", "ok")
    assert "[05:softmax-stable] TODO: your function returned None" in feedback(graded, "blank")
    assert marks(graded, "partly") == ("0", "1", "ok")
    assert "Subtract each row's maximum" in feedback(graded, "partly")
    assert marks(graded, "crash") == ("0", "1", "errors")
    assert "RuntimeError: my typo" in feedback(graded, "crash")


def test_a_broken_or_unidentified_notebook_gets_a_clear_status(graded):
    rows = graded["rows"]
    assert rows["broken"]["??:status"] == "invalid notebook"
    assert "Could not read the notebook" in feedback(graded, "broken")
    assert marks(graded, "no-identity") == ("1", "1", "no identity")
    assert rows["unknown"]["??:status"] == "unknown chapter"
    assert "hand in the copy that `make student` made" in feedback(graded, "unknown")


# --- Attacks on the verdict ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "print-pass",
        "exec-pass",
        "redefine",
        "patch-line",
        "patch-import",
        "patch-helpers",
        "checker-cell",
    ],
)
def test_printed_redefined_or_patched_verdicts_earn_nothing(graded, name):
    assert marks(graded, name)[:2] == ("0", "1"), name  # the entropy answer is honest
    assert "[05:softmax-stable] PASS" not in feedback(graded, name)


def test_obfuscated_code_is_flagged(graded):
    assert "05:softmax-stable: uses exec" in graded["rows"]["exec-pass"]["05:flags"]
    assert "flag: 05:softmax-stable: uses exec" in feedback(graded, "exec-pass")


def test_the_librarys_own_function_is_flagged(graded):
    row = graded["rows"]["library"]
    assert "05:softmax-stable: my_softmax is the library's softmax" in row["05:flags"]
    assert "flag: 05:softmax-stable: my_softmax is the library's softmax" in feedback(
        graded, "library"
    )


def test_the_course_solutions_are_flagged(graded):
    original = graded["rows"]["original"]
    assert original["05:status"] == "no identity"
    assert "solution blocks" in original["05:flags"]
    assert "character for character" in graded["rows"]["copied"]["05:flags"]
    assert graded["rows"]["honest"]["05:flags"] == ""


def test_static_flags():
    assert flags.library_flags("my_softmax = al.softmax", "my_softmax", ("softmax",))
    assert flags.library_flags("from attention_lib import softmax as my_softmax", "my_softmax", ())
    assert flags.library_flags(
        "def my_softmax(x, axis=-1, temperature=1.0):\n    return al.softmax(x, axis)",
        "my_softmax",
        ("softmax",),
    )
    assert not flags.library_flags(RIGHT, "my_softmax", ("softmax",))
    for code in ["eval('1')", "__import__('os')", "getattr(al, 'soft' + 'max')", "import os"]:
        assert flags.obfuscation_flags(code), code
    assert not flags.obfuscation_flags(RIGHT)


LOOP = "def my_blend(w, V):\n    out = 0\n    for j in range(V.shape[-2]):\n"
RULES = ("loop", "no-product")


@pytest.mark.parametrize(
    "cells, found",
    [
        (
            [LOOP + "        out = out + w[..., :, j, None] * V[..., None, j, :]\n    return out"],
            "",
        ),
        (
            [
                "def my_blend(w, V):\n"
                "    return sum(w[..., :, j, None] * V[..., j, :] for j in range(4))"
            ],
            "",
        ),
        (["def my_blend(w, V):\n    return w @ V"], "uses @"),
        (["my_blend = lambda w, V: np.matmul(w, V)"], "uses np.matmul"),
        ([LOOP + "        out = w.dot(V)\n    return out"], "uses .dot"),
        ([LOOP + "        out = w\n    out @= V\n    return out"], "uses @"),
        (
            [
                "def mix(a, b):\n    return np.einsum('qk,kd->qd', a, b)",
                LOOP + "        out = mix(w, V)\n    return out",
            ],
            "np.einsum",
        ),
        (
            ["def my_blend(w, V):\n    return (w[..., None] * V[..., None, :, :]).sum(-2)"],
            "no for or while loop",
        ),
        (["x = 1"], ""),  # no my_blend here: its checker fails it
    ],
)
def test_rules_on_code_are_read_from_the_source(cells, found):
    breaks = "; ".join(flags.code_breaks(cells, "my_blend", RULES))
    assert (found in breaks) if found else breaks == "", breaks


def test_only_known_rules_on_code_may_be_asked(tmp_path):
    blend = exercises.chapter("06_blending").exercise("ex-blend")
    assert blend.code_rules == RULES  # chapter 6's metadata asks for both
    assert exercises.CODE_RULES == set(RULES)


# --- Attacks on the others -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["steal", "rewrite", "plant", "library-write", "startup"])
def test_attacks_on_other_files_fail(graded, name):
    if name == "startup" and (os.geteuid() != 0 or Path("/tmp") in graded["startup"].parents):
        # As an ordinary user the sandbox runs as the grader's own uid and may make the
        # folder in its throwaway root (or /tmp); the real file is checked to be absent in
        # test_nothing_outside_the_sandbox_changed.
        pytest.skip("the write lands in the sandbox's throwaway root, not in HOME")
    assert marks(graded, name)[:2] == ("0", "1"), f"{name}: the attack worked"


def test_nothing_outside_the_sandbox_changed(graded):
    before, after = graded["before"], graded["after"]
    folder = str(graded["folder"])
    assert {p: d for p, d in before.items() if p.startswith(folder)} == {
        p: d for p, d in after.items() if p.startswith(folder)
    }, "a submission changed, appeared or vanished"
    # Others may edit the course while this runs: no change may be an attack's.
    changed = [p for p in after if before.get(p) != after[p]]
    assert not [p for p in changed if MARK in Path(p).read_text(errors="replace")], changed
    assert graded["venv"][0] == graded["venv"][1], "installed packages changed"
    assert not graded["startup"].exists()
    assert not (graded["folder"] / "planted.ipynb").exists()


def test_a_daemon_cannot_touch_the_grades_after_the_run(graded):
    first, later = graded["csv"]
    assert first == later and MARK.encode() not in later
    assert marks(graded, "daemon") == ("1", "1", "ok")
    assert not workers_left()


def test_earlier_rows_are_kept_unchanged(graded):
    before, after = graded["zed"]
    assert before and before[0]["total"] == "2"
    assert [{k: r[k] for k in before[0]} for r in after] == before


def test_feedback_holds_no_secrets_and_no_paths(graded):
    text = feedback(graded, "exfiltrate")
    assert CANARY not in text and "LEAK" in text
    assert max(len(line) for line in text.splitlines()) < 400
    for name in graded["rows"]:
        text = feedback(graded, gradebook.unsafe(name))
        assert str(graded["folder"]) not in text and str(ROOT) not in text, name
        assert CANARY not in text


def test_an_input_changed_in_place_is_seen_across_the_wall(graded):
    assert marks(graded, "inplace")[:2] == ("0", "1")
    assert "changed its input array in place" in feedback(graded, "inplace")


def test_memory_and_output_hogs_get_nothing(graded):
    assert marks(graded, "hog") == ("0", "1", "errors")
    assert "MemoryError" in feedback(graded, "hog")
    assert marks(graded, "huge-output")[:2] == ("0", "1")


# --- The gradebook -------------------------------------------------------------------------


def test_the_csv_columns(graded):
    with (graded["out"] / "grades.csv").open(newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header[0] == "student" and header[-2:] == ["total", "max"]
    predict = "05:softmax-predict (manual)"  # Exercise 5.1, the chapter's first
    ch05 = [predict, SOFTMAX, ENTROPY, "05:status", "05:flags"]
    assert header[header.index(predict) : header.index(predict) + 5] == ch05
    assert f"{OTHER.number:02d}:status" in header


def test_the_csv_is_safe_in_a_spreadsheet(graded):
    with (graded["out"] / "grades.csv").open(newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")]
    names = set(graded["rows"])
    for name in ["=cmd|' -C calc'!A0", "-1+2", "@sum", "+x"]:
        assert "'" + name in names
        assert graded["rows"]["'" + name]["total"] == "2"
    assert graded["rows"]["Zoë Ångström\nnew line"]["total"] == "2"
    assert gradebook.unsafe(gradebook.safe("=1+1")) == "=1+1"


def test_links_and_files_outside_are_not_followed(graded):
    assert "linked" not in graded["rows"] and "linked-folder" not in graded["rows"]
    assert not any("outside" in name for name in graded["rows"])


def test_a_second_run_grades_only_what_changed_and_keeps_manual_marks(graded, tmp_path):
    folder, out = tmp_path / "subs", tmp_path / "grades"
    folder.mkdir()
    nbformat.write(solved(), folder / "ann.ipynb")
    nbformat.write(blank(), folder / "bob.ipynb")
    grade.grade(folder, out, timeout=TIMEOUT)
    text = (out / "grades.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    column = rows[0].index("05:softmax-predict (manual)")
    rows[1][column] = "=0.5"  # the teacher's mark, even one that looks like a formula
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    (out / "grades.csv").write_text(buffer.getvalue(), encoding="utf-8")
    nbformat.write(solved(), folder / "bob.ipynb")  # bob finishes his work
    state = json.loads((out / gradebook.STATE).read_text())
    ann_before = state["students"]["ann"]
    output = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "grade.py"), str(folder), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "unchanged, kept" in output.splitlines()[0] and "ann" in output.splitlines()[0]
    new = {r["student"]: r for r in read_csv(out)}
    assert new["bob"]["total"] == "2" and new["ann"]["05:softmax-predict (manual)"] == "'=0.5"
    assert json.loads((out / gradebook.STATE).read_text())["students"]["ann"] == ann_before
    # Another chapter into the same book: chapter 05's columns stay.
    nbformat.write(solved(OTHER), folder / "ann.ipynb")
    grade.grade(folder, out, timeout=TIMEOUT)
    ann = {r["student"]: r for r in read_csv(out)}["ann"]
    assert ann[SOFTMAX] == "1" and ann[f"{OTHER.number:02d}:status"] == "ok"


# --- Time limits and a killed grader ---------------------------------------------------------


def test_a_worker_that_traps_signals_and_loops_is_stopped_at_the_timeout(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    trap = with_softmax(
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    )
    nbformat.write(trap, folder / "trap.ipynb")
    bomb = with_softmax(
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    )
    nbformat.write(bomb, folder / "bomb.ipynb")
    start = time.monotonic()
    grade.grade(folder, tmp_path / "grades", timeout=3, jobs=2)
    assert time.monotonic() - start < 3 + 6
    rows = {r["student"]: r for r in read_csv(tmp_path / "grades")}
    for name in ["trap", "bomb"]:
        assert rows[name]["05:status"] == "timeout" and rows[name]["total"] == "0", name
    assert (
        "not graded: timeout: stopped after 3 s"
        in (tmp_path / "grades" / "feedback" / "trap.txt").read_text()
    )
    assert not workers_left()


def machine_processes() -> int:
    return sum(name.isdigit() for name in os.listdir("/proc"))


def test_a_fork_bomb_cannot_fill_the_machine(tmp_path):
    """Its processes stay near the sandbox's limit while it runs, even where the grader is
    root (Linux ignores RLIMIT_NPROC for root; a pids cgroup holds it there)."""
    import threading

    folder = tmp_path / "subs"
    folder.mkdir()
    bomb = with_softmax(
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    )
    nbformat.write(bomb, folder / "bomb.ipynb")
    before, most, grading = machine_processes(), [0], threading.Event()

    def count():
        while not grading.wait(0.05):
            most[0] = max(most[0], machine_processes())

    counter = threading.Thread(target=count)
    counter.start()
    try:
        grade.grade(folder, tmp_path / "grades", timeout=3, jobs=1)
    finally:
        grading.set()
        counter.join()
    (row,) = read_csv(tmp_path / "grades")
    assert row["05:status"] == "timeout"
    assert most[0] - before < 3 * sandbox.PROCESSES, f"{most[0] - before} more processes"
    assert not workers_left()


def test_a_cgroup_refuses_forks_beyond_its_limit_and_is_removed(tmp_path):
    from grading import cgroups

    group = cgroups.new_group(8, 2**30)
    if group is None or "pids" not in group.limits:
        pytest.skip("no pids cgroup can be made here (the grader is not root): NPROC holds")
    code = (
        "import os, time\nn = 0\ntry:\n    for _ in range(50):\n        if os.fork() == 0:\n"
        "            os.closerange(0, 3)  # the test reads the parent's output only\n"
        "            time.sleep(30)\n            os._exit(0)\n        n += 1\n"
        "except OSError:\n    print(n)"
    )
    try:
        argv = cgroups.enter(group, [sys.executable, "-c", code])
        run = subprocess.run(argv, capture_output=True)
        assert run.stdout.strip() == b"7", run  # 8 with the process that forks them
        pids_folder = next(f for f in group.folders if (f / "pids.max").exists())
        assert (pids_folder / "pids.max").read_text().strip() == "8"
    finally:
        cgroups.remove(group)  # the seven sleepers are killed with it
    assert not any(f.exists() for f in group.folders)
    stale = pids_folder.with_name(f"{cgroups.PREFIX}999999999-0")  # a grader that was killed
    stale.mkdir()
    cgroups.remove(cgroups.new_group(8, 2**30))
    assert not stale.exists()


def test_killing_the_grader_keeps_the_rows_already_graded(tmp_path):
    folder, out = tmp_path / "subs", tmp_path / "grades"
    folder.mkdir()
    for n in range(3):
        nbformat.write(solved(), folder / f"fast{n}.ipynb")
    slow = with_softmax("while True:\n    pass")
    for n in range(3):
        nbformat.write(slow, folder / f"slow{n}.ipynb")
    run = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "grade.py"), str(folder), "--out", str(out)]
        + ["--jobs", "1", "--timeout", "60"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "grades.csv").exists() and len(read_csv(out)) >= 3:
            break
        time.sleep(0.2)
    time.sleep(1)  # now inside a slow one
    run.send_signal(signal.SIGKILL)
    run.wait()
    rows = {r["student"]: r for r in read_csv(out)}
    assert {f"fast{n}" for n in range(3)} <= set(rows)
    assert all(rows[f"fast{n}"]["total"] == "2" for n in range(3))
    time.sleep(0.5)
    assert not workers_left(run.pid), "the sandbox outlived the grader"


# --- Smaller parts -------------------------------------------------------------------------


def test_values_cross_the_wall_as_data_only():
    import numpy as np

    for value in [None, True, 3, 2.5, np.float64(1.5), np.arange(6).reshape(2, 3) > 2, [1, (2.0,)]]:
        back = wire.decode(json.loads(json.dumps(wire.encode(value))))
        assert type(back) is type(value) or isinstance(value, np.generic)
        assert np.array_equal(np.asarray(back, dtype=object), np.asarray(value, dtype=object))
    assert isinstance(wire.decode(wire.encode({"a": 1})), wire.Opaque)
    obj = np.array([object()])
    assert isinstance(wire.decode(wire.encode(obj)), wire.Opaque)
    with pytest.raises(wire.ProtocolError):
        wire.decode({"t": "array", "npy": "not base64!"})


def test_without_bwrap_the_grader_refuses(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    (tmp_path / "subs").mkdir()
    assert grade.main([str(tmp_path / "subs"), "--out", str(tmp_path / "g")]) == 2
    assert not (tmp_path / "g" / "grades.csv").exists()


def test_unsafe_mode_still_grades_outside_the_students_process(tmp_path):
    (tmp_path / "subs").mkdir()
    nbformat.write(with_softmax(WRONG), tmp_path / "subs" / "a.ipynb")
    code = grade.main([str(tmp_path / "subs"), "--out", str(tmp_path / "g"), "--unsafe-no-sandbox"])
    assert code == 0
    assert read_csv(tmp_path / "g")[0][SOFTMAX] == "0"


def test_identity_comes_from_metadata_not_the_title():
    nb = json.loads(nbformat.writes(solved()))
    nb["cells"][0]["source"] = "# 9. Something else"
    chapter, status = verdict.identify(nb)
    assert chapter.stem == "05_softmax" and status == []
    nb["metadata"][exercises.KEY]["version"] = "0" * 16
    assert verdict.identify(nb)[1] == ["older copy"]


@pytest.mark.parametrize("failures", [1, 2])
def test_a_grader_failure_is_tried_again_then_costs_one_row(tmp_path, monkeypatch, failures):
    # A machine short of processes can make starting a sandbox fail: one retry, then a row
    # that says "grader error" (the run goes on, the other students are graded).
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    for name in ("ann", "bob"):
        nbformat.write(blank(), folder / f"{name}.ipynb")
    real, calls = verdict.grade, []

    def flaky(student_name, *args):
        calls.append(student_name)
        if student_name == "ann" and calls.count("ann") <= failures:
            raise BlockingIOError("Resource temporarily unavailable")
        return real(student_name, *args)

    monkeypatch.setattr(verdict, "grade", flaky)
    grade.grade(folder, out, timeout=TIMEOUT, safe=False)
    rows = {row["student"]: row for row in read_csv(out)}
    assert calls.count("ann") == 2 and calls.count("bob") == 1
    assert rows["bob"]["05:status"] == "ok"
    if failures == 1:
        assert rows["ann"]["05:status"] == "ok"
    else:
        assert "grader error" in json.dumps(rows["ann"])

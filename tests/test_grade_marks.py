"""Marks that mean something (issue 35): unseen cases, shapes, tripwires, as make grade gives them.

Each cheat is an answer that is right on the practice cases, or right only because it
calls a library function the exercise rules out; a 0 proves the grader saw through it.
The cheats are graded by ``tools/grade.py`` as root and, where the machine can, as uid
65534 (``test_grade_sandbox.as_nobody``).
"""

from __future__ import annotations

import ast
import io
import os
import secrets
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grade import (  # noqa: E402
    CH05,
    ENTROPY,
    SOFTMAX,
    answer_cell,
    exercises,
    grade,
    read_csv,
    sandbox,
    solved,
    with_softmax,
)
from test_grade_sandbox import as_nobody  # noqa: E402

from attention_lib import checks  # noqa: E402
from attention_lib.checks import base  # noqa: E402

CH07 = exercises.chapter("07_multi_head")
MULTI = "07:multi-head"


def recorded_cases(checker) -> list[tuple[tuple, np.ndarray]]:
    """The practice cases' inputs, and the right answers, in the order the checker asks."""
    seen = []

    def honest(x, axis=-1, temperature=1.0):
        # Written out, as the exercise asks: check_softmax refuses a function that calls
        # the library's softmax, under any name.
        z = (x - x.max(axis=axis, keepdims=True)) / temperature
        out = np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)
        seen.append(((x.tolist(), axis, temperature), out.tolist()))
        return out

    with redirect_stdout(io.StringIO()):
        assert checker(honest)
    return seen


CASES = recorded_cases(checks.check_softmax)
TABLE = f"""
TABLE = {{repr(k): v for k, v in {[(k, v) for k, v in CASES]!r}}}


def my_softmax(x, axis=-1, temperature=1.0):
    key = repr((x.tolist(), axis, temperature))
    if key in TABLE:
        return np.array(TABLE[key])
    return np.ones_like(x) / x.shape[axis]
"""
IN_ORDER = f"""
ANSWERS = {[v for _, v in CASES]!r}
calls = []


def my_softmax(x, axis=-1, temperature=1.0):
    calls.append(1)
    return np.array(ANSWERS[min(len(calls), len(ANSWERS)) - 1])
"""
EMPTY_ENTROPY = """
def my_entropy(weights):
    h = -np.sum(weights * np.log(weights), axis=-1)
    return np.array([]) if np.any(np.isnan(h)) else h
"""
FORBIDDEN = {
    "alias": "L = al\n\ndef my_softmax(x, axis=-1, temperature=1.0):\n"
    "    return L.softmax(x, axis=axis, temperature=temperature)\n",
    "import-as": "from attention_lib.core import softmax as stable\n\n"
    "def my_softmax(x, axis=-1, temperature=1.0):\n"
    "    return stable(x, axis=axis, temperature=temperature)\n",
    "handed-in": "my_softmax = al.softmax\n",
    "caught": "def my_softmax(x, axis=-1, temperature=1.0):\n    try:\n"
    "        return al.softmax(x, axis=axis, temperature=temperature)\n"
    "    except Exception:\n        z = (x - x.max(axis=axis, keepdims=True)) / temperature\n"
    "        return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)\n",
    "reloaded": "import importlib\nimport attention_lib.core as core\n\n"
    "def my_softmax(x, axis=-1, temperature=1.0):\n"
    "    fresh = importlib.reload(core)\n"
    "    return fresh.softmax(x, axis=axis, temperature=temperature)\n",
    "private": "import attention_lib.core as core\n\n"
    "def my_softmax(x, axis=-1, temperature=1.0):\n"
    "    return core._softmax(x, axis, temperature)\n",
}
CHEATS = ["table", "in-order", *FORBIDDEN]
# Exercise 6.2 asks for a loop over the keys and rules out the one-line product. The
# grader hands its checker a stand-in with no code to read, so it reads the source.
BLEND_CHEATS = {
    "blend-product": "def my_blend(weights, V):\n    return weights @ V\n",
    "blend-helper": "def mix(a, b):\n    return np.einsum('...qk,...kd->...qd', a, b)\n\n"
    "def my_blend(weights, V):\n    for _ in range(1):\n        out = mix(weights, V)\n"
    "    return out\n",
    "blend-no-loop": "def my_blend(weights, V):\n"
    "    return (weights[..., :, :, None] * V[..., None, :, :]).sum(axis=-2)\n",
}


def submissions(folder: Path) -> None:
    folder.mkdir(mode=0o755)
    notebooks = {"honest": solved(), "table": with_softmax(TABLE)}
    notebooks["in-order"] = with_softmax(IN_ORDER)
    for name, source in FORBIDDEN.items():
        notebooks[name] = with_softmax(source)
    empty = solved()
    answer_cell(empty, "ex-entropy").source = EMPTY_ENTROPY
    notebooks["empty-entropy"] = empty
    notebooks["honest-07"] = solved(CH07)
    library = solved(CH07, skip=["ex-multi-head"])
    answer_cell(library, "ex-multi-head").source = (
        "def my_multi_head(X, W_q, W_k, W_v, W_o, h):\n"
        "    return al.multi_head_attention(X, W_q, W_k, W_v, W_o, h)[0]\n"
    )
    notebooks["library-07"] = library
    library = solved(exercises.chapter("06_blending"), skip=["ex-attention"])
    answer_cell(library, "ex-attention").source = (  # al.softmax is allowed here, this not
        "import attention_lib.core as c\n\ndef my_attention(Q, K, V):\n"
        "    return c.scaled_dot_product_attention(Q, K, V)[0]\n"
    )
    notebooks["library-06"] = library
    for name, source in BLEND_CHEATS.items():  # right numbers, against 6.2's rules on code
        nb = solved(exercises.chapter("06_blending"), skip=["ex-blend"])
        answer_cell(nb, "ex-blend").source = source
        notebooks[name] = nb
    for name, nb in notebooks.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
        (folder / f"{name}.ipynb").chmod(0o644)


@pytest.fixture(scope="module")
def runs():
    if sandbox.bwrap_path() is None:
        pytest.skip("needs bubblewrap")
    base_dir = Path(f"/var/tmp/attention-marks-{secrets.token_hex(4)}")  # 65534 reads it
    base_dir.mkdir(mode=0o755)
    try:
        yield graded_runs(base_dir)
    finally:
        shutil.rmtree(base_dir, ignore_errors=True)


def graded_runs(base_dir: Path) -> dict:
    folder = base_dir / "submissions"
    submissions(folder)
    found = {}
    grade.grade(folder, base_dir / "root", timeout=60, seed=35)
    found["root"] = {r["student"]: r for r in read_csv(base_dir / "root")}
    python = [Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent, ROOT]
    out = base_dir / "nobody"
    argv = as_nobody(
        [sys.executable, str(ROOT / "tools" / "grade.py"), str(folder), "--out", str(out)],
        python,
        base_dir / "stage",
    )
    if argv is not None:
        out.mkdir()
        os.chown(out, 65534, 65534)
        run = subprocess.run(argv, capture_output=True, text=True, env={"HOME": str(out)})
        assert run.returncode == 0, run.stderr
        found["nobody"] = {r["student"]: r for r in read_csv(out)}
    flagged = base_dir / "flag"
    grade.grade(folder, flagged, timeout=60, seed=35, forbidden_calls="flag")
    found["flag"] = {r["student"]: r for r in read_csv(flagged)}
    return found


@pytest.fixture(params=["root", "nobody"])
def rows(runs, request):
    if request.param not in runs:
        pytest.skip("cannot grade as uid 65534 here (needs root, setpriv and unshare)")
    return runs[request.param]


def test_honest_answers_keep_full_marks(rows):
    assert rows["honest"]["total"] == rows["honest"]["max"] == "2"
    assert rows["honest-07"]["total"] == rows["honest-07"]["max"] != "0"
    assert rows["honest"]["05:flags"] == rows["honest-07"]["07:flags"] == ""


@pytest.mark.parametrize("name", CHEATS)
def test_cheats_on_softmax_earn_nothing(rows, name):
    assert (rows[name][SOFTMAX], rows[name][ENTROPY]) == ("0", "1"), rows[name]


def test_an_empty_array_for_a_scalar_earns_nothing(rows):
    assert (rows["empty-entropy"][SOFTMAX], rows["empty-entropy"][ENTROPY]) == ("1", "0")


def test_a_forbidden_call_inside_the_function_earns_nothing(rows):
    row = rows["library-07"]
    assert row[MULTI] == "0" and row["07:split-heads"] == "1"
    assert "attention_lib.heads.multi_head_attention" in row["07:flags"]
    row = rows["library-06"]
    assert (row["06:attention"], row["06:blend"], row["06:status"]) == ("0", "1", "ok")


@pytest.mark.parametrize("name", BLEND_CHEATS)
def test_a_blend_that_breaks_the_rules_on_code_earns_nothing(rows, name):
    row = rows[name]
    assert (row["06:blend"], row["06:attention"]) == ("0", "1"), row
    assert ("no for or while loop" if name == "blend-no-loop" else "one-line answer") in row[
        "06:flags"
    ]


def test_the_honest_blend_keeps_its_mark(rows):
    assert rows["library-06"]["06:blend"] == "1"  # the course's loop, graded like the cheats
    assert "06:blend" not in rows["library-06"]["06:flags"]


def test_the_feedback_names_the_call(runs):
    flags = runs["root"]["alias"]["05:flags"]
    assert "called attention_lib.core.softmax, which the exercise rules out" in flags


def test_the_teacher_may_flag_instead(runs):
    row = runs["flag"]["alias"]
    assert row[SOFTMAX] == "1" and "attention_lib.core.softmax" in row["05:flags"]
    assert runs["flag"]["table"][SOFTMAX] == "0"  # unseen cases still count
    assert runs["flag"]["blend-product"]["06:blend"] == "1"
    assert "one-line answer" in runs["flag"]["blend-product"]["06:flags"]


# --- The checkers themselves, in the learner's kernel -----------------------------------


def quiet(checker, fn, seed=None):
    with redirect_stdout(io.StringIO()), base.grading_seed(seed):
        return checker(fn)


def test_practice_keeps_the_fixed_cases_only():
    ns = {"np": np}
    exec(TABLE, ns)
    assert quiet(checks.check_softmax, ns["my_softmax"])  # practice: the table passes
    result = quiet(checks.check_softmax, ns["my_softmax"], seed=1)
    assert not result and "unseen case" in result.message, result.line


def test_the_practice_checker_refuses_an_empty_array():
    ns = {"np": np}
    exec(EMPTY_ENTROPY, ns)
    result = quiet(checks.check_entropy, ns["my_entropy"])
    assert not result and "returned shape (0,), expected ()" in result.message, result.line


def test_booleans_for_numbers_fail():
    result = quiet(checks.check_scores, lambda Q, K: (Q @ np.swapaxes(K, -1, -2)) > 0)
    assert not result and "True/False" in result.message, result.line


def course_functions():
    """``(exercise, the course's solution function)`` for every function exercise.

    One namespace per chapter, filled in page order, as the grader's worker runs a notebook:
    an exercise may call the functions of the exercises before it (chapter 10's capstone)."""
    for chapter in exercises.chapters():
        ns: dict = {}
        exec(chapter.imports, ns)
        for ex in chapter.exercises:
            if ex.kind == "function":
                for source in ex.solutions:  # the definitions; no cell's other lines
                    tree = ast.parse(source)
                    tree.body = [n for n in tree.body if isinstance(n, DEFINES)]
                    exec(compile(tree, ex.label, "exec"), ns)
                yield ex, ns[ex.name]


DEFINES = (ast.FunctionDef, ast.Import, ast.ImportFrom)


def test_every_function_checker_has_unseen_cases():
    from attention_lib.checks import unseen  # noqa: F401 - fills the registry

    for ex, _ in course_functions():
        with redirect_stdout(io.StringIO()) as printed:
            getattr(checks, ex.checker)(lambda *args: None)
        tag = printed.getvalue().split("]", 1)[0].lstrip("[")  # "[softmax] TODO: ..."
        assert tag in base.UNSEEN, (ex.label, tag)


def test_the_course_solutions_pass_every_seed():
    for ex, fn in course_functions():
        for seed in range(10):
            result = quiet(getattr(checks, ex.checker), fn, seed)
            assert result, (ex.label, seed, result.line)


def test_the_seed_is_recorded_and_each_notebook_gets_its_own(tmp_path):
    assert grade.grading_seed(tmp_path, None) == grade.grading_seed(tmp_path, None)
    assert grade.grading_seed(tmp_path, 7) == 7 == int((tmp_path / "seed.txt").read_text())
    assert grade.notebook_seed(7, "a") != grade.notebook_seed(7, "b")
    assert CH05.exercise("ex-softmax-stable").tripwires[0] == "attention_lib.core.softmax"


def test_every_rule_in_an_exercise_text_is_in_its_metadata():
    """A name the text rules out ("No `al.split_heads`, `al.merge_heads` or ...") must be
    a tripwire: the grader reads the metadata, not the prose."""
    import json
    import re

    for chapter in exercises.chapters():
        nb = json.loads((ROOT / "chapters" / f"{chapter.stem}.ipynb").read_text())
        for ex in (e for e in chapter.exercises if e.kind == "function"):
            text = "".join(nb["cells"][ex.cell]["source"])
            block = text[text.find(ex.label) :].split("```", 1)[0]
            ruled = set()
            for sentence in re.split(r"(?<=[.:;])\s", block):
                if re.search(r"\b(no|not|without)\b", sentence, re.I):
                    ruled |= set(re.findall(r"`(?:al|attention_lib)\.(\w+)", sentence))
            ruled -= {"softmax"} if "may use `al.softmax`" in block else set()
            tripped = {t.rsplit(".", 1)[-1] for t in ex.tripwires}
            assert ruled <= tripped, (ex.label, ruled - tripped)

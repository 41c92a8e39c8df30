"""Issue 35's attacks on the platforms: otter's zip grades from outside the kernel; nbgrader
cannot, and make grade marks its collected submissions instead.

Every attack's softmax answer is wrong (uniform weights) unless the attack worked, and
its entropy answer is honest: (0, 1) proves the attack failed, (1, 1) that it worked.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
import time
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_classroom import (  # noqa: E402
    common,
    envs,
    is_nbgrader_answer,
    is_otter_answer,
    nbgrader_export,
    otter_export,
    run,
    submissions,
)

pytestmark = pytest.mark.slow
STEM = "05_softmax"
UNIFORM = """

def my_softmax(x, axis=-1, temperature=1.0):
    return np.ones_like(x) / x.shape[axis]
"""
PASSING = "type('R', (), {'__bool__': lambda s: True, 'line': 'ok', 'status': 'PASS'})()"
PATCH_CHECKS = f"""
import attention_lib.checks as _c
import attention_lib.checks.softmax as _s
_c.check_softmax = _s.check_softmax = lambda *a, **k: {PASSING}
"""
PATCH_OTTER = """
try:
    import otter.test_files.abstract_test as _t
    _init = _t.TestCaseResult.__init__
    _t.TestCaseResult.__init__ = lambda self, case, msg, passed: _init(self, case, msg, True)
except Exception:
    pass
"""
TRANSFORM = 'get_ipython().input_transformers_post.append(lambda lines: ["pass\\n"])\n'


def daemon(target: Path) -> str:
    """A process left behind that writes full marks into ``target`` after the run."""
    forged = {"score": 2, "tests": [{"name": n, "score": 1, "max_score": 1} for n in "ab"]}
    return f"""
import json, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        for _ in range(20):
            try:
                open({str(target)!r}, "w").write(json.dumps({forged!r}))
            except OSError:
                pass
            time.sleep(0.5)
        os._exit(0)
    os._exit(0)
"""


def attacks(out: Path) -> dict[str, str]:
    return {
        "patch-checks": PATCH_CHECKS + UNIFORM,
        "patch-otter": PATCH_OTTER + UNIFORM,
        "daemon": daemon(out / "daemon" / "results.json") + UNIFORM,
        "alias": "L = al\n\ndef my_softmax(x, axis=-1, temperature=1.0):\n"
        "    return L.softmax(x, axis=axis, temperature=temperature)\n",
        "honest": common.solution_code(common.chapter(STEM).exercise("ex-softmax-stable")),
    }


def answers(softmax: str) -> dict[str, str]:
    found = submissions.answers(STEM, "correct")
    found["ex-softmax-stable"] = softmax
    return found


def scores(results: dict) -> tuple[float, float]:
    by_name = {t["name"]: t.get("score") for t in results["tests"]}
    return by_name["softmax_stable"], by_name["entropy"]


@pytest.fixture(scope="module")
def venv() -> Path:
    return envs.classroom_venv()


@pytest.fixture(scope="module")
def otter_results(venv, tmp_path_factory) -> dict[str, dict]:
    work = tmp_path_factory.mktemp("otter-attacks")
    zipped = otter_export.build(STEM, venv, check=False)
    nb = nbformat.read(zipped.parent / "dist" / "student" / f"{STEM}.ipynb", as_version=4)
    found = {}
    for name, source in attacks(work).items():
        out = work / name
        out.mkdir()
        filled = submissions.fill(nb, STEM, answers(source), is_otter_answer)
        nbformat.write(filled, out / f"{STEM}.ipynb")
        run(venv, "otter", "run", "-a", str(zipped), "-o", str(out), str(out / f"{STEM}.ipynb"),
            cwd=out)  # fmt: skip
    time.sleep(5)  # the daemon's time to act, had it survived
    for name in attacks(work):
        found[name] = json.loads((work / name / "results.json").read_text())
    return found


@pytest.mark.parametrize("name", ["patch-checks", "patch-otter", "daemon", "alias"])
def test_otter_attacks_earn_nothing(otter_results, name):
    assert scores(otter_results[name]) == (0, 1), otter_results[name]


def test_otter_gives_honest_work_full_marks_and_the_graders_lines(otter_results):
    results = otter_results["honest"]
    assert scores(results) == (1, 1)
    assert "[05:softmax-stable] PASS" in json.dumps(results)
    assert "called attention_lib.core.softmax" in json.dumps(otter_results["alias"])


def test_the_autograder_zip_holds_the_grader_and_the_plugin(venv):
    import zipfile

    zipped = otter_export.build(STEM, venv, check=False)
    with zipfile.ZipFile(zipped) as archive:
        names = set(archive.namelist())
        config = json.loads(archive.read("otter_config.json"))
        setup = archive.read("setup.sh").decode()
    assert {"attention_otter.py", "grader/tools/grade.py", f"grader/chapters/{STEM}.ipynb"} <= names
    assert "grader/tools/grading/tripwires.py" in names and "bubblewrap" in setup
    assert config["plugins"] == [{"attention_otter.AttentionGrader": {"sandbox": "required"}}]


@pytest.fixture(scope="module")
def nbgrader_course(venv, tmp_path_factory) -> Path:
    """nbgrader's autograde of the attacks, and the collected notebooks, as a course."""
    work = tmp_path_factory.mktemp("nbgrader-attacks")
    nbgrader_export.build(STEM)
    course = work / "course"
    shutil.copytree(common.OUT / "nbgrader", course)
    lib = work / "lib"
    lib.mkdir()
    common.copy_library(lib)
    extra = {"PYTHONPATH": str(lib)}
    run(venv, "nbgrader", "generate_assignment", STEM, cwd=course, extra_env=extra)
    nb = nbformat.read(course / "release" / STEM / f"{STEM}.ipynb", as_version=4)
    sources = {"patch-checks": PATCH_CHECKS + UNIFORM, "transform": UNIFORM + "\n" + TRANSFORM}
    for name, source in sources.items():
        folder = course / "submitted" / name / STEM
        folder.mkdir(parents=True)
        nbformat.write(submissions.fill(nb, STEM, answers(source), is_nbgrader_answer),
                       folder / f"{STEM}.ipynb")  # fmt: skip
    run(venv, "nbgrader", "autograde", STEM, cwd=course, extra_env=extra)
    run(venv, "nbgrader", "export", "--to", str(work / "grades.csv"), cwd=course, extra_env=extra)
    return course


def test_nbgrader_in_kernel_tests_are_fooled_as_teaching_md_says(nbgrader_course):
    with (nbgrader_course.parent / "grades.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["student_id"]: float(r["score"]) for r in rows} == {
        "patch-checks": 2,
        "transform": 2,
    }


def test_make_grade_marks_the_collected_nbgrader_submissions(nbgrader_course, tmp_path):
    sys.path.insert(0, str(common.TOOLS))
    import grade

    folder = tmp_path / "collected"
    folder.mkdir()
    for path in (nbgrader_course / "submitted").glob(f"*/{STEM}/{STEM}.ipynb"):
        shutil.copy(path, folder / f"{path.parts[-3]}.ipynb")
    grade.grade(folder, tmp_path / "grades", timeout=60)
    with (tmp_path / "grades" / "grades.csv").open() as handle:
        rows = {r["student"]: r for r in csv.DictReader(handle)}
    for name in ("patch-checks", "transform"):
        assert (rows[name]["05:softmax-stable"], rows[name]["05:entropy"]) == ("0", "1")

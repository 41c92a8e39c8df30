"""The classroom exports, run through the real tools (see tools/classroom/).

For two chapters (05: functions and free text; 04: a number, a function, free text), a
correct, a blank and a partly wrong submission go through ``otter run -a autograder.zip``
and through ``nbgrader autograde``; the scores must come out as expected. The student
repository asks for exactly the Binder environment, in which every student chapter runs.

otter-grader and nbgrader live in _build/classroom-venv (requirements-classroom.txt); the
student repository's environment is _build/binder-venv; both are rebuilt only when their
inputs change (tools/classroom/envs.py).
"""

from __future__ import annotations

import csv
import importlib
import json
import pkgutil
import re
import shutil
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "classroom"))
import common  # noqa: E402
import envs  # noqa: E402
import nbgrader_export  # noqa: E402
import otter_export  # noqa: E402
import student_repo  # noqa: E402
import submissions  # noqa: E402

pytestmark = pytest.mark.slow
STEMS = ["05_softmax", "04_scaling"]
KINDS = ["correct", "blank", "partly"]
ROOT = common.ROOT


# What jupyter_client says when a kernel's process exits before it ever answered.
KERNEL_DIED = "Kernel died before replying to kernel_info"


def run(venv: Path, *args, cwd: Path, extra_env: dict | None = None) -> str:
    """Run a tool of ``venv`` in ``cwd``; fail with its output if it fails.

    A kernel that dies while starting, before it ran any of the notebook, is the machine
    (seen once in a fresh clone, with three graders starting kernels at once), not the
    grading: that one failure is tried once more, and the retry is reported as a warning.
    """
    env = {**envs.clean_env(venv), **(extra_env or {})}
    command = [str(venv / "bin" / args[0]), *args[1:]]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode and KERNEL_DIED in done.stderr:
        # pytest lists it under "warnings summary", with the kernel's own error (first).
        note = f"{args[:2]}: a kernel died while starting; ran again. {done.stderr[:2000]}"
        warnings.warn(note, stacklevel=2)
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (
        f"{args}: {done.stdout[-2000:]}\n{done.stderr[:3000]}\n...\n{done.stderr[-3000:]}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def venv() -> Path:
    return envs.classroom_venv()


def selected_stems(request, test: str) -> list[str]:
    """The chapters of ``test`` that this session runs: a chapter whose grading passed
    unchanged is left out (tools/testrun/reuse.py), and then it need not be graded."""
    items = request.session.items
    return sorted({i.callspec.params["stem"] for i in items if i.originalname == test})


@pytest.fixture(scope="module")
def otter_zips(venv, request) -> dict[str, Path]:
    stems = selected_stems(request, "test_otter_run_scores_each_submission_as_expected")
    with ThreadPoolExecutor(len(STEMS)) as pool:
        # otter assign's own run of the solutions is skipped: the correct submission below
        # makes the same check (`make classroom` keeps it).
        built = pool.map(lambda s: otter_export.build(s, venv, check=False), stems)
        return dict(zip(stems, built, strict=True))


@pytest.fixture(scope="module")
def otter_scores(venv, otter_zips, tmp_path_factory) -> dict[tuple[str, str], float]:
    """``(stem, kind)``: the total of ``otter run``'s results.json."""
    work = tmp_path_factory.mktemp("otter")

    def grade(job):
        stem, kind = job
        folder = otter_zips[stem].parent
        nb = nbformat.read(folder / "dist" / "student" / f"{stem}.ipynb", as_version=4)
        filled = submissions.fill(nb, stem, submissions.answers(stem, kind), is_otter_answer)
        out = work / f"{stem}-{kind}"
        out.mkdir()
        nbformat.write(filled, out / f"{stem}.ipynb")
        run(venv, "otter", "run", "-a", str(otter_zips[stem]), "-o", str(out),
            str(out / f"{stem}.ipynb"), cwd=out)  # fmt: skip
        results = json.loads((out / "results.json").read_text())
        return sum(t["score"] for t in results["tests"] if t.get("max_score"))

    jobs = [(s, k) for s in otter_zips for k in KINDS]
    with ThreadPoolExecutor(3) as pool:
        return dict(zip(jobs, pool.map(grade, jobs), strict=True))


def is_otter_answer(cell, ex) -> bool:
    if ex.kind == "text":
        return cell.cell_type == "markdown" and cell.source.startswith("_Type your answer")
    return cell.cell_type == "code" and cell.source.strip() == ex.stub.strip()


def is_nbgrader_answer(cell, ex) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    q = common.qname(ex.label)
    return bool(meta.get("solution")) and meta.get("grade_id") in (q, f"{q}-answer")


@pytest.fixture(scope="module")
def nbgrader_scores(venv, tmp_path_factory, request) -> dict[tuple[str, str], float]:
    """``(stem, kind)``: the score ``nbgrader export`` reports after ``autograde``."""
    work = tmp_path_factory.mktemp("nbgrader")
    stems = selected_stems(request, "test_nbgrader_autograde_scores_each_submission_as_expected")
    for stem in stems:
        nbgrader_export.build(stem)
    course = work / "course"
    shutil.copytree(common.OUT / "nbgrader", course)
    # The hub's image has attention_lib installed (the student repository's requirements).
    lib = work / "lib"
    lib.mkdir()
    common.copy_library(lib)
    extra = {"PYTHONPATH": str(lib)}
    for stem in stems:
        run(venv, "nbgrader", "generate_assignment", stem, cwd=course, extra_env=extra)
        nb = nbformat.read(course / "release" / stem / f"{stem}.ipynb", as_version=4)
        for kind in KINDS:
            filled = submissions.fill(nb, stem, submissions.answers(stem, kind), is_nbgrader_answer)
            folder = course / "submitted" / kind / stem
            folder.mkdir(parents=True)
            nbformat.write(filled, folder / f"{stem}.ipynb")
    for stem in stems:  # one at a time: they share the gradebook (SQLite)
        run(venv, "nbgrader", "autograde", stem, cwd=course, extra_env=extra)
    run(venv, "nbgrader", "export", "--to", str(work / "grades.csv"), cwd=course, extra_env=extra)
    with (work / "grades.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return {(r["assignment"], r["student_id"]): float(r["score"]) for r in rows}


def test_the_graders_are_pinned_exactly_with_the_course_run_time():
    pins = [
        line.strip()
        for line in (ROOT / "requirements-classroom.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert all("==" in p for p in pins), pins
    names = {p.split("==")[0] for p in pins}
    assert {"otter-grader", "nbgrader"} <= names
    assert set(common.runtime_requirements()) <= set(pins)


@pytest.mark.reuse(param="stem")
@pytest.mark.parametrize("stem", STEMS)
@pytest.mark.parametrize("kind", KINDS)
def test_otter_run_scores_each_submission_as_expected(otter_scores, stem, kind):
    assert otter_scores[stem, kind] == submissions.expected(stem, kind)


def test_the_otter_master_marks_free_text_for_manual_grading():
    for stem in STEMS:
        nb = otter_export.master(stem)
        texts = [e for e in common.chapter(stem).exercises if e.kind == "text"]
        heads = [c.source for c in nb.cells if c.source.startswith("# BEGIN QUESTION")]
        assert sum("manual: true" in h for h in heads) == len(texts)
        assert len(heads) == len(common.chapter(stem).exercises)


@pytest.mark.reuse(param="stem")
@pytest.mark.parametrize("stem", STEMS)
@pytest.mark.parametrize("kind", KINDS)
def test_nbgrader_autograde_scores_each_submission_as_expected(nbgrader_scores, stem, kind):
    assert nbgrader_scores[stem, kind] == submissions.expected(stem, kind)


def test_no_checker_module_ships_a_callable_named_after_an_exercise():
    import attention_lib.checks as checks

    solved = {
        e.name.removeprefix("my_").lower()
        for c in common.exercises.chapters()
        for e in c.exercises
        if e.kind == "function"
    }
    for info in pkgutil.iter_modules(checks.__path__):
        module = importlib.import_module(f"attention_lib.checks.{info.name}")
        public = {
            name.lower()
            for name, value in vars(module).items()
            if callable(value) and not name.startswith("_")
            and getattr(value, "__module__", "") == module.__name__
        }  # fmt: skip
        assert not public & solved, f"{info.name}: {public & solved}"


def installs(path: Path) -> list[str]:
    """The lines of a requirements file that install something (no comments, no blanks)."""
    lines = [line.strip() for line in path.read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


@pytest.fixture(scope="module")
def student_env() -> tuple[Path, Path, float]:
    """The student repository, and the environment Binder builds from it.

    The student repository asks Binder for exactly what this repository does (the same
    requirements, postBuild, runtime.txt and pyproject.toml; asserted here), so its
    environment is the Binder environment (``envs.binder_venv``, shared with the Binder
    and JupyterLab checks) with the student repository's own ``attention_lib`` in place of
    this checkout's: ``-e .`` in the student repository puts that copy on the path.
    """
    repo = student_repo.build()
    assert installs(repo / "requirements.txt") == installs(ROOT / "requirements.txt")
    for name in ("postBuild", "runtime.txt", "pyproject.toml"):
        assert (repo / name).read_bytes() == (ROOT / name).read_bytes(), name
    start = time.monotonic()
    venv = envs.binder_venv()
    return repo, venv, time.monotonic() - start


def test_the_student_repository_holds_no_solution(student_env):
    repo, _, _ = student_env
    requirements = (repo / "requirements.txt").read_text()
    assert "jupyterlab-myst==" in requirements and "\n-e .\n" in requirements
    assert (repo / "attention_lib" / "checks").is_dir() and (repo / "pyproject.toml").exists()
    for path in (repo / "chapters").glob("*.ipynb"):
        assert "{solution" not in path.read_text(), path.name
    assert "git-pull?repo=" in (repo / "README.md").read_text()


@pytest.fixture(scope="module")
def student_kernel(student_env, tmp_path_factory):
    """The Jupyter folder of a kernel "student": the student environment, with the student
    repository's own attention_lib first on the path, as `pip install -e .` there puts it."""
    repo, venv, seconds = student_env
    print(f"student environment built or reused in {seconds:.0f} s")
    student = {"PYTHONPATH": str(repo)}
    where = run(venv, "python", "-c", "import attention_lib; print(attention_lib.__file__)",
                cwd=repo / "chapters", extra_env=student)  # fmt: skip
    assert Path(where.strip()).is_relative_to(repo), f"attention_lib came from {where}"
    jupyter = tmp_path_factory.mktemp("jupyter")
    kernel = jupyter / "kernels" / "student"
    kernel.mkdir(parents=True)
    argv = [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "env": student, "language": "python", "display_name": "student"}
    (kernel / "kernel.json").write_text(json.dumps(spec))
    return jupyter


@pytest.mark.reuse(param="stem")
@pytest.mark.parametrize("stem", common.all_stems())
def test_every_student_chapter_runs_to_its_todo_lines(
    stem, student_env, student_kernel, monkeypatch
):
    """The student copy runs top to bottom on a kernel of the student environment, and
    every checker in it says TODO."""
    monkeypatch.setenv("JUPYTER_PATH", str(student_kernel))
    path = student_env[0] / "chapters" / f"{stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    folder = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=600, kernel_name="student", resources=folder).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    checked = [e for e in common.chapter(stem).exercises if e.kind != "text"]
    verdicts = re.findall(r"^\[[^\]\n]+\] (PASS|FAIL|TODO):", text, re.M)
    assert len(verdicts) >= len(checked), f"{stem}: {text[-500:]}"
    assert set(verdicts) == {"TODO"}, f"{stem}: checkers said {verdicts}, not all TODO"


def test_the_course_site_drops_text_answers_and_listings_that_solve_an_exercise():
    sys.path.insert(0, str(ROOT / "tools"))
    from book import course_site

    for stem in common.all_stems():
        nb = course_site.for_the_class(common.student_copy(stem), stem)
        assert not any(
            c.cell_type == "markdown" and "answer" in c.metadata.get(common.KEY, {})
            for c in nb.cells
        ), stem
        for ex in common.chapter(stem).exercises:
            if ex.kind == "function":  # a listing of the solution itself would be left out
                assert course_site.reveals(common.solution_code(ex), stem), ex.label

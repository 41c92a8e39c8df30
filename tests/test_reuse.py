"""tools/testrun/reuse.py: a check that passed is left out only while nothing it reads has
changed.

Each test builds a small git repository with the plugin, a chapter or two, a test marked
``reuse`` that notes each time it runs, and a notebook for nbval, then runs pytest in it
as ``make test`` would, again and again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

TEST_FILE = """
import os
from pathlib import Path

import pytest

RAN = Path(__file__).parents[1] / "ran.txt"


@pytest.mark.reuse(param="stem")
@pytest.mark.parametrize("stem", ["a", "b"])
def test_chapter(stem):
    with RAN.open("a") as log:
        log.write(stem + "\\n")
    if os.environ.get("EDIT") == stem:  # the library changes while the checks run
        (Path(__file__).parents[1] / "lib.py").write_text("VALUE = 3\\n")
    assert os.environ.get("BREAK") != stem, f"chapter {stem} broken"


def test_not_marked():
    with RAN.open("a") as log:
        log.write("plain\\n")
"""


def notebook(text: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(f"print({text!r})", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
    return nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_code_cell("1 + 1")])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "tools" / "testrun").mkdir(parents=True)
    for name in ("__init__.py", "reuse.py"):
        shutil.copy(ROOT / "tools" / "testrun" / name, tmp_path / "tools" / "testrun" / name)
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n'
    )
    (tmp_path / ".gitignore").write_text("_build/\nran.txt\n__pycache__/\n")
    (tmp_path / "lib.py").write_text("VALUE = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_chapters.py").write_text(TEST_FILE)
    (tmp_path / "chapters").mkdir()
    for stem in "ab":
        nbformat.write(notebook(stem), tmp_path / "chapters" / f"{stem}.ipynb")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    return tmp_path


def pytest_in(repo: Path, *args: str, **env: str) -> tuple[list[str], subprocess.CompletedProcess]:
    """Run pytest in ``repo``; return what the marked tests noted, and the process.

    Only the plugins named load (nbval, for a notebook): each start then takes 0.3 s,
    not the 2 s that importing every installed plugin costs.
    """
    (repo / "ran.txt").unlink(missing_ok=True)
    environ = {k: v for k, v in os.environ.items() if k not in ("FULL", "BREAK", "EDIT")}
    environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *args],
        cwd=repo,
        env={**environ, **env},
        capture_output=True,
        text=True,
    )
    ran = (repo / "ran.txt").read_text().split() if (repo / "ran.txt").exists() else []
    return sorted(ran), done


def test_a_rerun_with_nothing_changed_runs_nothing_marked_and_says_so(repo):
    ran, done = pytest_in(repo, "tests")
    assert ran == ["a", "b", "plain"] and done.returncode == 0, done.stdout
    ran, done = pytest_in(repo, "tests")
    assert ran == ["plain"] and done.returncode == 0, done.stdout
    assert "2 deselected" in done.stdout
    assert "reused 2 passing runs" in done.stdout and "test_chapter[a]" in done.stdout


def test_editing_one_chapter_runs_that_chapters_check_again(repo):
    pytest_in(repo, "tests")
    nbformat.write(notebook("a, edited"), repo / "chapters" / "a.ipynb")
    assert pytest_in(repo, "tests")[0] == ["a", "plain"]


@pytest.mark.parametrize(
    "change",
    ["edit the library", "add an untracked file", "delete a tracked file", "pass other options"],
)
def test_any_other_change_runs_every_check_again(repo, change):
    pytest_in(repo, "tests")
    args = ["tests"]
    if change == "edit the library":
        (repo / "lib.py").write_text("VALUE = 2\n")
    elif change == "add an untracked file":
        (repo / "helper.py").write_text("")
    elif change == "delete a tracked file":
        (repo / "lib.py").unlink()
    else:
        args.append("-x")
    assert pytest_in(repo, *args)[0] == ["a", "b", "plain"]


@pytest.mark.parametrize("change", ["an ignored file", "a prose page at the top"])
def test_some_changes_leave_the_passing_runs_reused(repo, change):
    pytest_in(repo, "tests")
    if change == "an ignored file":
        (repo / "_build" / "scratch.txt").write_text("built")
    else:
        (repo / "intro.md").write_text("# A new page\n")
    assert pytest_in(repo, "tests")[0] == ["plain"]


def test_a_prose_page_inside_a_folder_counts(repo):
    pytest_in(repo, "tests")
    (repo / "tests" / "notes.md").write_text("read by a test, perhaps\n")
    assert pytest_in(repo, "tests")[0] == ["a", "b", "plain"]


def test_a_failing_check_is_run_again_until_it_passes(repo):
    ran, done = pytest_in(repo, "tests", BREAK="b")
    assert ran == ["a", "b", "plain"] and done.returncode == 1
    ran, done = pytest_in(repo, "tests", BREAK="b")
    assert ran == ["b", "plain"] and done.returncode == 1, "the failure was not run again"
    assert pytest_in(repo, "tests")[0] == ["b", "plain"]
    assert pytest_in(repo, "tests")[0] == ["plain"]


def test_full_1_reuses_nothing_but_records_for_the_next_run(repo):
    pytest_in(repo, "tests")
    assert pytest_in(repo, "tests", FULL="1")[0] == ["a", "b", "plain"]
    nbformat.write(notebook("a, edited"), repo / "chapters" / "a.ipynb")
    assert pytest_in(repo, "tests", FULL="1")[0] == ["a", "b", "plain"]
    assert pytest_in(repo, "tests")[0] == ["plain"]


def test_a_pass_is_not_kept_if_an_input_changed_while_it_ran(repo):
    assert pytest_in(repo, "tests", EDIT="a")[0] == ["a", "b", "plain"]
    (repo / "lib.py").write_text("VALUE = 1\n")  # back as it was when the run began
    assert pytest_in(repo, "tests")[0] == ["a", "b", "plain"]


def test_an_unexpected_pass_and_a_fixture_error_keep_nothing(repo):
    (repo / "tests" / "test_xpass.py").write_text(XPASS_TESTS)
    (repo / "tests" / "test_more.py").write_text(TEARDOWN_TESTS)
    assert pytest_in(repo, "tests")[0] == ["a", "b", "plain", "td1", "td2", "xpass"]
    ran, done = pytest_in(repo, "tests")  # a and b were kept; none of the others was
    assert ran == ["plain", "td1", "td2", "xpass"], done.stdout
    assert done.returncode == 1 and "RuntimeError: teardown" in done.stdout


NOTE = """
from pathlib import Path

import pytest

RAN = Path(__file__).parents[1] / "ran.txt"


def note(what):
    with RAN.open("a") as log:
        log.write(what + "\\n")
"""
XPASS_TESTS = (
    NOTE
    + """

@pytest.mark.reuse("chapters/a.ipynb")
@pytest.mark.xfail(reason="thought broken")
def test_xpass():
    note("xpass")
"""
)
TEARDOWN_TESTS = (
    NOTE
    + """

@pytest.fixture(scope="module")
def breaks_at_teardown():
    yield
    raise RuntimeError("teardown")


@pytest.mark.reuse("chapters/a.ipynb")
def test_td1(breaks_at_teardown):
    note("td1")


@pytest.mark.reuse("chapters/b.ipynb")
def test_td2(breaks_at_teardown):
    note("td2")
"""
)


def test_outside_a_git_checkout_nothing_is_reused(repo):
    shutil.rmtree(repo / ".git")
    pytest_in(repo, "tests")
    assert pytest_in(repo, "tests")[0] == ["a", "b", "plain"]


def test_nbval_notebooks_are_reused_whole_and_a_run_of_only_reused_ones_passes(repo):
    _, done = pytest_in(repo, "-p", "nbval", "--nbval", "chapters")
    assert done.returncode == 0 and "4 passed" in done.stdout, done.stdout
    _, done = pytest_in(repo, "-p", "nbval", "--nbval", "chapters")
    assert done.returncode == 0 and "4 deselected" in done.stdout, done.stdout
    assert "reused 2 passing runs" in done.stdout and "chapters/a.ipynb" in done.stdout
    nb = notebook("b")
    nb.cells[0].outputs[0].text = "not what it prints\n"  # nbval must fail this one
    nbformat.write(nb, repo / "chapters" / "b.ipynb")
    _, done = pytest_in(repo, "-p", "nbval", "--nbval", "chapters")
    assert done.returncode == 1 and "1 failed, 1 passed, 2 deselected" in done.stdout, done.stdout
    _, done = pytest_in(repo, "-p", "nbval", "--nbval", "chapters")
    assert "1 failed, 1 passed, 2 deselected" in done.stdout, "a half-failed notebook was kept"


def test_under_xdist_nothing_is_reused_and_the_run_passes(repo):
    pytest_in(repo, "tests")
    ran, done = pytest_in(repo, "-p", "xdist", "-n", "2", "tests")
    assert ran == ["a", "b", "plain"] and done.returncode == 0, done.stdout

"""Binder as a learner gets it: run every chapter in an environment built only from what
repo2docker reads.

repo2docker cannot run here (no Docker engine), so this test does what it does: a fresh
virtual environment on the Python that ``runtime.txt`` names (or the closest one found),
``pip install -r requirements.txt`` and nothing else, then ``postBuild`` if the repository
has one. Every chapter is then executed in a kernel of that environment, with nbclient
(what ``jupyter nbconvert --execute`` uses). A chapter that needs a package only the
developers have (pytest, jupyter-book, ...) fails here.

The environment is kept in ``_build/binder-venv`` and rebuilt whenever requirements.txt,
postBuild, runtime.txt or pyproject.toml change.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "_build" / "binder-venv"
INPUTS = ["requirements.txt", "postBuild", "runtime.txt", "pyproject.toml"]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


def runtime_python() -> str:
    """The interpreter runtime.txt asks for ("python-3.11" -> python3.11), else this one."""
    wanted = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    found = shutil.which(f"python{wanted}")
    if found:
        return found
    print(f"runtime.txt asks for Python {wanted}; not found, using {sys.executable}")
    return sys.executable


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory) -> Path:
    """The learner's environment, and a Jupyter data folder with its kernel registered."""
    digest = hashlib.sha256()
    for name in INPUTS:
        path = ROOT / name
        digest.update(name.encode() + (path.read_bytes() if path.exists() else b"-"))
    stamp = VENV / ".inputs"
    if not (stamp.exists() and stamp.read_text() == digest.hexdigest()):
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([runtime_python(), "-m", "venv", str(VENV)], check=True)
        env = {**os.environ, "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        env.pop("PYTHONPATH", None)
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "-r", "requirements.txt"], cwd=ROOT, env=env, check=True)
        if (ROOT / "postBuild").exists():
            subprocess.run(["bash", str(ROOT / "postBuild")], cwd=ROOT, env=env, check=True)
        stamp.write_text(digest.hexdigest())
    kernels = tmp_path_factory.mktemp("jupyter") / "kernels" / "binder"
    kernels.mkdir(parents=True)
    spec = {
        "argv": [
            str(VENV / "bin" / "python"),
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ],
        "display_name": "Binder environment",
        "language": "python",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    return kernels.parents[1]


def test_the_learner_environment_has_no_developer_tools(binder_env):
    # The point of the test: nothing from requirements-dev.txt leaked into Binder's list.
    python = str(VENV / "bin" / "python")
    for module in ("pytest", "jupyter_book", "nbval", "playwright"):
        found = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
        assert found.returncode != 0, f"{module} is installed in the Binder environment"


def test_the_kernel_is_the_binder_environment(binder_env, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(binder_env))
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")]
    )
    NotebookClient(nb, timeout=60, kernel_name="binder").execute()
    assert Path(nb.cells[0].outputs[0]["text"].strip()) == VENV


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_chapter_runs_in_the_binder_environment(chapter, binder_env, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(binder_env))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(chapter, as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="binder", resources={"metadata": {"path": str(chapter.parent)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails

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

import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

CHAPTERS = sorted((Path(__file__).resolve().parents[2] / "chapters").glob("*.ipynb"))


def test_the_learner_environment_has_no_developer_tools(binder_venv):
    # The point of the test: nothing from requirements-dev.txt leaked into Binder's list.
    python = str(binder_venv / "bin" / "python")
    for module in ("pytest", "jupyter_book", "nbval", "playwright"):
        found = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
        assert found.returncode != 0, f"{module} is installed in the Binder environment"


def test_the_kernel_is_the_binder_environment(binder_venv, binder_env, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(binder_env))
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")]
    )
    NotebookClient(nb, timeout=60, kernel_name="binder").execute()
    assert Path(nb.cells[0].outputs[0]["text"].strip()) == binder_venv


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_chapter_runs_in_the_binder_environment(chapter, binder_env, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(binder_env))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(chapter, as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="binder", resources={"metadata": {"path": str(chapter.parent)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails

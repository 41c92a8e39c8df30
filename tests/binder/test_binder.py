"""Binder as a learner gets it: an environment built only from what repo2docker reads.

repo2docker cannot run here (no Docker engine), so tools/classroom/envs.py does what it
does: a fresh virtual environment on the Python that ``runtime.txt`` names (or the closest
one found), ``pip install -r requirements.txt`` and nothing else, then ``postBuild``.

Every chapter runs in it once per ``make test``: strict nbval executes the chapters on the
kernel "binder" of that environment (``make nbval``), so the one execution both compares
every output with the committed one and fails on a chapter that needs a package only the
developers have (pytest, jupyter-book, ...). The tests here check that environment and
that the kernel nbval is given really runs in it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import envs
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]


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


def test_make_nbval_runs_the_chapters_on_that_kernel():
    """``make test`` runs its nbval stage through ``make nbval``: it must name the kernel."""
    recipe = re.search(r"^nbval:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert recipe, "no nbval target in the Makefile"
    lines = recipe.group(1)
    assert "envs.py binder" in lines, "make nbval does not build the Binder kernel"
    assert "--nbval-kernel-name binder" in lines, lines
    assert "JUPYTER_PATH=" in lines and envs.BINDER_KERNELS.relative_to(ROOT).as_posix() in lines

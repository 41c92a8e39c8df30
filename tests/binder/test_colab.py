"""Colab, or a notebook downloaded from the website, as a learner gets it.

The site's Colab and download buttons open the learner edition (``notebooks/``). A hosted
kernel has numpy, matplotlib and ipywidgets and nothing of this project. This test builds
such an environment in ``_build/bare-venv`` (kept, rebuilt when the pins of those packages
change), removes anything a previous run installed into it, and then:

1. runs the setup cell where the library cannot be had (a source that does not exist,
   as offline or without git): it must stop with one sentence that names
   ``ATTENTION_LIB_SOURCE``, not a wall of pip output;
2. runs chapter 05 as the website's download button serves it, from an empty folder: its
   setup cell must install ``attention_lib`` (from a copy of this checkout, through
   ``ATTENTION_LIB_SOURCE``, as it would from the repository in Colab). The seconds a
   learner waits before the chapter's first figure are printed (``pytest -s``);
3. runs every chapter's learner edition top to bottom there, as "Run All" would: no
   error, no checker at PASS (no solution runs by itself), and at least one at TODO.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import envs  # tools/classroom, on the path from conftest.py
import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "_build" / "bare-venv"
PYTHON = VENV / "bin" / "python"
HOSTED = ("numpy", "matplotlib", "ipywidgets", "ipykernel")  # what a hosted kernel has
EDITIONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SITE = ROOT / os.environ.get("SITE_DIR", "_build/html")


def pinned(names) -> list[str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return [line for line in lines if line.split("==")[0].lower() in names]


def installed() -> set[str]:
    out = subprocess.run(
        [str(PYTHON), "-m", "pip", "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {p["name"].lower().replace("_", "-") for p in json.loads(out)}


@pytest.fixture(scope="module")
def bare_kernel(tmp_path_factory) -> Path:
    """A kernel on the bare environment, with nothing of this project in it."""
    pins = pinned(HOSTED)
    stamp = VENV / ".inputs"
    digest = hashlib.sha256("\n".join(pins).encode()).hexdigest()
    if not (stamp.exists() and stamp.read_text() == digest):
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        envs.install(str(PYTHON), *pins)  # by uv; the setup cells below use the venv's pip
        (VENV / ".base").write_text(json.dumps(sorted(installed())))
        stamp.write_text(digest)
    extra = installed() - set(json.loads((VENV / ".base").read_text()))
    if extra:  # what an earlier run's setup cells installed: start from nothing again
        subprocess.run([str(PYTHON), "-m", "pip", "uninstall", "-q", "-y", *extra], check=True)
    assert "attention-lib" not in installed()
    kernels = tmp_path_factory.mktemp("jupyter") / "kernels" / "bare"
    kernels.mkdir(parents=True)
    spec = {"argv": [str(PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"]}
    (kernels / "kernel.json").write_text(json.dumps({**spec, "language": "python"}))
    return kernels.parents[1]


@pytest.fixture(scope="module")
def library_source(tmp_path_factory) -> str:
    """A private copy of what ``pip install`` of this checkout reads. Installing the
    checkout itself builds in its shared ``build/`` folder, which another process
    installing the tree at the same moment (the student repository, a second test run)
    can empty mid-build, leaving a package without some of its modules."""
    copy = tmp_path_factory.mktemp("source")
    shutil.copytree(
        ROOT / "attention_lib", copy / "attention_lib", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, copy / name)
    return str(copy)


def run(path: Path, folder: Path, jupyter_path: Path, monkeypatch, source: str):
    """Execute ``path`` in ``folder`` on the bare kernel, as "Run All" does.

    Returns the executed notebook and the seconds from the first cell to the end of the
    first cell that draws a figure (None if none does)."""
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    monkeypatch.setenv("ATTENTION_LIB_SOURCE", source)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="bare", resources={"metadata": {"path": str(folder)}}
    )
    first_figure = None
    with client.setup_kernel():
        began = time.monotonic()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)  # raises CellExecutionError on an error
            data = [o.get("data", {}) for o in cell.get("outputs", [])]
            drawn = any("image/png" in d or "<img" in "".join(d.get("text/html", "")) for d in data)
            if drawn and first_figure is None:
                first_figure = time.monotonic() - began
    return nb, first_figure


def printed(nb) -> str:
    return "".join("".join(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []))


def test_without_the_repository_the_setup_cell_says_what_to_do(bare_kernel, tmp_path):
    setup = next(c for c in nbformat.read(EDITIONS[0], 4).cells if c.cell_type == "code")
    script = tmp_path / "setup.py"
    script.write_text(setup.source)
    env = {**os.environ, "ATTENTION_LIB_SOURCE": str(tmp_path / "no-such-copy.zip")}
    result = subprocess.run(
        [str(PYTHON), str(script)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: Could not install attention_lib")
    assert "ATTENTION_LIB_SOURCE" in last and "pip" not in result.stdout
    assert len(result.stderr.splitlines()) <= 6, result.stderr  # no wall of pip output
    assert "attention-lib" not in installed()


@pytest.mark.reuse("notebooks/05_softmax.ipynb", SITE / "notebooks" / "05_softmax.ipynb")
def test_a_downloaded_chapter_runs_from_an_empty_folder(
    bare_kernel, library_source, tmp_path, monkeypatch
):
    download = SITE / "notebooks" / "05_softmax.ipynb"
    if not download.exists():
        pytest.skip(f"no built site with downloads at {SITE}; run `make book` first")
    copy = tmp_path / download.name
    shutil.copy(download, copy)
    nb, first_figure = run(copy, tmp_path, bare_kernel, monkeypatch, library_source)
    print(f"\nchapter 05 downloaded, bare environment: first figure after {first_figure:.1f} s")
    assert "attention-lib" in installed()
    assert "Installing attention_lib" in printed(nb)


@pytest.mark.reuse(param="edition")
@pytest.mark.parametrize("edition", EDITIONS, ids=lambda p: p.stem)
def test_run_all_leaves_every_exercise_to_the_learner(
    edition, bare_kernel, library_source, monkeypatch
):
    nb, _ = run(edition, edition.parent, bare_kernel, monkeypatch, library_source)
    lines = printed(nb).splitlines()
    verdicts = [line for line in lines if line.startswith("[") and "] " in line]
    assert not [v for v in verdicts if "] PASS" in v], "a solution ran by itself"
    assert [v for v in verdicts if "] TODO" in v], "no checker waits for the learner"

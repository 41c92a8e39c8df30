"""Colab, or a notebook downloaded from the website, as a learner gets it.

A hosted kernel has numpy, matplotlib and ipywidgets and nothing of this project. This
test builds such an environment in ``_build/bare-venv`` (kept, rebuilt when the pins of
those packages change), removes anything a previous run installed into it, and then:

1. runs a chapter as the website's download button serves it, from an empty folder: its
   setup cell must install ``attention_lib`` (from this checkout, through the variable
   ``ATTENTION_LIB_SOURCE``, as it would from the repository in Colab);
2. runs every chapter top to bottom in that environment, each from its own setup cell
   (chapter 11's installs the model too).

The time each setup cell took is printed (`pytest -s`), for the README and the notes.
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
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
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
    return {p["name"].lower() for p in json.loads(out)}


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
    assert "attention-lib" not in installed() and "attention_lib" not in installed()
    kernels = tmp_path_factory.mktemp("jupyter") / "kernels" / "bare"
    kernels.mkdir(parents=True)
    spec = {"argv": [str(PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"]}
    (kernels / "kernel.json").write_text(json.dumps({**spec, "language": "python"}))
    return kernels.parents[1]


def run(path: Path, folder: Path, jupyter_path: Path, monkeypatch) -> float:
    """Execute ``path`` in ``folder`` on the bare kernel; return its setup cell's seconds."""
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    monkeypatch.setenv("ATTENTION_LIB_SOURCE", str(ROOT))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="bare", resources={"metadata": {"path": str(folder)}}
    )
    with client.setup_kernel():
        setup = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        for index, cell in enumerate(nb.cells):
            began = time.monotonic()
            client.execute_cell(cell, index)  # raises CellExecutionError on an error
            if index == setup:
                seconds = time.monotonic() - began
    return seconds


@pytest.mark.reuse("chapters/05_softmax.ipynb", SITE / "_sources" / "chapters" / "05_softmax.ipynb")
def test_a_downloaded_chapter_runs_from_an_empty_folder(bare_kernel, tmp_path, monkeypatch):
    download = SITE / "_sources" / "chapters" / "05_softmax.ipynb"
    if not download.exists():
        pytest.skip(f"no built site with downloads at {SITE}; run `make book` first")
    copy = tmp_path / download.name
    shutil.copy(download, copy)
    seconds = run(copy, tmp_path, bare_kernel, monkeypatch)
    print(f"\nsetup cell on a bare environment (installs attention_lib): {seconds:.1f} s")
    assert "attention-lib" in installed() or "attention_lib" in installed()


@pytest.mark.reuse(param="chapter")
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_runs_from_its_setup_cell(chapter, bare_kernel, monkeypatch):
    seconds = run(chapter, chapter.parent, bare_kernel, monkeypatch)
    print(f"\n{chapter.name}: setup cell {seconds:.2f} s")

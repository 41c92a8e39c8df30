"""The Binder environment, shared by the Binder and JupyterLab checks.

A fresh virtual environment on the Python that ``runtime.txt`` names, with only
``pip install -r requirements.txt`` and ``postBuild``: what repo2docker would build. It is
kept in ``_build/binder-venv`` and rebuilt whenever requirements.txt, postBuild,
runtime.txt or pyproject.toml change.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "_build" / "binder-venv"
INPUTS = ["requirements.txt", "postBuild", "runtime.txt", "pyproject.toml"]


def runtime_python() -> str:
    """The interpreter runtime.txt asks for ("python-3.11" -> python3.11), else this one."""
    wanted = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    found = shutil.which(f"python{wanted}")
    if found:
        return found
    print(f"runtime.txt asks for Python {wanted}; not found, using {sys.executable}")
    return sys.executable


@pytest.fixture(scope="session")
def binder_venv() -> Path:
    """The learner's environment, built if its inputs changed since the last build."""
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
    return VENV


@pytest.fixture(scope="session")
def binder_env(binder_venv, tmp_path_factory) -> Path:
    """A Jupyter data folder with a kernel of the learner's environment registered."""
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

"""The Binder environment, shared by the Binder and JupyterLab checks.

A fresh virtual environment on the Python that ``runtime.txt`` names, with only
``pip install -r requirements.txt`` and ``postBuild``: what repo2docker would build. It is
kept in ``_build/binder-venv`` and rebuilt whenever requirements.txt, postBuild,
runtime.txt or pyproject.toml change (tools/classroom/envs.py, which builds it for the
student repository's check too).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "classroom"))
import envs  # noqa: E402

VENV = envs.BINDER_VENV


@pytest.fixture(scope="session")
def binder_venv() -> Path:
    """The learner's environment, built if its inputs changed since the last build."""
    return envs.binder_venv()


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

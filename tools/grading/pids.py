"""A cap on one sandbox's processes that holds even when the grader runs as root.

The worker lowers RLIMIT_NPROC before it reads any student code (:mod:`.worker`), but
Linux does not apply that limit to root's processes. Graded by root, a fork bomb filled
the machine's process table (32,768 entries) before its timeout came, and the machine
spent a quarter of an hour clearing it. So where the grader may create a cgroup of the
``pids`` controller (as root, with cgroup v1's ``pids`` hierarchy, or v2 with ``pids``
enabled at its root), each sandbox starts inside a new one whose ``pids.max`` is the
sandbox's limit, and the kernel refuses every fork beyond it. Elsewhere, e.g. a teacher's
own account, there is no such cgroup, and RLIMIT_NPROC holds, as it does for all but root.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1, then v2
PREFIX = "attention-grader-"  # then the grader's pid and a number
_numbers = itertools.count()


def new_group(limit: int) -> Path | None:
    """A new cgroup whose ``pids.max`` is ``limit``, or None where the machine allows none."""
    root = _controller()
    if root is None:
        return None
    _remove_stale(root)
    group = root / f"{PREFIX}{os.getpid()}-{next(_numbers)}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(limit))
    except OSError:
        remove(group)
        return None
    return group


def enter(group: Path, argv: list[str]) -> list[str]:
    """``argv``, started inside ``group`` before it can start anything else."""
    return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(group), *argv]


def remove(group: Path) -> None:
    """Kill whatever is left in ``group`` and remove it (nothing, if it is gone)."""
    for _ in range(200):  # at most 10 s
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # still has processes: they are dying, or they get killed now
            for pid in _read(group / "cgroup.procs").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            time.sleep(0.05)


def _controller() -> Path | None:
    for root in ROOTS:
        if (root / "cgroup.procs").exists():
            v1 = root == ROOTS[0]
            if v1 or "pids" in _read(root / "cgroup.subtree_control").split():
                return root
    return None


def _remove_stale(root: Path) -> None:
    """Groups left by graders that were killed before they could remove them."""
    for group in root.glob(f"{PREFIX}*"):
        pid = group.name.removeprefix(PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            remove(group)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""

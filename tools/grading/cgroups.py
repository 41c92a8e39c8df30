"""Caps on one sandbox as a whole: its processes and its memory, tmpfs included.

The worker lowers its own limits (:mod:`.worker`), but those are per process: a fork
bomb run as root ignores RLIMIT_NPROC, and RLIMIT_AS caps each process, not the
sandbox's children together, nor what it writes to a tmpfs. So where the grader may make
cgroups (as root: cgroup v1's ``pids`` and ``memory`` hierarchies, or v2 with those
controllers enabled at its root), each sandbox starts inside a new group whose
``pids.max`` and memory limit are the sandbox's, and the kernel refuses a fork beyond
the one and reclaims, then kills inside the group, beyond the other. Pages of a tmpfs
count toward the memory of the group that wrote them.

Where no cgroup can be made (an ordinary user without a delegated one), the limits are
per process only: see ``teaching.md``.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

MOUNT = Path("/sys/fs/cgroup")
PREFIX = "attention-grader-"  # then the grader's pid and a number
_numbers = itertools.count()


class Group:
    """One sandbox's cgroups: one folder per v1 hierarchy, or one v2 folder."""

    def __init__(self, folders: list[Path], limits: dict[str, int]):
        self.folders, self.limits = folders, limits

    def __repr__(self) -> str:
        return f"Group({[str(f) for f in self.folders]}, {self.limits})"


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _parents() -> dict[str, Path]:
    """``{controller: folder}`` under which a new group may be made, where one may."""
    found = {}
    v2 = (MOUNT / "cgroup.subtree_control").exists()
    for controller in ("pids", "memory"):
        if v2:
            if controller in _read(MOUNT / "cgroup.subtree_control").split():
                found[controller] = MOUNT
            continue
        root = MOUNT / controller
        if not (root / "cgroup.procs").exists():
            continue
        own = root  # nested under the grader's own group (a container's, say) where visible
        for line in _read(Path("/proc/self/cgroup")).splitlines():
            parts = line.split(":", 2)
            if len(parts) == 3 and controller in parts[1].split(","):
                candidate = root / parts[2].lstrip("/")
                own = candidate if (candidate / "cgroup.procs").exists() else root
        found[controller] = own
    return found


def _limit_files(folder: Path, controller: str) -> list[str]:
    if controller == "pids":
        return ["pids.max"]
    if (folder / "memory.max").exists():  # v2; no swap either
        return ["memory.max", "memory.swap.max"]
    return ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]  # v1


def new_group(processes: int, memory: int) -> Group | None:
    """A new group capping ``processes`` and ``memory`` bytes, or None where none can be
    made. Either cap may be missing (``Group.limits`` says which hold)."""
    parents = _parents()
    name = f"{PREFIX}{os.getpid()}-{next(_numbers)}"
    folders, limits = [], {}
    for controller, value in (("pids", processes), ("memory", memory)):
        parent = parents.get(controller)
        if parent is None:
            continue
        _remove_stale(parent)
        folder = parent / name
        try:
            folder.mkdir(exist_ok=True)
            if folder not in folders:
                folders.append(folder)
            for index, file in enumerate(_limit_files(folder, controller)):
                if index == 0 or (folder / file).exists():
                    (folder / file).write_text(str(value if file != "memory.swap.max" else 0))
            limits[controller] = value
        except OSError:
            continue
    if not limits:
        for folder in folders:
            remove_folder(folder)
        return None
    return Group(folders, limits)


def enter(group: Group, argv: list[str]) -> list[str]:
    """``argv``, started inside ``group`` before it can start anything else."""
    script = (
        'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; '
        'shift; n=$((n - 1)); done; exec "$@"'
    )
    folders = [str(f) for f in group.folders]
    return ["/bin/sh", "-c", script, "sh", str(len(folders)), *folders, *argv]


def remove(group: Group) -> None:
    """Kill whatever is left in ``group`` and remove it."""
    for folder in group.folders:
        remove_folder(folder)


def remove_folder(folder: Path) -> None:
    for _ in range(200):  # at most 10 s
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # still has processes: they are dying, or they get killed now
            for pid in _read(folder / "cgroup.procs").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            time.sleep(0.05)


def _remove_stale(parent: Path) -> None:
    """Groups left by graders that were killed before they could remove them."""
    for folder in parent.glob(f"{PREFIX}*"):
        pid = folder.name.removeprefix(PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            remove_folder(folder)

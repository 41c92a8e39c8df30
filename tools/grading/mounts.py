"""What the worker's sandbox holds: bwrap's arguments, built from what the worker needs.

Nothing is mounted that the worker does not need, so nothing else can be read, written
or connected to:

* ``/usr`` (and the ``/bin``, ``/lib``... links to it), read-only, and of ``/etc`` only
  ``ld.so.cache``, which the dynamic loader reads;
* the Python runtime (the interpreter's installation and the virtual environment),
  ``attention_lib`` and the grader's own ``tools/grading`` (the worker and the wire),
  read-only, each at the path it has outside; nothing else of the checkout;
* a private ``/tmp`` of ``TMP_SIZE`` bytes, which is also HOME and the working folder;
  a minimal ``/dev`` (``null``, ``zero``, ``urandom``...) made read-only, with a
  ``/dev/shm`` of ``SHM_SIZE`` bytes; ``/proc`` of the sandbox's own processes, with
  ``/proc/sys`` covered by an empty read-only tmpfs;
* no ``/var``, ``/run``, ``/home``, ``/root``, ``/srv``, ``/mnt``, no sockets, no network.

The student's code runs as an unprivileged user with no capabilities, ``no_new_privs``
(bwrap sets it) and the system-call filter of :mod:`.seccomp`: see :func:`arguments`
for how, as root and as an ordinary user.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import seccomp

ROOT = Path(__file__).resolve().parents[2]
GRADING = Path(__file__).resolve().parent
NOBODY = 65534  # the worker's uid and gid; also the host uid a root grader drops to
TMP_SIZE = 64 * 2**20
SHM_SIZE = 8 * 2**20
SYSTEM = ("/usr",)
LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("/etc/ld.so.cache",)
ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp/home",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp/home/mpl",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LANG": "C.UTF-8",
}


def runtime() -> list[Path]:
    """The folders the worker reads beyond ``/usr``: Python, its packages, the library."""
    exe = Path(os.path.realpath(sys.executable))
    found = [Path(sys.prefix), Path(sys.base_prefix), exe.parent.parent]
    found += [ROOT / "attention_lib", GRADING]
    paths: list[Path] = []
    for path in found:
        for one in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
            if one.is_dir() and one not in paths and not _system(one):
                paths.append(one)
    paths.sort(key=_depth)
    kept: list[Path] = []
    for path in paths:  # a folder already visible inside a bound one is not bound again
        if not any(_visible(path, outer) for outer in kept):
            kept.append(path)
    return kept


def _depth(path: Path) -> int:
    return len(path.parts)


def _system(path: Path) -> bool:
    return any(path.is_relative_to(top) for top in SYSTEM)


def _visible(path: Path, outer: Path) -> bool:
    if not path.is_relative_to(outer):
        return False
    inside = Path(os.path.realpath(outer)) / path.relative_to(outer)
    return os.path.realpath(inside) == os.path.realpath(path)


def arguments(as_root: bool) -> tuple[list[str], list[int]]:
    """bwrap's arguments (for ``--args``), and the descriptors they name (to pass on).

    ``as_root``: the grader is root. bwrap then runs as root, without a user namespace
    (one made by root would map the sandbox's users to root's own), and keeps only the
    capabilities to change user and to empty the bounding set: the worker's first lines
    empty it and give up root for ``NOBODY``, which clears every capability, before any
    student code is read (:mod:`.worker`).
    Otherwise bwrap runs as the grader's own user, in a user namespace that may not make
    another. Either way, the system-call filter refuses new namespaces.
    The caller passes the descriptors to bwrap and closes them once it has started.
    """
    args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--new-session"]
    args += ["--cap-drop", "ALL", "--clearenv"]
    if as_root:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    else:
        args += ["--unshare-user", "--disable-userns", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    for top in SYSTEM:
        args += ["--ro-bind", top, top]
    for link in LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    args += ["--perms", "1777", "--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
    args += ["--perms", "0777", "--dir", "/tmp/home"]
    folders, files = runtime(), [Path(p) for p in ETC if os.path.isfile(p)]
    above = {parent for path in folders + files for parent in path.parents}
    for parent in sorted(above - set(folders) - {Path("/"), Path("/tmp")}, key=_depth):
        args += ["--perms", "0755", "--dir", str(parent)]  # bwrap would make them 0700
    for path in files:
        args += ["--ro-bind", str(path), str(path)]
    for path in folders:
        args += ["--ro-bind", os.path.realpath(path), str(path)]
    args += ["--dev", "/dev", "--perms", "1777", "--size", str(SHM_SIZE), "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev", "--proc", "/proc"]
    args += ["--size", "4096", "--tmpfs", "/proc/sys", "--remount-ro", "/proc/sys"]
    args += ["--chdir", "/tmp/home"]
    for key, value in ENV.items():
        args += ["--setenv", key, value]
    fd = seccomp.file_descriptor()
    return [*args, "--seccomp", str(fd)], [fd]


def args_pipe(args: list[str]) -> int:
    """A descriptor from which bwrap reads ``args`` (``bwrap --args FD``).

    Passed this way, the sandbox's first process (bwrap itself, as ``/proc/1``) shows
    ``bwrap --args N`` as its command line, not the folders it mounts.
    """
    data = b"".join(arg.encode() + b"\0" for arg in args)
    fd = os.memfd_create("attention-grader-args", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd

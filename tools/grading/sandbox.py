"""Start the worker under bubblewrap and talk to it, with a hard wall-clock limit.

The sandbox (``bwrap``):

* the whole file system read-only (``--ro-bind / /``), and on top of it, hidden under
  empty read-only tmpfs: the submissions folder, the grades folder, the course checkout (only
  ``attention_lib``, the virtual environment and the worker are bound back, read-only)
  and the grader's HOME (the Python installation bound back if it lives there);
* a private ``/tmp`` of limited size, which is also HOME and the working directory;
* ``--unshare-all``: no network, its own PID namespace, so every process the student's
  code starts dies with the sandbox; ``--die-with-parent``, ``--new-session``, and no
  capabilities (``--cap-drop ALL``), even when the grader runs as root;
* the worker lowers its own CPU, memory, file-size and process limits before it reads
  any student code (see :mod:`.worker`); where the grader runs as root, for whom Linux
  ignores the process limit, a pids cgroup caps the sandbox's processes (:mod:`.pids`).

Every read from the worker waits at most until the submission's deadline; at the
deadline the whole process group is killed with SIGKILL, whatever the code traps.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import pids, wire

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().with_name("worker.py")
CPU_SECONDS = 60
MEMORY = 2 * 2**30  # address space: numpy and matplotlib fit with room to spare
FILE_SIZE = 16 * 2**20
PROCESSES = 64  # per user inside the sandbox: stops a fork bomb
NAMESPACE_GONE_S = 30  # how long a kill waits for the kernel to end the sandbox's processes
TMP_SIZE = 64 * 2**20
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


class Unavailable(Exception):
    """bubblewrap is missing or cannot create a sandbox on this machine."""


class WorkerGone(Exception):
    """The worker died, timed out or broke the protocol; ``reason`` says which."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class RemoteError(Exception):
    """The student's function raised; carries only its type name and a short message."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def check_bwrap() -> None:
    """Raise :class:`Unavailable` unless bwrap can start a sandbox here."""
    path = bwrap_path()
    if path is None:
        raise Unavailable(
            "bubblewrap (bwrap) is not installed. The grader runs each submission in a "
            "bwrap sandbox; install it (Debian/Ubuntu: apt-get install bubblewrap), or "
            "pass --unsafe-no-sandbox to run students' code with your own rights."
        )
    run = subprocess.run(
        [path, "--ro-bind", "/", "/", "--unshare-all", "--cap-drop", "ALL", "true"],
        capture_output=True,
        text=True,
    )
    if run.returncode:
        raise Unavailable(f"bwrap cannot create a sandbox here: {run.stderr.strip()[:300]}")


def _python_home() -> list[Path]:
    """Where the interpreter, its standard library and the packages live (bound back)."""
    real = Path(os.path.realpath(sys.executable))
    return [Path(sys.prefix), Path(sys.base_prefix), real.parent.parent]


def _depth(path: Path) -> tuple[int, str]:
    return len(path.parts), str(path)


def _in_namespace(namespace: str) -> bool:
    """Whether any process still runs in the PID namespace ``namespace`` ("pid:[...]").
    A zombie (dead, waiting for the system's init to reap it) no longer counts."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.readlink(proc / "ns" / "pid") != namespace:
                    continue
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state != "Z":
                return True
    return False


def command(hidden: list[Path]) -> list[str]:
    """The bwrap command line that runs the worker, with ``hidden`` folders emptied."""
    cmd = [bwrap_path(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    home = Path(os.path.expanduser("~")).resolve()
    covered: list[Path] = []  # outermost first; a folder inside one already hidden is skipped
    for folder in sorted({ROOT, home, *(Path(p).resolve() for p in hidden)}, key=_depth):
        if folder.is_dir() and folder != Path("/"):
            if not any(folder.is_relative_to(c) for c in covered):
                covered.append(folder)
                cmd += ["--tmpfs", str(folder)]
    back = {p.resolve() for p in [ROOT / "attention_lib", WORKER.parent, *_python_home()]}
    for path in sorted(back, key=_depth):
        if path.is_dir() and any(path.is_relative_to(c) for c in covered):
            cmd += ["--ro-bind", str(path), str(path)]
    for folder in covered:
        cmd += ["--remount-ro", str(folder)]  # hidden, and nothing can be written there
    cmd += ["--size", str(TMP_SIZE), "--tmpfs", "/tmp", "--dir", "/tmp/home"]
    for path in sorted(back, key=_depth):  # a checkout under /tmp: bind it again, above
        if path.is_dir() and path.is_relative_to("/tmp"):  # the private /tmp
            cmd += ["--ro-bind", str(path), str(path)]
    cmd += ["--chdir", "/tmp/home", "--unshare-all", "--die-with-parent", "--new-session"]
    cmd += ["--cap-drop", "ALL", "--clearenv"]
    for key, value in ENV.items():
        cmd += ["--setenv", key, value]
    return cmd


class Worker:
    """One student's sandboxed worker, from start to kill."""

    def __init__(self, setup: dict, timeout: float, hidden: list[Path], sandbox: bool = True):
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.gone: str | None = None
        limits = [str(CPU_SECONDS), str(MEMORY), str(FILE_SIZE), str(PROCESSES)]
        # The last argument names the grader (its pid), so its workers can be found.
        argv = [sys.executable, "-I", str(WORKER), *limits, f"grader-{os.getpid()}"]
        env = None
        self.group = None  # the pids cgroup that caps the sandbox's processes, where allowed
        if sandbox:
            argv = [*command(hidden), *argv]
            env = {}
            self.group = pids.new_group(PROCESSES)
            if self.group is not None:
                argv = pids.enter(self.group, argv)
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env if sandbox else {**os.environ, **ENV, "HOME": os.environ.get("HOME", "")},
            cwd="/",
            start_new_session=True,  # one process group: a timeout kills all of it
        )
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        self.buffer = b""
        # What the answer cells did, from the worker's first message: checked, as all is.
        self.errors: dict[str, str] = {}  # label: "NameError: name 'x' is not defined"
        self.defined: set[str] = set()  # labels whose name the answer cells defined
        self.preamble_error: str | None = None
        try:
            ready = self._exchange(setup)
        except WorkerGone:
            return  # self.gone says why
        errors, defined = ready.get("errors"), ready.get("defined")
        if not isinstance(errors, dict) or not isinstance(defined, list):
            self._fail("the worker broke the protocol: a malformed first message")
            return
        for label, error in errors.items():
            if isinstance(error, dict):
                kind, message = error.get("type", ""), error.get("msg", "")
                self.errors[label] = f"{wire.short(kind, 40)}: {wire.short(message)}"
        self.defined = {label for label in defined if isinstance(label, str)}
        if ready.get("preamble"):
            self.preamble_error = wire.short(str(ready["preamble"]))

    def _fail(self, reason: str) -> WorkerGone:
        if self.gone is None:
            self.gone = reason
            self.kill()
        return WorkerGone(self.gone)

    def _read(self, size: int) -> bytes:
        fd = self.process.stdout.fileno()
        while len(self.buffer) < size:
            left = self.deadline - time.monotonic()
            if left <= 0 or not self.selector.select(timeout=left):
                raise self._fail(f"timeout: stopped after {self.timeout:g} s")
            chunk = os.read(fd, max(65536, size - len(self.buffer)))
            if not chunk:
                raise self._fail("the worker ended (it crashed, or the answer cells ended it)")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _exchange(self, message: dict) -> dict:
        if self.gone:
            raise WorkerGone(self.gone)
        try:
            wire.send(self.process.stdin, message)
            return wire.parse(self._read(wire.frame_length(self._read(4))))
        except (BrokenPipeError, OSError):
            raise self._fail(
                "the worker ended (it crashed, or the answer cells ended it)"
            ) from None
        except wire.ProtocolError as err:
            raise self._fail(f"the worker broke the protocol: {err}") from None

    def call(self, label: str, args: list, kwargs: dict | None = None):
        """The answer to ``label``, called in the sandbox; returns its value as data.

        Raises :class:`RemoteError` (a subclass named like the student's exception) when
        the student's function raised, :class:`WorkerGone` when the worker is gone.
        """
        reply = self._exchange(
            {
                "op": "call",
                "label": label,
                "args": [wire.encode(a) for a in args],
                "kwargs": {k: wire.encode(v) for k, v in (kwargs or {}).items()},
            }
        )
        try:
            if reply.get("missing"):
                raise NameError("the answer is not defined")
            for arg, after in zip(args, reply.get("args") or [], strict=False):
                if after is not None and type(arg) is wire.np.ndarray:
                    changed = wire.decode(after)
                    if isinstance(changed, wire.np.ndarray) and changed.shape == arg.shape:
                        if changed.dtype == arg.dtype:  # in place keeps the dtype
                            arg[...] = changed
            if "error" in reply:
                error = reply["error"]
                if not isinstance(error, dict):
                    raise wire.ProtocolError("a malformed error")
                kind = wire.short(error.get("type", "Exception"), 40)
                raise type(kind if kind.isidentifier() else "Exception", (RemoteError,), {})(
                    wire.short(error.get("msg", ""))
                )
            return wire.decode(reply.get("value"))
        except wire.ProtocolError as err:
            raise self._fail(f"the worker broke the protocol: {err}") from None

    def value(self, label: str):
        """The value the answer to ``label`` holds (a number exercise), as data."""
        reply = self._exchange({"op": "value", "label": label})
        if reply.get("missing"):
            raise NameError("the answer is not defined")
        try:
            return wire.decode(reply.get("value"))
        except wire.ProtocolError as err:
            raise self._fail(f"the worker broke the protocol: {err}") from None

    def kill(self) -> None:
        """Stop the sandbox and everything in it, and return once all of it is gone."""
        namespace = self._namespace()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.selector.close()
        self.process.wait()
        # The kernel then kills every process left in the sandbox's PID namespace; on a busy
        # machine that takes a while for a fork bomb's thousands. Wait for it (at most
        # NAMESPACE_GONE_S), so no submission's processes outlive its grading.
        deadline = time.monotonic() + NAMESPACE_GONE_S
        while namespace and _in_namespace(namespace) and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.group is not None:
            pids.remove(self.group)
            self.group = None

    def _namespace(self) -> str | None:
        """The PID namespace of the sandbox's first process, if it has its own one."""
        pid = self.process.pid
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            inside = os.readlink(f"/proc/{children[0]}/ns/pid") if children else None
        except OSError:
            return None
        return inside if inside != os.readlink("/proc/self/ns/pid") else None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()

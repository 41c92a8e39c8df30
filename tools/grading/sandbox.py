"""Start the worker under bubblewrap and talk to it, with a hard wall-clock limit.

The sandbox (``bwrap``) holds only what the worker needs (:mod:`.mounts`), runs the
student's code as an unprivileged user with no capabilities and a system-call filter
(:mod:`.seccomp`), in its own namespaces (no network; every process it starts dies with
it), with per-process limits the worker sets itself (:mod:`.worker`) and, where the
machine allows, a cgroup capping its processes and memory together (:mod:`.cgroups`).

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

from . import cgroups, mounts, wire

WORKER = Path(__file__).resolve().with_name("worker.py")
CPU_SECONDS = 60
MEMORY = 2 * 2**30  # address space of one process: numpy and matplotlib fit with room
SANDBOX_MEMORY = 1 * 2**30  # the whole sandbox, tmpfs included, where a cgroup holds it
FILE_SIZE = 16 * 2**20
PROCESSES = 64  # per sandbox: stops a fork bomb
NAMESPACE_GONE_S = 30  # how long a kill waits for the kernel to end the sandbox's processes


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
    """Raise :class:`Unavailable` unless bwrap and the filter's library are here."""
    if bwrap_path() is None:
        raise Unavailable(
            "bubblewrap (bwrap) is not installed. The grader runs each submission in a "
            "bwrap sandbox; install it (Debian/Ubuntu: apt-get install bubblewrap), or "
            "pass --unsafe-no-sandbox to run students' code with your own rights."
        )
    try:
        mounts.seccomp.program()
    except mounts.seccomp.Unavailable as err:
        raise Unavailable(str(err)) from None


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


class Worker:
    """One student's sandboxed worker, from start to kill."""

    def __init__(self, setup: dict, timeout: float, sandbox: bool = True):
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.gone: str | None = None
        as_root = os.geteuid() == 0
        home = os.environ.get("HOME", "")  # unsafe mode keeps the grader's own
        limits = [str(CPU_SECONDS), str(MEMORY), str(FILE_SIZE), str(PROCESSES)]
        limits.append(str(mounts.NOBODY) if sandbox and as_root else "-")  # root: give it up
        # The last argument names the grader (its pid), so its workers can be found.
        argv = [sys.executable, "-I", str(WORKER), *limits, f"grader-{os.getpid()}"]
        self.group = None  # the cgroup that caps the sandbox's processes and memory
        fds: list[int] = []
        try:
            if sandbox:
                args, fds = mounts.arguments(as_root)
                fds.append(mounts.args_pipe(args))
                argv = [bwrap_path(), "--args", str(fds[-1]), *argv]
                self.group = cgroups.new_group(PROCESSES, SANDBOX_MEMORY)
                if self.group is not None:
                    argv = cgroups.enter(self.group, argv)
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={} if sandbox else {**os.environ, **mounts.ENV, "HOME": home},
                cwd="/",
                pass_fds=fds,
                start_new_session=True,  # one process group: a timeout kills all of it
            )
        except BaseException:
            if self.group is not None:
                cgroups.remove(self.group)
            raise
        finally:
            for fd in fds:
                os.close(fd)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        self.buffer = b""
        # What the answer cells did, from the worker's first message: checked, as all is.
        self.errors: dict[str, str] = {}  # label: "NameError: name 'x' is not defined"
        self.defined: set[str] = set()  # labels whose name the answer cells defined
        self.preamble_error: str | None = None
        # label: the ruled-out library functions its function called (see .tripwires)
        self.trips: dict[str, set[str]] = {}
        self.tripwire_error: str | None = None
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
        problems = ready.get("tripwires")
        if problems or not isinstance(problems, list):
            self.tripwire_error = wire.short(str(problems or "no answer about the tripwires"))
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
            tripped, tampered = reply.get("tripped"), reply.get("tampered")
            if not isinstance(tripped, list) or not isinstance(tampered, list):
                raise wire.ProtocolError("a reply without its tripwires")
            hits = self.trips.setdefault(label, set())
            hits.update(wire.short(str(n), 80) for n in tripped)
            hits.update(f"{wire.short(str(n), 80)} (its tripwire was removed)" for n in tampered)
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
            cgroups.remove(self.group)
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

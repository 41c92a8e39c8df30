"""The sandboxed worker: runs one student's answer cells, then calls their functions.

Started by :mod:`.sandbox` inside bubblewrap as ``python -I worker.py``. Where the
grader is root, bwrap started it as root with only the capability to change user: its
first lines give that up for the unprivileged uid and gid it is handed (``NOBODY``),
which clears every capability, and it stops unless that worked. It then lowers its own
limits (CPU time, memory, file size, processes), which nothing it runs later can raise
again. It then reads, as the first message on stdin, the preamble and the cells to
run, and answers requests until stdin closes:

* ``{"op": "call", "label": ..., "args": [...]}``: the student's function for that
  exercise on the grader's inputs; the reply is the returned value as data (see
  :mod:`.wire`), and the arguments as the function left them, so the grader can see an
  input changed in place;
* ``{"op": "value", "label": ...}``: a variable's value (number exercises).

The library functions each exercise rules out (``setup["forbidden"]``, label: names)
become tripwires before any answer cell runs (:mod:`.tripwires`); a call's reply lists
those its function called (``tripped``) and any tripwire found removed (``tampered``).

Each exercise's answer is what its name held right after its own answer cells ran, so
two exercises may both use ``my_answer``, and a later cell cannot change an answer.

Whatever the student's code prints goes to /dev/null: the protocol runs on copies of
stdin and stdout taken before any of it runs. The grader trusts none of the replies
beyond their being data; the verdicts are computed on its side.
"""

from __future__ import annotations

import os
import resource
import signal
import sys


def limit(kind: int, value: int) -> None:
    soft, hard = resource.getrlimit(kind)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (value, value))


def describe(err: BaseException, short) -> dict:
    return {"type": short(type(err).__name__, 40), "msg": short(err)}


def give_up_root(uid: int) -> None:
    """Become ``uid`` (and gid ``uid``, no other groups) for good, with no capabilities,
    none left to gain (an empty bounding set)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):  # PR_CAPBSET_DROP; EINVAL past the kernel's last capability
        libc.prctl(24, cap, 0, 0, 0)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    with open("/proc/self/status") as status:
        caps = [
            line.split()[1] for line in status if line.startswith(("CapEff", "CapPrm", "CapBnd"))
        ]
    if os.getresuid() != (uid, uid, uid) or os.getgroups() or any(int(c, 16) for c in caps):
        os._exit(70)  # the grader sees a worker that ended, and its self-test says so


def main() -> None:
    os.closerange(3, 65536)  # nothing but the protocol's stdin and stdout is inherited
    cpu, memory, fsize, nproc = (int(v) for v in sys.argv[1:5])
    if sys.argv[5] != "-":
        give_up_root(int(sys.argv[5]))
    limit(resource.RLIMIT_CPU, cpu)
    limit(resource.RLIMIT_AS, memory)
    limit(resource.RLIMIT_FSIZE, fsize)
    limit(resource.RLIMIT_NPROC, nproc)
    limit(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file too large fails, not the worker
    grading = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, grading)
    # attention_lib sits beside tools/ (bound alone in the sandbox); an installed copy
    # comes first, this one where there is none (the grader in otter's autograder zip).
    sys.path.append(os.path.dirname(os.path.dirname(grading)))
    import tripwires
    import wire

    inbox = os.fdopen(os.dup(0), "rb")
    outbox = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)

    def receive():
        header = inbox.read(4)
        if len(header) < 4:
            return None
        return wire.parse(inbox.read(wire.frame_length(header)))

    setup = receive()
    ns = {"__name__": "__main__"}
    ready = {"op": "ready", "errors": {}, "preamble": None}
    try:
        exec(compile(setup["preamble"], "<preamble>", "exec"), ns)
    except BaseException as err:  # noqa: BLE001 - reported, not raised
        ready["preamble"] = describe(err, wire.short)
    try:
        wires = tripwires.Tripwires(setup.get("forbidden") or {}, setup.get("trip") != "flag")
        ready["tripwires"] = [wire.short(p) for p in wires.problems]
    except BaseException as err:  # noqa: BLE001 - reported: the grader refuses to go on
        wires = tripwires.Tripwires({})
        ready["tripwires"] = [wire.short(f"{type(err).__name__}: {err}")]
    answers = {}  # label: what the exercise's name held right after its answer cells ran
    for cell in setup["cells"]:
        try:
            exec(compile(cell["source"], f"<{cell['label'] or 'course'}>", "exec"), ns)
        except BaseException as err:  # noqa: BLE001 - a student's cell may raise anything
            if cell["label"]:
                ready["errors"][cell["label"]] = describe(err, wire.short)
        if cell["label"] and cell.get("name") in ns:
            answers[cell["label"]] = ns[cell["name"]]
    ready["defined"] = list(answers)
    wire.send(outbox, ready)

    while (request := receive()) is not None:
        try:
            value = answers[request.get("label")]
        except (KeyError, TypeError):
            wire.send(outbox, {"missing": True})
            continue
        if request.get("op") == "value":
            wire.send(outbox, {"value": wire.encode(value)})
            continue
        args = [wire.decode(a) for a in request["args"]]
        kwargs = {k: wire.decode(v) for k, v in request.get("kwargs", {}).items()}
        wires.arm(request.get("label"))
        try:
            out = value(*args, **kwargs)
            tripped = wires.disarm()
            reply = {"value": wire.encode(out)}
        except BaseException as err:  # noqa: BLE001 - even SystemExit is the student's
            tripped = wires.disarm()
            reply = {"error": describe(err, wire.short)}
        reply["tripped"], reply["tampered"] = tripped, wires.tampered()
        reply["args"] = [wire.encode(a) if type(a) is wire.np.ndarray else None for a in args]
        wire.send(outbox, reply)


if __name__ == "__main__":
    main()

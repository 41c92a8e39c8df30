"""Before anyone is graded: a known-good answer, run in the sandbox, must pass.

If the sandbox cannot start here (bwrap refuses, Python or its packages are not
mounted, say a virtual environment linked from elsewhere and unreadable to the
sandbox's user), every student would get 0 for "crashed". So the grader first runs a
known-good answer, and a probe of the sandbox's walls: the student's code must not run
as root, write ``/proc/sys``, make a user namespace, mount, or see the course's
checkout. If any of that fails, :func:`run` raises :class:`Failed` with one sentence,
and no one is graded.
"""

from __future__ import annotations

import numpy as np

from . import mounts, sandbox

PROBE = """
import ctypes, os

def _tried(action):
    try:
        return bool(action())
    except Exception:
        return False

_libc = ctypes.CDLL(None, use_errno=True)
walls = [
    name
    for name, open_ in [
        ("it runs as root", lambda: os.getuid() == 0 or os.geteuid() == 0),
        ("it can write /proc/sys", lambda: open("/proc/sys/kernel/core_pattern", "w")),
        ("it can make a user namespace", lambda: _libc.unshare(0x10000000) == 0),
        ("it can mount", lambda: _libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0),
        ("it can see the course's chapters", lambda: os.path.exists(CHAPTERS)),
        ("it can see /var", lambda: os.path.exists("/var")),
    ]
    if _tried(open_)
]
"""


class Failed(Exception):
    """The sandbox cannot grade here; the message is one sentence for the teacher."""


def run(timeout: float = 60) -> None:
    """Raise :class:`Failed` unless a known-good answer passes in the sandbox here."""
    try:
        sandbox.check_bwrap()
    except sandbox.Unavailable as err:
        raise Failed(str(err)) from None
    chapters = repr(str(mounts.ROOT / "chapters"))
    setup = {
        "preamble": "import numpy as np\nimport attention_lib as al\n",
        "cells": [
            {
                "label": "known-good",
                "name": "add_one",
                "source": "def add_one(x):\n    return x + 1",
            },
            {"label": "probe", "name": "walls", "source": f"CHAPTERS = {chapters}\n{PROBE}"},
        ],
    }
    hint = (
        "; check that bwrap works here and that Python, its packages and the course are "
        f"readable by every user (the sandbox runs answers as uid {mounts.NOBODY})"
    )
    with sandbox.Worker(setup, timeout) as worker:
        if worker.gone:
            raise Failed(f"a known-good answer could not run in the sandbox ({worker.gone}){hint}")
        if worker.preamble_error or worker.errors:
            error = worker.preamble_error or next(iter(worker.errors.values()))
            raise Failed(f"a known-good answer failed in the sandbox ({error}){hint}")
        try:
            value = worker.call("known-good", [np.arange(3)])
            walls = worker.value("probe")
        except (sandbox.WorkerGone, sandbox.RemoteError, NameError) as err:
            raise Failed(f"a known-good answer failed in the sandbox ({err}){hint}") from None
        if not isinstance(value, np.ndarray) or value.tolist() != [1, 2, 3]:
            raise Failed(f"a known-good answer gave a wrong value in the sandbox{hint}")
        if not isinstance(walls, list) or walls:
            holes = ", ".join(map(str, walls)) if isinstance(walls, list) else "no answer"
            raise Failed(f"the sandbox is not tight here ({holes}), so no one is graded")

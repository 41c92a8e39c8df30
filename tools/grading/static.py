"""Read a submitted notebook in a limited subprocess: a hostile file costs only its row.

Everything that parses what a student wrote (the JSON, the exercise labels, ``ast`` for
the flags and the answer cells) runs here, in ``python -I -S static.py``, never in the
grader's own process. The subprocess caps its own address space (``MEMORY``) and CPU
time before it reads anything, and the grader kills it after ``TIMEOUT`` seconds.
Before any parsing of code, the notebook's cells are held to ``MAX_CELLS``, and their
sources to ``MAX_CODE_CELL`` (code) and ``MAX_TEXT_CELL`` (markdown) bytes.

The grader sends the course's chapters (as data, see :func:`course`) and the notebook's
bytes; the subprocess answers with one JSON object: the chapter's stem and the status,
the labels that have an answer cell, the flags, the answers that break their exercise's
rules on code, and what the worker is to run.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import resource
import struct
import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]
MEMORY = 1 * 2**30
TIMEOUT = 20  # seconds; an honest notebook takes a few milliseconds
MAX_BYTES = 20 * 2**20  # a whole notebook, outputs included
MAX_CELLS = 2000
MAX_CODE_CELL = 256 * 2**10
MAX_TEXT_CELL = 2 * 2**20
MAX_REPLY = 64 * 2**20


class Unreadable(Exception):
    """The subprocess ended, ran out of time or memory, or answered nonsense."""


@functools.cache
def course() -> bytes:
    """The course's chapters, as the subprocess reads them (computed once)."""
    import exercises

    chapters = {}
    for chapter in exercises.chapters():
        data = dataclasses.asdict(chapter)
        data.pop("metadata")
        chapters[chapter.stem] = data
    return json.dumps(chapters).encode()


def examine(data: bytes) -> dict:
    """What :func:`analyse` finds in ``data``, computed in the limited subprocess."""
    if len(data) > MAX_BYTES:
        reason = f"the file is over {MAX_BYTES // 2**20} MiB"
        return {"chapter": None, "status": ["too large"], "reason": reason}
    payload = struct.pack(">I", len(course())) + course() + data
    try:
        run = subprocess.run(
            [sys.executable, "-I", "-S", __file__],
            input=payload,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=TIMEOUT,
            cwd="/",
        )
    except subprocess.TimeoutExpired:
        raise Unreadable(f"reading it took more than {TIMEOUT} s") from None
    if run.returncode or len(run.stdout) > MAX_REPLY:
        raise Unreadable("reading it went over the grader's memory or time limits")
    try:
        reply = json.loads(run.stdout)
    except ValueError:
        raise Unreadable("the reader's reply is not JSON") from None
    if not isinstance(reply, dict):
        raise Unreadable("the reader's reply is not an object")
    return reply


def _chapters(data: dict):
    import exercises

    found = {}
    for stem, fields in data.items():
        fields["exercises"] = tuple(
            exercises.Exercise(**{k: tuple(v) if isinstance(v, list) else v for k, v in ex.items()})
            for ex in fields["exercises"]
        )
        fields["context"] = tuple((index, source) for index, source in fields["context"])
        found[stem] = exercises.Chapter(**fields)
    return found


def too_large(nb: dict) -> str | None:
    """Why the notebook is refused before its code is parsed, or None."""
    cells = nb["cells"]
    if len(cells) > MAX_CELLS:
        return f"it has {len(cells)} cells (at most {MAX_CELLS})"
    for cell in cells:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        size = sum(len(s) for s in source if isinstance(s, str)) if isinstance(source, list) else 0
        size = len(source) if isinstance(source, str) else size
        code = isinstance(cell, dict) and cell.get("cell_type") == "code"
        limit = MAX_CODE_CELL if code else MAX_TEXT_CELL
        if size > limit:
            kind = "code" if code else "text"
            return f"a {kind} cell has {size:,} characters (at most {limit:,})"
    return None


def analyse(data: bytes, chapters: dict) -> dict:
    """The notebook's chapter, status, answer labels, flags and the worker's setup."""
    from grading import notebook

    try:
        nb = json.loads(data.decode("utf-8"))
        if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
            raise ValueError("it has no list of cells")
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        reason = str(err) if "cells" in str(err) else "it is not JSON"
        return {"chapter": None, "status": ["invalid notebook"], "reason": reason}
    chapter, status = notebook.identify(nb, chapters)
    stem = chapter.stem if chapter else None
    reason = too_large(nb)
    if reason:
        return {"chapter": stem, "status": ["too large"], "reason": reason}
    if chapter is None:
        return {"chapter": None, "status": status}
    answers = notebook.answer_cells(nb, chapter, marked="no identity" not in status)
    return {
        "chapter": stem,
        "status": status,
        "answers": sorted(answers),
        "flags": notebook.scan(nb, chapter, answers),
        "broken": notebook.broken(chapter, answers),
        "setup": notebook.setup(chapter, answers),
    }


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (TIMEOUT, TIMEOUT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.path.insert(0, str(TOOLS))
    stdin = sys.stdin.buffer
    (length,) = struct.unpack(">I", stdin.read(4))
    chapters = _chapters(json.loads(stdin.read(length)))
    reply = analyse(stdin.read(), chapters)
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()

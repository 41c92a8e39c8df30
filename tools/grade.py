"""Grade a folder of submitted chapter notebooks, with a verdict no submission can fake.

    python tools/grade.py SUBMISSIONS [--out grades] [--timeout 60] [--jobs N]
                          [--unsafe-no-sandbox]

SUBMISSIONS holds one notebook per student and chapter, flat as ``<student>.ipynb`` or
as ``<student>/<anything>.ipynb``. Symbolic links are skipped, never followed.

How a mark is made (see ``tools/grading/``):

1. The chapter comes from the metadata ``make student`` wrote into the copy (not from
   the title), and the exercises, checkers and points from the course's committed
   chapter (``tools/exercises.py``).
2. Only the student's answer cells (marked by ``make student``) run, in a plain Python
   worker inside a bubblewrap sandbox that holds only the Python runtime and
   ``attention_lib`` (read-only) and an empty ``/tmp``, as an unprivileged user with no
   capabilities and a system-call filter, no network, its own process namespace, CPU,
   memory and output limits, and a wall-clock limit after which everything in it is
   killed (``grading/mounts.py``, ``grading/sandbox.py``). The notebook itself is read
   in a limited subprocess (``grading/static.py``).
3. In this process, the course's own checker is called with a proxy for the student's
   function: the inputs go to the sandbox, only the returned arrays or numbers come back
   (``tools/grading/wire.py``: no pickle). The checker's verdict and the chapter's points
   are the mark; printed text and patched modules in the sandbox change nothing.
4. A static look at the answer cells adds flags for the teacher: the library's own
   function handed in, ``exec`` and friends, the course's solutions left in.

Each student's row of ``grades.csv`` is written as soon as their notebook is graded (a
killed run keeps it), unchanged notebooks are not graded again, and chapters graded
earlier keep their columns. ``feedback/<student>.txt`` holds the checkers' lines only.
Before grading, a known-good answer must pass in the sandbox (``grading/selftest.py``);
if it does not (no ``bwrap``, a Python the sandbox cannot read...), the grader says why
in one sentence and grades no one. ``--unsafe-no-sandbox`` runs without bwrap.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import stat
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grading import selftest, static, verdict  # noqa: E402
from grading.gradebook import Gradebook  # noqa: E402

MAX_BYTES = static.MAX_BYTES


def submissions(folder: Path) -> list[tuple[str, str, Path]]:
    """``(student, name inside the folder, path)`` of every notebook; links are skipped."""
    found = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_symlink():
            print(f"skipped {entry.name!r}: a symbolic link", file=sys.stderr)
        elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".ipynb"):
            found.append((entry.name[: -len(".ipynb")], entry.name, Path(entry.path)))
        elif entry.is_dir(follow_symlinks=False):
            for top, dirs, files in os.walk(entry.path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints")
                for name in sorted(files):
                    path = Path(top) / name
                    if name.endswith(".ipynb") and stat.S_ISREG(os.lstat(path).st_mode):
                        found.append((entry.name, str(path.relative_to(folder)), path))
    return found


def read(path: Path) -> bytes:
    """The file's bytes, refusing a link swapped in since the listing, or a huge file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_BYTES + 1)  # one byte over: the grader says "too large"


def grade(
    folder: Path, out: Path, timeout: float = 60, jobs: int | None = None, safe: bool = True
) -> Gradebook:
    """Grade every new or changed notebook in ``folder`` into ``out``; return the book.

    Raises :class:`grading.selftest.Failed` (and grades no one) if a known-good answer
    does not pass in the sandbox first.
    """
    if safe:
        selftest.run(timeout)  # raises selftest.Failed: then no one is graded
    folder, out = folder.resolve(), out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    book = Gradebook(out)
    todo = []
    for student, source, path in submissions(folder):
        data = read(path)
        digest = hashlib.sha256(data).hexdigest()
        if book.unchanged(student, digest):
            print(f"{student:<20} {source:<28} unchanged, kept")
        else:
            todo.append((student, source, data, digest))

    def one(student, data):
        # A failure of the grader itself (not of the answers: those are the sandbox's) must
        # cost one row, not the run. A machine short of processes or memory can make even
        # starting a sandbox fail, so a second attempt comes before "grader error".
        for attempt in (1, 2):
            try:
                return verdict.grade(student, data, timeout, safe)
            except Exception:
                print(f"{student}: the grader failed (attempt {attempt} of 2):", file=sys.stderr)
                traceback.print_exc()
                time.sleep(1)
        result = verdict.Result(student, None, ["grader error"])
        result.feedback.append("The grader failed on this notebook; ask your teacher.")
        return result

    with verdict.quiet(), ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        sys.stdout.local.quiet = False  # this thread reports; the checkers' threads do not
        futures = {pool.submit(one, s, d): (s, src, dg) for s, src, d, dg in todo}
        for future in as_completed(futures):
            student, source, digest = futures[future]
            result = future.result()
            book.record(result, source, digest)
            status = ", ".join(result.status) or "ok"
            score = f"{result.total:g}/{result.maximum:g}"
            print(f"{student:<20} {source:<28} {status:<16} {score}", flush=True)
    return book


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--out", type=Path, default=Path("grades"))
    parser.add_argument("--timeout", type=float, default=60, help="seconds per notebook")
    parser.add_argument("--jobs", type=int, default=None, help="at once (default: one a core)")
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run students' code without bubblewrap, with your own rights (not for marks)",
    )
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder of submitted notebooks")
    if args.out.resolve().is_relative_to(args.submissions.resolve()):
        parser.error("--out must not be inside the submissions folder, which is only read")
    if args.unsafe_no_sandbox:
        print(
            "WARNING: --unsafe-no-sandbox: students' code runs with your rights.", file=sys.stderr
        )
    start = time.monotonic()
    try:
        grade(args.submissions, args.out, args.timeout, args.jobs, not args.unsafe_no_sandbox)
    except selftest.Failed as err:
        print(f"refusing to grade: {err}.", file=sys.stderr)
        return 2
    print(f"wrote {args.out / 'grades.csv'} and {args.out / 'feedback'}/ ")
    print(f"in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

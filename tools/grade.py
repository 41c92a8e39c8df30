"""Grade a folder of submitted chapter notebooks, with a verdict no submission can fake.

    python tools/grade.py SUBMISSIONS [--out grades] [--timeout 60] [--jobs N]
                          [--seed N] [--forbidden-calls zero|flag] [--unsafe-no-sandbox]

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
   Each checker also runs **unseen cases** drawn from a seed: ``--seed``, or the one
   recorded in ``<out>/seed.txt``, or a new random one recorded there. Each notebook
   gets its own cases, derived from that seed and the notebook's bytes.
4. The library functions an exercise rules out (its metadata) are tripwires in the
   sandbox while the student's function runs; calling one, however it is spelled, earns
   0 for that exercise (``--forbidden-calls flag``: a flag only). So does an answer that
   breaks its exercise's rules on code, read from its source (6.2: a loop, no ``@``).
5. A static look at the answer cells adds flags for the teacher: the library's own
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
import secrets
import stat
import sys
import time
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grading import selftest, static, verdict  # noqa: E402
from grading.gradebook import Gradebook, Unreadable  # noqa: E402

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


def grading_seed(out: Path, seed: int | None) -> int:
    """The teacher's seed, else the one recorded in ``out``, else a new one recorded there."""
    path = out / "seed.txt"
    if seed is None and path.is_file():
        text = path.read_text().strip()
        if not text.isdigit():
            raise SystemExit(f"{path} should hold one whole number (the unseen cases' seed)")
        return int(text)
    seed = secrets.randbits(63) if seed is None else seed
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(f"{seed}\n")
    return seed


def notebook_seed(seed: int, digest: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{digest}".encode()).digest()[:8], "big")


def grade(
    folder: Path,
    out: Path,
    timeout: float = 60,
    jobs: int | None = None,
    safe: bool = True,
    seed: int | None = None,
    forbidden_calls: str = "zero",
) -> Gradebook:
    """Grade every new or changed notebook in ``folder`` into ``out``; return the book.

    Raises :class:`grading.selftest.Failed` (and grades no one) if a known-good answer
    does not pass in the sandbox first.
    """
    if safe:
        selftest.run(timeout)  # raises selftest.Failed: then no one is graded
    folder, out = folder.resolve(), out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    seed = grading_seed(out, seed)
    book = Gradebook(out)  # raises gradebook.Unreadable for a CSV it cannot read back
    todo, found = [], submissions(folder)
    count = Counter(student for student, _, _ in found)
    for student, source, path in found:
        data = read(path)
        digest = hashlib.sha256(data).hexdigest()
        if count[student] == 1 and book.unchanged(student, digest):
            print(f"{student:<20} {source:<28} unchanged, kept")
        else:
            todo.append((student, source, data, digest))

    def one(student, data, digest):
        # A failure of the grader itself (not of the answers: those are the sandbox's) must
        # cost one row, not the run. A machine short of processes or memory can make even
        # starting a sandbox fail, so a second attempt comes before "grader error".
        for attempt in (1, 2):
            try:
                mine = notebook_seed(seed, digest)
                return verdict.grade(student, data, timeout, safe, mine, forbidden_calls)
            except Exception:
                print(f"{student}: the grader failed (attempt {attempt} of 2):", file=sys.stderr)
                traceback.print_exc()
                time.sleep(1)
        result = verdict.Result(student, None, ["grader error"])
        result.feedback.append("The grader failed on this notebook; ask your teacher.")
        return result

    with verdict.quiet(), ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        sys.stdout.local.quiet = False  # this thread reports; the checkers' threads do not
        futures = {pool.submit(one, s, d, dg): (s, src, dg) for s, src, d, dg in todo}
        waiting: dict[str, list] = {}  # a student's results, until all their notebooks are in
        for future in as_completed(futures):
            student, source, digest = futures[future]
            waiting.setdefault(student, []).append((future.result(), source, digest))
            if len(waiting[student]) == count[student]:
                for result, source, digest in one_per_chapter(waiting.pop(student)):
                    _record(book, result, source, digest)
    try:
        book.save()  # every run leaves a CSV that matches the state, graded or not
    except OSError as err:
        raise CsvLocked(
            f"{out / 'grades.csv'} could not be written ({err.strerror or err}); every mark "
            "is kept in .state.json: close the file where it is open and run again"
        ) from None
    return book


class CsvLocked(Exception):
    """grades.csv could not be replaced at the end of the run."""


def _record(book: Gradebook, result, source: str, digest: str) -> None:
    try:
        book.record(result, source, digest)
    except OSError as err:  # the CSV open elsewhere: the state has the row, written at the end
        print(f"could not write the grades now ({err.strerror or err}); retried at the end")
    status = ", ".join(result.status) or "ok"
    score = f"{result.total:g}/{result.maximum:g}"
    print(f"{result.student:<20} {source:<28} {status:<16} {score}", flush=True)


def one_per_chapter(results: list) -> list:
    """A student's ``(result, source, digest)``s, with two notebooks of one chapter made one
    result that says so and grades neither (never one by turns)."""
    chapters: dict = {}
    for item in results:
        chapters.setdefault(item[0].chapter, []).append(item)
    merged = []
    for chapter, items in chapters.items():
        if len(items) == 1:
            merged.append(items[0])
            continue
        first = items[0][0]
        sources = sorted(source for _, source, _ in items)
        result = verdict.Result(first.student, chapter, [f"{len(items)} notebooks"])
        result.maximum = max(r.maximum for r, _, _ in items)
        result.points = {c: (None if p is None else 0) for c, p in first.points.items()}
        shown = ", ".join(repr(s) for s in sources)
        result.feedback.append(
            f"{len(items)} notebooks for this chapter ({shown}): hand in one; none was graded."
        )
        digest = hashlib.sha256("".join(sorted(d for _, _, d in items)).encode()).hexdigest()
        merged.append((result, "; ".join(sources), digest))
    return merged


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--out", type=Path, default=Path("grades"))
    parser.add_argument("--timeout", type=float, default=60, help="seconds per notebook")
    parser.add_argument("--jobs", type=int, default=None, help="at once (default: one a core)")
    parser.add_argument(
        "--seed", type=int, default=None, help="of the unseen cases (default: OUT/seed.txt)"
    )
    parser.add_argument(
        "--forbidden-calls",
        choices=("zero", "flag"),
        default="zero",
        help="a call the exercise rules out earns 0 (default) or only a flag",
    )
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run students' code without bubblewrap, with your own rights (not for marks)",
    )
    args = parser.parse_args(argv)
    if args.seed is not None and args.seed < 0:
        parser.error("--seed must be a whole number of 0 or more")
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
        grade(
            args.submissions,
            args.out,
            args.timeout,
            args.jobs,
            not args.unsafe_no_sandbox,
            args.seed,
            args.forbidden_calls,
        )
    except (selftest.Failed, Unreadable) as err:
        print(f"refusing to grade: {err}.", file=sys.stderr)
        return 2
    except CsvLocked as err:
        print(f"{err}.", file=sys.stderr)
        return 1
    print(f"wrote {args.out / 'grades.csv'} and {args.out / 'feedback'}/ ")
    print(f"in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

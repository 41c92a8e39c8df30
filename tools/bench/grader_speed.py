"""How fast the grader is: grade N synthetic submissions of one chapter, report the rate.

    python tools/bench/grader_speed.py [--n 300] [--chapter 05_softmax] [--jobs CORES]
    python tools/bench/grader_speed.py --honest 02_queries_keys_values 05_softmax 07_multi_head
                                       [--n 20] [--jobs CORES]

The submissions are made from the student copy: a quarter honest (the course's solution
code in the answer cells), a quarter blank, a quarter with one exercise wrong and a
quarter whose first answer cell raises. Each runs in its own bwrap sandbox, as in
``make grade``. The target in issue 16: 300 in at most 15 minutes on 2 cores.

``--honest``: ``--n`` honest submissions of each chapter named, graded in one run as
``make grade`` does (the sandbox's self-test included); it reports the seconds per
notebook and fails unless every one has full marks. The target in issue 34: at most
0.5 s a notebook on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: exercises, the packages
import exercises  # noqa: E402
import grade  # noqa: E402
from editions import student  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def synthetic(chapter: exercises.Chapter, kind: int) -> nbformat.NotebookNode:
    course = nbformat.read(ROOT / "chapters" / f"{chapter.stem}.ipynb", as_version=4)
    nb = student.student_notebook(course, chapter.stem)
    auto = [e for e in chapter.exercises if e.kind != "text"]
    for cell in nb.cells:
        label = cell.metadata.get(exercises.KEY, {}).get("answer")
        ex = chapter.exercise(label) if label else None
        if ex is None or ex.kind == "text" or kind == 1:
            continue  # kind 1: blank
        cell.source += "\n" + "\n".join(ex.solutions)
        if kind == 2 and ex is auto[0]:
            cell.source += f"\n{ex.name} = None" if ex.kind == "number" else ""
            cell.source += (
                f"\ndef {ex.name}(*args):\n    return args[0]" if ex.kind == "function" else ""
            )
        if kind == 3 and ex is auto[0]:
            cell.source = "raise RuntimeError('a typo')\n" + cell.source
    return nb


def honest(stems: list[str], n: int, jobs: int) -> int:
    """Grade ``n`` honest copies of each chapter; 0 if all earned full marks."""
    chapters = [exercises.chapter(stem) for stem in stems]
    unknown = [stem for stem, chapter in zip(stems, chapters, strict=True) if chapter is None]
    if unknown:
        print(f"no such chapter: {', '.join(unknown)} (see chapters/)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder, out = Path(tmp) / "submissions", Path(tmp) / "grades"
        for chapter in chapters:
            nb = synthetic(chapter, 0)
            for k in range(n):
                (folder / f"student{k:04d}").mkdir(parents=True, exist_ok=True)
                nbformat.write(nb, folder / f"student{k:04d}" / f"{chapter.stem}.ipynb")
        start = time.monotonic()
        book = grade.grade(folder, out, timeout=60, jobs=jobs)
        seconds = time.monotonic() - start
    rows = [entry for student in book.state["students"].values() for entry in student.values()]
    full = sum(sum(p for p in e["points"].values() if p) == e["max"] > 0 for e in rows)
    print(
        f"graded {len(rows)} honest notebooks of {', '.join(stems)} in {seconds:.1f} s with "
        f"{jobs} jobs on {os.cpu_count()} cores: {seconds / len(rows):.2f} s a notebook "
        f"(target 0.5 s); {full} of {len(rows)} with full marks; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    return 0 if full == len(rows) == n * len(stems) else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="submissions (300; --honest: 20)")
    parser.add_argument("--chapter", default="05_softmax")
    parser.add_argument("--honest", nargs="+", metavar="CHAPTER", help="honest copies only")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)
    if args.honest:
        return honest(args.honest, args.n or 20, args.jobs)
    args.n = args.n or 300
    chapter = exercises.chapter(args.chapter)
    with tempfile.TemporaryDirectory() as tmp:
        folder, out = Path(tmp) / "submissions", Path(tmp) / "grades"
        folder.mkdir()
        kinds = [synthetic(chapter, k) for k in range(4)]
        for n in range(args.n):
            nbformat.write(kinds[n % 4], folder / f"student{n:04d}.ipynb")
        start = time.monotonic()
        book = grade.grade(folder, out, timeout=60, jobs=args.jobs)
        seconds = time.monotonic() - start
    graded = sum(len(rows) for rows in book.state["students"].values())
    rate = graded / seconds * 60
    print(
        f"graded {graded} submissions of {args.chapter} in {seconds:.0f} s with {args.jobs} "
        f"jobs on {os.cpu_count()} cores: {rate:.0f} submissions/minute "
        f"({args.n / rate:.1f} min for {args.n}; target 300 in 15 min)"
    )
    return 0 if graded == args.n else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

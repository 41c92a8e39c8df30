"""Grade a folder of submitted chapter notebooks with the course's own checkers.

    python tools/grade.py SUBMISSIONS [--out grades] [--timeout 120]

SUBMISSIONS holds one notebook per student and chapter, either as
``<student>/<chapter>.ipynb`` or flat as ``<student>.ipynb``. The chapter is read from
the notebook's title (``# 5. Softmax ...`` is chapter 05), so a renamed file still grades.

Each notebook is copied to a scratch folder and run there in a fresh kernel, in a child
process with a time limit, so a crash, an endless loop or a broken file costs only that
student's row. A cell that raises does not stop the later cells, but an exercise whose
checker never printed counts 0. Submissions are only read, never written.

The exercises of a chapter are the ``[name] PASS`` lines its committed notebook printed,
so a new chapter needs no change here. The results:

* ``grades.csv``: one row per student, one column per exercise (1 or 0), a total, and a
  status (``ok``, ``errors``, ``timeout``, ``invalid notebook``, ``unknown chapter``);
* ``feedback/<student>.txt``: the checker lines the student's notebook printed, hints
  included, and what went wrong when it did not run.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERDICT = re.compile(r"^\[(?P<name>[^\]\n]+)\] (?P<status>PASS|FAIL|TODO): ?(?P<hint>.*)$", re.M)
TITLE = re.compile(r"^#\s+(\d+)\.", re.M)


def printed_text(nb: dict) -> str:
    """Everything the code cells of a notebook printed to stdout."""
    return "".join(
        "".join(output.get("text", ""))
        for cell in nb.get("cells", [])
        if cell.get("cell_type") == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and output.get("name") == "stdout"
    )


def chapter_of(nb: dict) -> str | None:
    """The chapter file stem (``05_softmax``) whose number the notebook's title carries."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            match = TITLE.search("".join(cell.get("source", "")))
            if match:
                found = sorted((ROOT / "chapters").glob(f"{int(match.group(1)):02d}_*.ipynb"))
                return found[0].stem if found else None
    return None


def exercises_of(chapter: str) -> list[str]:
    """The checker names a chapter has, in order, read from its committed outputs."""
    nb = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())
    names = []
    for match in VERDICT.finditer(printed_text(nb)):
        if match["name"] not in names:
            names.append(match["name"])
    return names


def execute(path: Path, timeout: int) -> tuple[str, dict | None, str]:
    """Run a copy of ``path``; return (status, executed notebook or None, detail)."""
    try:
        nb = json.loads(path.read_text())
        import nbformat

        nbformat.validate(nbformat.from_dict(nb))
    except Exception as err:  # not JSON, or not a notebook
        return "invalid notebook", None, f"could not read the notebook: {err}"
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / path.name
        shutil.copyfile(path, copy)
        runner = [sys.executable, __file__, "--run-one", str(copy)]
        # A session of its own, so a timeout can stop the kernel too, not just its parent.
        child = subprocess.Popen(
            runner,
            cwd=scratch,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            _, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return "timeout", None, f"did not finish within {timeout} s (an endless loop?)"
        if child.returncode:
            return "errors", None, f"the notebook could not be run: {stderr.strip()[-300:]}"
        executed = json.loads(copy.read_text())
    errors = [
        output.get("ename", "error")
        for cell in executed.get("cells", [])
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    detail = f"cells raised: {', '.join(errors)}" if errors else ""
    return ("errors" if errors else "ok"), executed, detail


def run_one(path: Path) -> None:
    """Child process: execute the notebook at ``path`` in place (it is a scratch copy)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": "."}}
    )
    client.execute()
    nbformat.write(nb, path)


def submissions(folder: Path) -> list[tuple[str, Path]]:
    """``(student, notebook)`` pairs: ``student/x.ipynb`` or flat ``student.ipynb``."""
    found = []
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        rel = path.relative_to(folder)
        found.append((rel.parts[0] if len(rel.parts) > 1 else path.stem, path))
    return found


def grade(folder: Path, out: Path, timeout: int = 120) -> list[dict]:
    """Grade every submission in ``folder``; write grades.csv and feedback/ into ``out``."""
    rows, columns, feedback = [], [], {}
    for student, path in submissions(folder):
        status, executed, detail = execute(path, timeout)
        chapter = None
        try:
            chapter = chapter_of(json.loads(path.read_text()))
        except Exception:
            pass  # an unreadable file is reported by execute()
        if chapter is None and status != "invalid notebook":
            status, detail = "unknown chapter", "its title does not name a course chapter"
        names = exercises_of(chapter) if chapter else []
        verdicts = {m["name"]: m for m in VERDICT.finditer(printed_text(executed or {}))}
        row = {"student": student, "notebook": path.name, "status": status}
        for name in names:
            column = f"{chapter}:{name}"
            if column not in columns:
                columns.append(column)
            row[column] = int(name in verdicts and verdicts[name]["status"] == "PASS")
        row["total"] = sum(row[f"{chapter}:{n}"] for n in names)
        rows.append(row)
        lines = [f"{student}: {path.name}: {status}"] + ([detail] if detail else [])
        lines += [m.group(0) for m in verdicts.values()]
        lines += [f"[{n}] NOT RUN: its checker never printed" for n in names if n not in verdicts]
        feedback.setdefault(student, []).append("\n".join(lines))
        print(f"{student:<20} {path.name:<28} {status:<16} {row['total']}/{len(names)}")
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for student, parts in feedback.items():
        (out / "feedback" / f"{student}.txt").write_text("\n\n".join(parts) + "\n")
    with (out / "grades.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(
            handle, ["student", "notebook", "status", *columns, "total"], restval=0
        )
        writer.writeheader()
        writer.writerows(rows)
    return rows


def main(argv: list[str]) -> int:
    if argv[:1] == ["--run-one"]:
        run_one(Path(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--out", type=Path, default=Path("grades"))
    parser.add_argument("--timeout", type=int, default=120, help="seconds per notebook")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder of submitted notebooks")
    if args.out.resolve().is_relative_to(args.submissions.resolve()):
        parser.error("--out must not be inside the submissions folder, which is only read")
    args.out.mkdir(parents=True, exist_ok=True)
    grade(args.submissions, args.out, args.timeout)
    print(f"wrote {args.out / 'grades.csv'} and {args.out / 'feedback'}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

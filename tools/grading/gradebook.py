"""``grades.csv``: one row per student, rewritten (atomically) after every submission.

The book is kept in ``.state.json`` next to the CSV: per student and chapter, the
points, status, flags and feedback, and a digest of the notebook that earned them, so a
later run skips what has not changed and merges the rest. The CSV is made from it:

    student, 05:softmax-stable, 05:entropy, 05:softmax-predict (manual), 05:status,
    05:flags, ..., total, max

``total`` and ``max`` count the auto-graded exercises. The ``(manual)`` columns are the
teacher's: what is typed there survives every later run. No cell begins with ``=``,
``+``, ``-`` or ``@`` (a leading ``'`` is added), so a spreadsheet shows text, not formulas.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

import exercises

STATE = ".state.json"
MANUAL = " (manual)"
RISKY = ("=", "+", "-", "@", "\t", "\r")


def safe(value) -> str:
    text = "" if value is None else str(value)
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    return "'" + text if text.startswith(RISKY) else text


def unsafe(text: str) -> str:
    return text[1:] if text.startswith("'") and text[1:].startswith(RISKY) else text


def write_atomic(path: Path, data: str) -> None:
    """Write ``path`` whole or not at all: a temporary file, then a rename."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class Gradebook:
    def __init__(self, out: Path):
        self.out = out
        (out / "feedback").mkdir(parents=True, exist_ok=True)
        path = out / STATE
        self.state = json.loads(path.read_text()) if path.exists() else {"students": {}}
        self.manual = self._manual_marks()

    def _manual_marks(self) -> dict[tuple[str, str], str]:
        """What the teacher typed into the manual columns of the current CSV."""
        path, marks = self.out / "grades.csv", {}
        if path.exists():
            with path.open(newline="", encoding="utf-8") as handle:
                for row in csv.DictReader(handle):
                    for column, value in row.items():
                        if column and column.endswith(MANUAL) and value:
                            marks[unsafe(row["student"]), column] = unsafe(value)
        return marks

    def unchanged(self, student: str, digest: str) -> bool:
        """Was exactly this notebook graded against the current course already?"""
        for chapter, entry in self.state["students"].get(student, {}).items():
            course = exercises.chapter(chapter)
            if entry.get("digest") == digest:
                return course is not None and entry.get("version") == course.version
        return False

    def record(self, result, source: str, digest: str) -> None:
        """Add one graded submission and rewrite the CSV and the student's feedback."""
        rows = self.state["students"].setdefault(result.student, {})
        course = exercises.chapter(result.chapter) if result.chapter else None
        rows[result.chapter or "??"] = {
            "source": source,
            "digest": digest,
            "version": course.version if course else None,
            "points": result.points,
            "max": result.maximum,
            "status": result.status or ["ok"],
            "flags": result.flags,
            "feedback": result.feedback,
        }
        self.save(result.student)

    def save(self, student: str | None = None) -> None:
        write_atomic(self.out / STATE, json.dumps(self.state, indent=1, sort_keys=True))
        write_atomic(self.out / "grades.csv", self.csv())
        if student is not None:
            parts = []
            for chapter, entry in sorted(self.state["students"][student].items()):
                flags = [f"flag: {f}" for f in entry["flags"]]
                status = ", ".join(entry["status"])
                parts.append(
                    "\n".join([f"Chapter {chapter}: {status}", *entry["feedback"], *flags])
                )
            write_atomic(self.out / "feedback" / f"{student}.txt", "\n\n".join(parts) + "\n")

    def columns(self) -> list[str]:
        chapters = sorted({c for rows in self.state["students"].values() for c in rows})
        columns = []
        for stem in chapters:
            course = exercises.chapter(stem)
            seen = [
                col
                for rows in self.state["students"].values()
                for col in rows.get(stem, {}).get("points", {})
            ]
            names = [e.column for e in course.exercises] if course else []
            manual = {e.column for e in course.exercises if e.kind == "text"} if course else set()
            for column in dict.fromkeys(names + seen):
                columns.append(column + MANUAL if column in manual else column)
            prefix = f"{course.number:02d}" if course else stem
            columns += [f"{prefix}:status", f"{prefix}:flags"]
        return ["student", *columns, "total", "max"]

    def csv(self) -> str:
        columns = self.columns()
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow([safe(c) for c in columns])
        for student in sorted(self.state["students"]):
            row = {"student": student}
            total = maximum = 0
            for stem, entry in self.state["students"][student].items():
                course = exercises.chapter(stem)
                prefix = f"{course.number:02d}" if course else stem
                for column, points in entry["points"].items():
                    if points is None:
                        row[column + MANUAL] = self.manual.get((student, column + MANUAL), "")
                    else:
                        row[column] = points
                        total += points
                row[f"{prefix}:status"] = ", ".join(entry["status"])
                row[f"{prefix}:flags"] = "; ".join(entry["flags"])
                maximum += entry["max"]
            row["total"], row["max"] = total, maximum
            writer.writerow([safe(row.get(c, "")) for c in columns])
        return buffer.getvalue()

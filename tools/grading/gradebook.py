"""``grades.csv``: one row per student, rewritten (atomically) after every submission.

The book is kept in ``.state.json`` next to the CSV: per student and chapter, the
points, status, flags and feedback, and a digest of the notebook that earned them, so a
later run skips what has not changed and merges the rest. The CSV is made from it:

    student, 05:softmax-predict (manual), 05:softmax-stable, 05:entropy, 05:status,
    05:flags, ..., total, max

``total`` and ``max`` count the auto-graded exercises. The ``(manual)`` columns are the
teacher's: what is typed there survives every later run, and marks typed while a run
is going are read again just before each write. The CSV is read back as a spreadsheet
re-saves it (a UTF-8 byte order mark, ``;`` or tabs between cells); one it cannot read
is refused with one sentence, never emptied. No cell begins, even after blanks or line
breaks, with ``=``, ``+``, ``-`` or ``@`` (a leading ``'`` is added), so a spreadsheet
shows text, not formulas. Names that look alike (Latin ``alice``, Cyrillic ``аlice``)
are named in the status; each student's feedback file has a safe name
(:func:`feedback_name`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path

import exercises

STATE = ".state.json"
MANUAL = " (manual)"
RISKY = ("=", "+", "-", "@", "\t", "\r")


# Letters of other scripts that print like Latin ones (the usual look-alikes).
LOOKALIKE = str.maketrans(
    "аеорсуххіјѕԁһԛԝʏαβεικνορτυχАВЕКМНОРСТХІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxxijsdhqwyabeikvoptuxABEKMHOPCTXIJSABEZHIKMNOPTYX",
)


class Unreadable(Exception):
    """grades.csv cannot be read back; overwriting it could lose the teacher's marks."""


def safe(value) -> str:
    text = "" if value is None else str(value)
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    return "'" + text if text.lstrip().startswith(RISKY) else text


def unsafe(text: str) -> str:
    return text[1:] if text.startswith("'") and text[1:].lstrip().startswith(RISKY) else text


def feedback_name(student: str) -> str:
    """``<student>.txt`` for a plain short name, else a safe prefix and a digest."""
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", student)[:60].lstrip(".") or "student"
    if plain == student:
        return f"{student}.txt"
    return f"{plain}-{hashlib.sha256(student.encode('utf-8', 'replace')).hexdigest()[:12]}.txt"


def skeleton(name: str) -> str:
    """What ``name`` looks like in print: compatibility forms, marks and invisibles gone."""
    text = unicodedata.normalize("NFKD", name).translate(LOOKALIKE)
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Cf", "Cc"))
    return unicodedata.normalize("NFKC", text).casefold().strip()


def read_rows(path: Path) -> list[dict]:
    """The rows of a CSV as this grader or a spreadsheet wrote it (BOM, ``,`` ``;`` tab)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise Unreadable(f"{path.name} cannot be read ({err.__class__.__name__})") from None
    header = text.split("\n", 1)[0]
    for delimiter in (",", ";", "\t"):
        first = next(csv.reader([header], delimiter=delimiter), [""])
        if first and unsafe(first[0].strip()) == "student":
            return list(csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter))
    raise Unreadable(
        f"{path.name} does not begin with a 'student' column separated by commas, "
        "semicolons or tabs; save it as CSV again (or move it away) and rerun"
    )


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
        """What the teacher typed into the manual columns of the current CSV.

        Raises :class:`Unreadable` for a CSV that cannot be read back."""
        path, marks = self.out / "grades.csv", {}
        if path.exists():
            for row in read_rows(path):
                student = unsafe(row.get("student") or "")
                for column, value in row.items():
                    column = unsafe((column or "").strip())
                    if column.endswith(MANUAL) and value:
                        marks[student, column] = unsafe(value)
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
        """Write the state, the CSV (with the manual marks on disk now) and the feedback.

        Raises OSError when the CSV cannot be replaced (open and locked elsewhere); the
        state is written first, so nothing is lost and the next save writes it all."""
        write_atomic(self.out / STATE, json.dumps(self.state, indent=1, sort_keys=True))
        if student is not None:
            self._feedback(student)
        try:
            self.manual = self._manual_marks()  # marks typed during the run are kept
        except Unreadable:
            pass  # was readable at the start: keep the marks read then
        write_atomic(self.out / "grades.csv", self.csv())

    def _feedback(self, student: str) -> None:
        parts = []
        for chapter, entry in sorted(self.state["students"][student].items()):
            flags = [f"flag: {f}" for f in entry["flags"]]
            status = ", ".join(entry["status"])
            parts.append("\n".join([f"Chapter {chapter}: {status}", *entry["feedback"], *flags]))
        path = self.out / "feedback" / feedback_name(student)
        write_atomic(path, "\n\n".join(parts) + "\n")

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
        looks: dict[str, list[str]] = {}
        for student in self.state["students"]:
            looks.setdefault(skeleton(student), []).append(student)
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
                row[f"{prefix}:status"] = ", ".join(entry["status"] + _alike(student, looks))
                row[f"{prefix}:flags"] = "; ".join(entry["flags"])
                maximum += entry["max"]
            row["total"], row["max"] = total, maximum
            writer.writerow([safe(row.get(c, "")) for c in columns])
        return buffer.getvalue()


def _alike(student: str, looks: dict[str, list[str]]) -> list[str]:
    """A note naming the other students whose names print like this one."""
    others = [o for o in looks[skeleton(student)] if o != student]
    if not others:
        return []
    shown = "; ".join(ascii(o) for o in sorted(others))
    return [f"name looks like {shown} (this one is {ascii(student)})"]

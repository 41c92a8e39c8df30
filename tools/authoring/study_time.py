"""Estimate how long each chapter takes to study, for the landing page's plan table.

Reading at about 150 words a minute, half a minute per visible code cell (read it, run
it, look at the output), and about 7 minutes per exercise. Rounded to 5 minutes. A rough
guide for planning a session, not a measurement; tests/test_intro.py keeps the table
within 10 minutes of it as chapters change.

Usage: .venv/bin/python tools/authoring/study_time.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 0.5
MINUTES_PER_EXERCISE = 7


def study_minutes(path: Path) -> int:
    """Minutes to read a chapter, run its cells and try its exercises, rounded to 5."""
    nb = nbformat.read(path, as_version=4)
    shown = [c for c in nb.cells if "remove-cell" not in c.metadata.get("tags", [])]
    markdown = [c.source for c in shown if c.cell_type == "markdown"]
    words = sum(len(re.findall(r"[A-Za-z]+", s)) for s in markdown)
    code = sum(c.cell_type == "code" for c in shown)
    exercises = sum(s.count("{exercise}") for s in markdown)
    minutes = (
        words / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * code + MINUTES_PER_EXERCISE * exercises
    )
    return int(5 * round(minutes / 5))


def main() -> int:
    for path in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        print(f"{path.stem[:2]}  {study_minutes(path)} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())

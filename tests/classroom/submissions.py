"""Synthetic submissions: a student notebook with correct, blank or partly wrong answers.

They are made from the notebook a platform hands out (otter's or nbgrader's release),
by finding each exercise's answer cell and putting the course's solution in it.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "classroom"))
from common import chapter, solution_code  # noqa: E402

TEXT = "The weights are equal; see the chapter."


def wrong(ex) -> str:
    """The solution, then a change that makes it wrong (the checker must fail it)."""
    code = solution_code(ex)
    if ex.kind == "function":
        return code + (
            f"\n\n_right_{ex.name} = {ex.name}\n"
            f"def {ex.name}(*args, **kwargs):\n"
            f"    return np.asarray(_right_{ex.name}(*args, **kwargs)) * 2 + 1\n"
        )
    return code + f"\n{ex.name} = {ex.name} * 2 + 1\n"


def fill(nb, stem: str, answers: dict[str, str], is_answer) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose answer cells hold ``answers[label]`` (others left as given).

    ``is_answer(cell, ex)`` tells whether ``cell`` is the answer cell of ``ex``.
    """
    nb = copy.deepcopy(nb)
    for ex in chapter(stem).exercises:
        if ex.label not in answers:
            continue
        cells = [c for c in nb.cells if is_answer(c, ex)]
        assert len(cells) == 1, f"{ex.label}: {len(cells)} answer cells"
        cells[0].source = answers[ex.label]
    return nb


def answers(stem: str, kind: str) -> dict[str, str]:
    """``{label: source}`` for a ``correct``, ``blank`` or ``partly`` wrong submission.

    ``partly``: the first checked exercise right, the second wrong, the rest untouched.
    """
    exercises = chapter(stem).exercises
    if kind == "blank":
        return {}
    if kind == "correct":
        return {e.label: solution_code(e) if e.kind != "text" else TEXT for e in exercises}
    checked = [e for e in exercises if e.kind != "text"]
    return {checked[0].label: solution_code(checked[0]), checked[1].label: wrong(checked[1])}


def expected(stem: str, kind: str) -> float:
    """The autograded points a submission of ``kind`` must get."""
    checked = [e for e in chapter(stem).exercises if e.kind != "text"]
    return {"blank": 0, "correct": sum(e.points for e in checked), "partly": checked[0].points}[
        kind
    ]

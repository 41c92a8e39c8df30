"""Write the student copies of the chapters: no solutions, no outputs, nothing overwritten.

    python tools/student.py [--out _build_student] [chapters/*.ipynb]

What a student copy keeps and drops:

* every cell from a ```` ```{solution-start} ```` marker to its ```` ```{solution-end} ````
  marker is dropped, markdown and code alike; the exercise text and the stub cell before
  it (a function that returns ``None``, then its checker) stay, so the checker says TODO;
* a ```` ```{solution} ```` block inside a markdown cell is cut out of that cell;
* outputs, execution counts and widget state are cleared.

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

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ".student-manifest.json"
START = re.compile(r"^(`{3,}|:{3,})\{solution-start\}", re.M)
END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}", re.M)
# A whole ```{solution} ... ``` block: the closing fence is the opening one (same length).
BLOCK = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}.*?^(?P=fence)[ \t]*$\n?", re.M | re.S)
NOTE = (
    "\n\n> **Student copy.** The solutions are not in this notebook. Write your answer in "
    "each exercise's cell and run the checker below it."
)


def student_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Return a copy of ``nb`` without solutions, outputs or widget state."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # deep copy
    kept, inside = [], None
    for index, cell in enumerate(nb.cells):
        source = cell.source
        if inside is None and START.search(source):
            inside = index
        if inside is None:
            if cell.cell_type == "markdown":
                cell.source = BLOCK.sub("", source)
            kept.append(cell)
        elif END.search(source):
            inside = None
    if inside is not None:
        raise ValueError(f"cell {inside} opens a solution that is never closed ({{solution-end}})")
    for cell in kept:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    nb.cells = kept
    nb.metadata.pop("widgets", None)
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
        data = nbformat.writes(student_notebook(nbformat.read(path, as_version=4))) + "\n"
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

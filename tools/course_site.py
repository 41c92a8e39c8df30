"""Build the website for a running course: the same book, with no solutions anywhere.

    python tools/course_site.py        # or: make book-course

The default site (``make book``) keeps every solution in a folded dropdown. While a
class is working on the exercises, publish this one instead: its chapter pages and its
downloadable ``.ipynb`` files are made from the student copies (see ``student.py``), so
neither the HTML nor a download contains a solution.

It stages the book in ``_build/course_src`` (links to everything, with the chapters
replaced by their student copies) and builds it into ``_build/course_src/_build/html``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from student import student_notebook

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / "_build" / "course_src"
SKIP = {"_build", "chapters", ".git", ".venv"}


def stage() -> Path:
    """Recreate the staging folder: links to the sources, student copies of the chapters."""
    if STAGE.exists():
        shutil.rmtree(STAGE)  # only ever this tool's own folder under _build/
    (STAGE / "chapters").mkdir(parents=True)
    for item in ROOT.iterdir():
        if item.name not in SKIP:
            (STAGE / item.name).symlink_to(item)
    (STAGE / "_build").mkdir()
    (STAGE / "_build" / "vendor_site").symlink_to(ROOT / "_build" / "vendor_site")
    for chapter in sorted((ROOT / "chapters").glob("*.ipynb")):
        nb = student_notebook(nbformat.read(chapter, as_version=4))
        nbformat.write(nb, STAGE / "chapters" / chapter.name)
    return STAGE


def main() -> int:
    stage()
    build = ["jupyter-book", "build", str(STAGE), "--keep-going", *sys.argv[1:]]
    result = subprocess.run(build, cwd=ROOT)
    if result.returncode == 0:
        print(f"Course site (no solutions) built: open {STAGE / '_build/html/index.html'}")
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main())

"""Build the website for a running course: the same book, with no solutions anywhere.

    python tools/book/course_site.py        # or: make book-course

The default site (``make book``) keeps every solution in a folded dropdown. While a
class is working on the exercises, publish this one instead: its chapter pages and its
downloadable ``.ipynb`` files are made from the student copies
(``tools/editions/student.py``), so neither the HTML nor a download contains a solution.

It stages the book in ``_build/course_src`` (links to everything, with the chapters
replaced by their student copies) and builds it into ``_build/course_src/_build/html``.
On those pages:

* the markdown answer cells ``student.py`` adds for free-text exercises are dropped (a
  page is read, not written in);
* a ``literalinclude`` of the library that shows a reference implementation of one of the
  chapter's own exercises (it shares a line of code with that exercise's solution, or
  defines its function) is replaced by a short note.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: exercises, the packages
from editions.myst import INCLUDE, included, options  # noqa: E402
from editions.student import student_notebook  # noqa: E402
from exercises import KEY, chapter  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STAGE = ROOT / "_build" / "course_src"
# No learner edition either: without one, a page's download button serves its student copy.
SKIP = {"_build", "chapters", "notebooks", ".git", ".venv"}


LEFT_OUT = (
    "*The library's own code for this step is left out of the course site while the class "
    "works on this chapter's exercises: the exercises below ask you to write it.*"
)


def code_lines(code: str) -> set[str]:
    """The expressions of ``code`` that say something: ``return e`` and ``x = e`` give ``e``,
    without comments, blanks or case; short ones and stubs are left out."""
    found = set()
    for line in code.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith(("def ", "check_", "return None")):
            continue
        line = re.sub(r"^return\s+|^[\w.\[\], ]+?\s*[-+*/@]?=(?!=)\s*", "", line)
        line = re.sub(r"\s+", "", line).lower()
        if len(line) >= 12:
            found.add(line)
    return found


def reveals(text: str, stem: str) -> bool:
    """Whether ``text`` (an included listing) is a reference implementation of an exercise."""
    ch = chapter(stem)
    listing = code_lines(text)
    for ex in ch.exercises if ch else ():
        if ex.kind != "function":
            continue
        name = ex.name.removeprefix("my_")
        solution = code_lines("\n".join(ex.solutions))
        if listing & solution or re.search(rf"\bdef (?:my_)?{re.escape(name)}\b", text):
            return True
    return False


def for_the_class(nb: nbformat.NotebookNode, stem: str) -> nbformat.NotebookNode:
    """Drop the free-text answer cells and the listings that solve an exercise."""
    kept = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "answer" in cell.metadata.get(KEY, {}):
            continue
        if cell.cell_type == "markdown":

            def replace(m: re.Match) -> str:
                path = (ROOT / "chapters" / m.group(2)).resolve()
                listing = included(path, options(m.group(3))) if path.is_file() else ""
                return LEFT_OUT if reveals(listing, stem) else m.group(0)

            cell.source = INCLUDE.sub(replace, cell.source)
        kept.append(cell)
    nb.cells = kept
    return nb


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
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        nb = student_notebook(nbformat.read(path, as_version=4))
        nbformat.write(for_the_class(nb, path.stem), STAGE / "chapters" / path.name)
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

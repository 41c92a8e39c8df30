"""Write the learner edition: the notebooks that the site's Colab, Binder and download buttons open.

    python tools/editions/learner.py          # or: make notebooks; notebooks/ from chapters/
    python tools/editions/learner.py --check  # exit 1 if notebooks/ is not what chapters/ makes

A chapter in ``chapters/`` is the course's single source, and it carries what the website
needs: cells of assertions, MyST directives and roles, solutions in ordinary cells. The
learner edition keeps only what teaches, in a form that JupyterLab and Colab both render:

* cells tagged ``remove-cell`` (the assertions, the line about the learner edition) go;
  plot code tagged ``hide-input`` is collapsed (``jupyter.source_hidden``), and a cell
  tagged ``hide-cell`` (the code of a folded aside) has its output collapsed too;
* a short setup cell comes first (``setup_cell.py``): it installs the library in Colab
  or a downloaded notebook, and does nothing where the library is installed;
* every solution becomes one markdown cell holding a folded ``<details>`` block: its text,
  its code as a listing and what that code prints. Nothing of it runs on "Run All", so
  each checker stays at TODO until the learner writes an answer. A written exercise gets
  an empty code cell under it, to try things before opening its solution;
* MyST becomes CommonMark with math (``myst.py``): exercises as numbered boxes
  (blockquotes), numbered as on the site ("Exercise 5.1"); each ``literalinclude`` as the
  lines it shows; glossary terms, citations and references to other chapters as links to
  the website.

The outputs stay (figures, printed numbers, the slider's "run the cell" line), so the
notebook reads well before it runs. Writing twice gives the same bytes.

Two forms differ only in their folds: ``notebooks/`` (``<details>``: Colab, downloads) and
``notebooks/lab/`` (MyST dropdowns: Binder's JupyterLab, whose jupyterlab-myst typesets no
math inside an HTML fold).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: exercises, the packages
import exercises  # noqa: E402

from editions import myst, setup_cell  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
OUT = ROOT / "notebooks"
LAB = "lab"  # notebooks/lab/: the form for JupyterLab with jupyterlab-myst
BANNER = (
    "*The learner edition of chapter {number} of "
    "[Attention, Step by Step]({site}/intro.html), also "
    "[on the website]({site}/chapters/{stem}.html). "
    "Run the cells from the top. Each exercise's solution is folded below it: try first.*"
)


def bibliography() -> dict[str, tuple[str, str]]:
    """Each key of references.bib as (authors, year): ("Vaswani et al.", "2017")."""
    text = (ROOT / "references.bib").read_text()
    found = {}
    for key, body in re.findall(r"@\w+\{([^,\s]+),(.*?)\n\}", text, re.S):
        fields = dict(re.findall(r"(\w+)\s*=\s*\{((?:[^{}]|\{[^{}]*\})*)\}", body))
        names = [n.split(",")[0].strip() for n in fields.get("author", "").split(" and ")]
        names = [re.sub(r"[{}\\]|\\\W", "", n) for n in names if n]
        if not names:  # a web article: the part of its title before the colon
            authors = "*" + re.sub(r"[{}]", "", fields.get("title", key)).split(":")[0] + "*"
        elif len(names) == 1:
            authors = names[0]
        elif len(names) == 2:
            authors = f"{names[0]} and {names[1]}"
        else:
            authors = f"{names[0]} et al."
        found[key] = (authors, fields.get("year", ""))
    return found


def tags(cell) -> set[str]:
    return set(cell.metadata.get("tags", []))


def solution_cell(cells: list, label: str, converter: myst.Converter) -> nbformat.NotebookNode:
    """One markdown cell that folds a whole solution: its text, code and printed output."""
    parts = []
    for cell in cells:
        if "remove-cell" in tags(cell):  # an assertion inside a solution stays off the page
            continue
        if cell.cell_type == "markdown":
            text = myst.DIRECTIVE.sub(
                lambda m: "" if m["name"] in ("solution-start", "solution-end") else m[0],
                cell.source,
            )
            parts.append(converter.convert(text, base=CHAPTERS))
        else:
            parts.append(myst.code_fence(cell.source))
            printed = "".join(
                "".join(o.get("text", "")) for o in cell.outputs if o.output_type == "stream"
            )
            if printed.strip():
                parts.append("It prints:\n\n" + myst.code_fence(printed, "text"))
    body = "\n\n".join(p.strip() for p in parts if p.strip())
    summary = f"Solution to {converter.exercise_name(label)} (click to open)"
    cell = nbformat.v4.new_markdown_cell(myst.details(summary, body))
    cell.id = re.sub(r"[^A-Za-z0-9_-]", "-", f"solution-{label}")[:64]
    return cell


FOLD = "\n\n<details>\n<summary>Solution to "
SCRATCH = "# Your answer (optional): try it here, then open the solution below."


def split_at_fold(cell) -> list:
    """A written exercise and its folded solution may share one markdown cell (a
    ``{solution}`` block): give each its own cell, so a cell to try things fits between."""
    at = cell.source.find(FOLD)
    if at < 0 or "> **Exercise " not in cell.source[:at]:
        return [cell]
    folded = nbformat.v4.new_markdown_cell(cell.source[at + 2 :])
    folded.id = f"{cell.id}-solution"[:64]
    cell.source = cell.source[:at]
    return [cell, folded]


def add_scratch_cells(cells: list) -> list:
    """An empty code cell between a written exercise and its folded solution, where the
    learner can try things first (a coding exercise has its stub cell there already)."""
    out = []
    for cell, after in zip(cells, cells[1:] + [None], strict=True):
        out.append(cell)
        if (
            after is not None
            and cell.cell_type == "markdown"
            and "> **Exercise " in cell.source
            and after.cell_type == "markdown"
            and after.source.startswith(FOLD.lstrip("\n"))
        ):
            scratch = nbformat.v4.new_code_cell(SCRATCH)
            scratch.id = f"{cell.id}-try"[:64]
            out.append(scratch)
    return out


def learner_notebook(nb: nbformat.NotebookNode, stem: str) -> nbformat.NotebookNode:
    """The learner edition of the course notebook ``nb`` (chapter ``stem``)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # deep copy
    site = setup_cell.site()
    terms = myst.glossary_anchors(ROOT / "glossary.md")
    converter = myst.Converter(stem, exercises.numbers(), site, bibliography(), terms)

    regions = exercises.solution_regions(nb.cells)
    cells, pending, label = [], [], None
    for index, cell in enumerate(nb.cells):
        if index in regions:
            if label is not None and regions[index] != label and pending:
                cells.append(solution_cell(pending, label, converter))
                pending = []
            label = regions[index]
            pending.append(cell)
            if cell.cell_type == "markdown" and exercises.END.search(cell.source):
                cells.append(solution_cell(pending, label, converter))
                pending, label = [], None
            continue
        if "remove-cell" in tags(cell) or cell.get("id") == exercises.SOURCE_NOTE:
            continue
        folded = {"hide-input", "hide-cell"} & set(tags(cell))
        for key in ("tags", exercises.KEY, "execution"):
            cell.metadata.pop(key, None)
        if cell.cell_type == "markdown":
            cell.source = converter.convert(cell.source, base=CHAPTERS)
            cells.extend(split_at_fold(cell))
            continue
        if folded:
            cell.metadata["jupyter"] = {"source_hidden": True}
            if "hide-cell" in folded:
                cell.metadata["jupyter"]["outputs_hidden"] = True
        cells.append(cell)
    if pending:
        raise ValueError(f"{stem}: a solution is never closed with {{solution-end}}")

    cells = add_scratch_cells(cells)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    setup = nbformat.v4.new_code_cell(setup_cell.setup_source(code))
    setup.id = "setup"
    first_code = next(i for i, c in enumerate(cells) if c.cell_type == "code")
    inserted = [setup]
    if setup_cell.uses_model(code):
        model = nbformat.v4.new_code_cell(setup_cell.model_source())
        model.id = "model-weights"
        inserted.append(model)
    cells[first_code:first_code] = inserted
    title = cells[0]
    heading, _, rest = title.source.partition("\n")
    banner = BANNER.format(number=int(stem[:2]), site=site, stem=stem)
    title.source = f"{heading}\n\n{banner}\n{rest}".rstrip("\n")

    count = 0  # execution counts in order, as if run from the top (the setup cells print nothing)
    for cell in cells:
        if cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for output in cell.get("outputs", []):
                if "execution_count" in output:
                    output["execution_count"] = count
    nb.cells = cells
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    # The name today's ipykernel gives its kernel: JupyterLab writes what the kernel reports
    # into the notebook when it starts one, and marks the notebook changed if that differs.
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    return nb


def render(path: Path, lab: bool = False) -> str:
    """The learner edition of ``path`` as .ipynb text; ``lab``: folds as MyST dropdowns."""
    nb = learner_notebook(nbformat.read(path, as_version=4), path.stem)
    for cell in nb.cells if lab else []:
        if cell.cell_type == "markdown":
            cell.source = myst.dropdowns(cell.source)
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale editions")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    sources = sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb"))
    stale = []
    for path, folder in [(p, f) for p in sources for f in (args.out, args.out / LAB)]:
        target = folder / path.name
        text = render(path, lab=folder != args.out)
        if target.exists() and target.read_text() == text:
            continue
        stale.append(target)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    orphans = []
    for folder in (args.out, args.out / LAB):
        orphans += sorted(set(folder.glob("*.ipynb")) - {folder / p.name for p in sources})
    for orphan in orphans:  # an edition whose chapter is gone
        stale.append(orphan)
        if not args.check:
            orphan.unlink()
            print(f"removed {orphan}")
    if args.check and stale:
        names = ", ".join(p.name for p in stale)
        print(f"learner edition out of date ({names}): run `make notebooks`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


def undefined_names(nb: dict) -> list[str]:
    """Names a code cell reads before any earlier cell (or itself) defines them.

    A static reading, for the learner edition: a name defined only in a cell the edition
    leaves out would fail with NameError for a learner. (Running the edition finds the
    rest; this names the culprit without running anything.)
    """
    import ast
    import builtins

    known = set(dir(builtins)) | {"get_ipython", "display"}
    found = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.parse(re.sub(r"^\s*[%!].*$", "", source, flags=re.M))  # no magics
        defined = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                defined.add(node.name)
            elif isinstance(node, ast.alias):
                defined.add((node.asname or node.name).split(".")[0])
        loaded = {
            node.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        }
        for name in sorted(loaded - defined - known):
            found.append(f"cell {index} reads {name!r}, which no earlier cell defines")
        known |= defined
    return found

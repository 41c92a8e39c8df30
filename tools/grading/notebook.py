"""What a submitted notebook holds, read as data: nothing in it is run here.

* :func:`identify`: its chapter, from the metadata ``make student`` wrote;
* :func:`answer_cells`: the cells marked as each exercise's answer;
* :func:`course_cells`: which of the course's own cells an answer needs (``scaled``);
* :func:`scan`: the flags of :mod:`.flags`, for the whole notebook;
* :func:`lazy_imports`: the chapter's import cell, without the seconds Matplotlib costs.
"""

from __future__ import annotations

import ast
import builtins

import exercises

from . import flags

HEAVY = ("attention_lib.plotting", "attention_lib.widgets", "matplotlib", "ipywidgets", "IPython")


def lazy_imports(source: str) -> str:
    """The import cell with its figure and widget imports made lazy (see ``_Lazy``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = []
    for node in tree.body:
        heavy = isinstance(node, ast.ImportFrom) and (node.module or "").startswith(HEAVY)
        heavy = heavy or (
            isinstance(node, ast.Import) and all(a.name.startswith(HEAVY) for a in node.names)
        )
        if isinstance(node, ast.ImportFrom) and heavy:
            lines += [
                f"{a.asname or a.name} = _Lazy({node.module!r}, {a.name!r})" for a in node.names
            ]
        elif heavy:
            lines += [f"{a.asname or a.name.split('.')[0]} = _Lazy({a.name!r})" for a in node.names]
        else:
            lines.append(ast.get_source_segment(source, node))
    return "\n".join(lines)


def identify(nb: dict) -> tuple[exercises.Chapter | None, list[str]]:
    """The chapter a notebook belongs to, from its metadata; and what was odd about it."""
    meta = (
        nb.get("metadata", {}).get(exercises.KEY) if isinstance(nb.get("metadata"), dict) else None
    )
    if isinstance(meta, dict) and isinstance(meta.get("chapter"), str):
        chapter = exercises.chapter(meta["chapter"])
        if chapter is None:
            return None, ["unknown chapter"]
        if meta.get("version") != chapter.version:
            return chapter, ["older copy"]
        return chapter, []
    owners = exercises.by_label()
    for cell in nb.get("cells", []):
        for match in exercises.EXERCISE.finditer(_source(cell)):
            if match.group(2) in owners:
                return owners[match.group(2)], ["no identity"]
    return None, ["no identity", "unknown chapter"]


def _source(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(source) if isinstance(source, list) else str(source)


def answer_cells(nb: dict, chapter: exercises.Chapter, marked: bool) -> dict[str, list[str]]:
    """``{label: [code, ...]}``: the cells ``make student`` marked, in notebook order.

    Without marks (a notebook that did not come from ``make student``), the cells that
    define an exercise's name stand in for them.
    """
    found: dict[str, list[str]] = {}
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        meta = cell.get("metadata")
        mark = meta.get(exercises.KEY) if isinstance(meta, dict) else None
        label = mark.get("answer") if isinstance(mark, dict) else None
        if marked and isinstance(label, str) and chapter.exercise(label):
            found.setdefault(label, []).append(source)
        elif not marked:
            for ex in chapter.exercises:
                if ex.name and _binds(source, ex.name):
                    found.setdefault(ex.label, []).append(source)
    return found


def _binds(source: str, name: str) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return True
    return False


def names_in(source: str) -> tuple[set[str], set[str]]:
    """(names read, names bound) anywhere in ``source``."""
    loads, stores = set(), set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return loads, stores
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            stores.add(node.name)
        elif isinstance(node, ast.arg):
            stores.add(node.arg)
        elif isinstance(node, ast.alias):
            stores.add((node.asname or node.name).split(".")[0])
    return loads, stores


def free_names(sources: list[str], imports: str) -> set[str]:
    """Names the answer cells read but neither they nor the preamble define."""
    loads, stores = set(), set(dir(builtins)) | {"np", "al", "toy"}
    for source in [imports, *sources]:
        read, bound = names_in(source)
        loads |= read
        stores |= bound
    return loads - stores


def course_cells(chapter: exercises.Chapter, needed: set[str], before: int) -> list[int]:
    """The course's own cells (before cell ``before``) that define the ``needed`` names.

    A cell that defines a needed name is kept, and the names it reads become needed in
    turn; cells that only draw or print are left out, which saves seconds per student.
    """
    kept, needed = [], set(needed)
    for index, source in reversed(chapter.context):
        if index >= before or source == chapter.imports:  # the preamble has the imports
            continue
        loads, stores = names_in(source)
        if stores & needed:
            kept.append(index)
            needed |= loads
    return sorted(kept)


def scan(nb: dict, chapter: exercises.Chapter, answers: dict[str, list[str]]) -> list[str]:
    found = []
    for ex in chapter.exercises:
        for source in answers.get(ex.label, []):
            if ex.kind == "function":
                found += [
                    f"{ex.column}: {f}" for f in flags.library_flags(source, ex.name, ex.forbidden)
                ]
            found += [f"{ex.column}: {f}" for f in flags.obfuscation_flags(source)]
    cells = nb.get("cells", [])
    code = [_source(c) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    markdown = [_source(c) for c in cells if isinstance(c, dict) and c.get("cell_type") != "code"]
    solutions = {flags.normalise(s) for e in chapter.exercises for s in e.solutions}
    found += flags.solution_flags(code, markdown, solutions)
    return list(dict.fromkeys(found))

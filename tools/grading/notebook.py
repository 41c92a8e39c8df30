"""What a submitted notebook holds, read as data: nothing in it is run here.

* :func:`identify`: its chapter, from the metadata ``make student`` wrote (or, without
  it, from its exercise labels, found by :func:`exercise_labels` in linear time);
* :func:`answer_cells`: the cells marked as each exercise's answer;
* :func:`course_cells`: which of the course's own cells an answer needs (``scaled``);
* :func:`scan`: the flags of :mod:`.flags`, for the whole notebook;
* :func:`lazy_imports`: the chapter's import cell, without the seconds Matplotlib costs;
* :func:`setup`: what the sandboxed worker runs (the preamble, then the answer cells).

The notebook itself is read in a limited subprocess (:mod:`.static`), never in the
grader's own process; the course's chapters are handed to it as data.
"""

from __future__ import annotations

import ast
import builtins

import exercises

from . import flags

PREAMBLE = """\
import numpy as np
import attention_lib as al
from attention_lib import toy


class _Lazy:
    # A figure or widget helper, imported on first use: Matplotlib costs seconds to import.
    def __init__(self, module, attr=None):
        self._where = (module, attr)

    def _get(self):
        import importlib

        module = importlib.import_module(self._where[0])
        return getattr(module, self._where[1]) if self._where[1] else module

    def __call__(self, *args, **kwargs):
        return self._get()(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._get(), name)


{imports}
for _name in [_n for _n in globals() if _n.startswith("check_")]:
    globals()[_name] = lambda *args, **kwargs: None  # the grade is not computed here
"""


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


def exercise_labels(text: str):
    """The labels of the ```` ```{exercise} ```` blocks in a markdown text, in order.

    One pass over the lines (a backtracking regex took minutes on a hostile notebook):
    a label is the first ``:label:`` line after an exercise's opening line.
    """
    pending = False
    for line in text.split("\n"):
        fence = len(line) - len(line.lstrip(line[:1])) if line[:1] in ("`", ":") else 0
        if fence >= 3 and line[fence:].startswith("{exercise}"):
            pending = True
        elif pending and line.startswith(":label:"):
            words = line[len(":label:") :].split()
            if words:
                pending = False
                yield words[0]


def identify(
    nb: dict, chapters: dict[str, exercises.Chapter]
) -> tuple[exercises.Chapter | None, list[str]]:
    """The chapter a notebook belongs to, from its metadata; and what was odd about it.

    ``chapters``: the course's, by stem.
    """
    meta = (
        nb.get("metadata", {}).get(exercises.KEY) if isinstance(nb.get("metadata"), dict) else None
    )
    if isinstance(meta, dict) and isinstance(meta.get("chapter"), str):
        chapter = chapters.get(meta["chapter"])
        if chapter is None:
            return None, ["unknown chapter"]
        if meta.get("version") != chapter.version:
            return chapter, ["older copy"]
        return chapter, []
    owners = {e.label: c for c in chapters.values() for e in c.exercises}
    for cell in nb.get("cells", []):
        for label in exercise_labels(_source(cell)):
            if label in owners:
                return owners[label], ["no identity"]
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


def broken(chapter: exercises.Chapter, answers: dict[str, list[str]]) -> dict[str, list[str]]:
    """For each exercise with rules on code, how its answer breaks them (if it does)."""
    found = {}
    for ex in chapter.exercises:
        if ex.code_rules and ex.kind == "function" and answers.get(ex.label):
            breaks = flags.code_breaks(answers[ex.label], ex.name, ex.code_rules)
            if breaks:
                found[ex.label] = breaks
    return found


def setup(chapter: exercises.Chapter, answers: dict[str, list[str]]) -> dict:
    """What the worker runs: the preamble, then the answer cells in the course's order.

    The course's own cells come in between only where an answer reads a name they define
    (``scaled``, ``S_shared``): trusted code, from the committed chapter.
    """
    auto = [e for e in chapter.exercises if e.kind != "text"]
    stubs = {e.stub_cell: e for e in auto}
    free = free_names([s for v in answers.values() for s in v], chapter.imports)
    context = course_cells(chapter, free, max(stubs, default=0)) if free else []
    course = dict(chapter.context)
    cells = []
    for index in sorted(set(context) | set(stubs)):
        if index in stubs:
            ex = stubs[index]
            for source in answers.get(ex.label, []):
                cells.append({"label": ex.label, "name": ex.name, "source": source})
        else:
            cells.append({"label": None, "source": course[index]})
    return {"preamble": PREAMBLE.format(imports=lazy_imports(chapter.imports)), "cells": cells}

"""tools/ by job: a package per job, each saying what it does, small modules, arrows one way.

The jobs and what each may import of tools/ (the rest of its imports are the standard
library and installed packages). ``exercises.py`` reads a chapter's exercises for all of
them; the grader (``grade.py``, ``grading/``) is shipped alone in otter's autograder zip,
so it may import nothing else; a package imports the packages below it, never one above.
A module of a package may also import its siblings by name (``classroom/`` and the
grader's sandboxed worker are scripts of their folder).
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"
MAY_IMPORT = {
    "exercises": set(),
    "grade": {"grading"},
    "grading": {"exercises"},
    "authoring": set(),
    "testrun": set(),
    "editions": {"exercises"},
    "book": {"exercises", "editions"},
    "classroom": {"exercises", "editions"},
    "bench": {"exercises", "grade", "editions"},
}
LOOSE = sorted(p.stem for p in TOOLS.glob("*.py"))
PACKAGES = sorted(p.parent.name for p in TOOLS.glob("*/__init__.py"))
MODULES = sorted(TOOLS.rglob("*.py"))


def top_level_imports(path: Path) -> set[str]:
    """The first dotted part of every absolute import in ``path``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_at_most_three_loose_modules_and_every_folder_is_a_package():
    assert len(LOOSE) <= 3, f"tools/ has loose modules {LOOSE}: put them in a package by job"
    folders = sorted(p.name for p in TOOLS.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == PACKAGES, f"folders without __init__.py: {set(folders) - set(PACKAGES)}"
    assert set(LOOSE + PACKAGES) == set(MAY_IMPORT), "a new job: give it a line in MAY_IMPORT"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_says_what_it_does_and_in_what_order(package):
    doc = ast.get_docstring(ast.parse((TOOLS / package / "__init__.py").read_text()))
    assert doc and len(doc.split()) >= 40, f"tools/{package}/__init__.py needs its paragraph"
    modules = {p.stem for p in (TOOLS / package).glob("*.py")} - {"__init__"}
    unnamed = {m for m in modules if m not in doc}
    assert not unnamed, f"tools/{package}/__init__.py does not name {sorted(unnamed)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(TOOLS)))
def test_imports_point_down(path):
    job = path.relative_to(TOOLS).parts[0].removesuffix(".py")
    siblings = {p.stem for p in path.parent.glob("*.py")} if path.parent != TOOLS else set()
    reached = top_level_imports(path) & (set(MAY_IMPORT) | siblings)
    allowed = MAY_IMPORT[job] | {job} | siblings
    assert reached <= allowed, f"{path.relative_to(TOOLS)} imports {reached - allowed}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(TOOLS)))
def test_every_module_is_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= 300, f"{path.relative_to(TOOLS)} has {lines} lines (at most 300)"


def test_no_name_hides_another_module():
    # tools/ is on sys.path for the tools and the tests, and a script's own folder is too
    # when it runs: a module or package named like the standard library's (site, test...)
    # or an installed package's would hide it.
    installed = set(importlib.metadata.packages_distributions())
    names = {p.stem for p in MODULES if p.stem != "__init__"} | set(PACKAGES)
    assert not names & set(sys.stdlib_module_names), names & set(sys.stdlib_module_names)
    assert not names & installed, names & installed

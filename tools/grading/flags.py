"""What a static look at a submission finds, for the teacher to judge (never run here).

* ``library``: the answer *is* a library function (``my_softmax = al.softmax``), or its
  code calls the library function the exercise's text rules out ("no ``al.softmax``");
* ``obfuscated``: ``exec``, ``eval``, ``compile``, ``__import__``, ``getattr`` and the like
  with computed names, dunder attributes, imports of ``os``/``sys``/``subprocess``...;
* ``solution``: the notebook still holds the course's solutions (their markers, or an
  answer cell that is a solution cell of the course, character for character).

Flags never change points; they go into the CSV and the student's feedback. One more
finding is not a flag: :func:`code_breaks`, an answer that breaks its exercise's rules on
code ("a loop over the keys, no ``@``"), which in the learner's kernel the checker reads
from the function's code and the grader, which never holds that code, reads from its source.
"""

from __future__ import annotations

import ast

DYNAMIC = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint"}
ATTRIBUTE_CALLS = {"getattr", "setattr", "delattr"}
MODULES = {
    "os", "sys", "subprocess", "ctypes", "importlib", "builtins", "socket", "shutil",
    "pathlib", "signal", "multiprocessing", "threading", "pickle", "marshal", "codecs",
    "base64", "zlib", "inspect", "gc", "io", "resource", "pty",
}  # fmt: skip
LIBRARY = {"al", "attention_lib"}
PRODUCTS = {"matmul", "dot", "einsum", "tensordot", "inner", "vdot", "multi_dot"}
LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _library_name(node: ast.AST, aliases: set[str]) -> str | None:
    """``softmax`` for ``al.softmax``, ``attention_lib.core.softmax`` or an imported alias."""
    if isinstance(node, ast.Attribute):
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in LIBRARY:
            return node.attr
    if isinstance(node, ast.Name) and node.id in aliases:
        return node.id
    return None


def library_flags(source: str, name: str, forbidden: tuple[str, ...]) -> list[str]:
    tree = _tree(source)
    if tree is None:
        return []
    aliases, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attention_lib"):
            for alias in node.names:
                aliases.add(alias.asname or alias.name)
                if (alias.asname or alias.name) == name:
                    found.append(f"{name} is imported from the library ({alias.name})")
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = node.value
            if isinstance(value, ast.Lambda):
                value = value.body
            if isinstance(value, ast.Call) and not _library_name(value, aliases):
                value = value.func if _library_name(value.func, aliases) else value
            library = _library_name(value, aliases)
            if library:
                found.append(f"{name} is the library's {library}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            library = _library_name(node.func, aliases)
            if library and library in forbidden:
                found.append(f"calls al.{library}, which the exercise rules out")
    return found


def obfuscation_flags(source: str) -> list[str]:
    tree = _tree(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in DYNAMIC:
            found.append(f"uses {node.id}")
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            found.append("uses __builtins__")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ATTRIBUTE_CALLS:
                found.append(f"uses {node.func.id}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            found.append(f"touches {node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for module in names:
                if (module or "").split(".")[0] in MODULES:
                    found.append(f"imports {module}")
    return list(dict.fromkeys(found))


def normalise(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def solution_flags(cells: list[str], markdown: list[str], solutions: set[str]) -> list[str]:
    """``cells``: the submission's code cells; ``solutions``: the course's, normalised."""
    found = []
    if any("{solution-start}" in s or "{solution}" in s for s in markdown + cells):
        found.append("the notebook still has the course's solution blocks")
    if any(normalise(s) in solutions for s in cells if s.strip()):
        found.append("a cell is the course's solution, character for character")
    return found


def _definitions(sources: list[str]) -> dict[str, list[ast.AST]]:
    """Each top-level name the answer cells define, by ``def`` or by ``name = ...``."""
    found: dict[str, list[ast.AST]] = {}
    for source in sources:
        tree = _tree(source)
        for node in tree.body if tree else ():
            if isinstance(node, DEFS):
                found.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found.setdefault(target.id, []).append(node.value)
    return found


def _reached(name: str, defined: dict[str, list[ast.AST]]) -> list[ast.AST]:
    """The code of ``name`` and of every answer-cell function it names, transitively."""
    seen, todo, code = set(), [name], []
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for node in defined.get(current, ()):
            code.append(node)
            todo += [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in defined]
    return code


def _product(node: ast.AST) -> str | None:
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
        return "@"
    if isinstance(node, ast.Attribute) and node.attr in PRODUCTS:
        return f"np.{node.attr}" if node.attr != "dot" else ".dot"
    if isinstance(node, ast.Name) and node.id in PRODUCTS:
        return node.id
    return None


def code_breaks(sources: list[str], name: str, rules: tuple[str, ...]) -> list[str]:
    """How the answer's code breaks its exercise's rules (``"loop"``, ``"no-product"``).

    ``sources`` are the exercise's answer cells; ``name`` is the learner's function. Its
    code is read together with any function of the answer cells that it names (a helper
    cannot hide a product). An answer that does not define ``name`` breaks nothing here:
    its checker fails it.
    """
    code = _reached(name, _definitions(sources)) if rules else []
    if not code:
        return []
    nodes = [n for top in code for n in ast.walk(top)]
    found = []
    if "no-product" in rules:
        used = next((p for p in map(_product, nodes) if p), None)
        if used:
            found.append(
                f"your function uses {used}, the one-line answer the exercise rules out: "
                "write out the sum it does, one key at a time"
            )
    if "loop" in rules and not any(isinstance(n, LOOPS) for n in nodes):
        found.append(
            "no for or while loop appears in your function's code: the exercise asks for "
            "one pass per key"
        )
    return found

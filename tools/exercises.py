"""The exercises of a chapter, read from the course's committed notebook.

One parser for every tool that needs them: the student build (``tools/editions/student.py``
marks each exercise's answer cell), the grader (``tools/grade.py`` calls each
exercise's checker) and the classroom exports. Nothing is listed by hand: a new
exercise in a chapter is picked up the next time a tool runs.

In a chapter, an exercise is a markdown cell with a ```` ```{exercise} ```` block and a
``:label:``. What follows it decides its kind:

* **function**: a code cell that defines ``def my_fn(...)`` and calls its checker,
  ``check_x(my_fn)``;
* **number**: a code cell that sets ``my_answer = None`` and calls a checker on it,
  ``check_x(my_answer, ...)``;
* **text**: no code cell with a checker, only a ```` ```{solution} ```` to read.

The solution is everything between ```` ```{solution-start} label ```` and
```` ```{solution-end} ````. Points default to 1 per exercise; a chapter may declare
others in its notebook metadata, in one place::

    "attention_course": {"points": {"ex-softmax-stable": 2}}

The library functions an exercise rules out are stated in the metadata of its markdown
cell, by their full names, which the grader turns into tripwires::

    "attention_course": {"forbidden": ["attention_lib.core.softmax"]}

Without that metadata, the names are read from the text ("no `al.softmax`"), as a flag
only. Rules on the answer's own code go there too, read from its source by the grader
(see ``tools/grading/flags.py``): ``"code": ["loop", "no-product"]`` asks for a for or
while loop and rules out ``@`` and NumPy's product functions, as the checker does in the
learner's kernel, where it can read the function's code.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
KEY = "attention_course"  # the metadata key, in notebooks and in cells
CODE_RULES = {"loop", "no-product"}  # what an exercise's "code" metadata may ask
# The id of the line atop each chapter that points a reader of the source at its learner
# edition; the learner edition and the student copy both leave it out.
SOURCE_NOTE = "source-note"
START = re.compile(r"^(`{3,}|:{3,})\{solution-start\}", re.M)
END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}", re.M)
EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n(?:[^\n]*\n)*?:label:\s*(\S+)", re.M)
FORBIDDEN = re.compile(
    r"\b(?:no|not|without(?:\s+calling|\s+using)?)\s+`(?:al|attention_lib)\.\s*(\w+)", re.I
)


@dataclass(frozen=True)
class Exercise:
    label: str  # "ex-softmax-stable"
    kind: str  # "function", "number" or "text"
    column: str  # "05:softmax-stable", the gradebook column
    points: float = 1
    name: str | None = None  # the learner's function or variable: "my_softmax"
    checker: str | None = None  # "check_softmax"
    call: str | None = None  # the checker call, as the course wrote it
    stub: str | None = None  # the stub cell the student copy keeps
    stub_cell: int | None = None  # its index in the course notebook
    cell: int = 0  # the index of the exercise's own markdown cell
    solutions: tuple[str, ...] = ()  # the code cells of its solution, assertions left out
    forbidden: tuple[str, ...] = ()  # library functions ruled out: ("softmax",)
    tripwires: tuple[str, ...] = ()  # their full names: ("attention_lib.core.softmax",)
    code_rules: tuple[str, ...] = ()  # rules on the answer's code: ("loop", "no-product")


@dataclass(frozen=True)
class Chapter:
    stem: str  # "05_softmax"
    number: int
    imports: str  # the code of the cell that imports the checkers
    exercises: tuple[Exercise, ...]
    context: tuple[tuple[int, str], ...]  # (index, code) of the cells that are not exercises
    version: str  # changes when an exercise's stub, checker or points change
    metadata: dict = field(default_factory=dict, compare=False)

    def exercise(self, label: str) -> Exercise | None:
        return next((e for e in self.exercises if e.label == label), None)


def checker_call(source: str) -> ast.Call | None:
    """The last top-level ``check_*(...)`` call of a cell, if it has one."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = None
    for node in tree.body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id.startswith("check_")
            and node.value.args
            and isinstance(node.value.args[0], ast.Name)
        ):
            found = node.value
    return found


def defines_function(source: str, name: str) -> bool:
    tree = ast.parse(source)
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def solution_regions(cells: list[dict]) -> dict[int, str]:
    """``{cell index: label}`` for every cell inside a solution, markers included."""
    inside, label, found = False, "", {}
    for index, cell in enumerate(cells):
        source = "".join(cell.get("source", ""))
        start = START.search(source)
        if start and not inside:
            inside = True
            rest = source[start.end() :].split("\n", 1)[0].split()
            label = rest[0] if rest else ""
        if inside:
            found[index] = label
            if END.search(source):
                inside = False
    return found


def parse(nb: dict, stem: str) -> Chapter:
    """The :class:`Chapter` a course notebook (a dict, as JSON) describes."""
    cells = nb.get("cells", [])
    sources = ["".join(c.get("source", "")) for c in cells]
    number = int(stem.split("_", 1)[0])
    points = nb.get("metadata", {}).get(KEY, {}).get("points", {})
    in_solution = solution_regions(cells)
    exercises, stubs = [], set()
    marks = [
        (i, m.group(2), s)
        for i, s in enumerate(sources)
        if cells[i].get("cell_type") == "markdown" and i not in in_solution
        for m in EXERCISE.finditer(s)
    ]
    for n, (index, label, text) in enumerate(marks):
        stop = marks[n + 1][0] if n + 1 < len(marks) else len(cells)
        stub_cell, call = None, None
        for j in range(index + 1, stop):
            if j in in_solution:
                break
            if cells[j].get("cell_type") == "code":
                call = checker_call(sources[j])
                if call is not None:
                    stub_cell = j
                    break
        solutions = tuple(  # what a reader sees: a solution's assertions are not part of it
            sources[j]
            for j, owner in in_solution.items()
            if owner == label
            and cells[j].get("cell_type") == "code"
            and "remove-cell" not in cells[j].get("metadata", {}).get("tags", [])
        )
        common = {
            "label": label,
            "column": f"{number:02d}:{label.removeprefix('ex-')}",
            "points": points.get(label, 1),
            "cell": index,
            "solutions": solutions,
        }
        if call is None:
            exercises.append(Exercise(kind="text", **common))
            continue
        stubs.add(stub_cell)
        name = call.args[0].id
        kind = "function" if defines_function(sources[stub_cell], name) else "number"
        block = text[text.find(label) :]
        block = block[: block.find("```", 1)] if "```" in block else block
        meta = cells[index].get("metadata", {}).get(KEY, {})
        rule, code_rules = meta.get("forbidden"), meta.get("code")
        tripwires = tuple(rule) if isinstance(rule, list) else ()
        unknown = set(code_rules or ()) - CODE_RULES
        if unknown:
            raise ValueError(f"{label}: unknown code rules {sorted(unknown)}; known: {CODE_RULES}")
        forbidden = tuple(dict.fromkeys(t.rsplit(".", 1)[-1] for t in tripwires))
        exercises.append(
            Exercise(
                kind=kind,
                name=name,
                checker=call.func.id,
                call=ast.get_source_segment(sources[stub_cell], call),
                stub=sources[stub_cell],
                stub_cell=stub_cell,
                forbidden=forbidden or tuple(dict.fromkeys(FORBIDDEN.findall(block))),
                tripwires=tripwires,
                code_rules=tuple(code_rules or ()),
                **common,
            )
        )
    imports = next(
        (
            s
            for c, s in zip(cells, sources, strict=True)
            if c.get("cell_type") == "code" and "check_" in s
        ),
        "",
    )
    context = tuple(
        (i, s)
        for i, (c, s) in enumerate(zip(cells, sources, strict=True))
        if c.get("cell_type") == "code" and i not in stubs and i not in in_solution
    )
    signature = json.dumps(
        [(e.label, e.kind, e.name, e.call, e.stub, e.points) for e in exercises], sort_keys=True
    )
    version = hashlib.sha256(signature.encode()).hexdigest()[:16]
    return Chapter(
        stem, number, imports, tuple(exercises), context, version, nb.get("metadata", {})
    )


@cache
def _load(path: str, mtime: float) -> Chapter:
    nb = json.loads(Path(path).read_text())
    return parse(nb, Path(path).stem)


def chapter(stem: str) -> Chapter | None:
    """The course chapter ``stem`` (``05_softmax``), or None if there is no such chapter."""
    path = CHAPTERS / f"{stem}.ipynb"
    if not re.fullmatch(r"\d\d_\w+", stem) or not path.is_file():
        return None
    return _load(str(path), path.stat().st_mtime)


def chapters() -> list[Chapter]:
    return [chapter(p.stem) for p in sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb"))]


def by_label() -> dict[str, Chapter]:
    """Which chapter each exercise label belongs to (labels are unique in the course)."""
    return {e.label: c for c in chapters() for e in c.exercises}


def numbers() -> dict[str, tuple[str, int]]:
    """Each exercise label's chapter and number in it: ``{"ex-entropy": ("05_softmax", 3)}``,
    which the site shows as "Exercise 5.3" (``tools/book/exercise_numbers.py``)."""
    return {e.label: (c.stem, k) for c in chapters() for k, e in enumerate(c.exercises, start=1)}

"""What a chapter page shows (DESIGN.md §10), checked on the notebooks themselves.

* Assertions stay in the notebook, for nbval, but off the page: a code cell that holds an
  ``assert`` is tagged ``remove-cell``.
* Visible code lines fit the page: at most 80 columns.
* A ``{literalinclude}`` shows the 3-15 lines that teach: no docstring, no private helper.
* Exercise numbers restart in each chapter (``tools/book/exercise_numbers.py``; the built
  pages are checked in ``tests/site``).
"""

import ast
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from editions import myst
from editions.myst import INCLUDE, included_lines

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
HIDDEN = {"remove-cell", "remove-input"}  # the reader never sees the source
FOLDED = {"hide-input", "hide-cell"}  # the reader sees it only after a click
WIDTH = 80


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def tags(cell: dict) -> set:
    return set(cell.get("metadata", {}).get("tags", []))


def source(cell: dict) -> str:
    return "".join(cell["source"])


def has_assert(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:  # IPython magics: fall back to the text
        return bool(re.search(r"^\s*assert\b", code, re.M))
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


@pytest.fixture(params=CHAPTERS, ids=[p.stem for p in CHAPTERS])
def chapter(request) -> Path:
    return request.param


def test_assertions_are_off_the_page(chapter):
    shown = [
        i
        for i, c in enumerate(cells(chapter))
        if c["cell_type"] == "code" and not tags(c) & HIDDEN and has_assert(source(c))
    ]
    assert not shown, f"cells {shown} assert on the page: move the asserts to a remove-cell cell"


def test_visible_code_fits_the_page(chapter):
    wide = [
        f"cell {i}: {line[:40]}..."
        for i, c in enumerate(cells(chapter))
        if c["cell_type"] == "code" and not tags(c) & (HIDDEN | FOLDED)
        for line in source(c).splitlines()
        if len(line) > WIDTH
    ]
    assert not wide, f"code lines over {WIDTH} columns: {wide}"


def includes(chapter: Path):
    for i, cell in enumerate(cells(chapter)):
        if cell["cell_type"] != "markdown":
            continue
        for match in INCLUDE.finditer(source(cell)):
            yield i, (chapter.parent / match.group(2)).resolve(), myst.options(match.group(3))


def test_listings_show_only_teaching_lines(chapter):
    for i, path, options in includes(chapter):
        where = f"cell {i}: {path.name} {options}"
        assert path.is_relative_to(ROOT) and path.exists(), f"{where}: no such file"
        assert not options.get("pyobject", "x").split(".")[-1].startswith("_"), (
            f"{where}: a private helper; show a teaching function or marked lines"
        )
        shown = included_lines(path, options)
        code = [line for line in shown if line.strip()]
        assert 3 <= len(code) <= 15, f"{where}: shows {len(code)} lines, not 3-15"
        assert not any('"""' in line or "'''" in line for line in shown), (
            f"{where}: shows a docstring; select the lines after it"
        )
        assert all(len(line) <= WIDTH for line in shown), f"{where}: a line over {WIDTH} columns"


def test_the_page_checks_can_fail(tmp_path):
    # The three rules above catch what they are meant to catch.
    assert has_assert("x = 1\nassert x == 1") and not has_assert("print('assert')")
    module = tmp_path / "m.py"
    text = 'def f(x):\n    """Doc."""\n    return x\n\n# teach\na = 1\nb = 2\nc = 3\n# end\n'
    module.write_text(text)
    assert '"""Doc."""' in "\n".join(included_lines(module, {"pyobject": "f"}))
    marked = included_lines(module, {"start-after": "# teach", "end-before": "# end"})
    assert marked == ["a = 1", "b = 2", "c = 3"]


def markdown_matches(chapter: Path, pattern: re.Pattern) -> list[tuple[int, re.Match]]:
    """(cell index, match) for each match of ``pattern`` in the chapter's markdown cells."""
    return [
        (i, match)
        for i, c in enumerate(cells(chapter))
        if c["cell_type"] == "markdown"
        for match in pattern.finditer(source(c))
    ]


FENCE = re.compile(r"^(`{3,})\{[\w-]+\}(.*)$", re.M)


def test_directive_titles_have_no_backticks(chapter):
    # CommonMark: a backtick fence's info string holds no backtick, so "````{admonition}
    # Why `[CLS]`?" is not a directive at all; the page shows the raw text instead of a fold.
    raw = [f"cell {i}: {m[0][:60]}" for i, m in markdown_matches(chapter, FENCE) if "`" in m[2]]
    assert not raw, f"a directive title with backticks renders as raw text: {raw}"


def test_the_directive_title_check_can_fail():
    bad = "````{admonition} Why is `[CLS]`'s share small?\n:class: dropdown\n"
    good = "````{admonition} Why is [CLS]'s share small?\n:class: dropdown\n"
    assert [m.group(2) for m in FENCE.finditer(bad)] == [" Why is `[CLS]`'s share small?"]
    assert all("`" not in m.group(2) for m in FENCE.finditer(good))


QUOTED_POSSESSIVE = re.compile(r'\w"\'s\b')
STRAIGHT_IN_TEXT = re.compile(r'\\text\{[^}]*"')


def test_no_possessive_on_a_quoted_word(chapter):
    # Sphinx's smart quotes turn "cake"'s into “cake“‘s on the page: say 'the value of
    # "cake"', not '"cake"'s value'.
    found = [f"cell {i}: {m[0]!r}" for i, m in markdown_matches(chapter, QUOTED_POSSESSIVE)]
    assert not found, f"a possessive on a quoted word renders with wrong quotes: {found}"
    assert QUOTED_POSSESSIVE.search('Zeroing "cake"\'s value')  # the check can fail


def test_quotes_in_formulas_are_curly(chapter):
    # MathJax draws a straight " in \text{...} as a closing quote on both sides: ”I”.
    found = [f"cell {i}" for i, _ in markdown_matches(chapter, STRAIGHT_IN_TEXT)]
    assert not found, f"a straight quote inside \\text{{}} renders as ”: write “ and ”: {found}"
    assert STRAIGHT_IN_TEXT.search('(\\text{"I"})')  # the check can fail

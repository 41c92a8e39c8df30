"""The learner edition (``notebooks/``, written by ``tools/editions/learner.py``), read statically.

What the Colab, Binder and download buttons open must be up to date with ``chapters/``,
hold only what teaches (no assertion, no name defined only in a cell it leaves out, a
setup cell of at most six lines), keep every solution inert and folded, and be plain
CommonMark with math, which Colab renders, with no MyST left for it to show raw. Running
each edition top to bottom in a bare environment is ``tests/binder/test_colab.py``; its
rendering in JupyterLab is ``tests/binder/test_lab.py``; its buttons on the built site
are ``tests/site/test_learner_links.py``.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import exercises  # noqa: E402
from editions import learner, myst  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
COMMONMARK = MarkdownIt("commonmark")
# What MyST leaves in CommonMark's HTML: a role's name before its code span, a directive's
# name as a fence's language, option lines, targets and solution markers.
MYST_LEFT = re.compile(
    r"\{[\w:-]+\}<code>|<code class=\"language-\{|(?:^|>):[\w-]+: |(?:^|>)\([\w-]+\)=|\{solution",
    re.M,
)


def edition(path: Path) -> dict:
    return json.loads((learner.OUT / path.name).read_text())


def source(cell: dict) -> str:
    return "".join(cell["source"])


def myst_left(markdown: str) -> list[str]:
    """The MyST syntax that Colab would show raw in ``markdown``."""
    return MYST_LEFT.findall(COMMONMARK.render(markdown))


@pytest.fixture(params=CHAPTERS, ids=lambda p: p.stem)
def chapter(request):
    return request.param


def test_the_edition_is_what_the_chapter_makes(chapter):
    committed = learner.OUT / chapter.name
    assert committed.exists(), f"no {committed.name} in notebooks/: run `make notebooks`"
    assert committed.read_text() == learner.render(chapter), "run `make notebooks` and commit"


def test_no_stale_edition_is_left():
    names = {p.name for p in learner.OUT.glob("*.ipynb")}
    assert names == {p.name for p in CHAPTERS}
    names = {p.name for p in (learner.OUT / learner.LAB).glob("*.ipynb")}
    assert names == {p.name for p in CHAPTERS}


def test_the_lab_form_differs_only_in_its_folds(chapter):
    """notebooks/lab/: the same cells, each <details> fold a MyST dropdown (jupyterlab-myst
    typesets no math inside an HTML block), nested folds with longer fences."""
    committed = learner.OUT / learner.LAB / chapter.name
    assert committed.read_text() == learner.render(chapter, lab=True), "run `make notebooks`"
    plain, lab = edition(chapter)["cells"], json.loads(committed.read_text())["cells"]
    assert [c["id"] for c in plain] == [c["id"] for c in lab]
    for a, b in zip(plain, lab, strict=True):
        if a["cell_type"] == "code" or "<details>" not in source(a):
            assert a == b
            continue
        text = source(b)
        assert "<details>" not in text and "</summary>" not in text
        opened = re.findall(r"^(:{3,})\{dropdown\} (.*)$", text, re.M)
        summaries = re.findall(r"<summary>(.*?)</summary>", source(a))
        assert [title for _, title in opened] == summaries
        for fence, title in opened:  # each closed by a fence of its own length
            assert re.search(rf"^{fence}$", text, re.M), title


def test_dropdowns_nest_and_refuse_broken_folds():
    inner = myst.details("Inner", "$y$")
    text = myst.dropdowns(myst.details("Outer", f"$x$\n\n{inner}\n\nafter"))
    assert text == "::::{dropdown} Outer\n$x$\n\n:::{dropdown} Inner\n$y$\n:::\n\nafter\n::::"
    for broken in ("<details>\n<summary>A</summary>\n\nno end", "text\n\n</details>"):
        with pytest.raises(ValueError):
            myst.dropdowns(broken)


def test_no_assertion_and_every_name_defined(chapter):
    nb = edition(chapter)
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            code = re.sub(r"^\s*[%!].*$", "", source(cell), flags=re.M)
            found = any(isinstance(n, ast.Assert) for n in ast.walk(ast.parse(code)))
            assert not found, f"cell {index} asserts"
    assert learner.undefined_names(nb) == []


def test_the_setup_cell_comes_first_and_is_short(chapter):
    code = [c for c in edition(chapter)["cells"] if c["cell_type"] == "code"]
    setup = source(code[0])
    assert len(setup.splitlines()) <= 6
    assert "ATTENTION_LIB_SOURCE" in setup
    assert 'NEEDED = "' in setup or '", ["attention_lib"' in setup
    assert "archive/refs/heads/" in setup  # where to get the zip when the install fails
    assert "RuntimeError(" in setup  # a failed install says what to do, in one sentence


def test_no_myst_is_left_for_colab(chapter):
    nb = edition(chapter)
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            assert myst_left(source(cell)) == [], f"cell {index}: {source(cell)[:200]}"


def test_display_math_in_a_box_is_on_one_line(chapter):
    # jupyterlab-myst keeps the quote marks inside a $$ block that spans several lines.
    for cell in edition(chapter)["cells"]:
        for line in source(cell).splitlines():
            if line.startswith("> $$"):
                assert line.rstrip().endswith("$$") and len(line.strip()) > 6, line


def test_exercises_are_numbered_as_on_the_site(chapter):
    markdown = "\n".join(
        source(c) for c in edition(chapter)["cells"] if c["cell_type"] == "markdown"
    )
    number = int(chapter.stem[:2])
    found = re.findall(rf"^> \*\*Exercise {number}\.(\d+): ", markdown, re.M)
    count = len(exercises.chapter(chapter.stem).exercises)
    assert [int(k) for k in found] == list(range(1, count + 1))


def test_every_solution_is_folded_and_never_runs(chapter):
    nb = edition(chapter)
    ch = exercises.chapter(chapter.stem)
    cells = [source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    code = {ln.strip() for text in cells for ln in text.splitlines()}
    markdown = [source(c) for c in nb["cells"] if c["cell_type"] == "markdown"]
    folded = [m for text in markdown for m in re.findall(r"<details>.*?</details>", text, re.S)]
    solutions = [e for e in ch.exercises if e.solutions or e.kind == "text"]
    assert len(folded) >= len(solutions)
    # A solution's own lines: those no other code cell of the chapter has.
    others = {ln.strip() for _, text in ch.context for ln in text.splitlines()}
    others |= {ln.strip() for e in ch.exercises if e.stub for ln in e.stub.splitlines()}
    for ex in ch.exercises:
        for solution in ex.solutions:
            lines = [ln for ln in solution.splitlines() if ln.strip()]
            own = [ln for ln in lines if ln.strip() not in others and len(ln.strip()) > 12]
            assert own, f"{ex.label}: a solution with no line of its own"
            for line in own:  # in a fold, never in a code cell
                assert line.strip() not in code, f"{ex.label}: {line!r} is in a code cell"
            assert any(all(ln in fold for ln in lines) for fold in folded), ex.label
    for fold in folded:
        assert fold.startswith("<details>\n<summary>") and "open" not in fold.split("\n")[0]


def test_hidden_plot_code_is_collapsed(chapter):
    # hide-input: the code is folded, its output shows; hide-cell (an aside's code): both fold.
    nb = json.loads(chapter.read_text())
    tagged = {c["id"]: c.get("metadata", {}).get("tags", []) for c in nb["cells"]}
    for cell in edition(chapter)["cells"]:
        tags = tagged.get(cell.get("id"), [])
        folded = cell["metadata"].get("jupyter", {})
        if "hide-input" in tags or "hide-cell" in tags:
            assert folded.get("source_hidden") is True, cell["id"]
        assert folded.get("outputs_hidden", False) is ("hide-cell" in tags), cell["id"]


def test_the_checks_can_fail(tmp_path):
    # Each rule above catches what it is meant to catch.
    assert myst_left("See {term}`softmax` here.") and myst_left("```{exercise} X\nbody\n```")
    assert myst_left(":label: ex-a\n") and not myst_left("Plain `code` and $x$.")
    planted = {
        "cells": [
            {"cell_type": "code", "source": "x = 1"},
            {"cell_type": "code", "source": "print(x + hidden)"},
        ]
    }
    assert learner.undefined_names(planted) == [
        "cell 1 reads 'hidden', which no earlier cell defines"
    ]
    converter = myst.Converter("05_softmax", exercises.numbers(), "https://site", {}, {})
    with pytest.raises(ValueError, match="directive"):
        converter.convert("```{warning}\nCareful.\n```")
    with pytest.raises(ValueError, match="role"):
        converter.convert("A {kbd}`Ctrl` key.")
    with pytest.raises(ValueError, match="not a term"):
        converter.convert("A {term}`gizmo`.")
    with pytest.raises(ValueError, match="no exercise"):
        converter.convert("See {numref}`ex-nowhere`.")
    assert converter.convert("`{term}` in code, {numref}`ex-entropy`") == (
        "`{term}` in code, **Exercise 5.3**"
    )
    out = tmp_path / "notebooks"
    assert learner.main(["--out", str(out)]) == 0
    assert learner.main(["--check", "--out", str(out)]) == 0
    first = sorted(out.glob("*.ipynb"))[0]
    first.write_text(first.read_text().replace("Exercise", "Exercice", 1))
    (out / "99_gone.ipynb").write_text("{}")
    assert learner.main(["--check", "--out", str(out)]) == 1
    assert learner.main(["--out", str(out)]) == 0 and not (out / "99_gone.ipynb").exists()
    assert learner.main(["--check", "--out", str(out)]) == 0


def test_a_listing_shows_what_sphinx_shows(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(x):\n    y = x\n    return y\n\n\ndef g():\n    pass\n")
    assert myst.included(module, {"pyobject": "f"}) == "def f(x):\n    y = x\n    return y"
    shown = myst.included(module, {"start-at": "y = x", "end-at": "return", "dedent": "4"})
    assert shown == "y = x\nreturn y"
    with pytest.raises(ValueError, match="not found"):
        myst.included(module, {"start-at": "nowhere"})


def test_every_exercise_has_a_code_cell_before_its_solution(chapter):
    # A coding exercise has its stub; a written one gets an empty cell to try things in.
    cells = edition(chapter)["cells"]
    for i, (cell, after) in enumerate(zip(cells, cells[1:], strict=False)):
        if cell["cell_type"] == "markdown" and "> **Exercise " in source(cell):
            assert not source(after).startswith("<details>"), f"cell {i}: no cell to answer in"
    texts = [e for e in exercises.chapter(chapter.stem).exercises if e.kind == "text"]
    scratch = [i for i, c in enumerate(cells) if source(c) == learner.SCRATCH]
    assert len(scratch) <= len(texts)
    for i in scratch:  # between its exercise's box and its folded solution
        assert "> **Exercise " in source(cells[i - 1])
        assert source(cells[i + 1]).startswith("<details>\n<summary>Solution to")

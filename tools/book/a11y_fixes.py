"""Accessibility repairs to the HTML that the theme and extensions write.

Repairs of what axe-core (run by tests/site) flags as serious or critical, and of what
readers stumbled on:

* myst-nb's "Show code cell source" toggles are ``<summary aria-label="Toggle hidden
  content">``: a screen reader announces a name that is not the visible text. Without the
  label the visible text is the name.
* the theme's search button is labelled "Search" but shows "Search Ctrl+K"; the same fix.
* a solution's title is a link back to its exercise, so a click on it jumped away instead
  of opening the solution; the link becomes text (the whole title opens the solution);
* the theme and two extensions each write a ``<meta name="viewport">``; one is kept;
* sphinxcontrib-bibtex marks the bibliography ``role="list"`` without list items, so
  assistive technology is told to expect a list that is not there. It reads well as the
  plain block of citations it is;
* a printed table (an output of three or more lines in aligned columns) is marked
  ``aligned``: on a phone it keeps one line per row and scrolls in its box, where other
  output wraps (a wrapped row broke every column of ``toy.table``'s tables);
* code in a table of the prose (the notation table's "in code" column) may break after
  ``_ . ( ,`` only (a ``<wbr>``), not inside a word: ``positional_|encoding(n, d_model)``,
  never ``d_mod|el``.

Three repairs are a few lines of script, because they depend on the browser:

* sphinx-togglebutton names every solution's button "Toggle hidden content". The script
  names each for its exercise instead ("Solution to Exercise 4.2"); ``aria-expanded``
  already says whether it is open.
* a box that scrolls sideways on a narrow screen (axe: ``scrollable-region-focusable``)
  becomes a tab stop, and is marked so that the CSS can say it scrolls; one that fits is
  left alone, so formulas are not tab stops at desktop width;
* the theme's colour button is always named "light/dark"; it is named for the scheme it
  shows (auto, light or dark).

This is a small Sphinx extension (``local_extensions`` in ``_config.yml``). It rewrites the
written pages at the end of the build; each repair is a no-op once applied. After an
upgrade of the theme or an extension, check whether the browser test still needs it.
"""

import re
from pathlib import Path

REPAIRS = (
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
    (
        'class="btn search-button-field search-button__button" title="Search" aria-label="Search"',
        'class="btn search-button-field search-button__button" title="Search"',
    ),
    ('<div role="list" class="citation-list">', '<div class="citation-list">'),
)


# A solution's title links back to its exercise, so a click on its largest words jumped
# away instead of opening the solution: the link becomes plain text, and the whole title
# opens the solution (sphinx-togglebutton listens on the title).
SOLUTION_LINK = re.compile(
    r'(<p class="admonition-title">Solution to)<a class="reference internal" href="#[^"]*">'
    r"(.*?)</a>(</p>)"
)
# The theme and two extensions each write a viewport tag; one is enough.
VIEWPORT = re.compile(r'<meta name="viewport"[^>]*>\s*')


def _one_viewport(text: str) -> str:
    first = VIEWPORT.search(text)
    if first is None:
        return text
    return text[: first.end()] + VIEWPORT.sub("", text[first.end() :])


# A cell's printed output, as myst-nb writes it.
OUTPUT_PRE = re.compile(
    r'(<div class="output (?:stream|text_plain)[^"]*"><div class="highlight">)<pre>(.*?)</pre>',
    re.S,
)
COLUMN_GAP = re.compile(r"\S  +\S")  # two or more spaces between two words: a column


def _mark_tables(text: str) -> str:
    def mark(found):
        lines = [line for line in re.sub(r"<[^>]+>", "", found[2]).split("\n") if line.strip()]
        in_columns = sum(1 for line in lines if COLUMN_GAP.search(line))
        if len(lines) < 3 or in_columns < 2:
            return found[0]
        return f'{found[1]}<pre class="aligned">{found[2]}</pre>'

    return OUTPUT_PRE.sub(mark, text)


TABLE = re.compile(r"<table\b.*?</table>", re.S)
TABLE_CODE = re.compile(r'(<span class="pre">)([^<]+)(</span>)')


def _break_table_code(text: str) -> str:
    def in_table(table):
        return TABLE_CODE.sub(
            lambda m: m[1] + re.sub(r"([_.(,])", r"\1<wbr>", m[2]) + m[3], table[0]
        )

    return TABLE.sub(in_table, text)  # once applied, no span is whole text: a no-op


def _repair(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = original = page.read_text(encoding="utf-8")
        for old, new in REPAIRS:
            text = text.replace(old, new)
        text = SOLUTION_LINK.sub(r'\1<span class="solution-of">\2</span>\3', text)
        text = _one_viewport(text)
        text = _mark_tables(text)
        text = _break_table_code(text)
        if text != original:
            page.write_text(text, encoding="utf-8")


# Runs after sphinx-togglebutton has added its buttons (it does so on DOMContentLoaded).
NAME_TOGGLES_JS = """
window.addEventListener("load", () => {
  document.querySelectorAll(".admonition .toggle-button").forEach((button) => {
    const title = button.closest(".admonition").querySelector(".admonition-title");
    const name = (title ? title.textContent : "").replace(/\\s+/g, " ").trim();
    if (name) button.setAttribute("aria-label", name);
  });
});
"""


# A box that scrolls sideways (a figure, a slider's picture, an equation on a narrow
# screen, a long line of code in a prose page) must be reachable by keyboard and say that it
# scrolls; a box that fits must not be a tab stop. Measured on load and as soon as the
# window's width changes (the theme does the same for some boxes, but only 0.3 s after a
# resize). A tap on a figure that scrolls fits it to the screen; a second tap undoes it.
# A click on a figure drawn smaller than its own size (a wide one at 1280 px) shows it at
# full size, scrolling in its box; a second click fits it again.
SCROLL_BOXES_JS = """
(() => {
  const BOXES = "div.cell_output, div.cell_output .output, .frame-slider__frames, "
    + "mjx-container[display='true'], div.highlight pre, .pst-scrollable-table-container";
  const scrolls = (box) => ["auto", "scroll"].includes(getComputedStyle(box).overflowX)
    && box.scrollWidth > box.clientWidth + 1;
  const FIGURES = "div.cell_output img, .frame-slider__frame img";
  const shrunk = (img) => img.naturalWidth > img.getBoundingClientRect().width + 1;
  const mark = () => {
    document.querySelectorAll(FIGURES).forEach((img) => {
      img.classList.toggle("can-enlarge", shrunk(img) && !img.closest(".full-size"));
    });
    document.querySelectorAll(BOXES).forEach(markBox);
  };
  const markBox = (box) => {
    const wide = scrolls(box) || box.classList.contains("fit-width");
    box.classList.toggle("scrolls-sideways", wide);
    if (wide && box.tabIndex < 0) {  // the theme may have set -1 when the box still fitted
      box.setAttribute("tabindex", "0");
      box.dataset.scrollStop = "1";
    } else if (!wide && box.dataset.scrollStop) {
      box.removeAttribute("tabindex");
      delete box.dataset.scrollStop;
    }
  };
  document.addEventListener("click", (event) => {
    if (event.target.tagName !== "IMG" || !event.target.matches(FIGURES)) return;
    const full = event.target.closest(".full-size");
    const box = event.target.closest(".scrolls-sideways, .fit-width");
    let changed = full || box;
    if (full) {
      full.classList.remove("full-size");
    } else if (box && box.classList.contains("scrolls-sideways")) {
      box.classList.toggle("fit-width");
    } else if (event.target.classList.contains("can-enlarge")) {
      changed = event.target.closest(".frame-slider__frames, div.cell_output");
      changed.classList.add("full-size");
    } else {
      return;
    }
    changed.scrollLeft = 0;
    mark();
  });
  window.addEventListener("load", mark);
  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth !== width) { width = window.innerWidth; mark(); }
  });
})();
"""


# The theme's colour button is always named "light/dark"; name it for the scheme it shows.
NAME_THEME_BUTTON_JS = """
window.addEventListener("load", () => {
  const name = () => {
    const mode = document.documentElement.dataset.mode || "auto";
    document.querySelectorAll(".theme-switch-button").forEach((button) => {
      button.setAttribute("aria-label", `Colour scheme: ${mode} (press to change)`);
    });
  };
  name();
  new MutationObserver(name).observe(document.documentElement, { attributeFilter: ["data-mode"] });
});
"""


def setup(app):
    app.connect("build-finished", _repair)
    app.add_js_file(None, body=NAME_TOGGLES_JS)
    app.add_js_file(None, body=SCROLL_BOXES_JS)
    app.add_js_file(None, body=NAME_THEME_BUTTON_JS)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

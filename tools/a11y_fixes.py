"""Accessibility repairs to the HTML that the theme and extensions write.

axe-core (run by tests/site) flags these as serious or critical on every page:

* myst-nb's "Show code cell source" toggles are ``<summary aria-label="Toggle hidden
  content">``: a screen reader announces a name that is not the visible text. Without the
  label the visible text is the name.
* the theme's search button is labelled "Search" but shows "Search Ctrl+K"; the same fix.
* sphinxcontrib-bibtex marks the bibliography ``role="list"`` without list items, so
  assistive technology is told to expect a list that is not there. It reads well as the
  plain block of citations it is.

One repair is a few lines of script, because the element is made in the browser:

* sphinx-togglebutton names every solution's button "Toggle hidden content". The script
  names each for its exercise instead ("Solution to Exercise 4.2"); ``aria-expanded``
  already says whether it is open.

This is a small Sphinx extension (``local_extensions`` in ``_config.yml``). It rewrites the
written pages at the end of the build; each repair is a no-op once applied. After an
upgrade of the theme or an extension, check whether the browser test still needs it.
"""

from pathlib import Path

REPAIRS = (
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
    (
        'class="btn search-button-field search-button__button" title="Search" aria-label="Search"',
        'class="btn search-button-field search-button__button" title="Search"',
    ),
    ('<div role="list" class="citation-list">', '<div class="citation-list">'),
)


def _repair(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = original = page.read_text(encoding="utf-8")
        for old, new in REPAIRS:
            text = text.replace(old, new)
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


def setup(app):
    app.connect("build-finished", _repair)
    app.add_js_file(None, body=NAME_TOGGLES_JS)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Three accessibility repairs to the HTML that the theme and extensions write.

axe-core (run by tests/site) flags these as serious or critical on every page:

* myst-nb's "Show code cell source" toggles are ``<summary aria-label="Toggle hidden
  content">``: a screen reader announces a name that is not the visible text. Without the
  label the visible text is the name.
* the theme's search button is labelled "Search" but shows "Search Ctrl+K"; the same fix.
* sphinxcontrib-bibtex marks the bibliography ``role="list"`` without list items, so
  assistive technology is told to expect a list that is not there. It reads well as the
  plain block of citations it is.

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


def setup(app):
    app.connect("build-finished", _repair)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

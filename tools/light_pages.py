"""Keep every page light for a first visit: drop two scripts that the site does not need.

* **ipywidgets state.** On the website every slider is the plain-HTML form of
  ``attention_lib.widgets.frame_slider`` (``_config.yml`` tells myst-nb never to render a
  widget view). The executed notebooks still carry the widgets' state, which myst-nb
  would embed in each page as ``<script type="application/vnd.jupyter.widget-state+json">``:
  every frame a second time, for a widget manager the site no longer loads.
* **FontAwesome's JavaScript** (1.5 MB, loaded in the ``<head>``, so it also held up the
  page). The theme loads FontAwesome twice: as CSS with web fonts, which draws the
  header's icons, and as a script that redraws the same icons as SVG. The CSS alone is
  enough. The theme writes that script tag (and preloads of all three icon fonts, which
  the browser otherwise downloads whether or not a page uses them) from its template,
  so they are taken out of the written pages at the end of the build.

A small Sphinx extension, loaded through ``local_extensions`` in ``_config.yml``. The
browser checks (tests/site) weigh a first visit and look at the icons, so a theme upgrade
that needs the script again shows up there.
"""

import re
from pathlib import Path

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _needed(js) -> bool:
    if js.attributes.get("type") == WIDGET_STATE:
        return False
    name = js.filename or ""
    return not ("fontawesome" in name and name.endswith("all.min.js"))


def _drop_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts if _needed(js)]


# The theme's template writes these into every page's <head>.
TEMPLATE_TAGS = re.compile(
    r'<script src="[^"]*fontawesome/[^"]*/js/all\.min\.js[^"]*"></script>\s*'
    r'|<link rel="preload" as="font" type="font/woff2" crossorigin '
    r'href="[^"]*fontawesome[^"]*" />\s*'
)


def _drop_template_tags(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = TEMPLATE_TAGS.sub("", text)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")


def setup(app):
    app.connect("html-page-context", _drop_scripts, priority=900)
    app.connect("build-finished", _drop_template_tags)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

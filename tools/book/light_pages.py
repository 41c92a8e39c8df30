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

It also gives every PNG figure its natural width as a CSS variable (``--natural-width``),
so that on a phone ``_static/wrap-output.css`` can keep a figure near its own size (its
numbers legible) and let it scroll sideways in its box instead of shrinking it.

A small Sphinx extension, loaded through ``local_extensions`` in ``_config.yml``. The
browser checks (tests/site) weigh a first visit and look at the icons, so a theme upgrade
that needs the script again shows up there.
"""

import base64
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


IMAGE = re.compile(r"<img\b[^>]*>")
SOURCE = re.compile(r'\bsrc="([^"]+)"')


def png_width(head: bytes) -> int | None:
    """The width in the header of a PNG (its first 24 bytes), or None if not a PNG."""
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big")


def _with_width(page: Path):
    def add(match: re.Match) -> str:
        tag = match.group(0)
        src = SOURCE.search(tag)
        if src is None or "--natural-width" in tag:
            return tag
        src = src.group(1)
        if src.startswith("data:image/png;base64,"):
            head = base64.b64decode(src[22:54])
        else:
            file = page.parent / src.split("?")[0]
            head = file.read_bytes()[:24] if file.is_file() else b""
        width = png_width(head)
        if width is None:
            return tag
        if ' style="' in tag:
            return tag.replace(' style="', f' style="--natural-width: {width}px; ', 1)
        return tag.replace("<img", f'<img style="--natural-width: {width}px"', 1)

    return add


def _drop_template_tags(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = IMAGE.sub(_with_width(page), TEMPLATE_TAGS.sub("", text))
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")


def setup(app):
    app.connect("html-page-context", _drop_scripts, priority=900)
    app.connect("build-finished", _drop_template_tags)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

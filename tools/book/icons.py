"""Icons that cost what they show: the site's FontAwesome cut down to the glyphs it draws.

The theme ships all of FontAwesome: a 103 KB stylesheet with 1,881 icon rules and two web
fonts (275 KB) that every first visit downloads, to draw about twenty icons. At the end of
the build this extension

1. finds the icons the site uses: the ``fa-*`` class names in its pages and scripts, and
   the glyphs the theme's own stylesheets name directly (admonition, breadcrumb, download
   and external-link marks, written as private-use characters);
2. writes those glyphs, and only those, into two small fonts with fontTools (a dependency
   of Matplotlib), from the TrueType files the theme ships beside its web fonts;
3. writes ``_static/icons/icons.css``: FontAwesome's own rules without the icon rules
   nobody uses, its ``@font-face`` rules pointing at the small fonts;
4. points every page's FontAwesome stylesheet link at that file.

The icons look as before (same font, same rules), and a page that starts to use a new
icon gets it at the next build. The browser checks (tests/site) weigh a first visit and
fail on an icon drawn as an empty box.
"""

from __future__ import annotations

import re
from pathlib import Path

# ".fa-magnifying-glass:before,.fa-search:before{content:"\f002"}"
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:(?:before|after),?)+)\{content:"\\([0-9a-f]+)"\}')
FONT_FACE = re.compile(r"@font-face\{[^}]*\}")
CLASS = re.compile(r"\bfa-[a-z0-9-]+")
# A glyph named in a stylesheet: a private-use character, or its escape such as "\f107".
PRIVATE_USE = re.compile(r'[\ue000-\uf8ff]|"\\([ef][0-9a-f]{3})"')
FONTS = {  # family and weight of an @font-face rule, the TrueType file it comes from
    ("Font Awesome\\ 6 Free", 900): "fa-solid-900.ttf",
    ("Font Awesome\\ 5 Free", 900): "fa-solid-900.ttf",  # sphinx-book-theme's one mark
    ("Font Awesome\\ 6 Brands", 400): "fa-brands-400.ttf",
}


def used_names(outdir: Path) -> set[str]:
    """Every ``fa-*`` name written in the built pages and the site's scripts."""
    names: set[str] = set()
    for pattern in ("**/*.html", "_static/**/*.js"):
        for file in outdir.glob(pattern):
            if "fontawesome" not in file.parts:
                names |= set(CLASS.findall(file.read_text(encoding="utf-8", errors="ignore")))
    return names


def theme_glyphs(outdir: Path) -> set[int]:
    """Glyphs that stylesheets other than FontAwesome's name as characters."""
    found: set[int] = set()
    for file in (outdir / "_static").rglob("*.css"):
        if "fontawesome" not in file.parts and file.parent.name != "icons":
            for match in PRIVATE_USE.finditer(file.read_text(encoding="utf-8")):
                found.add(int(match.group(1), 16) if match.group(1) else ord(match.group(0)))
    return found


def cut_css(css: str, names: set[str]) -> tuple[str, set[int]]:
    """FontAwesome's stylesheet keeping only the icon rules of ``names``, and their glyphs."""
    glyphs: set[int] = set()

    def keep(match: re.Match) -> str:
        selectors = match.group(1).split(",")
        wanted = [s for s in selectors if s.split(":")[0][1:] in names]
        if not wanted:
            return ""
        glyphs.add(int(match.group(2), 16))
        return ",".join(wanted) + '{content:"\\' + match.group(2) + '"}'

    return ICON_RULE.sub(keep, css), glyphs


def subset_font(source: Path, glyphs: set[int], target: Path) -> None:
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff"  # zlib; woff2 would need brotli, which the site does not install
    options.layout_features = []
    options.name_IDs = ["*"]  # keeps the font's copyright and licence lines
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(glyphs))
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


def font_faces(css: str, fonts: dict) -> str:
    """``@font-face`` rules for the fonts written, in place of FontAwesome's."""
    kept = []
    for rule in FONT_FACE.findall(css):
        family = re.search(r"font-family:([^;]+);", rule).group(1)
        weight = re.search(r"font-weight:(\d+)", rule)
        weight = int(weight.group(1)) if weight else 400
        if (family, weight) in fonts:
            source = f'src:url({fonts[family, weight]}) format("woff")'
            kept.append(re.sub(r"src:[^;}]+", source, rule))
    return "".join(kept)


def write_icons(outdir: Path) -> Path | None:
    """Write ``_static/icons/``; the FontAwesome folder it replaces, or None if there is none."""
    sheets = sorted((outdir / "_static" / "vendor").glob("fontawesome/*/css/all.min.css"))
    if not sheets:
        return None
    folder = sheets[-1].parents[1]
    original = sheets[-1].read_text(encoding="utf-8")
    css, glyphs = cut_css(original, used_names(outdir))
    glyphs |= theme_glyphs(outdir)
    target = outdir / "_static" / "icons"
    target.mkdir(exist_ok=True)
    for ttf in set(FONTS.values()):
        subset_font(folder / "webfonts" / ttf, glyphs, target / ttf.replace(".ttf", ".woff"))
    written = {key: ttf.replace(".ttf", ".woff") for key, ttf in FONTS.items()}
    css = font_faces(original, written) + FONT_FACE.sub("", css)
    (target / "icons.css").write_text(css, encoding="utf-8")
    return folder


def _point_pages_at_icons(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    folder = write_icons(outdir)
    if folder is None:
        return
    link = re.compile(
        r"_static/vendor/fontawesome/" + re.escape(folder.name) + r"/css/all\.min\.css[^\"']*"
    )
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        pointed = link.sub("_static/icons/icons.css", text)
        if pointed != text:
            page.write_text(pointed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _point_pages_at_icons)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The site's icons come from a cut of FontAwesome (tools/book/icons.py): every icon a page
shows, by class name or from a theme stylesheet, has its glyph in the small font, and the
icons cost a few kilobytes instead of 377 KB."""

from __future__ import annotations

import re

from fontTools.ttLib import TTFont

CLASSES = re.compile(r'class="([^"]*\bfa[bs]?\b[^"]*|[^"]*\bfa-(?:solid|brands)\b[^"]*)"')
STYLE = {"fa-solid": "solid", "fas": "solid", "fa-brands": "brands", "fab": "brands"}


def _cmap(path) -> set[int]:
    return set(TTFont(str(path)).getBestCmap())


def test_every_icon_a_page_shows_has_its_glyph(site_dir, site_pages):
    icons = site_dir / "_static" / "icons"
    css = (icons / "icons.css").read_text(encoding="utf-8")
    fonts = {
        "solid": _cmap(icons / "fa-solid-900.woff"),
        "brands": _cmap(icons / "fa-brands-400.woff"),
    }
    # The theme still copies all of FontAwesome into the site; no page links it.
    whole = next((site_dir / "_static" / "vendor").glob("fontawesome/*/css/all.min.css"))
    names = set(re.findall(r"\.(fa-[a-z0-9-]+):before", whole.read_text(encoding="utf-8")))
    shown, missing = set(), []
    for path in site_pages:
        html = (site_dir / path).read_text(encoding="utf-8")
        assert "all.min.css" not in html, f"{path} links all of FontAwesome"
        assert "_static/icons/icons.css" in html, f"{path} does not link the icons"
        for classes in CLASSES.findall(html):
            tokens = classes.split()
            style = next((STYLE[t] for t in tokens if t in STYLE), None)
            shown |= {(style, t) for t in tokens if t in names and style}
    assert len(shown) >= 10, f"only {sorted(shown)} found: the pattern no longer matches"
    for style, name in sorted(shown):
        rule = re.search(rf'\.{name}:before(?:,[^{{]*)?\{{content:"\\([0-9a-f]+)"', css)
        if rule is None:
            missing.append(f"{name}: no rule in icons.css")
        elif int(rule.group(1), 16) not in fonts[style]:
            missing.append(f"{name}: glyph {rule.group(1)} not in the {style} font")
    print(f"{len(shown)} icons checked: {', '.join(sorted(n for _, n in shown))}")
    # Marks that the theme's stylesheets draw themselves (admonitions, breadcrumbs, links).
    for sheet in (site_dir / "_static" / "styles").glob("*.css"):
        for char in re.findall("[\ue000-\uf8ff]", sheet.read_text(encoding="utf-8")):
            if ord(char) not in fonts["solid"] | fonts["brands"]:
                missing.append(f"{sheet.name}: glyph {ord(char):x} not in either font")
    assert not missing, "\n".join(missing)


def test_the_icons_cost_a_few_kilobytes(site_dir):
    icons = site_dir / "_static" / "icons"
    size = sum(f.stat().st_size for f in icons.iterdir())
    assert size < 40_000, f"icons: {size / 1e3:.0f} KB"

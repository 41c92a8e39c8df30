"""Browser checks for every kind of reader: a phone, dark mode, the keyboard, a first visit
on a cold cache, paper, and someone arriving at the landing page.

The laptop reader's checks (what moves, what is cut off, tab stops, solution toggles,
printing) read the one pass at 1280 px in tests/site/test_site.py. Here, one pass on a
phone, which ends with each page turned dark, serves the phone's and dark mode's checks,
beside it on the other pytest-xdist worker. With SCREENSHOTS=1 (`make screenshots`), it
keeps screenshots at 375 px and in dark mode in ``_build/screenshots/`` with the others.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_site import AXE_RUN_JS, _listing

WIDTHS = (320, 375, 768)

# How far the page scrolls sideways; the elements that stick out past the right edge.
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll("main *")].filter((el) => {
    // The sidebars are drawers on a narrow screen: closed, they are off the page on purpose.
    if (el.closest(".bd-sidebar-primary, .bd-sidebar-secondary")) return false;
    const box = el.getBoundingClientRect();
    if (box.right <= width + 1 || box.width === 0) return false;
    // Inside a box that scrolls on its own, it is fine: the page does not move.
    for (let up = el.parentElement; up; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (/(auto|scroll|hidden)/.test(style.overflowX) && up.clientWidth <= width) return false;
    }
    return true;
  });
  return {
    scroll: document.documentElement.scrollWidth - width,
    wide: wide.slice(0, 3).map((el) => el.tagName.toLowerCase() + "." + el.className),
  };
}"""


@pytest.fixture(scope="session")
def chapter_pages(site_pages):
    pages = [path for path in site_pages if path.startswith("chapters/")]
    if not pages:
        pytest.fail("the built site has no chapter pages under chapters/")
    return pages


@pytest.mark.xdist_group("phone")
def test_dark_mode_is_followed_and_has_no_serious_accessibility_problem(
    phone_pass, open_page, chapter_pages
):
    failures = {}
    # A page loaded by a reader who prefers dark starts dark (the theme's code is the same
    # on every page); every page's switch to dark is in phone_pass.
    for path in ("intro.html", chapter_pages[0]):
        page, _ = open_page(path, dark=True)
        theme = page.evaluate("document.documentElement.dataset.theme")
        if theme != "dark":
            failures.setdefault(path, []).append(f"loaded preferring dark, it shows {theme!r}")
    for path, found in phone_pass.items():
        if found["dark_theme"] != "dark":
            failures.setdefault(path, []).append(
                f"a reader who turns to dark gets {found['dark_theme']!r}"
            )
        for v in found["dark_axe"]:
            if v["impact"] in ("serious", "critical"):
                failures.setdefault(path, []).append(
                    f"{v['impact']}: {v['id']} ({v['help']}) at {', '.join(v['nodes'])}"
                )
    assert not failures, "dark mode problems:\n" + _listing(failures)


def test_the_landing_page_starts_the_reader_on_chapter_1(open_page, site_pages):
    landing = "intro.html"
    assert landing in site_pages, f"no {landing} in the built site"
    for width, height in ((1280, 800), (375, 812)):
        page, _ = open_page(landing, width=width, height=height)
        start = page.get_by_role("link", name="Start with chapter 1")
        box = start.bounding_box()
        assert box and box["y"] + box["height"] <= height, (
            f"at {width} px the start button is below the fold (or missing)"
        )
        assert start.get_attribute("href").endswith("chapters/01_embeddings.html")
    page, _ = open_page(landing)
    following = page.locator("a.right-next").first.get_attribute("href")
    assert following.endswith("chapters/01_embeddings.html"), f"Next goes to {following}"
    # The plan's chapter names are the sidebar's, so a reader recognises where a link goes.
    plan = page.locator("main table a").all()
    sidebar = {
        link.get_attribute("href").split("#")[0]: link.inner_text().strip()
        for link in page.locator("nav.bd-docs-nav a").all()
    }
    assert plan, "the landing page has no chapter plan"
    mismatched = [
        f"{link.inner_text()!r} vs sidebar {sidebar.get(link.get_attribute('href'))!r}"
        for link in plan
        if link.inner_text().strip() not in sidebar.get(link.get_attribute("href"), "")
    ]
    assert not mismatched, "plan and sidebar disagree on titles: " + "; ".join(mismatched)


def test_search_shows_the_pages_words_and_works_from_a_file(browser, base_url, site_dir):
    """Results quote the chapter's text (not the header's buttons or TeX); a copy opened
    from disk (file://) searches without errors, showing titles only."""
    for root in (base_url, site_dir.as_uri() + "/"):
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))

        def on_console(message, errors=errors):
            # The browser asks a server for /favicon.ico by itself; the site has none.
            where = message.location.get("url", "")
            if message.type == "error" and not where.endswith("/favicon.ico"):
                errors.append(message.text)

        page.on("console", on_console)
        page.goto(root + "search.html?q=temperature")
        results = page.locator("#search-results li")
        results.first.wait_for(timeout=30_000)
        if root == base_url:  # summaries are fetched: wait for them
            page.locator("#search-results li p.context").first.wait_for(timeout=30_000)
            page.wait_for_timeout(1000)
        texts = results.all_inner_texts()
        page.close()
        where = "file://" if root.startswith("file:") else "http"
        assert not errors, f"search from {where} logged errors: {errors[:3]}"
        assert any("Softmax and temperature" in text for text in texts), texts[:5]
        for text in texts:
            for noise in (".pdf", ".ipynb", "Contents", "\\frac", "\\("):
                assert noise not in text, f"search result from {where} shows {noise!r}: {text!r}"
        if root == base_url:
            assert sum("temperature" in text.lower().split("\n", 1)[-1] for text in texts) >= 3


# Figures drawn on the page: the height of each one's smallest text in CSS px as drawn
# (attention_lib.plotting.figure_html writes it in the PNG's pixels as data-text-px; the
# page scales the PNG by its drawn width over its own width), and its alt text.
FIGURE_TEXT_JS = """() => [...document.querySelectorAll(
    "div.cell_output img, .frame-slider__frame img")]
  .filter((img) => img.naturalWidth > 0)
  .map((img) => [img.dataset.textPx === undefined ? null : parseFloat(img.dataset.textPx)
                   * img.getBoundingClientRect().width / img.naturalWidth,
                 (img.alt || "").slice(0, 50)])"""
# The smallest text a figure may show, in CSS px, by window width.
SMALLEST_TEXT = {375: 7.0, 1280: 9.0}

PHONE = (375, 812)
# Every box that is wider than the screen: code must wrap; a figure, a slider's picture, a
# printed table or an equation must be a tab stop and say that it scrolls
# (tools/book/a11y_fixes.py marks them).
SCROLL_BOXES_JS = """() => {
  const problems = [];
  document.querySelectorAll(".bd-article *").forEach((box) => {
    const style = getComputedStyle(box);
    if (!["auto", "scroll"].includes(style.overflowX) || box.offsetParent === null) return;
    if (box.scrollWidth <= box.clientWidth + 1) return;
    const what = box.tagName.toLowerCase() + "." + [...box.classList].join(".");
    const text = (box.querySelector("img")?.alt || box.textContent || "").trim().slice(0, 40);
    if (box.closest("div.highlight") && !box.matches("pre.aligned")) {
      problems.push(`code cut: ${text}`);
      return;
    }
    if (box.tabIndex < 0) problems.push(`${what} scrolls but is no tab stop: ${text}`);
    if (box.matches("mjx-container")) {
      if (style.borderRightStyle === "none") problems.push(`equation cut with no cue: ${text}`);
    } else if (box.closest("div.cell_output") || box.matches(".pst-scrollable-table-container")) {
      const cues = ["::before", "::after"].map((at) => getComputedStyle(box, at).content);
      if (cues.every((cue) => ["none", "normal", ""].includes(cue))) {
        problems.push(`${what} cut with no cue: ${text}`);
      }
    }
  });
  problems.push(...CUT_FORMULAS());
  return problems;
}"""
# An inline formula cannot scroll or wrap: it must end inside its paragraph (a table
# scrolls in its box, with its cue, and is checked above). Only what is on show counts.
CUT_FORMULAS = """() => {
  const problems = [];
  const edge = document.documentElement.clientWidth;
  document.querySelectorAll(".bd-article mjx-container:not([display='true'])").forEach((m) => {
    if (m.closest(".pst-scrollable-table-container, div.cell_output")) return;
    let box = m.parentElement;
    while (box && getComputedStyle(box).display.startsWith("inline")) box = box.parentElement;
    const r = m.getBoundingClientRect();
    const right = Math.min(box.getBoundingClientRect().right, edge);
    if (r.width > 0 && r.right > right + 1) {
      problems.push(`formula cut: ${m.textContent.slice(0, 40)}`);
    }
  });
  return problems;
}"""
SCROLL_BOXES_JS = SCROLL_BOXES_JS.replace("CUT_FORMULAS()", f"({CUT_FORMULAS})()")
# The same inside every fold (a solution, an aside): each opened, measured, closed again.
FOLDED_FORMULAS_JS = (
    """async () => {
  const closeAgain = [];
  document.querySelectorAll(".bd-article details:not([open])").forEach((fold) => {
    fold.open = true;
    closeAgain.push(() => { fold.open = false; });
  });
  document.querySelectorAll(".bd-article .toggle-button").forEach((button) => {
    if (button.getAttribute("aria-expanded") !== "false") return;
    button.click();
    closeAgain.push(() => button.click());
  });
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const problems = ("""
    + CUT_FORMULAS
    + """)();
  closeAgain.forEach((close) => close());
  return [closeAgain.length, problems];
}"""
)
TWO_FRAMES_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


@pytest.fixture(scope="session")
def phone_pass(open_page, site_pages, axe_source, shoot):
    """Every page loaded once on a 375 px phone: how far it scrolls sideways, then (on a
    chapter) a full-page screenshot (with SCREENSHOTS=1), how large its figures are drawn,
    and every slider measured and worked from the keyboard. The same page is then turned
    to 320 px (a small phone) and 768 px (a tablet), as a reader turns a device, and
    measured again. Last, at 1280 px, the reader's system turns to dark: the theme the page
    then shows, axe-core's violations and (on a chapter, with SCREENSHOTS=1) a screenshot,
    without loading the page a third time."""
    facts = {}
    for path in site_pages:
        found = facts[path] = {}
        page, _ = open_page(path, width=PHONE[0], height=PHONE[1])
        found[PHONE[0]] = page.evaluate(OVERFLOW_JS)
        found["boxes", PHONE[0]] = page.evaluate(SCROLL_BOXES_JS)
        page.add_script_tag(content=axe_source)
        found["axe", "light", PHONE[0]] = page.evaluate(AXE_RUN_JS)
        if path.startswith("chapters/"):
            shoot(page, f"{Path(path).stem}-375", full_page=True)
            found["figures", PHONE[0]] = page.evaluate(FIGURE_TEXT_JS)
            found["sliders"] = _work_sliders(page)
        for width in WIDTHS:
            if width != PHONE[0]:
                page.set_viewport_size({"width": width, "height": PHONE[1]})
                page.evaluate(TWO_FRAMES_JS)  # let the page's own resize handlers run
                found[width] = page.evaluate(OVERFLOW_JS)
                found["boxes", width] = page.evaluate(SCROLL_BOXES_JS)
        page.set_viewport_size({"width": 320, "height": PHONE[1]})
        page.evaluate(TWO_FRAMES_JS)
        found["folded formulas"] = page.evaluate(FOLDED_FORMULAS_JS)
        page.set_viewport_size({"width": 1280, "height": 900})
        if path.startswith("chapters/"):
            page.evaluate(TWO_FRAMES_JS)
            found["figures", 1280] = page.evaluate(FIGURE_TEXT_JS)
        page.emulate_media(color_scheme="dark")
        page.evaluate("window.scrollTo(0, 0)")
        page.evaluate(TWO_FRAMES_JS)  # the theme follows the change, then the page repaints
        page.wait_for_timeout(400)  # and redoes its tab stops 0.3 s after the resize
        found["dark_theme"] = page.evaluate("document.documentElement.dataset.theme")
        page.add_script_tag(content=axe_source)
        found["dark_axe"] = page.evaluate(AXE_RUN_JS)
        page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
        page.wait_for_timeout(400)  # the theme redoes its tab stops 0.3 s after a resize
        found["axe", "dark", PHONE[0]] = page.evaluate(AXE_RUN_JS)
        if path.startswith("chapters/"):
            shoot(page, f"{Path(path).stem}-dark")
    return facts


def _work_sliders(page) -> list[list[str]]:
    """For each slider on the page, what is wrong with it on a phone (nothing: [])."""
    results = []
    for box in page.locator(".frame-slider").all():
        problems = []
        box.scroll_into_view_if_needed()
        slider, readout = box.locator("input[type=range]"), box.locator("output")
        for part, what in ((slider, "slider"), (readout, "its value")):
            rect = part.bounding_box()
            if rect is None or rect["x"] < 0 or rect["x"] + rect["width"] > PHONE[0]:
                problems.append(f"{what} is cut off")
        rect = slider.bounding_box() or {"height": 0}
        if rect["height"] < 24:
            problems.append(f"touch target {rect['height']:.0f} px tall, under 24")
        labels = json.loads(box.get_attribute("data-labels"))
        slider.focus()
        seen = []
        for key in ("Home", "End", "Home", "ArrowRight"):
            page.keyboard.press(key)
            seen.append(readout.inner_text())
        if len(labels) > 1 and seen != [labels[0], labels[-1], labels[0], labels[1]]:
            problems.append(f"Home, End, Home, Right show {seen}, not the frames they name")
        results.append(problems)
    return results


@pytest.mark.xdist_group("phone")
def test_no_page_scrolls_sideways_on_a_phone_or_a_tablet(phone_pass):
    failures = {}
    for path, found in phone_pass.items():
        for width in WIDTHS:
            if found[width]["scroll"] > 1 or found[width]["wide"]:
                failures.setdefault(path, []).append(
                    f"{width} px: the page scrolls {found[width]['scroll']} px sideways; "
                    f"sticking out: {found[width]['wide']}"
                )
    assert not failures, "content wider than the screen:\n" + _listing(failures)


@pytest.mark.xdist_group("phone")
def test_sliders_fit_and_work_by_keyboard_on_a_phone(phone_pass):
    sliders = {path: found["sliders"] for path, found in phone_pass.items() if "sliders" in found}
    assert sum(map(len, sliders.values())), "no slider on any chapter page: this proves nothing"
    failures = {
        path: [f"slider {i + 1}: {problem}" for i, items in enumerate(found) for problem in items]
        for path, found in sliders.items()
    }
    failures = {path: items for path, items in failures.items() if items}
    assert not failures, "sliders on a 375 px phone:\n" + _listing(failures)


@pytest.mark.xdist_group("phone")
def test_no_figure_text_is_smaller_than_7_px_on_a_phone_or_9_px_on_a_laptop(phone_pass):
    """Every figure and every slider frame of every chapter, measured as drawn: on a
    375 px phone a figure keeps most of its size and scrolls in its box (the widest is
    drawn 520 px wide, not squeezed to the screen's 343), and at 1280 px it fits the
    column."""
    failures, measured = {}, 0
    for path, found in phone_pass.items():
        for width, smallest in SMALLEST_TEXT.items():
            for px, alt in found.get(("figures", width), []):
                measured += 1
                if px is None:
                    failures.setdefault(path, []).append(f"{alt!r}: no data-text-px to measure")
                elif px < smallest:
                    failures.setdefault(path, []).append(
                        f"{width} px: {alt!r} has text {px:.1f} px tall, under {smallest}"
                    )
    assert measured > 100, f"only {measured} figures measured: this proves little"
    assert not failures, "figure text too small:\n" + _listing(failures)


@pytest.mark.xdist_group("phone")
def test_nothing_is_cut_on_a_phone_without_a_cue_and_a_tab_stop(phone_pass):
    failures = {
        f"{path} at {width} px": found["boxes", width]
        for path, found in phone_pass.items()
        for width in (320, PHONE[0])
        if found["boxes", width]
    }
    assert not failures, "cut on a phone:\n" + _listing(failures)


@pytest.mark.xdist_group("phone")
def test_no_formula_in_a_fold_is_cut_on_a_small_phone(phone_pass):
    opened = sum(found["folded formulas"][0] for found in phone_pass.values())
    assert opened > 50, f"only {opened} folds opened: this proves little"
    failures = {
        p: f["folded formulas"][1] for p, f in phone_pass.items() if f["folded formulas"][1]
    }
    assert not failures, "formulas cut at 320 px, folds open:\n" + _listing(failures)


@pytest.mark.xdist_group("phone")
def test_no_serious_accessibility_problem_on_a_phone_light_or_dark(phone_pass):
    failures = {}
    for path, found in phone_pass.items():
        for scheme in ("light", "dark"):
            for v in found["axe", scheme, PHONE[0]]:
                if v["impact"] in ("serious", "critical"):
                    failures.setdefault(f"{path} ({scheme}, {PHONE[0]} px)", []).append(
                        f"{v['impact']}: {v['id']} ({v['help']}) at {', '.join(v['nodes'])}"
                    )
    assert not failures, "axe-core on a phone:\n" + _listing(failures)


def test_solution_titles_open_the_solution_and_the_colour_button_says_its_scheme(
    open_page, chapter_pages, site_dir
):
    for path in chapter_pages:
        html = (site_dir / path).read_text(encoding="utf-8")
        assert html.count('<meta name="viewport"') == 1, f"{path}: one viewport tag"
        assert 'Solution to<a class="reference' not in html, f"{path}: a title links away"
    page, _ = open_page("chapters/05_softmax.html")
    title = page.locator(".solution .admonition-title").first
    # A click where the largest words of the title are (they let it through to the title).
    title.locator(".solution-of").click(force=True)
    assert "#" not in page.url, "a click on the solution's title left for the exercise"
    assert title.locator("button").get_attribute("aria-expanded") == "true"
    button = page.locator(".theme-switch-button").first
    names = set()
    for _ in range(3):  # auto -> dark -> light, or wherever the cycle starts
        names.add(button.get_attribute("aria-label"))
        button.click()
    assert len(names) == 3 and all(n.startswith("Colour scheme: ") for n in names), names


def test_the_search_icon_leaves_the_query_readable(open_page):
    page, _ = open_page("search.html?q=softmax")
    field = page.locator(".bd-search-container .bd-search input.form-control").first
    icon = page.locator(".bd-search-container .bd-search i").first
    text_starts = page.evaluate(
        "(f) => f.getBoundingClientRect().left + parseFloat(getComputedStyle(f).paddingLeft)",
        field.element_handle(),
    )
    icon_ends = icon.bounding_box()["x"] + icon.bounding_box()["width"]
    assert text_starts >= icon_ends, f"the query starts at {text_starts}, under the icon"


DRAWN_JS = """(img) => [img.getBoundingClientRect().width, img.naturalWidth,
  getComputedStyle(img.closest('.full-size, .fit-width, .scrolls-sideways') || img, '::after')
    .content]"""


def test_a_click_shows_a_shrunk_figure_at_full_size_and_a_tap_fits_a_wide_one(open_page):
    """At 1280 px chapter 11's widest figure is shrunk to the column: a click draws it at
    its own size in a box that scrolls and says so, and a second click fits it again. On a
    375 px phone a figure that scrolls is fitted to the screen by a tap, and back."""
    page, _ = open_page("chapters/11_real_model.html")
    page.wait_for_timeout(200)
    found = page.locator("div.cell_output img.can-enlarge")
    assert found.count(), "no figure is drawn smaller than its own size at 1280 px"
    img = found.first.element_handle()  # the class goes while the figure is at full size
    shrunk, natural, _ = page.evaluate(DRAWN_JS, img)
    assert shrunk < natural - 1
    img.click()
    full, _, cue = page.evaluate(DRAWN_JS, img)
    assert abs(full - natural) < 1 and "Full size" in cue, (full, natural, cue)
    assert img.evaluate("(i) => i.closest('.scrolls-sideways').tabIndex") == 0, "no tab stop"
    img.click()
    assert abs(page.evaluate(DRAWN_JS, img)[0] - shrunk) < 1
    page, _ = open_page("chapters/11_real_model.html", width=PHONE[0], height=PHONE[1])
    page.wait_for_timeout(200)
    box = page.locator("div.cell_output .scrolls-sideways, div.cell_output.scrolls-sideways")
    img = box.first.locator("img").first.element_handle()
    wide, _, cue = page.evaluate(DRAWN_JS, img)
    assert "tap the figure to fit it" in cue
    img.click()
    fitted, _, cue = page.evaluate(DRAWN_JS, img)
    assert fitted < wide and fitted <= PHONE[0] and "Fitted to the screen" in cue, (fitted, cue)
    img.click()
    assert abs(page.evaluate(DRAWN_JS, img)[0] - wide) < 1


def test_a_formula_keeps_its_comma_on_a_small_phone(open_page):
    """Chapter 11 writes "maps of 11 × 11, 8,712 weights": at 320 px the comma once began a
    line of its own. An inline formula and the punctuation after it share one line."""
    page, _ = open_page("chapters/11_real_model.html", width=320, height=PHONE[1])
    lines = page.evaluate(
        """() => [...document.querySelectorAll(".math-and-stop")].map((glued) => {
          const tops = new Set([...glued.getClientRects()].map((r) => Math.round(r.top)));
          return [tops.size, glued.textContent.trim().slice(-12)];
        })"""
    )
    assert len(lines) >= 5, f"only {len(lines)} formulas followed by punctuation found"
    split = [text for count, text in lines if count > 1]
    assert not split, f"formula and its punctuation on two lines: {split}"


ROWS_JS = """() => [...document.querySelectorAll("div.cell_output pre.aligned")].map((pre) => {
  const style = getComputedStyle(pre);
  return {style: style.whiteSpace, scrolls: pre.scrollWidth > pre.clientWidth + 1,
          stop: pre.tabIndex, cue: getComputedStyle(pre, "::after").content,
          text: pre.textContent.slice(0, 30)};
})"""


@pytest.mark.xdist_group("phone")
def test_a_printed_table_keeps_one_line_per_row_on_a_phone(open_page):
    """Output wraps on a phone, but a wrapped table row broke its columns (chapter 3's
    vectors, feature by feature, went onto two lines each). A table keeps its rows whole
    and, when wider than the screen, scrolls in its box with a cue and a tab stop."""
    page, _ = open_page("chapters/03_scores.html", width=PHONE[0], height=PHONE[1])
    page.wait_for_timeout(200)
    tables = page.evaluate(ROWS_JS)
    assert tables, "no printed table marked on chapter 3"
    assert all(table["style"] == "pre" for table in tables), tables
    wide = [table for table in tables if table["scrolls"]]
    assert wide, "no table on chapter 3 is wider than a phone: the check tests nothing"
    cut = [t for t in wide if t["stop"] != 0 or "scroll sideways" not in t["cue"]]
    assert not cut, f"a wide table without a tab stop or a cue: {cut}"

"""Browser checks on the built site: offline, error-free, accessible, interactive.

They need a built site (`make book`, or SITE_DIR=path) and Debian's chromium; see conftest.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bench import site_speed

# Every test here reads one pass over the site at 1280 px (site_logs): keep them on one
# worker, while the phone pass, which ends in dark mode (test_site_reader.py), runs on the other.
pytestmark = pytest.mark.xdist_group("site_logs")


def _listing(failures: dict[str, list[str]]) -> str:
    return "\n".join(f"{page}:\n  - " + "\n  - ".join(items) for page, items in failures.items())


# Headings on the page, in document order, within the article (the theme's own navigation is
# not ours).
HEADINGS_JS = """() => [...document.querySelectorAll(
  'main h1, main h2, main h3, main h4, main h5, main h6')]
  .filter((h) => !h.closest('nav, .bd-sidebar, .bd-toc'))
  .map((h) => [Number(h.tagName[1]), h.textContent.trim().slice(0, 60)])"""


AXE_RUN_JS = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 4),
  }));
}"""


# Cumulative layout shift since the page began to load (what moved without the reader
# asking); 0.1 is the usual threshold of a "good" page.
LAYOUT_SHIFT_JS = """() => new Promise((resolve) => {
  let total = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (!entry.hadRecentInput) total += entry.value;
  }).observe({type: "layout-shift", buffered: true});
  setTimeout(() => resolve(total), 300);
})"""

# Code lines and display equations that need a sideways scroll (their longest line each).
CLIPPED_JS = """() => [...document.querySelectorAll(
    "main div.cell_input pre, main div.highlight pre, mjx-container[display='true']")]
  .filter((el) => el.offsetParent !== null && !el.closest("details:not([open])"))
  .filter((el) => el.scrollWidth > el.clientWidth + 1)
  .map((el) => el.textContent.trim().split("\\n")
    .sort((a, b) => b.length - a.length)[0].slice(0, 60))"""

# Elements in the article that take keyboard focus although they are formulas.
MATH_TAB_STOPS_JS = """() => [...document.querySelectorAll(
  "mjx-container[tabindex], .math [tabindex]")]
  .filter((el) => el.tabIndex >= 0).length"""

# What a printed chapter shows: cut-off code, slider controls, frames, unfolded solutions.
PRINT_JS = """() => ({
  clipped: [...document.querySelectorAll("main pre")]
    .filter((pre) => pre.scrollWidth > pre.clientWidth + 1).length,
  sliders: [...document.querySelectorAll(".frame-slider input")]
    .filter((el) => getComputedStyle(el).display !== "none").length,
  frames: [...document.querySelectorAll(".frame-slider")].map((box) =>
    [...box.querySelectorAll(".frame-slider__frame")]
      .filter((f) => getComputedStyle(f).display !== "none").length),
  solutions: [...document.querySelectorAll(".solution section")]
    .filter((el) => el.offsetParent !== null).length,
})"""


@pytest.fixture(scope="session")
def site_logs(open_page, site_pages, axe_source, shoot):
    """Open every page once, at 1280 px, and keep what it did and what the checks found.

    One load serves every check of a laptop reader, in an order where none disturbs the
    next: what moved while loading, cut-off code, formulas as tab stops, solution toggles'
    names, the page as printed, headings and axe-core's violations. A chapter page is then
    photographed (full page, with SCREENSHOTS=1) and worked like a reader would: each
    slider's box measured on every frame, every slider moved from the keyboard, every
    solution unfolded.
    """
    logs = {}
    for path in site_pages:
        page, log = open_page(path)
        facts = log.facts
        facts["first_visit"] = site_speed.visit_summary(page, log.sizes)
        facts["layout_shift"] = page.evaluate(LAYOUT_SHIFT_JS)
        facts["clipped"] = page.evaluate(CLIPPED_JS)
        facts["tab_stops"] = page.evaluate(MATH_TAB_STOPS_JS)
        facts["toggle_names"] = [
            button.get_attribute("aria-label") or ""
            for button in page.locator(".solution .toggle-button").all()
        ]
        page.emulate_media(media="print")
        facts["print"] = page.evaluate(PRINT_JS)
        page.emulate_media(media="screen")
        facts["headings"] = page.evaluate(HEADINGS_JS)
        page.add_script_tag(content=axe_source)
        facts["axe"] = page.evaluate(AXE_RUN_JS)
        if path.startswith("chapters/"):
            shoot(page, Path(path).stem, full_page=True)
            facts["slider_heights"] = _slider_heights(page)
            facts["sliders"] = _check_sliders(page)
            facts["exercises"] = _check_solutions(page)
        logs[path] = log
    return logs


def _slider_heights(page) -> list[set[int]]:
    """For each slider, the heights of its box over all its frames (back at the first)."""
    heights = []
    for box in page.locator(".frame-slider").all():
        slider = box.locator("input[type=range]")
        start, seen = int(slider.input_value()), set()
        for value in [*range(int(slider.get_attribute("max")) + 1), start]:
            slider.evaluate(
                "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", value
            )
            seen.add(round(box.bounding_box()["height"]))
        heights.append(seen)
    return heights


def test_pages_load_offline_without_errors(site_logs):
    failures = {path: log.problems() for path, log in site_logs.items() if log.problems()}
    assert not failures, "pages that reach for the network or log errors:\n" + _listing(failures)


def test_every_image_has_alt_text(site_logs):
    failures = {
        path: [
            f"<img src={src!r}> has no alt text, or only its file name"
            for src in log.facts["imagesWithoutAlt"]
        ]
        for path, log in site_logs.items()
        if log.facts["imagesWithoutAlt"]
    }
    assert not failures, "images without alt text:\n" + _listing(failures)


def test_no_serious_or_critical_accessibility_violations(site_logs):
    counts = {}
    for log in site_logs.values():
        for violation in log.facts["axe"]:
            counts[violation["impact"]] = counts.get(violation["impact"], 0) + 1
    print(f"axe-core violations by impact over {len(site_logs)} pages: {counts or 'none'}")
    failures = {
        path: [
            f"{v['impact']}: {v['id']} ({v['help']}) at {', '.join(v['nodes'])}"
            for v in log.facts["axe"]
            if v["impact"] in ("serious", "critical")
        ]
        for path, log in site_logs.items()
    }
    failures = {path: items for path, items in failures.items() if items}
    assert not failures, "axe-core found serious or critical problems:\n" + _listing(failures)


def test_headings_are_in_order(site_logs):
    failures = {}
    for path, log in site_logs.items():
        levels = log.facts["headings"]
        problems = [] if levels and levels[0][0] == 1 else ["the page does not start with an h1"]
        problems += [
            f"h{level} {text!r} follows h{before}"
            for (before, _), (level, text) in zip(levels, levels[1:], strict=False)
            if level > before + 1
        ]
        if problems:
            failures[path] = problems
    assert not failures, "headings that skip a level:\n" + _listing(failures)


def test_math_is_typeset(site_logs):
    assert any(log.facts["math"] for log in site_logs.values()), (
        "no page has any math (.math elements), so this check would prove nothing"
    )
    failures = {
        path: [f"not typeset: {tex!r}" for tex in log.facts["unrenderedMath"]]
        + [f"TeX error: {text!r}" for text in log.facts["texErrors"]]
        for path, log in site_logs.items()
        if log.facts["unrenderedMath"] or log.facts["texErrors"]
    }
    assert not failures, "math that MathJax did not render:\n" + _listing(failures)


def _check_sliders(page) -> tuple[int, list[str]]:
    """Move every slider with the keyboard; each must switch its frame, with no kernel.

    The website's sliders are the plain-HTML form of ``frame_slider``: a range input, a
    read-only ``<output>`` and the frames, one of them visible.
    """
    from playwright.sync_api import expect

    problems = []
    sliders = page.locator(".frame-slider")
    for i in range(sliders.count()):
        box = sliders.nth(i)
        slider = box.locator("input[type=range]")
        readout = box.locator("output")
        frames = box.locator(".frame-slider__frame img:visible")
        try:
            expect(frames, "the slider should show exactly one frame").to_have_count(1)
            before_src = frames.first.get_attribute("src")
            before_alt = frames.first.get_attribute("alt")
            slider.focus()
            # From the last position ArrowRight has nowhere to go, so step back instead.
            last = slider.get_attribute("value") == slider.get_attribute("max")
            key = "ArrowLeft" if last else "ArrowRight"
            page.keyboard.press(key)
            expect(
                frames.first, f"{key} on the focused slider left the frame {before_alt!r} in place"
            ).not_to_have_attribute("src", before_src)
            expect(frames, f"after {key} exactly one frame should be visible").to_have_count(1)
            # Screen readers hear the slider's name and the value it shows, not an index.
            expect(slider).to_have_attribute("aria-valuetext", readout.inner_text())
            name = slider.get_attribute("aria-label") or ""
            assert len(name) >= 12, f"slider name {name!r} does not say what it changes"
            # The readout only shows the value: it is not a field anyone can type into.
            assert readout.evaluate("el => el.tagName") == "OUTPUT"
            assert not readout.evaluate("el => el.isContentEditable")
        except AssertionError as err:
            problems.append(f"slider {i + 1}: {str(err).splitlines()[0]}")
    return sliders.count(), problems


def _check_solutions(page) -> tuple[int, list[str]]:
    """Every chapter has exercises whose solutions are folded until their toggle is clicked."""
    from playwright.sync_api import expect

    problems = []
    exercises = page.locator("div.exercise").count()
    if exercises < 2:
        problems.append(f"only {exercises} exercises (div.exercise)")
    solutions = page.locator(".solution")
    if solutions.count() == 0:
        problems.append("no sphinx-exercise solutions (.solution)")
    for i in range(solutions.count()):
        solution = solutions.nth(i)
        title = solution.locator(".admonition-title, summary").first.inner_text().strip()
        body = solution.locator("section").first
        # sphinx-togglebutton turns the dropdown into a button; a <details> would use <summary>.
        toggle = solution.locator("button.toggle-button, summary").first
        try:
            expect(body, f"solution {title!r} is open on page load").to_be_hidden()
            toggle.click()
            expect(body, f"clicking the toggle of {title!r} does not show it").to_be_visible()
        except AssertionError as err:
            problems.append(str(err).splitlines()[0])
    return exercises, problems


@pytest.fixture(scope="session")
def chapter_checks(site_logs):
    """What working the sliders and solutions of each chapter page found."""
    results = {path: log.facts for path, log in site_logs.items() if "sliders" in log.facts}
    if not results:
        pytest.fail("the built site has no chapter pages under chapters/")
    return results


def test_every_slider_changes_frame_from_the_keyboard(chapter_checks):
    total = sum(result["sliders"][0] for result in chapter_checks.values())
    assert total, "no chapter has a slider, so this check would prove nothing"
    failures = {p: r["sliders"][1] for p, r in chapter_checks.items() if r["sliders"][1]}
    assert not failures, "sliders that do not work on the static page:\n" + _listing(failures)


def test_every_chapter_has_exercises_with_collapsed_solutions(chapter_checks):
    failures = {p: r["exercises"][1] for p, r in chapter_checks.items() if r["exercises"][1]}
    assert not failures, "exercise problems:\n" + _listing(failures)


# Bytes a chapter page may cost a reader with an empty cache. Formulas are typeset at
# build time (tools/book/static_math.py), so no page downloads MathJax. Time to a usable
# slider depends on the machine: `make bench` measures it (tools/bench/site_speed.py).
FIRST_VISIT_BUDGET = 1.5e6  # bytes: everything a first visit to a chapter downloads
PAGE_BUDGET = 1.5e6  # bytes: a chapter page, its images and its widget state


def page_weight(site_dir: Path, path: str) -> int:
    """The bytes a reader downloads for a page's own content: the HTML (with its inline
    images and embedded widget state) plus every local image file it shows. The theme's
    and the vendored scripts are shared by all pages and cached, so they do not count."""
    page = site_dir / path
    html = page.read_text(encoding="utf-8")
    total = len(html.encode())
    for src in set(re.findall(r'<img[^>]+src="([^"]+)"', html)):
        if not src.startswith(("data:", "http:", "https:")):
            total += (page.parent / src.split("#")[0]).stat().st_size
    return total


def test_every_chapter_page_stays_under_its_weight_budget(site_dir, site_pages):
    chapters = [path for path in site_pages if path.startswith("chapters/")]
    assert chapters, "no chapter pages to weigh"
    weights = {path: page_weight(site_dir, path) for path in chapters}
    heaviest = max(weights, key=weights.get)
    print(f"heaviest chapter page: {heaviest}, {weights[heaviest] / 1e6:.2f} MB")
    over = {
        p: [f"{w / 1e6:.2f} MB > {PAGE_BUDGET / 1e6} MB"]
        for p, w in weights.items()
        if w > PAGE_BUDGET
    }
    assert not over, "pages over budget:\n" + _listing(over)


RAW_DIRECTIVE = re.compile(r"(?:`{3,}|:{3,})\{[\w-]+\}")


def test_no_page_shows_a_directive_as_raw_text(site_dir, site_pages):
    # A directive the parser did not take (a backtick in a fence's title, a typo in its
    # name) is printed as text: "````{admonition} Why ..." where a fold should be.
    raw = {}
    for path in site_pages:
        html = (site_dir / path).read_text(errors="replace")
        body = re.sub(r"<(pre|script|code)\b.*?</\1>", "", html, flags=re.S)
        found = [m.group(0) for m in RAW_DIRECTIVE.finditer(body)]
        if found:
            raw[path] = found
    assert not raw, "directives shown as raw text:\n" + _listing(raw)


def test_a_first_visit_stays_light(site_logs):
    """Cold cache (every page of the pass loads in a new browser context), local server:
    every byte the page pulls in (and, printed, when its slider answered; a time is the
    benchmark's to judge, not a test's)."""
    rows = {
        path: log.facts["first_visit"]
        for path, log in site_logs.items()
        if path.startswith("chapters/")
    }
    heaviest = max(rows, key=lambda path: rows[path]["bytes"])
    with_sliders = [path for path in rows if rows[path]["sliders"]]
    assert with_sliders, "no chapter page has a slider, so the time check would prove nothing"
    slowest = max(with_sliders, key=lambda path: rows[path]["ready_ms"])
    print(
        f"first visit: heaviest {heaviest} {rows[heaviest]['bytes'] / 1e6:.2f} MB; "
        f"slowest slider {slowest} {rows[slowest]['ready_ms']} ms"
    )
    failures = {}
    for path, row in rows.items():
        if row["bytes"] > FIRST_VISIT_BUDGET:
            failures.setdefault(path, []).append(
                f"{row['bytes'] / 1e6:.2f} MB on a first visit (largest: {row['largest']})"
            )
    assert not failures, "first visits over budget:\n" + _listing(failures)


def test_nothing_is_cut_off_on_a_laptop(site_logs):
    """At 1280 px no code line and no display equation needs a sideways scroll."""
    failures = {
        path: [f"cut off at 1280 px: {text!r}" for text in log.facts["clipped"]]
        for path, log in site_logs.items()
        if path.startswith("chapters/") and log.facts["clipped"]
    }
    assert not failures, "code or equations that do not fit:\n" + _listing(failures)


def test_pages_hold_still_while_loading_and_sliding(site_logs):
    """No content jumps as a chapter loads, and a slider's box keeps its height on every
    frame, so the text below it stays where the reader left it."""
    failures = {}
    for path, log in site_logs.items():
        if not path.startswith("chapters/"):
            continue
        if log.facts["layout_shift"] > 0.1:
            failures.setdefault(path, []).append(
                f"layout shift {log.facts['layout_shift']:.3f} while loading"
            )
        for i, heights in enumerate(log.facts["slider_heights"]):
            if len(heights) > 1:
                failures.setdefault(path, []).append(
                    f"slider {i + 1}: its box is {min(heights)}-{max(heights)} px tall by frame"
                )
    assert any(log.facts.get("slider_heights") for log in site_logs.values()), (
        "no slider on any chapter page, so the height check would prove nothing"
    )
    assert not failures, "pages that move under the reader:\n" + _listing(failures)


def test_formulas_are_not_tab_stops(site_logs):
    stops = {
        path: [f"{log.facts['tab_stops']} formulas take keyboard focus"]
        for path, log in site_logs.items()
        if log.facts["tab_stops"]
    }
    assert not stops, "Tab stops on formulas:\n" + _listing(stops)


def test_solution_toggles_are_named_for_their_exercise(site_logs):
    names = {path: log.facts["toggle_names"] for path, log in site_logs.items()}
    assert any(names.values()), "no solution toggles found, so this check would prove nothing"
    failures = {
        path: [f"a solution toggle is named {name!r}" for name in found if "Exercise" not in name]
        for path, found in names.items()
    }
    failures = {path: items for path, items in failures.items() if items}
    assert not failures, "unnamed solution toggles:\n" + _listing(failures)


def test_a_printed_chapter_is_a_usable_handout(site_logs):
    failures = {}
    for path, log in site_logs.items():
        if not path.startswith("chapters/"):
            continue
        found, problems = log.facts["print"], []
        if found["clipped"]:
            problems.append(f"{found['clipped']} code blocks are cut off on paper")
        if found["sliders"]:
            problems.append("slider controls print")
        if any(count != 1 for count in found["frames"]):
            problems.append(f"frames printed per slider: {found['frames']} (want 1 each)")
        if found["solutions"]:
            problems.append(f"{found['solutions']} solutions print unfolded")
        if problems:
            failures[path] = problems
    assert not failures, "printing problems:\n" + _listing(failures)

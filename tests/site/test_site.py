"""Browser checks on the built site: offline, error-free, accessible, interactive.

They need a built site (`make book`, or SITE_DIR=path) and Debian's chromium; see conftest.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The chapter whose slider, exercises and solutions are checked in the browser.
WIDGET_PAGE = os.environ.get("WIDGET_PAGE", "chapters/05_softmax.html")


def _listing(failures: dict[str, list[str]]) -> str:
    return "\n".join(f"{page}:\n  - " + "\n  - ".join(items) for page, items in failures.items())


@pytest.fixture(scope="session")
def site_logs(open_page, site_pages):
    """Open every page once and keep what it did."""
    logs = {}
    for path in site_pages:
        page, log = open_page(path)
        page.context.close()
        logs[path] = log
    return logs


def test_pages_load_offline_without_errors(site_logs):
    failures = {path: log.problems() for path, log in site_logs.items() if log.problems()}
    assert not failures, "pages that reach for the network or log errors:\n" + _listing(failures)


def test_every_widget_renders(site_logs):
    failures = {
        path: [f"{log.facts['renderedWidgets']} of {log.facts['widgetViews']} widget views shown"]
        for path, log in site_logs.items()
        if log.facts["renderedWidgets"] < log.facts["widgetViews"]
    }
    assert not failures, "widgets missing from the static page:\n" + _listing(failures)


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


@pytest.fixture(scope="module")
def widget_page(open_page, site_dir: Path):
    """The widget chapter, rendered, with a full-page screenshot saved for humans."""
    if not (site_dir / WIDGET_PAGE).is_file():
        pytest.skip(f"{WIDGET_PAGE} is not in the built site (yet); WIDGET_PAGE picks another")
    page, _log = open_page(WIDGET_PAGE)
    screenshot = site_dir.parent / "screenshots" / f"{Path(WIDGET_PAGE).stem}.png"
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshot), full_page=True)
    yield page
    page.context.close()


def test_slider_changes_frame_from_the_keyboard(widget_page):
    from playwright.sync_api import expect

    slider = widget_page.locator(".jupyter-widgets [role=slider]").first
    expect(slider, f"no widget slider is rendered on {WIDGET_PAGE}").to_be_visible()
    output = widget_page.locator(".cell_output", has=widget_page.locator("[role=slider]")).first
    frames = output.locator("img:visible")
    expect(frames, "the slider's output should show exactly one frame image").to_have_count(1)
    before_src, before_alt = frames.first.get_attribute("src"), frames.first.get_attribute("alt")

    slider.focus()
    widget_page.keyboard.press("ArrowRight")

    expect(
        frames.first,
        f"ArrowRight on the focused slider handle left the frame {before_alt!r} in place",
    ).not_to_have_attribute("src", before_src)
    expect(frames, "after ArrowRight exactly one frame image should be visible").to_have_count(1)

    # Screen readers hear the slider's name and shown value, not its internal index.
    readout = output.locator(".widget-readout").first
    expect(slider).to_have_attribute("aria-valuetext", readout.inner_text())
    label = output.locator(".widget-label").first.inner_text()
    expect(slider, "the slider handle has no accessible name").to_have_attribute(
        "aria-label", label
    )


def test_exercises_have_collapsed_solutions(widget_page):
    from playwright.sync_api import expect

    exercises = widget_page.locator("div.exercise")
    assert exercises.count() >= 2, f"fewer than 2 exercises (div.exercise) on {WIDGET_PAGE}"
    solutions = widget_page.locator(".solution")
    assert solutions.count() > 0, f"no sphinx-exercise solutions (.solution) on {WIDGET_PAGE}"
    for i in range(solutions.count()):
        solution = solutions.nth(i)
        title = solution.locator(".admonition-title, summary").first.inner_text().strip()
        body = solution.locator("section").first
        expect(body, f"solution {title!r} is open on page load").to_be_hidden()
        # sphinx-togglebutton turns the dropdown into a button; a <details> would use <summary>.
        toggle = solution.locator("button.toggle-button, summary").first
        toggle.click()
        expect(body, f"clicking the toggle of solution {title!r} does not show it").to_be_visible()

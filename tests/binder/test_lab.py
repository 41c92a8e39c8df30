"""JupyterLab as a Binder or hub learner sees it: the learner edition, rendered.

A JupyterLab from the Binder environment (``requirements.txt`` brings jupyterlab-myst)
serves a copy of two chapters' learner editions in the form made for it
(``notebooks/lab/``, what the site's Binder button opens: folds as MyST dropdowns, since
jupyterlab-myst typesets no math inside an HTML ``<details>``); headless Chromium opens
each one. The test expects every markdown cell rendered with no raw MyST, every exercise
boxed and numbered as on the site, the math typeset, every solution folded (none of its
code visible until its fold is opened, and then its code), every fold's math typeset
once opened, and the notebook not marked as changed by opening it. With SCREENSHOTS=1
(`make screenshots`), screenshots of chapter 05's first exercise, folded and opened, are
kept in ``_build/screenshots/``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; never a browser Playwright downloads
SHOTS = ROOT / "_build" / "screenshots"
# Chapter 04 has an admonition and a free-text solution; 05 has code solutions (5.2's is
# opened and its code looked for).
CHAPTERS = ["04_scaling.ipynb", "05_softmax.ipynb"]
QUOTED = "shifted = (x - x.max(axis=axis, keepdims=True)) / temperature"  # solution 5.2
# The notebook on show (an earlier tab would stay in the page, hidden).
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden)"
RAW = ("```", ":label:", "{exercise}", "{solution", "{admonition}", "$$", ":::", "{dropdown}")
EDITION = ROOT / "notebooks" / "lab"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(binder_venv, tmp_path_factory):
    """A JupyterLab server of the Binder environment, on copies of the chapters."""
    if not CHROMIUM.exists():
        if os.environ.get("REQUIRE_BROWSER_CHECKS") == "1":
            pytest.fail(f"{CHROMIUM} not found; install it with `apt-get install -y chromium`")
        pytest.skip(f"{CHROMIUM} not found")
    folder = tmp_path_factory.mktemp("lab")
    # The kernel records its Python's exact version in the notebook when it starts, which a
    # committed file cannot know in advance (the edition leaves it out, as the chapters do):
    # the copies get this kernel's, so that any other change JupyterLab makes shows.
    python = binder_venv / "bin" / "python"
    version = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    for name in CHAPTERS:  # a copy: opening a notebook must never touch the course's own
        nb = json.loads((EDITION / name).read_text())
        nb["metadata"]["language_info"]["version"] = version
        (folder / name).write_text(json.dumps(nb, indent=1))
    settings = folder / ".settings"
    # Render every cell at once (JupyterLab 4 otherwise renders cells as they scroll in)
    # and skip the news pop-up.
    for plugin, values in {
        "notebook-extension/tracker": {"windowingMode": "none"},
        "apputils-extension/notification": {"fetchNews": "false"},
    }.items():
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port = free_port()
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTER_CONFIG_DIR": str(folder / ".config"),
        "PATH": f"{binder_venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    with (folder / "lab.log").open("w") as log:
        server = subprocess.Popen(
            [
                str(binder_venv / "bin" / "jupyter"),
                "lab",
                "--no-browser",
                "--allow-root",
                f"--port={port}",
                "--IdentityProvider.token=course",
                f"--ServerApp.root_dir={folder}",
                "--LabApp.extension_manager=readonly",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"JupyterLab did not start:\n{(folder / 'lab.log').read_text()}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}", folder
    finally:
        server.terminate()
        server.wait(30)


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()


def source_markdown(name: str) -> list[str]:
    nb = json.loads((EDITION / name).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("name", CHAPTERS)
def test_jupyterlab_renders_the_chapter_as_the_website_does(name, lab, browser):
    url, folder = lab
    before = (folder / name).read_bytes()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{url}/lab/tree/{name}?reset&token=course")  # no tabs from before
    page.wait_for_selector(f"{SHOWN} .jp-MarkdownCell .myst", state="attached", timeout=180_000)
    markdown = source_markdown(name)
    # Every markdown cell rendered by jupyterlab-myst (not JupyterLab's own renderer).
    page.wait_for_function(
        f"document.querySelectorAll('{SHOWN} .jp-MarkdownCell .myst').length >= {len(markdown)}",
        timeout=120_000,
    )
    cells = page.locator(f"{SHOWN} .jp-MarkdownCell .myst")
    texts = cells.all_inner_texts()
    for text in texts:
        for raw in RAW:
            assert raw not in text, f"raw MyST {raw!r} visible in JupyterLab:\n{text[:400]}"

    joined = "\n".join(markdown)
    number = int(name[:2])
    count = len(re.findall(rf"^> \*\*Exercise {number}\.\d+: ", joined, re.M))
    assert count >= 2
    boxes = page.locator(f"{SHOWN} .jp-MarkdownCell blockquote", has_text=f"Exercise {number}.")
    assert boxes.count() == count, "each exercise a box, numbered as on the site"
    for k in range(1, count + 1):
        assert (
            boxes.nth(k - 1).inner_text().replace("\xa0", " ").startswith(f"Exercise {number}.{k}:")
        )
    assert page.locator(f"{SHOWN} .jp-MarkdownCell .myst .katex").count() > 10, "math not typeset"

    # Every solution folded: a closed <details>, none of whose code is on screen.
    folds = page.locator(f"{SHOWN} .jp-MarkdownCell details", has_text="Solution to")
    assert folds.count() == joined.count("{dropdown} Solution to") >= count
    for k in range(folds.count()):
        fold = folds.nth(k)
        assert fold.get_attribute("open") is None, f"solution {k + 1} is open"
        code = fold.locator("pre, code")
        hidden = [not code.nth(j).is_visible() for j in range(code.count())]
        assert all(hidden), f"code of solution {k + 1} shows without a click"
    shown_code = page.locator(f"{SHOWN} .jp-MarkdownCell pre:visible").all_inner_texts()
    assert not any("def my_" in text for text in shown_code), "a solution's code is visible"
    # The notebook is not marked as changed by opening it (no "unsaved" dot on its tab).
    assert page.locator(".lm-TabBar-tab.jp-mod-dirty").count() == 0, "opened as changed"

    shots = os.environ.get("SCREENSHOTS") == "1"  # for people to look at (`make screenshots`)
    first = boxes.first
    if shots:
        SHOTS.mkdir(parents=True, exist_ok=True)
        first.evaluate("box => box.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(SHOTS / f"jupyterlab-{Path(name).stem}-exercise.png"))
    if name.startswith("05"):  # opened, a solution shows its code
        assert QUOTED in joined, "solution 5.2 changed: name a line of it in QUOTED"
        fold = folds.filter(has_text="Solution to Exercise 5.2").first
        fold.locator("summary").click()
        fold.locator("pre", has_text=QUOTED).wait_for(state="visible", timeout=10_000)
        if shots:
            fold.evaluate("fold => fold.scrollIntoView({block: 'start'})")
            page.screenshot(path=str(SHOTS / f"jupyterlab-{Path(name).stem}-solution-open.png"))
    # Opened, every fold shows its math typeset: no TeX left as text (an HTML fold's fate).
    # In page order, so that a fold inside another is visible when its turn comes.
    every = page.locator(f"{SHOWN} .jp-MarkdownCell details")
    for k in range(every.count()):
        fold = every.nth(k)
        if fold.get_attribute("open") is None:
            fold.locator("summary").first.click()
    typeset = 0
    for k in range(every.count()):
        body = every.nth(k).inner_text()
        assert not re.search(r"\$|\\(frac|sqrt|sum|text)\b|[_^]\{", body), f"raw TeX: {body[:300]}"
        typeset += every.nth(k).locator(".katex").count()
    assert typeset > 5, "no math typeset inside the folds"
    page.close()
    assert (folder / name).read_bytes() == before, "opening the chapter changed the file"

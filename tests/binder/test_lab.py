"""JupyterLab as a Binder learner sees it: the chapters' MyST rendered, not raw.

A JupyterLab from the Binder environment (``requirements.txt`` brings jupyterlab-myst)
serves a copy of two chapters; headless Chromium opens each one. In every markdown cell
the test expects the website's rendering: exercise boxes, solution dropdowns, admonitions
and typeset math, and none of the raw MyST a reader would otherwise see (```` ``` ````
fences, ``:label:`` lines, ``{exercise}``). With SCREENSHOTS=1 (`make screenshots`), a
screenshot of the first exercise box is kept in ``_build/screenshots/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; never a browser Playwright downloads
SHOTS = ROOT / "_build" / "screenshots"
# Chapter 04 has an admonition and a free-text solution; 05 has code solutions.
CHAPTERS = ["04_scaling.ipynb", "05_softmax.ipynb"]
# The notebook on show (an earlier tab would stay in the page, hidden).
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden)"
RAW = ("```", ":label:", "{exercise}", "{solution", "{admonition}", "$$")


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
    for name in CHAPTERS:  # a copy: opening a notebook must never touch the course's own
        shutil.copy(ROOT / "chapters" / name, folder / name)
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
    nb = json.loads((ROOT / "chapters" / name).read_text())
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
    labels = re.findall(r"```\{exercise\}.*\n:label: (\S+)", joined)
    for number, label in enumerate(labels, 1):  # each exercise a box, numbered as on the site
        box = page.locator(f"{SHOWN} .jp-MarkdownCell aside.myst-exercise#{label}")
        assert box.count() == 1, f"exercise {label} is not rendered as a box"
        assert f"Exercise {number}" in box.inner_text().replace("\xa0", " ")
    exercises = page.locator(f"{SHOWN} .jp-MarkdownCell aside#{labels[0]}")
    assert page.locator(f"{SHOWN} .jp-MarkdownCell .myst .katex").count() > 10, "math not typeset"
    # Every solution, free text or code, folded away as on the website.
    folded = page.locator(
        f"{SHOWN} .jp-MarkdownCell details.myst-exercise:not([open])", has_text="Solution"
    )
    assert folded.count() == joined.count("{solution}") + joined.count("{solution-start}")
    if "```{admonition}" in joined:
        assert page.locator(f"{SHOWN} .jp-MarkdownCell .myst-admonition").count() >= 1

    if os.environ.get("SCREENSHOTS") == "1":  # for people to look at (`make screenshots`)
        SHOTS.mkdir(parents=True, exist_ok=True)
        exercises.first.scroll_into_view_if_needed()
        exercises.first.screenshot(path=str(SHOTS / f"jupyterlab-{Path(name).stem}-exercise.png"))
    page.close()
    assert (folder / name).read_bytes() == before, "opening the chapter changed the file"

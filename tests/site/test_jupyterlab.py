"""A chapter opened in a real JupyterLab shows its exercises as boxes, not raw MyST.

Binder and a class's hub open the notebooks in JupyterLab, where a Markdown cell is
CommonMark unless jupyterlab-myst (requirements.txt) renders it: then ```` ```{exercise} ````
fences, ``:label:`` lines and ``$...$`` become an exercise box and typeset math, as on
the website. This starts JupyterLab on the chapters, opens chapter 5 in headless Chromium
and looks. A screenshot goes to ``_build/screenshots/jupyterlab-05_softmax.png``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS, REPO_ROOT, _not_available

CHAPTER = "05_softmax.ipynb"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not CHROMIUM.exists():
        _not_available(f"{CHROMIUM} not found; install it with `apt-get install -y chromium`")
    home = tmp_path_factory.mktemp("lab-home")
    # Render every cell at once (JupyterLab 4 otherwise renders only what is on screen),
    # and no news pop-up over the notebook.
    settings = home / "settings"
    for plugin, values in (
        ("notebook-extension/tracker", '{"windowingMode": "none"}'),
        ("apputils-extension/notification", '{"fetchNews": "false"}'),
    ):
        target = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(values)
    port = free_port()
    env = {
        **os.environ,
        "HOME": str(home),  # no user settings, workspaces or caches of the machine's
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            f"--ServerApp.root_dir={REPO_ROOT / 'chapters'}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--allow-root",  # CI runs as root in its container
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{url}/api", timeout=2)
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail("JupyterLab did not start within 90 s")
            time.sleep(0.5)
    yield url
    server.terminate()
    server.wait(timeout=20)


def test_jupyterlab_renders_the_exercises(lab, browser_for_lab, site_dir: Path):
    page = browser_for_lab.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{lab}/lab/tree/{CHAPTER}", wait_until="load")
    notebook = page.locator(".jp-Notebook").first
    notebook.wait_for(timeout=60_000)
    title = page.get_by_text("A softmax that cannot overflow").first
    title.wait_for(state="attached", timeout=60_000)
    page.wait_for_timeout(3000)  # let the markdown renderer and MathJax settle
    title.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(500)
    shots = site_dir.parent / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"jupyterlab-{Path(CHAPTER).stem}.png"))
    text = notebook.inner_text()
    assert "A softmax that cannot overflow" in text
    for raw in ("```{exercise}", ":label: ex-", "{solution-start}", "{solution-end}"):
        assert raw not in text, f"JupyterLab shows raw MyST: {raw!r}"
    box = title.locator("xpath=ancestor::*[contains(@class, 'exercise')][1]")
    assert box.count() == 1, "the exercise is not rendered as an exercise box"
    page.close()


@pytest.fixture(scope="module")
def browser_for_lab():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()

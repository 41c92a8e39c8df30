"""Fixtures for the browser checks: a local web server for the built site and headless Chromium.

The site is served from 127.0.0.1. Every request to any other host is aborted and recorded, so a
page that would need the network fails the checks instead of quietly fetching from a CDN.
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import tarfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tools"))
from bench import site_speed  # noqa: E402

SITE_DIR = REPO_ROOT / os.environ.get("SITE_DIR", "_build/html")  # an absolute SITE_DIR wins
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; never a browser that Playwright downloads
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
RENDER_TIMEOUT_MS = 20_000

# Formulas are typeset when the book is built (tools/book/static_math.py); should a page still
# load MathJax, this waits (at most timeoutMs) for it. What is untypeset shows in INSPECT_JS.
WAIT_FOR_RENDER_JS = """async (timeoutMs) => {
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const mathjax = window.MathJax;
  if (mathjax && mathjax.startup && mathjax.startup.promise) {
    await Promise.race([mathjax.startup.promise, sleep(timeoutMs)]);
  }
}"""

# What the checks need to know about the rendered page. Every frame of a slider is in the
# DOM (only one is visible), so every image is looked at.
INSPECT_JS = r"""() => {
  const all = (selector) => [...document.querySelectorAll(selector)];
  // Sphinx falls back to the file name as alt text (myst-nb outputs without mystnb.image.alt).
  const lacksAlt = (img) => {
    const alt = (img.getAttribute("alt") || "").trim();
    return !alt || alt === img.getAttribute("src") || /\.(png|jpe?g|gif|svg|webp)$/i.test(alt);
  };
  const noAlt = all("img").filter(lacksAlt).map((img) => img.getAttribute("src") || "");
  const short = (src) => src.startsWith("data:")
    ? `${src.split(/[;,]/)[0]}... (${src.length} characters)` : src.slice(0, 100);
  return {
    imagesWithoutAlt: [...new Set(noAlt)].map(short),
    math: all(".math").length,
    unrenderedMath: all(".math")
      .filter((el) => !el.querySelector("mjx-container"))
      .map((el) => el.textContent.trim().slice(0, 60)),
    texErrors: all("mjx-merror").map((el) => el.textContent.slice(0, 60)),
  };
}"""


def _not_available(reason: str) -> None:
    """Skip loudly, or fail where REQUIRE_BROWSER_CHECKS=1 (CI sets it: there they must run)."""
    if os.environ.get("REQUIRE_BROWSER_CHECKS") == "1":
        pytest.fail(
            f"BROWSER CHECKS CANNOT RUN (REQUIRE_BROWSER_CHECKS=1): {reason}", pytrace=False
        )
    pytest.skip(f"BROWSER CHECKS SKIPPED: {reason}")


@dataclass
class PageLog:
    """Everything a page did that the checks care about."""

    path: str
    blocked: list[str] = field(default_factory=list)  # requests to other hosts, aborted
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions
    broken: list[str] = field(default_factory=list)  # local requests that failed or gave >= 400
    facts: dict = field(default_factory=dict)  # the result of INSPECT_JS
    sizes: list = field(default_factory=list)  # (url, body bytes) of every response

    def problems(self) -> list[str]:
        return (
            [f"blocked external request: {url}" for url in self.blocked]
            + [f"console/page error: {text}" for text in self.errors]
            + [f"broken local request: {what}" for what in self.broken]
        )


# axe-core runs the accessibility checks inside each page. Pinned like the site's own assets
# (tools/book/vendor_assets.py): npm pack once into _build/.vendor-cache, checked against this hash.
# axe-core is MPL-2.0; it is only used by the tests and never copied into the site.
AXE = (
    "axe-core",
    "4.14.1",
    "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==",
)


@pytest.fixture(scope="session")
def axe_source() -> str:
    """The text of axe.min.js at the pinned version (fetched once with npm pack)."""
    from book import vendor_assets

    package = vendor_assets.Package(*AXE, files=(("package/axe.min.js", "."),), license="MPL-2.0")
    vendor_assets.fetch(package)
    with tarfile.open(package.tarball) as tar:
        return tar.extractfile("package/axe.min.js").read().decode()


@pytest.fixture(scope="session")
def site_dir() -> Path:
    if not (SITE_DIR / "index.html").is_file():
        _not_available(f"no built site at {SITE_DIR}; run `make book` first (or set SITE_DIR)")
    return SITE_DIR


# Screenshots are for people reviewing the pages; no check reads them. `make screenshots`
# (SCREENSHOTS=1) runs these checks and keeps them; `make test` does without their cost
# (about 2 s of the browser's CPU per chapter: full pages at 1280 and 375 px, and dark).
SCREENSHOTS = os.environ.get("SCREENSHOTS") == "1"


@pytest.fixture(scope="session")
def shoot(site_dir: Path):
    """shoot(page, name, full_page=...): a PNG in _build/screenshots/, if SCREENSHOTS=1."""
    folder = site_dir.parent / "screenshots"

    def take(page, name: str, **options) -> None:
        if SCREENSHOTS:
            folder.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(folder / f"{name}.png"), **options)

    return take


@pytest.fixture(scope="session")
def site_pages(site_dir: Path) -> list[str]:
    """Every HTML page of the book, relative to the site root: no _static, no vendor, and no
    redirect stub (Jupyter Book's index.html only forwards to the first page)."""
    pages = []
    for path in sorted(site_dir.rglob("*.html")):
        rel = path.relative_to(site_dir)
        in_assets = any(part.startswith("_") or part == "vendor" for part in rel.parts[:-1])
        redirect = path.read_text(errors="replace").lstrip().lower().startswith("<meta http-equiv")
        if not (in_assets or redirect):
            pages.append(rel.as_posix())
    return pages


@pytest.fixture(scope="session")
def base_url(site_dir: Path):
    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="session")
def browser(site_dir: Path):
    if not CHROMIUM.exists():
        _not_available(f"{CHROMIUM} not found; install it with `apt-get install -y chromium`")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _not_available("the Python package playwright is not installed (requirements-dev.txt)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def open_page(browser, base_url: str):
    """open_page("chapters/x.html") -> (page, PageLog), once the math has been typeset.

    ``width`` and ``height`` set the viewport (a phone is 375 x 812); ``dark`` asks for the
    reader's dark colour scheme, which the site follows.

    Each kind of reader (size and colour scheme) has one tab, which goes from page to page:
    a new browser context for every page made Chromium start a new renderer each time,
    which cost as much CPU as loading the page. Every request goes through the route below,
    and a routed tab has no HTTP cache, so each page still downloads everything, as on a
    first visit (``PageLog.sizes``). Leave the tab open: the next page reuses it.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tabs = {}

    def _tab(width: int, height: int, dark: bool):
        if (width, height, dark) in tabs:
            return tabs[width, height, dark]
        context = browser.new_context(
            viewport={"width": width, "height": height},
            color_scheme="dark" if dark else "light",
        )
        now = {}  # now["log"]: the PageLog of the page the tab shows

        def keep_local(route):
            url = route.request.url
            parts = urlsplit(url)
            if parts.scheme in {"data", "blob"} or parts.hostname in LOCAL_HOSTS:
                route.continue_()
            else:
                now["log"].blocked.append(url)
                route.abort()

        def on_console(message):
            if message.type == "error":
                where = message.location.get("url", "")
                now["log"].errors.append(f"{message.text} ({where})" if where else message.text)

        def on_response(response):
            if response.status >= 400:
                now["log"].broken.append(f"{response.status} {response.url}")

        def on_failed(request):
            if urlsplit(request.url).hostname in LOCAL_HOSTS:
                now["log"].broken.append(f"{request.failure} {request.url}")

        context.route("**/*", keep_local)
        page = context.new_page()
        page.on("console", on_console)
        page.on("pageerror", lambda error: now["log"].errors.append(f"uncaught {error}"))
        page.on("response", on_response)
        page.on("requestfailed", on_failed)
        tabs[width, height, dark] = page, now, site_speed.record_sizes(page)
        return tabs[width, height, dark]

    def _open(path: str, width: int = 1280, height: int = 900, dark: bool = False):
        page, now, sizes = _tab(width, height, dark)
        log = now["log"] = PageLog(path)
        page.set_viewport_size({"width": width, "height": height})  # a check may have turned it
        # or printed it, or turned it dark
        page.emulate_media(media="screen", color_scheme="dark" if dark else "light")
        first = len(sizes)
        page.goto(base_url + path, wait_until="load")
        page.evaluate(WAIT_FOR_RENDER_JS, RENDER_TIMEOUT_MS)
        # Catch late requests, e.g. fonts and extensions. On a loaded machine the network may
        # never go quiet for long enough; the page has loaded, so the checks go on.
        try:
            page.wait_for_load_state("networkidle", timeout=30_000)
        except PlaywrightTimeout:
            pass
        log.sizes = sizes[first:]
        log.facts = page.evaluate(INSPECT_JS)
        return page, log

    yield _open
    for page, _, _ in tabs.values():
        page.context.close()

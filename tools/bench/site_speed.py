"""What a reader's first visit to each chapter page costs: bytes, and time to a usable slider.

    python tools/bench/site_speed.py [--site _build/html]      # part of `make bench`

Serves the built site on 127.0.0.1 and opens every chapter page in headless Chromium
with an empty cache. For each page it records the bytes of every response (HTML, styles,
scripts, fonts, images) and the time from navigation to the end of DOMContentLoaded, when
the page's sliders have their inline script attached and answer the keyboard. Writes
``_build/bench/site.json`` and prints a table. A measurement, not a test; the browser
checks (tests/site) hold the same figures to their budgets with :func:`first_visit`.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

READY_JS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  return {ready: nav.domContentLoadedEventEnd,
          sliders: document.querySelectorAll(".frame-slider input").length};
}"""


def first_visit(browser, url: str) -> dict:
    """Open ``url`` with an empty cache: {"bytes", "ready_ms", "sliders", "largest"}."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sizes = record_sizes(page)
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle", timeout=90_000)
    row = visit_summary(page, sizes)
    context.close()
    return row


def record_sizes(page) -> list[tuple[str, int]]:
    """A list that fills with (url, body bytes) for every response the page receives."""
    sizes = []
    page.on(
        "requestfinished",
        lambda request: sizes.append((request.url, request.sizes()["responseBodySize"])),
    )
    return sizes


def visit_summary(page, sizes: list[tuple[str, int]]) -> dict:
    """What a loaded page cost (``sizes`` from :func:`record_sizes`) and when it was ready."""
    found = page.evaluate(READY_JS)
    largest = max(sizes, key=lambda item: item[1], default=("", 0))
    return {
        "bytes": sum(size for _, size in sizes),
        "ready_ms": round(found["ready"]),
        "sliders": found["sliders"],
        "largest": f"{largest[0].split('/')[-1].split('?')[0]} ({largest[1] / 1e6:.2f} MB)",
    }


@contextmanager
def serve(site: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "bench" / "site.json")
    args = parser.parse_args(argv)
    pages = sorted(p.relative_to(args.site).as_posix() for p in args.site.glob("chapters/*.html"))
    if not pages or not Path(CHROMIUM).exists():
        print(f"site_speed: needs a built site in {args.site} and {CHROMIUM}; skipped")
        return 0
    from playwright.sync_api import sync_playwright

    rows = {}
    with serve(args.site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for path in pages:
            rows[path] = first_visit(browser, base + path)
        browser.close()
    print(f"{'page':<36} {'first visit':>11} {'ready':>8} {'sliders':>7}  largest file")
    for path, row in rows.items():
        print(
            f"{path:<36} {row['bytes'] / 1e6:9.2f} MB {row['ready_ms']:6} ms "
            f"{row['sliders']:7}  {row['largest']}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

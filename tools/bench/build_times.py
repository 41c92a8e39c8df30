"""Section 5 of ``make bench`` (``--full`` only): the book build and the test suite, as
``make`` runs them from a clean build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# --- 5. Book and tests (--full) -------------------------------------------------------------

CLEAN = ["_build/html", "_build/jupyter_execute", "_build/.jupyter_cache", "_build/.doctrees"]


def clean_book() -> None:
    """What a fresh clone lacks: the site, the execution cache and Sphinx's pickles.

    ``_build/.vendor-cache`` (and the ``vendor_site`` made from it) stay, so nothing is
    fetched from the network; they only hold pinned front-end files.
    """
    for folder in CLEAN:
        shutil.rmtree(ROOT / folder, ignore_errors=True)


def timed_make(target: str, env: dict | None = None) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["make", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    seconds = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    result = {"target": target, "seconds": seconds, "ok": proc.returncode == 0}
    durations = re.findall(r"^\s*(\d+\.\d+)s (call|setup|teardown)\s+(\S+)", out, re.MULTILINE)
    if durations:
        result["slowest_tests"] = [[float(s), f"{kind} {name}"] for s, kind, name in durations[:8]]
    summary = [ln for ln in out.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    if summary:
        result["summary"] = summary[-1].strip("= ")
    if not result["ok"]:
        result["tail"] = out[-2000:]
    return result


def test_stages() -> list[str]:
    """The prerequisites of ``test:`` in the Makefile, e.g. ``["lint", "unit", ...]``."""
    rule = re.search(r"^test:(.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    return rule[1].split() if rule else ["test"]


def build_and_test() -> dict:
    """A clean `make book`, a no-change rebuild, then `make test` from a clean build (as CI)."""
    clean_book()
    book = {"clean": timed_make("book")}
    book["nochange"] = timed_make("book")
    clean_book()
    # `make test` is its prerequisites run in order; timing them one by one gives the profile.
    stages = [timed_make(t, {"PYTEST_ADDOPTS": "--durations=8"}) for t in test_stages()]
    return {
        "book": book,
        "test_stages": stages,
        "make_test_s": sum(s["seconds"] for s in stages),
        "make_test_ok": all(s["ok"] for s in stages),
    }

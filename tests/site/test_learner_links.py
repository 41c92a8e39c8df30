"""The built site and the learner edition point at each other, and both ends exist.

* Each chapter page's Colab, Binder and download buttons name ``notebooks/NN_topic.ipynb``
  (``tools/book/learner_links.py``), and the downloaded file is the committed learner edition.
* Every link from a learner edition into the website (glossary terms, references, other
  chapters' exercises) reaches a page of the built site and an element with its anchor.

Plain HTML reading; no browser.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from editions import setup_cell  # noqa: E402

SITE = ROOT / "_build" / "html"
EDITIONS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.skipif(
    not (SITE / "chapters").is_dir(), reason="no built site: run `make book` first"
)


@pytest.mark.parametrize("edition", EDITIONS, ids=lambda p: p.stem)
def test_the_chapter_buttons_open_the_learner_edition(edition):
    page = (SITE / "chapters" / f"{edition.stem}.html").read_text()
    links = re.findall(r'href="([^"]+)"', page)
    colab = [u for u in links if "colab.research" in u]
    binder = [u for u in links if "binder" in u]
    launch = colab + binder
    assert len(colab) == 1 and colab[0].endswith(f"/notebooks/{edition.name}")
    # Binder's JupyterLab has jupyterlab-myst: the form whose folds it typesets
    assert len(binder) == 1 and binder[0].endswith(f"/notebooks/lab/{edition.name}")
    assert (edition.parent / "lab" / edition.name).is_file()
    downloads = [u for u in links if u.endswith(".ipynb") and u not in launch]
    assert downloads == [f"../notebooks/{edition.name}"]
    assert (SITE / "notebooks" / edition.name).read_bytes() == edition.read_bytes()
    assert "_sources/chapters" not in page.split("<article")[0]  # no source download left


def test_every_link_into_the_site_resolves():
    site = setup_cell.site()
    ids: dict[Path, set[str]] = {}
    checked = 0
    for edition in EDITIONS:
        for path, anchor in re.findall(
            rf"{re.escape(site)}/([\w/.-]+\.html)(?:#([\w-]+))?", edition.read_text()
        ):
            target = SITE / path
            assert target.is_file(), f"{edition.name} links {path}, which the site lacks"
            if anchor:
                if target not in ids:
                    ids[target] = set(re.findall(r'\bid="([^"]+)"', target.read_text()))
                assert anchor in ids[target], f"{edition.name} links {path}#{anchor}: no such id"
            checked += 1
    assert checked > 50  # glossary terms, references and cross-chapter links were all read

"""A chapter printed as a reader prints it: Chromium's own print (``page.pdf``), read back.

Emulating print media is not enough: a real print fires ``beforeprint``, where
sphinx-togglebutton would open every folded solution (``togglebutton_open_on_print`` is
off in ``_config.yml``). The printed text must hold the exercises and their stubs, but no
solution's code, no "Show code cell source" control, and, under each slider's picture, one
line saying it is one frame of several.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import exercises  # noqa: E402

CHAPTERS = ["05_softmax", "12_decoder"]


def own_lines(stem: str) -> list[str]:
    """Lines of the chapter's solution code that no other code cell of it has."""
    ch = exercises.chapter(stem)
    others = {ln.strip() for _, text in ch.context for ln in text.splitlines()}
    others |= {ln.strip() for e in ch.exercises if e.stub for ln in e.stub.splitlines()}
    return [
        ln.strip()
        for e in ch.exercises
        for code in e.solutions
        for ln in code.splitlines()
        if len(ln.strip()) > 20 and ln.strip() not in others
    ]


@pytest.mark.xdist_group("print")
@pytest.mark.parametrize("stem", CHAPTERS)
def test_a_printed_chapter_is_a_worksheet(stem, open_page):
    page, _ = open_page(f"chapters/{stem}.html")
    page.emulate_media(media="null")  # the tab emulates a screen; a print uses print media
    pdf = PdfReader(io.BytesIO(page.pdf(format="A4", print_background=True)))
    text = "\n".join(p.extract_text() for p in pdf.pages)
    flat = " ".join(text.split())
    lines = own_lines(stem)
    assert lines, "no solution line to look for: this would prove nothing"
    printed = [ln for ln in lines if " ".join(ln.split()) in flat]
    assert not printed, f"solution code on paper: {printed[:3]}"
    assert "Show code cell source" not in flat
    number = int(stem[:2])
    assert f"Exercise {number}.1" in flat and "return None" in flat  # the worksheet itself
    nb = json.loads((ROOT / "chapters" / f"{stem}.ipynb").read_text())
    sliders = sum("frame_slider(" in "".join(c["source"]) for c in nb["cells"])
    assert flat.count("one of its") >= sliders > 0 or sliders == 0

"""Chapters 7 to 12: code a reader can unfold also fits the code box.

``tests/test_pages.py`` holds every chapter's visible code to 80 columns. A cell tagged
``hide-input`` is folded on the page but opens with one click, and the learner edition
shows it in full, so in these chapters it is held to the same width.
"""

from pathlib import Path

import nbformat
import pytest

CHAPTERS = sorted(Path(__file__).parents[1].glob("chapters/[01][0-9]_*.ipynb"))
MINE = [c for c in CHAPTERS if 7 <= int(c.name[:2]) <= 12]
WIDTH = 80


def wide_lines(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [
        f"{cell.get('id')}: {line[:40]}..."
        for cell in nb.cells
        if cell.cell_type == "code" and "remove-cell" not in cell.metadata.get("tags", [])
        for line in cell.source.splitlines()
        if len(line) > WIDTH
    ]


@pytest.mark.parametrize("chapter", MINE, ids=lambda p: p.stem)
def test_unfoldable_code_fits_80_columns(chapter):
    assert not wide_lines(chapter)


def test_the_width_check_can_fail(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1  # " + "y" * 80)
    cell.metadata["tags"] = ["hide-input"]
    nb.cells.append(cell)
    path = tmp_path / "07_x.ipynb"
    nbformat.write(nb, path)
    assert len(wide_lines(path)) == 1 and len(MINE) == 6

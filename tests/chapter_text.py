"""What a reader sees of a chapter's prose, for the page tests of each chapter.

``shown`` drops the cells tagged ``remove-cell`` (asserts); ``prose_lines`` keeps the
lines of the markdown cells left, without directive fences and options (``:::``,
```` ``` ````, ``:label:``), which is how the chapters' word caps count; ``markdown_text``
is that markdown as one string with single spaces; ``main_and_folded`` splits the shown
markdown cells into the main line and what sits in folds (solutions, dropdowns).
"""

from __future__ import annotations


def shown(cells) -> list:
    """The cells a reader sees: all but those tagged ``remove-cell``."""
    return [c for c in cells if "remove-cell" not in c.metadata.get("tags", [])]


def prose_lines(cells) -> list[str]:
    """The lines of prose a reader sees, without directive fences and options."""
    return [
        line
        for c in shown(cells)
        if c.cell_type == "markdown"
        for line in c.source.splitlines()
        if not line.startswith((":", "```"))
    ]


def markdown_text(cells) -> str:
    """The markdown a reader sees, as one string with single spaces."""
    return " ".join(" ".join(c.source for c in shown(cells) if c.cell_type == "markdown").split())


def main_and_folded(cells) -> tuple[list, list]:
    """The shown markdown cells on the main line, and those in a solution or a dropdown."""
    main, folded = [], []
    in_solution = False
    for c in shown(cells):
        if c.cell_type != "markdown":
            continue
        in_solution |= "solution-start" in c.source
        (folded if in_solution or ":class: dropdown" in c.source else main).append(c)
        in_solution &= "solution-end" not in c.source
    return main, folded

"""What a reader sees of a chapter's prose, for the page tests of each chapter.

``shown`` drops the cells tagged ``remove-cell`` (asserts); ``prose_lines`` keeps the
lines of the markdown cells left, without directive fences and options (``:::``,
```` ``` ````, ``:label:``), which is how the chapters' word caps count; ``markdown_text``
is that markdown as one string with single spaces.
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

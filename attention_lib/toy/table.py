"""A small labelled table of numbers, printed as aligned plain text.

Chapters compare a few columns of numbers per token (a row of weights before and after a
change, a head's queries and keys). ``toy.table`` lays them out with one line per row
label, so the page shows a table and not the string formatting that builds it.
"""

from __future__ import annotations

import numpy as np

from .sentence import FEATURES, TOKENS, VALUE_FEATURES, W_k, W_q, W_v


class Table:
    """Labelled rows of numbers; its text form (``repr``) is the aligned table."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    __str__ = __repr__


def table(columns: dict, rows=TOKENS, *, fmt: str = ".2f", corner: str = "") -> Table:
    """Lay out ``columns`` (name -> one number per row) as a table, one line per row.

    Parameters
    ----------
    columns : dict of str -> array_like of shape (len(rows),)
        The column headings and their numbers, in order.
    rows : sequence of str or int, default the sentence's tokens
        One label per row.
    fmt : str, default ".2f"
        Format of the numbers; integers are printed whole, thousands separated (1,152).
    corner : str
        Heading of the label column, e.g. ``"h"``.

    Returns
    -------
    Table
        Shown as aligned plain text when it is a cell's last line (or printed).
    """
    if not isinstance(columns, dict) or not columns:
        raise TypeError(f"columns must be a non-empty dict of name -> numbers, got {columns!r}")
    labels = [str(r) for r in rows]
    cells = {}
    for name, values in columns.items():
        values = np.asarray(values)
        if values.ndim != 1 or len(values) != len(labels):
            raise ValueError(
                f"column {name!r} must hold one number per row: {len(labels)} rows, "
                f"got shape {values.shape}"
            )
        if values.dtype.kind not in "iuf":
            raise TypeError(f"column {name!r} must hold numbers, got dtype {values.dtype}")
        form = "," if values.dtype.kind in "iu" else fmt
        cells[str(name)] = [format(v, form) for v in values.tolist()]
    left = max(len(corner), *(len(label) for label in labels))
    widths = {name: max(len(name), *map(len, column)) for name, column in cells.items()}
    numeric = all(label.isdigit() for label in labels)  # e.g. h = 1, 8, 32: right-aligned
    lines = [corner.ljust(left) + "".join(f"  {name:>{widths[name]}}" for name in cells)]
    for i, label in enumerate(labels):
        label = label.rjust(left) if numeric else label.ljust(left)
        line = label + "".join(f"  {col[i]:>{widths[n]}}" for n, col in cells.items())
        lines.append(line.rstrip())
    lines[0] = lines[0].rstrip()
    return Table(lines)


def weights() -> Table:
    """The toy's W_q and W_k side by side, W_v below them, as chapter 2 prints them.

    One line per feature of ``X`` (the rows); the columns are named in full after what each
    query dimension seeks, each key dimension advertises and each value dimension hands over.
    Two blocks, so that no line is wider than 80 characters on the website.
    """
    qk = {"W_q (query) seeks": (W_q, FEATURES), "W_k (key) advertises": (W_k, FEATURES)}
    # One word per column head: "third person" over one column would read as two, so the
    # head joins it with a hyphen (the same words as the prose, not an abbreviation).
    heads = tuple(f.replace("third ", "third-") for f in VALUE_FEATURES)
    v = {"W_v (value) hands over": (W_v, heads)}
    return Table(_block(qk) + [""] + _block(v))


def _block(mats: dict) -> list[str]:
    """Matrices side by side: a line of names, a line of column names, a line per feature."""
    left = max(map(len, FEATURES))
    groups, heads, cells = [], [], [[] for _ in FEATURES]
    for name, (W, cols) in mats.items():
        widths = [max(len(c), 4) for c in cols]
        widths[-1] += max(0, len(name) - sum(widths) - len(cols) + 1)  # fit a long group name
        groups.append(name.ljust(sum(widths) + len(cols) - 1))
        heads.append(" ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True)))
        for f in range(len(FEATURES)):
            row = (f"{v:.1f}".rjust(w) for v, w in zip(W[f], widths, strict=True))
            cells[f].append(" ".join(row))
    lines = [" " * left + "   " + "   ".join(groups).rstrip()]
    lines.append(" " * left + "   " + "   ".join(heads))
    for feature, row in zip(FEATURES, cells, strict=True):
        lines.append(feature.rjust(left) + "   " + "   ".join(row))
    return lines

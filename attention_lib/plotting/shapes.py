"""Shape diagrams: a matrix product drawn as boxes sized by their shapes.

``(a × b) @ (b × c) → (a × c)``: the two inner dimensions must be equal, and the product
keeps the outer ones. :func:`matmul_diagram` draws exactly that, marks the two inner
dimensions, and can print the numbers and highlight the row and column behind one
element of the product.
"""

from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..validate import as_float_array
from .base import CMAP

MAX_CELLS = 10  # a side longer than this is scaled down and drawn without a grid
MAX_VALUES = 8  # numbers are printed in the cells only if no side is longer than this
SCALE = 0.42  # inches per cell
SHAPE_SCALE = 0.3  # inches per cell with no numbers: smaller boxes, so the labels read on a phone
MIN_WIDTH = 4.0  # inches: the two-line verdict under the boxes always fits

_FILL = plt.get_cmap(CMAP)(0.55)[:3] + (0.25,)  # a light tint for ordinary cells
_HIGHLIGHT = plt.get_cmap(CMAP)(0.92)  # light yellow: the row, column and cell in use
_INNER = plt.get_cmap(CMAP)(0.05)  # dark blue: the inner dimensions


def matmul_diagram(
    left,
    right,
    *,
    names=("A", "B", "AB"),
    rows=None,
    cols=None,
    out_cols=None,
    roles=None,
    highlight=None,
    title: str | None = None,
    fmt: str | tuple = ".3g",
    right_rows=None,
    cell_inches: float | None = None,
    value_size: float = 10,
):
    r"""Draw the product ``left @ right`` as three boxes, each sized by its shape.

    Parameters
    ----------
    left : array_like of shape (a, b), or a shape given as a tuple of two ints
        The left factor. With numbers, they are printed in the cells (when every side
        has at most ``MAX_VALUES`` cells).
    right : array_like of shape (b, c), or a shape given as a tuple of two ints
        The right factor. If its number of rows differs from the number of columns of
        ``left``, the diagram shows the mismatch and no product.
    names : (str, str, str), default ("A", "B", "AB")
        Names of the left factor, the right factor and the product.
    rows : sequence of str of length a, optional
        A label for each row of ``left``, such as the tokens.
    cols : sequence of str of length b, optional
        A label for each column of ``left``, such as the features; drawn upright above it.
    out_cols : sequence of str of length c, optional
        A label for each column of ``right`` and of the product (they share them), such
        as the value features; drawn upright above both.
    roles : (str, str), optional
        What a row and a column of ``left`` stand for, such as ("query", "key"): written
        in the corner above the row labels, with arrows along each axis.
    highlight : (int, int), optional
        ``(i, j)``: mark row ``i`` of ``left``, column ``j`` of ``right`` and element
        ``(i, j)`` of the product, the dot product that makes that element.
    title : str, optional
        Shown above the diagram and used in the alt text.
    fmt : str or (str, str, str), default ".3g"
        Format of the numbers in the cells: one for all, or one each (left, right, product).
    right_rows : sequence of str of length b, optional
        A label for each row of ``right``, drawn left of it in a gap widened to fit.
    value_size : float, default 10
        Font size (points) of the numbers in the cells: smaller keeps "0.24" apart.
    cell_inches : float, optional
        The side of one cell in inches (default ``SCALE`` with numbers, ``SHAPE_SCALE``
        without): larger cells keep wide numbers such as "1.28" apart.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The shapes, whether the inner dimensions match, and for a highlighted element
        with numbers, its dot product term by term.

    Notes
    -----
    :math:`(AB)_{ij} = \sum_{k=0}^{b-1} A_{ik} B_{kj}`: element ``(i, j)`` pairs row ``i``
    of ``A`` with column ``j`` of ``B``, entry by entry; both must have ``b`` entries.
    """
    (a, b), A = _operand(left, "left")
    (b2, c), B = _operand(right, "right")
    _check_labels(names, rows, a)
    if cols is not None and (isinstance(cols, str) or len(cols) != b):
        raise ValueError(f"cols needs one label per column of left ({b}), got {cols!r}")
    if out_cols is not None and (isinstance(out_cols, str) or len(out_cols) != c):
        raise ValueError(f"out_cols needs one label per column of right ({c}), got {out_cols!r}")
    if roles is not None and (isinstance(roles, str) or len(roles) != 2):
        raise ValueError(f"roles must be two strings (a row, a column), got {roles!r}")
    if right_rows is not None and (isinstance(right_rows, str) or len(right_rows) != b2):
        raise ValueError(f"right_rows needs one label per row of right ({b2}), got {right_rows!r}")
    fmts = (fmt,) * 3 if isinstance(fmt, str) else tuple(fmt)
    if len(fmts) != 3 or not all(isinstance(f, str) for f in fmts):
        raise ValueError(f"fmt must be a string or three strings (left, right, product): {fmt!r}")
    fits = b == b2
    if highlight is not None:
        highlight = _check_highlight(highlight, a, c, fits)
    C = A @ B if fits and A is not None and B is not None else None  # (a, c)

    u = min(1.0, MAX_CELLS / max(a, b, b2, c))  # size of one cell
    show_values = max(a, b, b2, c) <= MAX_VALUES
    gap = 1.3
    margin = 1.6 if rows is not None else 0.4
    height = max(a, b2) * u
    inch = SCALE if show_values and A is not None else SHAPE_SCALE
    if cell_inches is not None:
        if not isinstance(cell_inches, numbers.Real) or not 0 < cell_inches <= 2:
            raise ValueError(f"cell_inches must be a number in (0, 2], got {cell_inches!r}")
        inch = float(cell_inches)
    room = 0.0 if right_rows is None else max(map(len, map(str, right_rows))) * 0.075 / inch + 0.3
    x_left, x_right = 0.0, b * u + gap + room
    x_prod = x_right + c * u + gap
    width = max(inch * (x_prod + c * u + margin + 0.4), MIN_WIDTH)  # room for the verdict
    upright = cols is not None or out_cols is not None
    top = 1.0 + (2.6 * SHAPE_SCALE / inch if upright else 0.0)  # room for upright labels
    fig, ax = plt.subplots(figsize=(width, inch * (height + 3.0 + top)))
    ax.set_xlim(-margin, x_prod + c * u + 0.4)
    ax.set_ylim(-height - 3.0, top)
    ax.set_aspect("equal")
    ax.axis("off")

    hi = highlight or (None, None)
    _box(ax, x_left, (a, b), u, A, fmts[0], show_values, value_size, rows=hi[0])
    _box(ax, x_right, (b2, c), u, B, fmts[1], show_values, value_size, cols=hi[1])
    middle = -a * u / 2  # the operators sit halfway down the rows of left and product
    # "@", NumPy's matrix product: a centred dot could be read as a dot product of matrices.
    ax.text(b * u + gap / 2, middle, "@", ha="center", va="center", fontsize=16)
    ax.text(x_prod - gap / 2, middle, "=" if fits else "?", ha="center", va="center", fontsize=16)
    if fits:
        _box(ax, x_prod, (a, c), u, C, fmts[2], show_values, value_size, cell=highlight)
    else:
        ax.add_patch(Rectangle((x_prod, -a * u), c * u, a * u, fill=False, ls="--", lw=1.2))
        ax.text(x_prod + c * u / 2, -a * u / 2, "?", ha="center", va="center", fontsize=14)

    # The inner dimensions: the columns of left and the rows of right, drawn as thick bars.
    style = {"color": _INNER, "lw": 4, "ls": "-" if fits else ":", "solid_capstyle": "butt"}
    ax.plot([x_left, x_left + b * u], [-a * u - 0.15] * 2, **style)
    ax.plot([x_right - 0.15] * 2, [0, -b2 * u], **style)

    for x, (r, k), name in ((x_left, (a, b), names[0]), (x_right, (b2, c), names[1])):
        y = top - 0.7 if x == x_left or out_cols is not None else 0.3  # above the labels
        ax.text(x + k * u / 2, y, name, ha="center", va="bottom", fontsize=11, weight="bold")
        ax.text(x + k * u / 2, -r * u - 0.35, f"[{r} × {k}]", ha="center", va="top", fontsize=10)
    y_prod, bold = top - 0.7 if out_cols is not None else 0.3, {"fontsize": 11, "weight": "bold"}
    ax.text(x_prod + c * u / 2, y_prod, names[2], ha="center", va="bottom", **bold)
    product_label = f"[{a} × {c}]" if fits else "no product"
    ax.text(x_prod + c * u / 2, -a * u - 0.35, product_label, ha="center", va="top", fontsize=10)
    if rows is not None:
        for i, label in enumerate(rows):
            ax.text(-0.15, -(i + 0.5) * u, label, ha="right", va="center", fontsize=9)
    for i, label in enumerate(right_rows or ()):  # left of the inner-dimension bar
        ax.text(x_right - 0.3, -(i + 0.5) * u, label, ha="right", va="center", fontsize=9)
    if roles is not None:  # the corner above the row labels: columns run right, rows down
        text = f"{roles[1]} →\n{roles[0]} ↓"
        ax.text(-0.15, 0.15, text, ha="right", va="bottom", fontsize=9, style="italic")
    # Column labels stand upright, except a one-letter one: a lone "I" turned on its side
    # reads as a dash.
    for j, label in enumerate(cols or ()):
        turn = 90 if len(str(label)) > 1 else 0
        ax.text((j + 0.5) * u, 0.15, label, ha="center", va="bottom", fontsize=9, rotation=turn)
    for j, label in enumerate(out_cols or ()):
        for x0 in (x_right, x_prod) if fits else (x_right,):
            turn = 90 if len(str(label)) > 1 else 0
            kw = {"ha": "center", "va": "bottom", "fontsize": 9, "rotation": turn}
            ax.text(x0 + (j + 0.5) * u, 0.15, label, **kw)

    verdict = (
        f"inner sizes (thick bars) match: {b} = {b2},\nso the product is [{a} × {c}]"
        if fits
        else f"inner sizes (dotted bars) differ: {b} ≠ {b2},\nso there is no product"
    )
    centre = (x_prod + c * u) / 2
    ax.text(centre, -height - 1.5, verdict, ha="center", va="top", color=_INNER, weight="bold")
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    alt = _alt(names, (a, b), (b2, c), A, B, highlight, fmts, title)
    if highlight is not None and rows is not None and out_cols is not None:  # names, not indices
        i, j = highlight
        nl, nr, npd = names
        alt = alt.replace(
            f"{npd}[{i}, {j}] is row {i} of {nl} dot column {j} of {nr}",
            f"{npd}['{rows[i]}', '{out_cols[j]}'] is row '{rows[i]}' of {nl} dot column "
            f"'{out_cols[j]}' of {nr}",
        )
    for what, labels in (("rows", rows), ("columns", cols)):
        if labels is not None:
            alt += f" The {what} of {names[0]}: {', '.join(map(str, labels))}."
    if right_rows is not None:
        alt += f" The rows of {names[1]}: {', '.join(map(str, right_rows))}."
    if roles is not None:
        alt += f" In {names[0]}, each row is a {roles[0]} and each column a {roles[1]}."
    if out_cols is not None:
        alt += f" The columns of {names[1]} and {names[2]}: {', '.join(map(str, out_cols))}."
    return fig, alt


def _operand(x, name: str):
    """Return ``(shape, values or None)`` for a matrix or a ``(rows, cols)`` tuple."""
    if isinstance(x, tuple) and len(x) == 2 and all(_is_int(v) for v in x):
        if min(x) < 1:
            raise ValueError(f"{name} shape must have positive sides, got {x}")
        return (int(x[0]), int(x[1])), None
    arr = as_float_array(x, name)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D matrix or a shape (rows, cols), but it has shape {arr.shape}"
            + (": write one row as [[...]], shape (1, n)" if arr.ndim == 1 else "")
        )
    return arr.shape, arr


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _check_labels(names, rows, a: int) -> None:
    if isinstance(names, str) or len(names) != 3:
        raise ValueError(f"names must be three strings (left, right, product), got {names!r}")
    if rows is not None and (isinstance(rows, str) or len(rows) != a):
        raise ValueError(f"rows needs one label per row of left ({a}), got {rows!r}")


def _check_highlight(highlight, a: int, c: int, fits: bool) -> tuple[int, int]:
    if not fits:
        raise ValueError("highlight needs a product, but the inner dimensions do not match")
    if len(highlight) != 2 or not all(_is_int(v) for v in highlight):
        raise TypeError(f"highlight must be (row, column), two whole numbers; got {highlight!r}")
    i, j = (int(v) for v in highlight)
    if not (0 <= i < a and 0 <= j < c):
        raise ValueError(f"highlight {(i, j)} is outside the product, which has shape {(a, c)}")
    return i, j


def _box(ax, x0, shape, u, values, fmt, show_values, size=10, rows=None, cols=None, cell=None):
    """One matrix: its cells (tinted, or highlighted), optional numbers, a bold outline."""
    r, k = shape
    grid = max(r, k) <= MAX_CELLS
    for i in range(r):
        for j in range(k):
            marked = i == rows or j == cols or (cell is not None and (i, j) == tuple(cell))
            if not grid and not marked:
                continue
            y = -(i + 1) * u
            colour = _HIGHLIGHT if marked else _FILL
            ax.add_patch(Rectangle((x0 + j * u, y), u, u, fc=colour, ec="0.55", lw=0.5))
            if show_values and values is not None:
                xy, text = (x0 + (j + 0.5) * u, y + u / 2), format(values[i, j], fmt)
                ax.text(*xy, text, ha="center", va="center", fontsize=size)
    if not grid:
        ax.add_patch(Rectangle((x0, -r * u), k * u, r * u, fc=_FILL, ec="none", zorder=0))
    ax.add_patch(Rectangle((x0, -r * u), k * u, r * u, fill=False, ec="black", lw=1.4))
    # The highlighted row, column or cell also gets a thick outline: no colour needed.
    if rows is not None:
        ax.add_patch(Rectangle((x0, -(rows + 1) * u), k * u, u, fill=False, lw=2.5))
    if cols is not None:
        ax.add_patch(Rectangle((x0 + cols * u, -r * u), u, r * u, fill=False, lw=2.5))
    if cell is not None:
        i, j = cell
        ax.add_patch(Rectangle((x0 + j * u, -(i + 1) * u), u, u, fill=False, lw=2.5))


def _alt(names, left_shape, right_shape, A, B, highlight, fmts, title) -> str:
    (a, b), (b2, c) = left_shape, right_shape
    nl, nr, npd = names
    head = f"Shape diagram{': ' + title if title else ''}. "
    if b != b2:
        return head + (
            f"{nl} [{a} × {b}] times {nr} [{b2} × {c}]: the inner dimensions differ "
            f"({b} columns against {b2} rows), so the product does not exist."
        )
    text = head + (
        f"{nl} [{a} × {b}] times {nr} [{b} × {c}] gives {npd} [{a} × {c}]: the inner "
        f"dimensions match ({b} columns of {nl}, {b} rows of {nr}), and the product keeps "
        f"the outer ones."
    )
    if highlight is not None:
        i, j = highlight
        text += f" Highlighted: {npd}[{i}, {j}] is row {i} of {nl} dot column {j} of {nr}"
        if A is not None and B is not None:
            fl, fr, fp = fmts
            terms = " + ".join(f"{x:{fl}} × {w:{fr}}" for x, w in zip(A[i], B[:, j], strict=True))
            text += f": {terms} = {A[i] @ B[:, j]:{fp}}"
        text += "."
    return text

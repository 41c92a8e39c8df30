"""Figures for multi-head attention: one heatmap per head (the shape tracer is in
``tracer.py`` and re-exported here).

:func:`head_heatmaps` draws the ``(h, n, n)`` weights that
:func:`attention_lib.multi_head_attention` returns, one labelled panel per head on a
shared colour scale.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from .base import CMAP, check_stack, text_colour
from .tracer import Step, shape_tracer, trace_shapes

__all__ = ["Step", "head_heatmaps", "keys_below_ticks", "shape_tracer", "trace_shapes"]

# --- One heatmap per head ------------------------------------------------------------------


def head_heatmaps(
    weights, tokens, names=None, *, title: str, fmt: str = ".2f", unit: str = "head", **layout
):
    """Draw each head's attention weights as a labelled heatmap, all on one colour scale.

    Parameters
    ----------
    weights : array_like of shape (h, n, n)
        One attention matrix per head, e.g. the second result of
        :func:`attention_lib.multi_head_attention`; rows are queries, columns keys.
    tokens : sequence of str, length n
    names : sequence of str, length h, optional
        Panel titles; default "head 1", "head 2", ...
    title : str
        Shown above the grid and used in the alt text.
    fmt : str, default ".2f"
        Format of the numbers printed in the cells.
    unit : str, default "head"
        What a panel is, for the alt text ("most decisive rows per head"), e.g. "panel".
    **layout
        ``ncols`` (panels per row) and ``cell`` (inches per cell, default 0.32): a slider
        whose frames have 1, 2 and 4 heads can give them all the same height.
        ``fontsize`` (default 8): tick and axis labels; the cells' numbers are 0.5 pt
        smaller, panel titles 1 pt and the title 2 pt larger. ``numbers`` (pt): the cells'
        numbers at this size instead, without their leading zero (".86"), so that a larger
        font fits a cell. ``width`` (inches): pad the figure on the right to at least this
        width, so that slider frames match. ``snug=True``: one row of panels also gets
        its key label right under the tick labels, with no empty band below (a grid of
        several rows always does).

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        For each head, its three most decisive rows, e.g. "'it' -> 'cake' (0.73)".

    Notes
    -----
    One 0-1 colour scale for every panel (and slider frame). Every panel labels its
    queries. Each row's largest weight is bold and outlined white inside black, which
    stands out on every colour of the scale, so colour is not needed. A uniform row is
    labelled once ("all 1/8"). Numbers are black or white by
    :func:`~attention_lib.plotting.base.text_colour`.
    """
    W, names = check_stack(weights, tokens, names)
    unknown = sorted(set(layout) - {"ncols", "cell", "fontsize", "width", "numbers", "snug"})
    if unknown:
        raise TypeError(
            f"unknown layout option(s) {unknown}: use ncols, cell, fontsize, width, numbers, snug"
        )
    if not isinstance(unit, str) or not unit.strip():
        raise ValueError(f"unit must be a word naming a panel, e.g. 'panel'; got {unit!r}")
    h, n, _ = W.shape
    ncols = layout.get("ncols") or (h if h <= 2 else (2 if h == 4 else 4))
    nrows = math.ceil(h / ncols)
    # A fixed layout in inches (no layout engine): fast enough to draw slider frames.
    panel = layout.get("cell", 0.32) * n
    size = layout.get("fontsize", 8)
    grow = size / 8  # margins for the tick labels grow with them
    wgap = 0.8 * grow  # room for the query labels of every panel
    left, right, top, bottom = 0.95 * grow, 1.0, 0.65, 0.95 * grow
    hgap = 1.3 * grow  # tick labels, the key label under each row, the next titles
    ticks = _tick_depth(tokens, size)  # the slanted key labels under a panel
    hug = nrows > 1 or bool(layout.get("snug"))
    if hug:  # the key label hugs the tick labels, so the bottom needs no more
        bottom = min(bottom, ticks + 0.04 + 1.4 * size / 72 + 0.1)
    natural = left + ncols * panel + (ncols - 1) * wgap + right
    width = max(natural, layout.get("width", 0))
    shift = (width - natural) / 2  # a padded frame centres its panels and colour bar
    height = top + nrows * panel + (nrows - 1) * hgap + bottom
    fig = plt.figure(figsize=(width, height))
    for i in range(h):
        row, col = divmod(i, ncols)
        x0 = shift + left + col * (panel + wgap)
        y0 = height - top - panel - row * (panel + hgap)
        ax = fig.add_axes((x0 / width, y0 / height, panel / width, panel / height))
        image = ax.imshow(W[i], cmap=CMAP, vmin=0.0, vmax=1.0)
        ax.set_xticks(range(n), tokens, rotation=60, ha="right", fontsize=size)
        ax.set_yticks(range(n), tokens, fontsize=size)
        ax.set_title(names[i], fontsize=size + 1)
        for r in range(n):
            _label_row(ax, W[i, r], r, fmt, layout.get("numbers", size - 0.5), "numbers" in layout)
    fig.suptitle(title, fontsize=size + 2, y=1 - 0.12 / height, va="top")
    grid = ncols * panel + (ncols - 1) * wgap  # the key label sits under the panels
    centre = 0.5 if "width" not in layout else (shift + left + grid / 2) / width
    for row in range(nrows):  # under each row of panels, not only the last
        y, va = 0.1 + (nrows - 1 - row) * (panel + hgap), "baseline"
        if hug:  # right under the row's tick labels, well above the next titles
            y, va = bottom + (nrows - 1 - row) * (panel + hgap) - ticks - 0.04, "top"
        fig.text(centre, y / height, "key (attended to)", ha="center", va=va, fontsize=size)
    x = (shift + 0.12) / width
    fig.text(x, 0.5, "query (attending)", va="center", rotation=90, fontsize=size)
    bar_h = min(3.0, height - top - bottom)
    bar_x = shift + left + grid + 0.25  # close to the panels, also in a padded frame
    cax = fig.add_axes((bar_x / width, (height - bar_h) / 2 / height, 0.15 / width, bar_h / height))
    fig.colorbar(image, cax=cax, label="weight")
    parts = []
    for i in range(h):
        best = np.argsort(-W[i].max(axis=1), kind="stable")[:3]
        rows = ", ".join(
            f"'{tokens[r]}' -> '{tokens[int(np.argmax(W[i, r]))]}' ({format(W[i, r].max(), fmt)})"
            for r in best
        )
        parts.append(f"{names[i]}: {rows}")
    alt = (
        f"{h} heatmap{'' if h == 1 else 's'}: {title}. Rows are queries, columns are keys, "
        "colour 0 to 1. "
        f"Most decisive rows per {unit}. " + "; ".join(parts) + "."
    )
    return fig, alt


def keys_below_ticks(fig, panels) -> None:
    """Move each row's "key (attended to)" of :func:`head_heatmaps` under its tick labels
    after they were enlarged (chapter 12); the figure grows at the bottom if need be."""
    dpi, r = fig.dpi, fig.canvas.get_renderer()
    rows = sorted({round(ax.get_position().y0, 6) for ax in panels}, reverse=True)
    feet = [  # inches from the bottom to the foot of each row's tick labels, top row first
        min(t.get_window_extent(r).y0 / dpi for ax in panels for t in ax.get_xticklabels()
            if round(ax.get_position().y0, 6) == y0) for y0 in rows
    ]  # fmt: skip
    keys = sorted((t for t in fig.texts if t.get_text() == "key (attended to)"),
                  key=lambda t: -t.get_position()[1])  # fmt: skip
    gap, size = 0.06, max(t.get_fontsize() for t in keys) / 72 * 1.3  # inches
    width, height = fig.get_size_inches()
    extra = max(0.0, gap + size + 0.05 - feet[-1])
    grown = height + extra
    for ax in fig.axes:  # the panels and the colour bar move up by ``extra``
        x0, y0, w, h = ax.get_position().bounds
        ax.set_position((x0, (y0 * height + extra) / grown, w, h * height / grown))
    for text in fig.texts:
        text.set_y((text.get_position()[1] * height + extra) / grown)
    fig.set_size_inches(width, grown)
    for text, foot in zip(keys, feet, strict=True):
        text.set(y=(foot + extra - gap) / grown, va="top")


def _tick_depth(tokens, size: float) -> float:
    """Inches from a panel's bottom edge to the foot of its key labels (slanted 60°)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font, slant = FontProperties(size=size), np.radians(60)
    boxes = [TextToPath().get_text_width_height_descent(t, font, ismath=False) for t in tokens]
    deepest = max(w * np.sin(slant) + (h_ + d) * np.cos(slant) for w, h_, d in boxes)
    return (deepest + 3.5 + 3.5) / 72  # the tick (3.5 pt) and its pad (3.5 pt)


def _label_row(ax, row, r: int, fmt: str, fontsize: float = 7.5, bare: bool = False) -> None:
    """Print a row's weights, its largest bold and outlined white inside black; a uniform
    row gets one label. ``bare`` drops the leading zero (".86"), to fit a larger font."""
    text = {"ha": "center", "va": "center", "fontsize": fontsize}
    if np.allclose(row, row[0]):
        label = f"all 1/{row.size}" if np.isclose(row[0], 1 / row.size) else f"all {row[0]:{fmt}}"
        ax.text((row.size - 1) / 2, r, label, color=text_colour(row[0]), **text)
        return
    top = int(np.argmax(row))
    for c, value in enumerate(row):
        weight = "bold" if c == top else "normal"
        label = format(value, fmt)
        label = label[1:] if bare and label.startswith("0.") else label
        ax.text(c, r, label, color=text_colour(value), weight=weight, **text)
    for colour, lw in (("black", 3.0), ("white", 1.4)):  # seen on any colour of the scale
        ax.add_patch(Rectangle((top - 0.5, r - 0.5), 1, 1, fill=False, lw=lw, ec=colour))

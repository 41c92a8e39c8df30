"""Figures for multi-head attention: one heatmap per head, and a tracer of array shapes.

:func:`head_heatmaps` draws the ``(h, n, n)`` weights that
:func:`attention_lib.multi_head_attention` returns, one labelled panel per head on a
shared colour scale. :func:`trace_shapes` pushes arrays of the requested size through
the library's own functions and records every shape; :func:`shape_tracer` draws that
record, so the figure cannot disagree with the code.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..core import attention_scores, scaled_dot_product_attention
from ..heads import merge_heads, split_heads
from ..validate import check_positive_int
from .base import CMAP, check_stack, text_colour

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
        width, so that slider frames match.

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
    unknown = sorted(set(layout) - {"ncols", "cell", "fontsize", "width", "numbers"})
    if unknown:
        raise TypeError(
            f"unknown layout option(s) {unknown}: use ncols, cell, fontsize, width, numbers"
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
    width = max(left + ncols * panel + (ncols - 1) * wgap + right, layout.get("width", 0))
    height = top + nrows * panel + (nrows - 1) * hgap + bottom
    fig = plt.figure(figsize=(width, height))
    for i in range(h):
        row, col = divmod(i, ncols)
        x0 = left + col * (panel + wgap)
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
    centre = 0.5 if "width" not in layout else (left + grid / 2) / width
    for row in range(nrows):  # under each row of panels, not only the last
        y = 0.1 + (nrows - 1 - row) * (panel + hgap)
        fig.text(centre, y / height, "key (attended to)", ha="center", fontsize=size)
    fig.text(0.12 / width, 0.5, "query (attending)", va="center", rotation=90, fontsize=size)
    bar_h = min(3.0, height - top - bottom)
    cax = fig.add_axes(
        ((width - 0.75) / width, (height - bar_h) / 2 / height, 0.15 / width, bar_h / height)
    )
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


# --- Following the shapes through multi-head attention -------------------------------------


class Step(NamedTuple):
    """One step of multi-head attention: what it computes and the shape it produces."""

    name: str  # short label, e.g. "split"
    code: str  # the step in the course's notation
    shape: tuple  # shape of the array it produces (for Q/K/V: each of them)
    macs: int  # multiply-adds of the matrix products in this step
    params: int  # learned numbers this step uses (entries of W_q, W_k, W_v, W_o)


def trace_shapes(n: int, d_model: int, h: int) -> list[Step]:
    """Run multi-head attention on zeros of the given size and record every shape.

    ``n`` tokens, model width ``d_model``, ``h`` heads (``h`` divides ``d_model``). The
    shapes come from real calls to :func:`split_heads`, :func:`attention_scores`,
    :func:`scaled_dot_product_attention` and :func:`merge_heads`, not from formulas.
    Returns the steps X, Q/K/V, split, scores, weights, heads, concat, output.
    """
    n, d_model, h = (
        check_positive_int(v, name) for v, name in ((n, "n"), (d_model, "d_model"), (h, "h"))
    )
    if d_model % h:
        raise ValueError(f"h = {h} heads must divide d_model = {d_model}")
    d_k = d_model // h
    X = np.zeros((n, d_model))  # (n, d_model)
    W = np.zeros((d_model, d_model))  # W_q, W_k, W_v and W_o all have this shape
    Q = X @ W  # (n, d_model); K and V alike
    Qh = split_heads(Q, h)  # (h, n, d_k); K and V alike
    scores = attention_scores(Qh, Qh) / np.sqrt(d_k)  # (h, n, n)
    heads, weights = scaled_dot_product_attention(Qh, Qh, Qh)  # (h, n, d_k), (h, n, n)
    concat = merge_heads(heads)  # (n, h * d_k)
    output = concat @ W  # (n, d_model)
    return [
        Step("X", "X", X.shape, 0, 0),
        Step("Q, K, V", "Q = X W_q (and K, V)", Q.shape, 3 * _macs(X, W), 3 * W.size),
        Step("split", "Q_i = split_heads(Q, h)", Qh.shape, 0, 0),
        Step(
            "scores",
            "scores_i = Q_i K_iᵀ / √d_k",
            scores.shape,
            _macs(Qh, np.swapaxes(Qh, -1, -2)),
            0,
        ),
        Step("weights", "weights_i = softmax(scores_i)", weights.shape, 0, 0),
        Step("heads", "head_i = weights_i V_i", heads.shape, _macs(weights, Qh), 0),
        Step("concat", "concat = merge_heads(heads)", concat.shape, 0, 0),
        Step("output", "output = concat W_o", output.shape, _macs(concat, W), W.size),
    ]


def _macs(a: np.ndarray, b: np.ndarray) -> int:
    """Multiply-adds of ``a @ b``: one per (batch, row of a, column of b, shared index)."""
    *batch, p, q = a.shape
    return int(np.prod(batch, dtype=int)) * p * q * b.shape[-1]


def shape_tracer(n: int, d_model: int, h: int):
    """Draw every array of multi-head attention to scale, one row per step.

    Returns ``(fig, alt)``. Each array is drawn as ``rows x columns`` cells; arrays with
    a head axis as ``h`` numbered blocks side by side; each head's columns are striped
    and numbered in Q and in the concatenation. The figure is narrow (5.6 in), its text
    on a line above each row, so that a phone can read it. The parameter count is left
    out on purpose: chapter 7 asks the reader to work it out.
    """
    steps = trace_shapes(n, d_model, h)
    d_k = d_model // h
    colours = plt.get_cmap("viridis")(np.linspace(0.3, 0.95, h))
    gap = max(1.0, 0.15 * max(n, d_k))
    widest = max(_row_width(s.shape, gap) for s in steps)
    text_h = 0.5 * n  # the line of text above each row of blocks, in cells
    row_h = text_h + n + gap
    left, right = 0.06 * widest, 0.3 * widest  # left: room for each row's n
    height = len(steps) * row_h
    fig, ax = plt.subplots(figsize=(5.6, 5.4 * height / (widest + right) + 0.7))
    for r, step in enumerate(steps):
        top = -r * row_h
        y = top - text_h  # top edge of the blocks
        ax.text(0, top, f"{r + 1}. {step.code}", va="top", fontsize=11)
        named = f"({_AXES[step.name]}) = {step.shape}"  # every axis named: (h, n, d_k) = ...
        ax.text(widest + right, top, named, va="top", ha="right", fontsize=10)
        ax.text(-0.25, y - n / 2, "n", va="center", ha="right", fontsize=10, style="italic")
        cost = f"{step.macs:,} multiply-adds".replace(" ", "\n")
        if step.name == "weights":  # no products, but element-wise work that grows with h
            cost = f"h n² = {h * n * n:,}\nelement-wise"
        ax.text(widest + 0.04 * widest, y - n / 2, cost, va="center", fontsize=10)
        numbered = h <= 16
        if len(step.shape) == 3:  # (h, rows, cols): one block per head
            rows, cols = step.shape[1:]
            for i in range(h):
                label = f"{i + 1}" if numbered else ""
                _block(ax, i * (cols + gap), y, cols, rows, colours[i], label)
        elif step.name in ("Q, K, V", "concat"):  # (n, d_model): one stripe per head
            for i in range(h):
                _block(ax, i * d_k, y, d_k, n, colours[i], f"{i + 1}" if numbered else "")
        else:  # X, and the output: W_o mixes the heads into every column
            _block(ax, 0, y, step.shape[1], n, "0.85", "")
    ax.set_xlim(-left, widest + right)
    ax.set_ylim(-height - 0.5, 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    macs = sum(s.macs for s in steps)
    bottom = -(len(steps) - 1) * row_h - text_h - n  # under the last row's blocks
    ax.text(widest + 0.04 * widest, bottom - 0.3 * n, f"total\n{macs:,}", va="top", fontsize=10)
    ax.set_title(
        f"Shapes through multi-head attention\nn = {n}, d_model = {d_model}, h = {h}, "
        f"d_k = {d_k}: {macs:,} multiply-adds",
        fontsize=11,
    )
    fig.tight_layout()
    chain = " -> ".join(f"{s.name} {s.shape}" for s in steps)
    alt = (
        f"Shape tracer for n = {n}, d_model = {d_model}, h = {h} (d_k = {d_k}): {chain}. "
        f"The concatenated heads are {steps[6].shape[-1]} wide ({h} heads x {d_k}). "
        f"{macs:,} multiply-adds in all; softmax works on h n^2 = {h * n * n:,} numbers."
    )
    return fig, alt


_AXES = {  # the name of each axis of each step's array: rows are always the n tokens
    "X": "n, d_model",
    "Q, K, V": "n, d_model",
    "split": "h, n, d_k",
    "scores": "h, n, n",
    "weights": "h, n, n",
    "heads": "h, n, d_k",
    "concat": "n, d_model",
    "output": "n, d_model",
}


def _row_width(shape: tuple, gap: float) -> float:
    if len(shape) == 3:
        h, _, cols = shape
        return h * cols + (h - 1) * gap
    return shape[1]


_BOX = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}
_LABEL = {"ha": "center", "va": "center", "fontsize": 8, "bbox": _BOX}


def _block(ax, x: float, y: float, width: float, height: float, colour, label: str) -> None:
    """One array (or one head's slice) as a rectangle whose top-left corner is (x, y)."""
    ax.add_patch(Rectangle((x, y - height), width, height, fc=colour, ec="black", lw=0.6))
    if label:
        ax.text(x + width / 2, y - height / 2, label, **_LABEL)

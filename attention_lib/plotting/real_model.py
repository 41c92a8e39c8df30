"""Figures for chapter 11: the attention maps of a real, pretrained model.

A real model has many maps (all-MiniLM-L6-v2: 6 layers x 12 heads), so these figures
are compact. :func:`attention_panels` draws a grid of small heatmaps without numbers in
the cells (chapter 7's :func:`~attention_lib.plotting.head_heatmaps` prints every weight,
which suits 4 heads but not 12); each row's largest weight is marked with a dot, so the
pattern does not rely on colour alone. :func:`head_grid` shows one number per head, and
:func:`token_attention` one token's attention in every head of every layer.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.textpath import TextPath

from ..validate import as_float_array
from .base import CMAP, annotate_cells, check_stack

_BAR_ZONE = 0.7  # inches at the bottom for the key caption and the colour bar
_LABEL_PT = 9  # token labels and tick numbers: 9 pt shows at 9 CSS px or more on a phone


def attention_panels(
    weights, tokens, names=None, *, title: str, ncols: int = 3, cell: float = 0.16, highlight=None
):
    """Small labelled heatmaps of several attention maps, on one 0-to-1 colour scale.

    Parameters
    ----------
    weights : array_like of shape (k, n, n)
        One attention matrix per panel, e.g. the 12 heads of one layer; rows are
        queries, columns keys.
    tokens : sequence of str, length n
    names : sequence of str, length k, optional
        Panel titles; default "head 1", "head 2", ...
    title : str
        Shown above the grid and used in the alt text.
    ncols : int, default 3
        Panels per row (three keep the labels readable at the page's width).
    cell : float, default 0.16
        Side of one heatmap cell in inches; the token labels grow with it (9 pt at
        0.16 in), so a figure of two or three panels can use larger type.
    highlight : (int, int), optional
        A (query, key) pair whose row and column are outlined in every panel.

    Returns
    -------
    fig : matplotlib.figure.Figure
        Query labels on the left column and key labels under every panel; a dot marks
        the largest weight of every row.
    alt : str
        For each panel, the key that gets the most weight on average over the queries.
    """
    W, names = check_stack(weights, tokens, names, letter="k", what="panel")
    k, n, _ = W.shape
    ncols = min(ncols, k)
    nrows = math.ceil(k / ncols)
    # All panels are tiles of one image on one axes: far quicker to draw than k axes,
    # so all the frames of a slider are ready in well under a second.
    pt = _LABEL_PT * cell / 0.16  # a rotated key label fills most of its column
    longest = _width(tokens, pt)
    # Panel pitch: a blank column between panels; below each, its key labels and the
    # next panel's title.
    dx, dy = n + 1, n + _gap(longest, cell)
    mosaic = np.full((nrows * dy - (dy - n), ncols * dx - 1), np.nan)  # NaN is drawn white
    marks = []  # (x, y) of the largest weight in every row of every panel
    for i in range(k):
        r, c = divmod(i, ncols)
        mosaic[r * dy : r * dy + n, c * dx : c * dx + n] = W[i]
        marks += [(c * dx + j, r * dy + q) for q, j in enumerate(W[i].argmax(axis=1))]
    margins = (0.35 + longest + 0.25 * cell, 0.15, 0.5 + cell, _bottom(longest, cell))
    fig, ax, image, box = _mosaic(mosaic, marks, cell=cell, margins=margins)
    # Plain text labels rather than ticks: each tick is several artists, and slow to draw.
    for r in range(nrows):
        for q, token in enumerate(tokens):
            ax.text(-0.75, r * dy + q, token, ha="right", va="center", fontsize=pt)
    for i in range(k):  # key labels under every panel, so no column has to be guessed
        r, c = divmod(i, ncols)
        for j, token in enumerate(tokens):
            y = r * dy + n - 0.2
            ax.text(c * dx + j, y, token, rotation=90, ha="center", va="top", fontsize=pt)
        ax.text(c * dx + (n - 1) / 2, r * dy - 0.8, names[i], ha="center", fontsize=10)
    if highlight is not None:  # vermillion: apart from every colour of cividis
        q, key = (int(i) for i in highlight)
        for i in range(k):
            x, y = divmod(i, ncols)[1] * dx - 0.5, i // ncols * dy - 0.5
            for (x0, y0), w, hgt in (((x, y + q), n, 1), ((x + key, y), 1, n)):
                inset = 0.08  # half the line width, in cells: the outline stays on the map
                edge = (x0 + inset, y0 + inset), w - 2 * inset, hgt - 2 * inset
                ax.add_patch(plt.Rectangle(*edge, fill=False, ec="#D55E00", lw=1.6))
    _frame(fig, image, box, title, "key (attended to)", "query (attending)")
    parts = [f"{names[i]}: {_habit(W[i], tokens)}" for i in range(k)]
    alt = (
        f"{k} attention heatmaps: {title}. Rows are queries, columns are keys, colour 0 "
        "to 1, a dot on each row's largest weight. Where the dots sit: " + "; ".join(parts) + "."
    )
    return fig, alt


def _habit(W: np.ndarray, tokens) -> str:
    """Where most rows of one (n, n) map put their largest weight, in words: on one key
    (e.g. "on '[CLS]' in 9 of 11 rows") or at one offset ("on the token before")."""
    n = len(tokens)
    top = W.argmax(axis=1)  # (n,): each row's favourite key
    keys, key_counts = np.unique(top, return_counts=True)
    offsets, offset_counts = np.unique(top - np.arange(n), return_counts=True)
    if key_counts.max() >= offset_counts.max():
        key = keys[key_counts.argmax()]
        return f"on '{tokens[key]}' in {key_counts.max()} of {n} rows"
    offset = offsets[offset_counts.argmax()]
    names = {-1: "the token before", 0: "the token itself", 1: "the token after"}
    where = names.get(offset, f"{abs(offset)} tokens {'before' if offset < 0 else 'after'}")
    # Only n - |offset| rows have a token that far away: the last row has no next token.
    return f"on {where} in {offset_counts.max()} of {n - abs(int(offset))} rows"


def token_attention(weights, tokens, query: int, *, ncols: int = 3):
    """The attention of one query token in every head of every layer.

    Parameters
    ----------
    weights : array_like of shape (L, h, n, n)
        As :meth:`attention_lib.pretrained.MiniLM.attention` returns them.
    tokens : sequence of str, length n
    query : int
        The position of the token whose attention is shown.
    ncols : int, default 3
        Layers per row of panels.

    Returns
    -------
    fig : matplotlib.figure.Figure
        One small panel per layer: rows are heads, columns are keys, colour 0 to 1, a
        dot on each head's largest weight.
    alt : str
        For each layer, the key that gets most of the token's attention, averaged over
        the heads.
    """
    W = as_float_array(weights, "weights")
    if W.ndim != 4 or W.shape[-1] != W.shape[-2] or W.shape[-1] != len(tokens):
        raise ValueError(
            f"weights must have shape (L, h, n, n) with n = {len(tokens)} tokens, got {W.shape}"
        )
    L, h, n, _ = W.shape
    if not isinstance(query, (int, np.integer)) or not 0 <= query < n:
        raise ValueError(f"query must be a token position from 0 to {n - 1}, got {query!r}")
    rows = W[:, :, query, :]  # (L, h, n): the one query's weights, head by head
    ncols = min(ncols, L)
    nrows = math.ceil(L / ncols)
    longest = _width(tokens, _LABEL_PT)
    dx, dy = n + 2, h + _gap(longest, 0.16)  # 2 blank columns hold the head numbers
    mosaic = np.full((nrows * dy - (dy - h), ncols * dx - 1), np.nan)
    marks = []
    for i in range(L):
        r, c = divmod(i, ncols)
        mosaic[r * dy : r * dy + h, c * dx : c * dx + n] = rows[i]
        marks += [(c * dx + j, r * dy + head) for head, j in enumerate(rows[i].argmax(axis=1))]
    margins = (0.35 + _width([str(h)], _LABEL_PT), 0.15, 0.66, _bottom(longest, 0.16))
    fig, ax, image, box = _mosaic(mosaic, marks, cell=0.16, margins=margins)
    for i in range(L):
        r, c = divmod(i, ncols)
        ax.text(c * dx + (n - 1) / 2, r * dy - 0.8, f"layer {i + 1}", ha="center", fontsize=10)
        for head in range(h):  # every head row numbered, so none has to be counted
            y = r * dy + head
            ax.text(c * dx - 0.75, y, str(head + 1), ha="right", va="center", fontsize=_LABEL_PT)
        for j, token in enumerate(tokens):  # key labels under every panel
            y = r * dy + h - 0.2
            ax.text(c * dx + j, y, token, rotation=90, ha="center", va="top", fontsize=_LABEL_PT)
    title = f"The attention of '{tokens[query]}' in every layer and head"
    _frame(fig, image, box, title, "key (attended to)", "head")
    favourite = rows.mean(axis=1)  # (L, n): the average over the heads
    parts = [
        f"layer {i + 1}: '{tokens[j]}' ({favourite[i, j]:.2f})"
        for i, j in enumerate(favourite.argmax(axis=1))
    ]
    alt = (
        f"{L} heatmaps, one per layer: {title}. Rows are the {h} heads, columns the keys, "
        "colour 0 to 1, a dot on each head's largest weight. The key it attends to most, "
        "averaged over the heads: " + "; ".join(parts) + "."
    )
    return fig, alt


def head_grid(values, *, title: str, fmt: str = ".2f"):
    """One weight per head of every layer, as a labelled grid with the largest outlined.

    Parameters
    ----------
    values : array_like of shape (L, h)
        Attention weights, e.g. how much "it" attends to "cake" in each head of each
        layer; coloured on the 0-to-1 scale of the other attention figures.
    title : str
    fmt : str, default ".2f"

    Returns
    -------
    fig : matplotlib.figure.Figure
        Layers as rows and heads as columns, both counted from 1.
    alt : str
        The largest value (the one outlined), the next two, and the median.
    """
    V = as_float_array(values, "values")
    if V.ndim != 2:
        raise ValueError(f"values must have shape (L, h), one number per head; got {V.shape}")
    L, h = V.shape
    fig, ax = plt.subplots(figsize=(1.4 + 0.55 * h, 1.0 + 0.42 * L))
    image = ax.imshow(V, cmap=CMAP, vmin=0.0, vmax=1.0, aspect="auto")  # as every weight map
    annotate_cells(ax, V, 0.0, 1.0, fmt, fontsize=10)
    best = np.unravel_index(int(np.argmax(V)), V.shape)
    ax.add_patch(
        plt.Rectangle((best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, lw=2, ec="#D55E00")
    )
    ax.set_xticks(range(h), [str(j + 1) for j in range(h)], fontsize=10)
    ax.set_yticks(range(L), [str(i + 1) for i in range(L)], fontsize=10)
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(title, fontsize=10)
    bar = fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
    bar.set_label("weight", fontsize=10)
    fig.tight_layout()
    order = np.argsort(-V, axis=None, kind="stable")[:3]
    first, *rest = (
        f"L{i + 1} H{j + 1} ({format(V[i, j], fmt)})"
        for i, j in (np.unravel_index(int(o), V.shape) for o in order)
    )
    alt = (
        f"Grid of {L} layers x {h} heads, colour 0 to 1: {title}. Largest (outlined): "
        f"{first}; next: {', '.join(rest)}; median {format(float(np.median(V)), fmt)}."
    )
    return fig, alt


def _mosaic(mosaic: np.ndarray, marks: list, cell: float, margins: tuple):
    """A figure sized so each cell of ``mosaic`` is ``cell`` inches square, with margins
    (left, right, top, bottom) in inches; NaN cells blank, each row's maximum marked.
    Returns the figure, its axes, the image and (left, bottom, plot_w, plot_h, width,
    height) in inches, to place titles and a colour bar."""
    left, right, top, bottom = margins
    plot_w, plot_h = cell * mosaic.shape[1], cell * mosaic.shape[0]
    width, height = left + plot_w + right, bottom + plot_h + top
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((left / width, bottom / height, plot_w / width, plot_h / height))
    image = ax.imshow(mosaic, cmap=plt.get_cmap(CMAP).with_extremes(bad="white"), vmin=0, vmax=1)
    # a dark ring keeps the white dot visible on the brightest (yellow) cells
    ax.scatter(*np.transpose(marks), s=9, c="white", edgecolors="black", linewidths=0.8)
    ax.set_axis_off()
    return fig, ax, image, (left, bottom, plot_w, plot_h, width, height)


def _width(labels, pt: float) -> float:
    """The width in inches of the longest of ``labels`` at ``pt`` points."""
    return max(TextPath((0, 0), str(t), size=pt).get_extents().width for t in labels) / 72


def _gap(longest: float, cell: float) -> int:
    """Blank rows of cells between two rows of panels: the key labels (``longest``
    inches, rotated) and the next panel's title."""
    return math.ceil(0.8 + (longest + 0.16) / cell)


def _bottom(longest: float, cell: float) -> float:
    """Inches under the last row of panels: its key labels, a caption, the colour bar."""
    return 0.3 * cell + longest + _BAR_ZONE


def _frame(fig, image, box, title: str, xlabel: str, ylabel: str) -> None:
    """Title above the panels; axis captions; a horizontal colour bar at the bottom, so
    it takes no width from the panels (width is what a phone shrinks)."""
    left, bottom, plot_w, plot_h, width, height = box
    middle = (left + plot_w / 2) / width
    fig.text(middle, 1 - 0.06 / height, title, ha="center", va="top", fontsize=11)
    fig.text(middle, (_BAR_ZONE - 0.04) / height, xlabel, ha="center", va="top", fontsize=10)
    fig.text(
        0.06 / width, (bottom + plot_h / 2) / height, ylabel, va="center", rotation=90, fontsize=10
    )
    bar_w = min(2.5, plot_w - 1)
    x0 = left + (plot_w - bar_w) / 2
    cax = fig.add_axes((x0 / width, 0.3 / height, bar_w / width, 0.1 / height))
    fig.colorbar(image, cax=cax, orientation="horizontal").ax.tick_params(labelsize=_LABEL_PT)
    fig.text((x0 - 0.2) / width, 0.35 / height, "weight", ha="right", va="center", fontsize=10)

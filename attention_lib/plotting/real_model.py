"""Figures for chapter 11: the attention maps of a real, pretrained model.

A real model has many maps (all-MiniLM-L6-v2: 6 layers x 12 heads), so these figures
are compact. :func:`attention_panels` draws a grid of small heatmaps without numbers in
the cells (chapter 7's :func:`~attention_lib.plotting.head_heatmaps` prints every weight,
which suits 4 heads but not 12); each row's largest weight is marked with a dot, so the
pattern does not rely on colour alone. :func:`head_grid` shows one number per head.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ..validate import as_float_array
from .base import CMAP, annotate_cells, check_stack


def attention_panels(weights, tokens, names=None, *, title: str, ncols: int = 4):
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
    ncols : int, default 4
        Panels per row.

    Returns
    -------
    fig : matplotlib.figure.Figure
        Token labels on the left column and the bottom row; a dot marks the largest
        weight of every row.
    alt : str
        For each panel, the key that gets the most weight on average over the queries.
    """
    W, names = check_stack(weights, tokens, names, letter="k", what="panel")
    k, n, _ = W.shape
    ncols = min(ncols, k)
    nrows = math.ceil(k / ncols)
    # All panels are tiles of one image on one axes: far quicker to draw than k axes,
    # so all the frames of a slider are ready in well under a second.
    dx, dy = n + 1, n + 2  # panel pitch: a blank column between panels, two rows for titles
    mosaic = np.full((nrows * dy - 2, ncols * dx - 1), np.nan)  # NaN is drawn white
    marks = []  # (x, y) of the largest weight in every row of every panel
    for i in range(k):
        r, c = divmod(i, ncols)
        mosaic[r * dy : r * dy + n, c * dx : c * dx + n] = W[i]
        marks += [(c * dx + j, r * dy + q) for q, j in enumerate(W[i].argmax(axis=1))]
    cell = 0.14  # inches
    left, right, top, bottom = 0.9, 1.0, 0.45, 0.75  # inches for labels, title, colour bar
    plot_w, plot_h = cell * mosaic.shape[1], cell * mosaic.shape[0]
    width, height = left + plot_w + right, bottom + plot_h + top
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((left / width, bottom / height, plot_w / width, plot_h / height))
    image = ax.imshow(mosaic, cmap=plt.get_cmap(CMAP).with_extremes(bad="white"), vmin=0, vmax=1)
    ax.scatter(*np.transpose(marks), s=6, c="white", edgecolors="black", linewidths=0.4)
    ax.set_axis_off()
    # Plain text labels rather than ticks: each tick is several artists, and slow to draw.
    label = {"fontsize": 6}
    for r in range(nrows):
        for q, token in enumerate(tokens):
            ax.text(-0.8, r * dy + q, token, ha="right", va="center", **label)
    for c in range(ncols):
        last = c + (nrows - 1) * ncols < k  # does this column have a panel in the last row?
        y = (nrows - 1 if last else nrows - 2) * dy + n - 0.2
        for j, token in enumerate(tokens):
            ax.text(c * dx + j, y, token, rotation=90, ha="center", va="top", **label)
    for i in range(k):
        r, c = divmod(i, ncols)
        ax.text(c * dx + (n - 1) / 2, r * dy - 0.8, names[i], ha="center", fontsize=8)
    fig.text(
        (left + plot_w / 2) / width, 1 - 0.08 / height, title, ha="center", va="top", fontsize=10
    )
    fig.text(
        (left + plot_w / 2) / width, 0.05 / height, "key (attended to)", ha="center", fontsize=8
    )
    fig.text(0.1 / width, 0.5, "query (attending)", va="center", rotation=90, fontsize=8)
    bar_h = min(2.5, plot_h)
    y_bar = bottom + (plot_h - bar_h) / 2
    cax = fig.add_axes(((width - 0.75) / width, y_bar / height, 0.12 / width, bar_h / height))
    fig.colorbar(image, cax=cax).ax.tick_params(labelsize=6)
    favourite = W.mean(axis=1)  # (k, n): average weight each key gets in each panel
    parts = [
        f"{names[i]}: '{tokens[j]}' ({favourite[i, j]:.2f})"
        for i, j in enumerate(favourite.argmax(axis=1))
    ]
    alt = (
        f"{k} attention heatmaps: {title}. Rows are queries, columns are keys, colour 0 "
        "to 1, a dot on each row's largest weight. The key each panel favours on average: "
        + "; ".join(parts)
        + "."
    )
    return fig, alt


def head_grid(values, *, title: str, fmt: str = ".2f"):
    """One number per head of every layer, as a labelled grid with the largest outlined.

    Parameters
    ----------
    values : array_like of shape (L, h)
        E.g. how much "it" attends to "cake" in each head of each layer.
    title : str
    fmt : str, default ".2f"

    Returns
    -------
    fig : matplotlib.figure.Figure
        Layers as rows and heads as columns, both counted from 1.
    alt : str
        The three largest values with their layer and head, and the median.
    """
    V = as_float_array(values, "values")
    if V.ndim != 2:
        raise ValueError(f"values must have shape (L, h), one number per head; got {V.shape}")
    L, h = V.shape
    fig, ax = plt.subplots(figsize=(1.4 + 0.55 * h, 1.0 + 0.42 * L))
    image = ax.imshow(V, cmap=CMAP, vmin=0.0, vmax=max(1e-9, float(V.max())), aspect="auto")
    annotate_cells(ax, V, 0.0, float(V.max()), fmt, fontsize=7)
    best = np.unravel_index(int(np.argmax(V)), V.shape)
    ax.add_patch(plt.Rectangle((best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, lw=2, ec="red"))
    ax.set_xticks(range(h), [str(j + 1) for j in range(h)], fontsize=8)
    ax.set_yticks(range(L), [str(i + 1) for i in range(L)], fontsize=8)
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
    fig.tight_layout()
    order = np.argsort(-V, axis=None, kind="stable")[:3]
    tops = ", ".join(
        f"layer {i + 1} head {j + 1} ({format(V[i, j], fmt)})"
        for i, j in (np.unravel_index(int(o), V.shape) for o in order)
    )
    alt = (
        f"Grid of {L} layers x {h} heads: {title}. Largest (outlined): {tops}; "
        f"median {format(float(np.median(V)), fmt)}."
    )
    return fig, alt

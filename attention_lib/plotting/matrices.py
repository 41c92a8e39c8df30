"""Labelled heatmaps of score and weight matrices, and bar charts of one attention row."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from ..validate import as_float_array
from .base import CMAP, annotate_cells, check_labels

_TEXT_PT = 10  # numbers and legend of a bar chart: 12.5 px in the PNG, as its tick labels


def heatmap(
    matrix,
    rows,
    cols=None,
    *,
    title: str,
    fmt: str = ".2f",
    vmin=None,
    vmax=None,
    cbar_label: str | None = None,
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
    figsize: tuple | None = None,
    cmap=CMAP,
):
    """Draw a matrix with a token label on every row and column and its value in each cell.

    Parameters
    ----------
    matrix : array_like of shape (n_q, n_k)
        Scores or weights; rows are queries, columns are keys.
    rows : sequence of str, length n_q
        Query tokens.
    cols : sequence of str, length n_k, optional
        Key tokens; defaults to ``rows`` (self-attention).
    title : str
        Shown above the plot and used in the alt text.
    fmt : str, default ".2f"
        Format of the numbers printed in the cells.
    vmin, vmax : float, optional
        Ends of the colour scale; default to the data's range. Pass ``vmin=0, vmax=1``
        for weights, so that gentle weights look gentle.
    cbar_label : str, optional
        Label of the colour bar, e.g. ``"attention weight"``; also named in the alt text
        with the ends of the scale.
    xlabel, ylabel : str, optional
        Axis names; change them when rows and columns are not tokens (say, the features
        of ``W_q W_kᵀ``). The alt text names them too.
    figsize : (float, float), optional
        Width and height in inches; by default they grow with the number of columns and
        rows.
    cmap : str or matplotlib.colors.Colormap, default ``CMAP`` (cividis)
        Colour map; a diverging one, white at 0, shows the sign.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        For each query, the key it scores highest, e.g. "'it' -> 'cake' (0.21)".
    """
    M = as_float_array(matrix, "matrix")
    cols = rows if cols is None else cols
    check_labels(M, rows, cols)
    n_q, n_k = M.shape
    fig, ax = plt.subplots(figsize=figsize or (1.0 + 0.62 * n_k, 0.8 + 0.5 * n_q))
    image = ax.imshow(M, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(n_k), cols, rotation=45, ha="right")
    ax.set_yticks(range(n_q), rows)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
    lo, hi = image.get_clim()
    if cbar_label:
        bar.set_label(cbar_label)
    annotate_cells(ax, M, lo, hi, fmt, cmap=cmap)
    fig.tight_layout()
    tops = [
        f"'{rows[i]}' -> '{cols[int(np.argmax(M[i]))]}' ({format(M[i].max(), fmt)})"
        for i in range(n_q)
    ]
    axes = "Rows are queries, columns are keys."
    if (xlabel, ylabel) != ("key (attended to)", "query (attending)"):
        axes = f"Rows: {ylabel}; columns: {xlabel}."
    alt = f"Heatmap: {title}. {axes} Highest per row: " + ", ".join(tops) + "."
    if cbar_label:
        alt += f" Colour scale ({cbar_label}) from {lo:g} to {hi:g}."
    return fig, alt


def bar_row(
    values,
    labels,
    *,
    title: str,
    fmt: str = ".2f",
    ylim=(0.0, 1.0),
    xlabel: str = "key",
    top_label: str | None = None,
    reference: tuple[float, str] | None = None,
    label_from: float | None = None,
):
    """Draw one attention row (a probability distribution) as labelled bars.

    Parameters
    ----------
    values : array_like of shape (n_k,)
    labels : sequence of str, length n_k
    title : str
    fmt : str, default ".2f"
        Format of the numbers printed above the bars. A bar too close to the top of a
        fixed ``ylim`` for a number above it carries its number just inside its top. If
        the largest bar would read the same as another ("0.13" twice), every number gets
        one more decimal (up to two more), so the highlighted bar reads as the largest.
    ylim : (float, float) or None, default (0, 1)
        A fixed axis, so frames of a slider compare at a glance; values outside it are
        an error rather than a clipped bar. ``None`` fits the data.
    xlabel : str, default "key"
        Label of the horizontal axis.
    top_label : str, optional
        A legend entry that says what the highlighted (largest) bar is, e.g.
        ``"largest weight ('cake')"``; also in the alt text.
    reference : (float, str), optional
        A grey dashed horizontal line at that height, behind the bars, named in a legend
        and in the alt text, e.g. ``(1 / 8, "even share, 1/8")``. The numbers then sit
        on white boxes, and a number that would reach the line sits above it instead,
        with a clear gap, so the line never passes through or along a number.
    label_from : float, optional
        Bars below this height carry no number, so that a near one-hot row is not a
        string of "0.00" crowding the floor; a legend entry ("no number: below 0.01")
        and the alt text say so. By default every bar has its number.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The largest and smallest bars with their values.
    """
    v = as_float_array(values, "values")
    if v.ndim != 1 or len(labels) != v.shape[0]:
        raise ValueError(
            f"values must be 1-D with one label each: values has shape {v.shape}, "
            f"{len(labels)} labels given"
        )
    if ylim is not None and (v.min() < ylim[0] or v.max() > ylim[1]):
        raise ValueError(
            f"values run from {v.min():.3g} to {v.max():.3g}, outside ylim={ylim}; "
            "pass a wider ylim, or ylim=None to fit the data"
        )
    if reference is not None and not (
        isinstance(reference, tuple)
        and len(reference) == 2
        and isinstance(reference[0], (int, float, np.number))
        and isinstance(reference[1], str)
    ):
        raise ValueError(
            f"reference must be (height, label), e.g. (0.125, 'even'); got {reference!r}"
        )
    if label_from is not None and not isinstance(label_from, (int, float, np.number)):
        raise ValueError(
            f"label_from must be a number, the smallest bar that gets one; got {label_from!r}"
        )
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    top = int(np.argmax(v))
    fmt = _telling(v, top, fmt)
    tiny = np.zeros(v.size, bool) if label_from is None else v < label_from
    colours = plt.get_cmap(CMAP)(np.where(np.arange(v.size) == top, 0.95, 0.35))
    bars = ax.bar(range(v.size), v, color=colours, edgecolor="black", linewidth=0.5)
    # A number above a bar needs about 14 pt (10 pt text, a gap, the white box); a bar
    # taller than that allows carries its number just inside its top instead.
    points = ax.bbox.height * 72 / fig.dpi  # the axes' height before tight_layout
    near_top = np.inf if ylim is None else ylim[1] - 15 / points * (ylim[1] - ylim[0])
    # With a reference line each number sits on a white box above the line, so the
    # dashed line may pass behind a number but never through it.
    box = None if reference is None else {"facecolor": "white", "edgecolor": "none", "pad": 1}
    # A number whose box would reach the line from a bar just below it (within `lift`)
    # is lifted to sit on the line, so near-even rows show a row of numbers above an
    # unbroken line. A lower bar keeps its number on its top, and the line passes
    # behind the number's white box: a number lifted further would float off its bar.
    reach = np.inf if ylim is None else 15 / points * (ylim[1] - ylim[0])
    lift = np.inf if ylim is None else 6 / points * (ylim[1] - ylim[0])
    for j, value in enumerate(v):
        if tiny[j]:
            continue  # no number: the legend says what an unlabelled bar means
        inside = value > near_top  # above the bar, the number would cross the frame
        at, gap = value, 2
        if reference is not None and not inside and value < reference[0] < value + lift:
            at = reference[0]
        if reference is not None and not inside and 0 <= at - reference[0] < reach:
            gap = 5  # a clear gap above the line, which would otherwise run along the boxes
        ax.annotate(
            format(value, fmt),
            (j, at),
            xytext=(0, -2 if inside else gap),
            textcoords="offset points",
            ha="center",
            va="top" if inside else "bottom",
            fontsize=_TEXT_PT,
            color=("black" if j == top else "white") if inside else "black",
            bbox=None if inside else box,
            zorder=3,
        )
    ax.set_xticks(range(v.size), labels)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("weight")
    ax.set_title(title)
    handles, names = ([bars[top]], [top_label]) if top_label is not None else ([], [])
    if reference is not None:
        # grey (4.7 : 1 on white) and behind the bars, so it reads as a guide, not data
        line = ax.axhline(reference[0], color="0.45", linestyle="--", linewidth=1, zorder=0.5)
        handles, names = [*handles, line], [*names, reference[1]]
    if tiny.any():
        handles = [*handles, Line2D([], [], linestyle="none")]  # text only
        names = [*names, f"no number: below {label_from:g}"]
    if handles:
        ax.legend(handles, names, loc="upper left", fontsize=_TEXT_PT, frameon=False)
    fig.tight_layout()
    low = int(np.argmin(v))
    # the alt text reads a bar without a number as "<0.01", never "(0.00)"
    said = [
        f"<{label_from:g}" if label_from is not None and v[j] < label_from else format(v[j], fmt)
        for j in (top, low)
    ]
    alt = (
        f"Bar chart: {title}. Largest '{labels[top]}' ({said[0]}), "
        f"smallest '{labels[low]}' ({said[1]})."
    )
    if top_label is not None:
        alt += f" The highlighted bar is the {top_label}."
    if reference is not None:
        alt += f" A dashed line marks the {reference[1]} ({reference[0]:.3g})."
    if tiny.any():
        alt += f" Bars below {label_from:g} carry no number."
    return fig, alt


def _telling(v: np.ndarray, top: int, fmt: str) -> str:
    """``fmt`` with one or two more decimals if the largest bar would read like another."""
    match = re.fullmatch(r"\.(\d)f", fmt)
    if match is None:
        return fmt
    for digits in range(int(match[1]), int(match[1]) + 3):
        f = f".{digits}f"
        if format(v[top], f) not in {format(x, f) for j, x in enumerate(v) if j != top}:
            return f
    return fmt  # a true tie (a uniform row) keeps its format

"""Chapter 8's slider frame: one row of weights with its masked keys drawn as blocked bands,
and, if given, the row without the mask as dashed outlines. The heatmaps are in ``masking.py``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

from ..validate import as_float_array
from .base import CMAP
from .masking import _BLOCKED, _GHOST, MASKED, _masked_but_weighted


def masked_row(row, allowed, labels, *, title: str, fmt: str = ".2f", before=None, ymax=1.15):
    """Draw one query's attention weights as bars, each masked key as a hatched band.

    A masked key gets no bar (its weight is 0: nothing is drawn on the axis, which would
    read as a tiny bar) but a grey, hatched background band labelled "masked (0)". With
    ``before``, the weights without the mask are drawn as dashed outlines, so the
    renormalisation shows: every allowed bar rises above its outline, and the outlines in
    the bands are what was lost.

    Parameters
    ----------
    row : array_like of shape (n_k,)
        The query's weights; masked keys must have weight 0.
    allowed : bool array_like of shape (n_k,)
        True where the query may attend (the query's row of the mask).
    labels : sequence of str, length n_k
        Key tokens.
    title : str
    fmt : str, default ".2f"
    before : array_like of shape (n_k,), optional
        The same query's weights without the mask (a row summing to 1).
    ymax : float, default 1.15
        Top of the weight axis. A bar taller than it is cut at the top, and its label says
        so ("1.00, cut"), so a slider's frames share one readable axis.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        How many keys are allowed, the largest weight, and which keys are masked; with
        ``before``, the weight the masked keys had and the largest weight's old value.
    """
    w = as_float_array(row, "row")
    a = np.asarray(allowed)
    if a.dtype != np.bool_:
        raise TypeError(f"allowed must be boolean (True = may attend), got dtype {a.dtype}")
    if w.ndim != 1 or a.shape != w.shape or len(labels) != w.size:
        raise ValueError(
            f"row, allowed and labels need one entry per key: shapes {w.shape} and "
            f"{a.shape}, {len(labels)} labels"
        )
    if not a.any():
        raise ValueError("allowed has no True entry: this query may attend to no key")
    _masked_but_weighted(w, a, "allowed")
    if isinstance(ymax, bool) or not isinstance(ymax, (int, float)) or not 0 < ymax <= 1.15:
        raise ValueError(f"ymax must be a number in (0, 1.15], got {ymax!r}")
    if before is not None:
        ghost = as_float_array(before, "before")
        if ghost.shape != w.shape:
            raise ValueError(f"before needs one weight per key: shape {ghost.shape}, row {w.shape}")
        if np.any(ghost < 0) or not np.isclose(ghost.sum(), 1.0):
            raise ValueError(
                f"before must be a row of weights (>= 0, summing to 1), got sum {ghost.sum():.3g}"
            )
    fig = plt.figure(figsize=(6.4, 3.1))
    ax = fig.add_axes((0.1, 0.23, 0.87, 0.58))  # room above for the legend, off the bands
    top = int(np.argmax(w))
    keys = np.arange(w.size)
    shade = plt.get_cmap(CMAP)(0.7)  # one light shade: the dashed outlines show on it
    ok, blocked = np.flatnonzero(a), np.flatnonzero(~a)
    ax.bar(ok, np.minimum(w[ok], ymax), color=shade, edgecolor="black", linewidth=0.5)
    cut = [j for j in ok if w[j] > ymax - 0.04]  # no room above: the label goes inside
    for j in ok:
        label, y, va = format(w[j], fmt), w[j] + 0.02 * ymax, "bottom"
        if j in cut:
            label, y, va = f"{label}, cut" if w[j] > ymax else label, ymax * 0.97, "top"
        ax.text(j, y, label, ha="center", va=va, fontsize=8, zorder=5)
    for j in blocked:  # a background band, not a bar: a masked key's weight is 0, not 1
        ax.axvspan(j - 0.5, j + 0.5, zorder=0, **_BLOCKED)
        box = {"facecolor": "white", "edgecolor": "none", "pad": 1.5}
        ax.text(j, 0.45 * ymax, MASKED, ha="center", va="center", fontsize=8, color="0.2", bbox=box)
    if before is not None:  # over the bars: the old height shows through every new bar
        ax.bar(keys, ghost, width=0.8, zorder=4, **_GHOST)
        handles = [
            Patch(facecolor=shade, edgecolor="black", linewidth=0.5, label="with the mask"),
            Patch(label="without the mask", **_GHOST),
        ]
        # Above the axes, between them and the title: inside, it would cover a band.
        ax.legend(
            handles=handles,
            loc="lower right",
            bbox_to_anchor=(1.0, 1.0),
            ncol=2,
            fontsize=8,
            frameon=False,
            borderaxespad=0.2,
        )
    ax.set_xticks(range(w.size), labels, fontsize=8)
    for tick, visible in zip(ax.get_xticklabels(), a, strict=True):
        tick.set_color("black" if visible else "0.5")
    ax.set_xlim(-0.6, w.size - 0.4)
    ax.set_ylim(0.0, ymax)  # 1.15: room for the "1.00" above a full bar
    ax.set_xlabel("key", fontsize=9)
    ax.set_ylabel("weight")
    ax.set_title(title, fontsize=10, loc="left", pad=20 if before is not None else 6)
    hidden = [f"'{labels[j]}'" for j in blocked]
    alt = (
        f"Bar chart: {title}. {int(a.sum())} of {w.size} keys allowed; largest "
        f"'{labels[top]}' ({format(w[top], fmt)}); "
        + (f"masked (weight 0): {', '.join(hidden)}." if hidden else "no key masked.")
    )
    if np.any(w > ymax):
        alt += f" The axis stops at {ymax:g}, so the taller bar is cut."
    if before is not None:
        alt += " Dashed outlines: the weights without the mask; "
        if hidden:
            alt += f"the masked keys had {format(ghost[~a].sum(), fmt)} in all, and "
        alt += f"'{labels[top]}' had {format(ghost[top], fmt)}."

    return fig, alt

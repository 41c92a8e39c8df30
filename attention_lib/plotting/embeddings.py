"""Chapter 1 figures: word similarities and token-by-feature tables (the encoding heatmap
is in :mod:`.positions`)."""

from __future__ import annotations

import textwrap

import matplotlib.patheffects as pe
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..validate import as_float_array
from .base import CMAP, check_labels, text_colour

# A positional encoding is signed: -1 and +1 are opposite, 0 is neither. A diverging map
# from ColorBrewer that reads under the common colour blindnesses shows 0 as white and
# the two signs as two hues (the course's cividis would show 0 as a mid grey).
DIVERGING = "PuOr"


def similarity_map(vectors, words, *, features, title: str):
    """Draw the cosine similarity of every pair of words as a labelled heatmap.

    Four features at right angles to each other do not fit on a flat map without two of
    them being drawn as opposite or overlapping directions. A table of cosines keeps
    every angle exactly: 1 is the same direction, 0 a right angle. What it drops is
    length: a strong and a faint word that point the same way look the same.

    Parameters
    ----------
    vectors : array_like of shape (m, d)
        One embedding per word.
    words : sequence of str, length m
        The label of each row and column.
    features : sequence of str, length d
        Feature names. Words are grouped by their largest feature (in this order, the
        strongest word of a group first), and each group is named at the left edge.
    title : str

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Each word's group and its closest other word with their cosine.

    Notes
    -----
    The table is symmetric, so only the lower triangle (with the diagonal) is drawn.
    """
    V = as_float_array(vectors, "vectors", min_ndim=2)
    words = list(words)
    check_labels(V, words, [f"feature {j}" for j in range(V.shape[1])])
    if len(features) != V.shape[1]:
        raise ValueError(
            f"need a name per feature: vectors has shape {V.shape}, "
            f"{len(features)} feature names given"
        )
    norms = np.linalg.norm(V, axis=-1, keepdims=True)  # (m, 1)
    if np.any(norms == 0):
        raise ValueError("a zero vector has no direction, so it has no cosine similarity")
    U = V / norms  # (m, d): unit vectors, same directions
    group = np.argmax(V, axis=1)  # (m,): each word's largest feature
    order = np.lexsort((-V.max(axis=1), group))  # by group, strongest word first
    C = U[order] @ U[order].T  # (m, m): cosine of every pair
    names = [words[k] for k in order]
    lo = -1.0 if C.min() < -1e-12 else 0.0  # a fixed scale: colours mean the same everywhere
    m = len(names)
    fig, ax = plt.subplots(figsize=(1.6 + 0.42 * m, 0.8 + 0.38 * m))  # no empty band
    # The table is symmetric (cos(a, b) = cos(b, a)): draw each pair once, below the
    # diagonal, so every number printed is a different pair and the text can be larger.
    below = np.ma.masked_array(C, mask=np.triu(np.ones((m, m), dtype=bool), k=1))
    image = ax.imshow(below, cmap=CMAP, vmin=lo, vmax=1.0, interpolation="nearest")
    for i, j in zip(*np.tril_indices(m), strict=True):
        ax.text(
            j,
            i,
            f"{C[i, j]:.2f}",
            ha="center",
            va="center",
            fontsize=10,
            color=text_colour((C[i, j] - lo) / (1.0 - lo)),  # >= 4.5:1 on every cell
        )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_xticks(range(m), names, rotation=90)
    ax.set_yticks(range(m), names)
    ax.tick_params(length=0)
    sorted_groups = group[order]
    # White lines between the groups, 3 px wide, with a dark edge so that they show on
    # the bright cells too.
    line = {
        "color": "white",
        "lw": 2.4,
        "solid_capstyle": "butt",
        "path_effects": [pe.withStroke(linewidth=3.6, foreground="0.15", capstyle="butt")],
    }
    for k in np.flatnonzero(np.diff(sorted_groups)) + 0.5:
        ax.plot([-0.5, k], [k, k], **line)  # below the diagonal only
        ax.plot([k, k], [k, m - 0.5], **line)
    for j in np.unique(sorted_groups):
        rows = np.flatnonzero(sorted_groups == j)
        ax.annotate(  # the group's name, in the figure's left margin
            features[j],
            xy=(0.01, rows.mean()),
            xycoords=(fig.transFigure, ax.transData),
            ha="left",
            va="center",
            fontsize=11,
            fontweight="bold",
            color="0.1",
        )
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03, label="cosine similarity")
    fig.tight_layout(rect=(0.1, 0, 1, 1))  # leave the margin to the group names
    parts = []
    for j in np.unique(sorted_groups):
        members = [names[i] for i in np.flatnonzero(sorted_groups == j)]
        parts.append(f"{features[j]}: {', '.join(members)}")
    others = C - 2 * np.eye(m)  # leave each word's cosine with itself out
    nearest = [
        f"'{names[i]}' -> '{names[int(np.argmax(others[i]))]}' ({others[i].max():.2f})"
        for i in range(m)
    ]
    alt = (
        f"Heatmap: {title}. Cosine similarity of {m} words with each other, each pair "
        f"drawn once, on and below the diagonal, on a fixed scale from {lo:.0f} to 1, words "
        "grouped by their largest feature ("
        + "; ".join(parts)
        + "). Closest other word: "
        + ", ".join(nearest)
        + "."
    )
    return fig, alt


def token_panels(
    matrices,
    titles,
    rows,
    cols,
    *,
    fmt: str = ".2f",
    note: str = "",
    ylabel: str = "token",
    bar_label: str = "value",
    hidden=(),
    scale: float = 1.0,
):
    """Draw several (n, d) tables side by side: tokens down, dimensions across.

    All panels share one colour scale, shown by one colour bar, so equal numbers get
    equal colours, and every cell shows its value.

    Parameters
    ----------
    matrices : sequence of array_like, each of shape (n, d)
    titles : sequence of str, one per matrix
    rows : sequence of str, length n
        Tokens, or e.g. "0 I", "1 ate" when a panel depends on the position.
    cols : sequence of str, length d, or one such sequence per matrix
        Dimension names, e.g. :data:`attention_lib.toy.FEATURES`. Give one list per
        panel when the columns mean different things (a positional encoding's columns
        are sines and cosines, not features).
    fmt : str, default ".2f"
    note : str, optional
        The figure's main point: a caption line under the panels, and the end of the alt
        text.
    ylabel : str, default "token"
        What the row labels name.
    bar_label : str, default "value"
        The colour bar's label ("entry" where *value* would be read as V).
    hidden : sequence of (panel, row, column) index triples, optional
        Cells whose number is printed as "?" (an exercise's answer), on grey hatching
        instead of their colour; the alt text leaves their values out.
    scale : float, default 1.0
        Grows the figure and every font in it by this factor (1.3: numbers easier to read).

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Each panel's range of values and its largest entry (or how many entries tie for
        it), then ``note``.
    """
    Ms = [as_float_array(M, f"matrices[{k}]") for k, M in enumerate(matrices)]
    if not Ms or len(titles) != len(Ms):
        raise ValueError(f"need one title per matrix: {len(Ms)} matrices, {len(titles)} titles")
    per_panel = len(cols) > 0 and all(not isinstance(c, str) for c in cols)
    col_lists = [list(c) for c in cols] if per_panel else [list(cols)] * len(Ms)
    if len(col_lists) != len(Ms):
        raise ValueError(
            f"need one list of column names per matrix: {len(Ms)} matrices, {len(col_lists)} lists"
        )
    for M, names in zip(Ms, col_lists, strict=True):
        check_labels(M, rows, names)
    hidden = {tuple(h) for h in hidden}
    for h in hidden:
        if len(h) != 3 or not all(
            0 <= i < m for i, m in zip(h, (len(Ms), *Ms[0].shape), strict=True)
        ):
            raise ValueError(f"hidden cell {h} is not a (panel, row, column) inside the tables")
    lo, hi = min(M.min() for M in Ms), max(M.max() for M in Ms)
    signed = lo < 0 < hi
    if signed:  # a diverging map centred at 0: equal sizes of either sign, equal strength
        top = max(-lo, hi)
        cmap, lo, hi = DIVERGING, -top, top
    else:
        cmap = CMAP
    n, d = Ms[0].shape
    fig, axes = plt.subplots(
        1,
        len(Ms),
        figsize=(1.5 + (0.45 * d + 0.25) * len(Ms), 1.2 + 0.3 * n),
        layout="constrained",
    )
    axes = np.atleast_1d(axes)
    parts = []
    for k, (ax, M, title, names) in enumerate(zip(axes, Ms, titles, col_lists, strict=True)):
        image = ax.imshow(M, cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        for (i, j), value in np.ndenumerate(M):  # black or white, whichever contrasts more
            ink = text_colour((value - lo) / (hi - lo) if hi > lo else 0.0, cmap)
            label = "?" if (k, i, j) in hidden else format(value, fmt)
            if (k, i, j) in hidden:  # grey and hatched: its colour would give the answer away
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fc="0.88", ec="0.5", hatch="//"))
                ink = "black"
            ax.text(j, i, label, ha="center", va="center", fontsize=8, color=ink)
        ax.set_xticks(range(d), names, rotation=45, ha="right")
        ax.set_yticks(range(n), rows if ax is axes[0] else [""] * n)
        ax.set_title(title, fontsize=10)
        seen = np.ones(M.shape, bool)  # the alt text speaks only of the printed numbers
        for _, i, j in (h for h in hidden if h[0] == k):
            seen[i, j] = False
        shown = np.vectorize(lambda v: format(v, fmt))(M)  # (n, d): the printed numbers
        top = format(M[seen].max(), fmt)
        top_cells = np.argwhere((shown == top) & seen)  # ties as printed
        if len(top_cells) == 1:
            i, j = top_cells[0]
            largest = f"largest '{rows[i]}' / {names[j]} ({top})"
        else:
            largest = f"{len(top_cells)} entries reach {top}"
        unknown = [f"'{rows[i]}' / {names[j]}" for p, i, j in sorted(hidden) if p == k]
        left = f", {' and '.join(unknown)} shown as '?' on grey" if unknown else ""
        parts.append(f"{title}: from {format(M[seen].min(), fmt)} to {top}, {largest}{left}")
    axes[0].set_ylabel(ylabel)
    bar = fig.colorbar(image, ax=list(axes), fraction=0.04, pad=0.02, label=bar_label)
    if signed:  # whole-number ticks on both sides of 0
        bar.set_ticks(np.arange(np.ceil(lo), np.floor(hi) + 1))
    if note:
        fig.supxlabel(textwrap.fill(note, 100), fontsize=9.5, color="0.1")
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    if scale != 1.0:
        for text in fig.findobj(match=lambda a: hasattr(a, "set_fontsize")):
            text.set_fontsize(scale * text.get_fontsize())
        fig.set_size_inches(scale * fig.get_size_inches())
    centre = " (purple above 0, orange below)" if signed else ""
    shared = "" if per_panel else f" ({', '.join(col_lists[0])})"
    alt = (
        f"{len(Ms)} tables side by side on one colour scale{centre}, one row per {ylabel} and one "
        f"column per dimension{shared}. " + "; ".join(parts) + "." + (f" {note}" if note else "")
    )
    return fig, alt

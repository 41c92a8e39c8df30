"""Chapter 1 figures: word similarities, positional encodings, token-by-feature tables."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from ..validate import as_float_array
from .base import CMAP, annotate_cells, check_labels


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
    fig, ax = plt.subplots(figsize=(1.6 + 0.36 * m, 1.0 + 0.34 * m))
    image = ax.imshow(C, cmap=CMAP, vmin=lo, vmax=1.0, interpolation="nearest")
    annotate_cells(ax, C, lo, 1.0, ".2f", fontsize=7.5)
    ax.set_xticks(range(m), names, rotation=90)
    ax.set_yticks(range(m), names)
    ax.tick_params(length=0)
    sorted_groups = group[order]
    for k in np.flatnonzero(np.diff(sorted_groups)) + 0.5:  # lines between the groups
        ax.axhline(k, color="white", lw=2)
        ax.axvline(k, color="white", lw=2)
    for j in np.unique(sorted_groups):
        rows = np.flatnonzero(sorted_groups == j)
        ax.annotate(  # the group's name, in the figure's left margin
            features[j],
            xy=(0.01, rows.mean()),
            xycoords=(fig.transFigure, ax.transData),
            ha="left",
            va="center",
            fontsize=9,
            style="italic",
            color="0.3",
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
        f"Heatmap: {title}. Cosine similarity of {m} words with each other, on a fixed "
        f"scale from {lo:.0f} to 1, words grouped by their largest feature ("
        + "; ".join(parts)
        + "). Closest other word: "
        + ", ".join(nearest)
        + "."
    )
    return fig, alt


def encoding_heatmap(PE, *, title: str):
    """Draw a positional encoding as a heatmap, positions down and dimensions across.

    Parameters
    ----------
    PE : array_like of shape (n, d_model)
        E.g. :func:`attention_lib.positional_encoding` ``(n, d_model)``.
    title : str

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The size, and how fast the first and the last column change.
    """
    M = as_float_array(PE, "PE", min_ndim=2)
    if M.ndim != 2:
        raise ValueError(f"PE must be 2-D (positions x dimensions), got shape {M.shape}")
    n, d = M.shape
    fig, ax = plt.subplots(figsize=(6.4, 3.9))
    image = ax.imshow(M, cmap=CMAP, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no "dimension 0.5"
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03, label="value")
    fig.tight_layout()
    flips = int(np.sum(np.diff(np.sign(np.round(M[:, 0], 12))) != 0))
    slow = M[:, -2:] if d > 1 else M  # the last (sin, cos) pair
    span = float(np.max(slow.max(axis=0) - slow.min(axis=0)))
    alt = (
        f"Heatmap: {title}. {n} positions (rows) by {d} dimensions (columns), values from "
        f"{M.min():.2f} to {M.max():.2f}. Column 0 changes sign {flips} times; the last "
        f"two columns move by at most {span:.3f} over all {n} positions."
    )
    return fig, alt


def token_panels(matrices, titles, rows, cols, *, fmt: str = ".2f"):
    """Draw several (n, d) tables side by side: tokens down, dimensions across.

    All panels share one colour scale, so equal numbers get equal colours, and every
    cell shows its value.

    Parameters
    ----------
    matrices : sequence of array_like, each of shape (n, d)
    titles : sequence of str, one per matrix
    rows : sequence of str, length n
        Tokens.
    cols : sequence of str, length d
        Dimension names, e.g. :data:`attention_lib.toy.FEATURES`.
    fmt : str, default ".2f"

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Each panel's range of values and its largest entry.
    """
    Ms = [as_float_array(M, f"matrices[{k}]") for k, M in enumerate(matrices)]
    if not Ms or len(titles) != len(Ms):
        raise ValueError(f"need one title per matrix: {len(Ms)} matrices, {len(titles)} titles")
    for M in Ms:
        check_labels(M, rows, cols)
    lo, hi = min(M.min() for M in Ms), max(M.max() for M in Ms)
    n, d = Ms[0].shape
    fig, axes = plt.subplots(1, len(Ms), figsize=(0.9 + (0.45 * d + 0.25) * len(Ms), 1.1 + 0.3 * n))
    axes = np.atleast_1d(axes)
    parts = []
    for ax, M, title in zip(axes, Ms, titles, strict=True):
        ax.imshow(M, cmap=CMAP, vmin=lo, vmax=hi, aspect="auto")
        annotate_cells(ax, M, lo, hi, fmt, fontsize=7.5)
        ax.set_xticks(range(d), cols, rotation=45, ha="right")
        ax.set_yticks(range(n), rows if ax is axes[0] else [""] * n)
        ax.set_title(title, fontsize=10)
        i, j = np.unravel_index(np.argmax(M), M.shape)
        parts.append(
            f"{title}: from {format(M.min(), fmt)} to {format(M.max(), fmt)}, largest "
            f"'{rows[i]}' / {cols[j]} ({format(M[i, j], fmt)})"
        )
    axes[0].set_ylabel("token")
    fig.tight_layout()
    alt = (
        f"{len(Ms)} tables side by side, one row per token and one column per dimension "
        f"({', '.join(cols)}). " + "; ".join(parts) + "."
    )
    return fig, alt

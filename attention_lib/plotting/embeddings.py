"""Chapter 1 figures: a map of word vectors, positional encodings, token-by-feature tables."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from ..validate import as_float_array
from .base import CMAP, annotate_cells, check_labels

_NAMES = {(1, 0): "right", (0, 1): "up", (-1, 0): "left", (0, -1): "down"}
_OFFSETS = [  # where a label may go relative to its point, in points: (dx, dy, ha, va)
    (6, 0, "left", "center"),
    (-6, 0, "right", "center"),
    (0, 7, "center", "bottom"),
    (0, -7, "center", "top"),
    (6, 6, "left", "bottom"),
    (-6, -6, "right", "top"),
]


def word_map(vectors, words, *, directions, features, title: str, highlight=()):
    """Draw word vectors as labelled points on a flat map, one direction per feature.

    Parameters
    ----------
    vectors : array_like of shape (m, d)
        One embedding per word.
    words : sequence of str, length m
        The label of each point.
    directions : array_like of shape (d, 2)
        Where each feature pulls a word on the map; a word's point is
        ``vector @ directions``, e.g. :data:`attention_lib.toy.MAP_DIRECTIONS`.
    features : sequence of str, length d
        Feature names, written at the edge of the map in their direction.
    title : str
    highlight : sequence of str, optional
        Words drawn larger, with a star; the alt text gives the distance from the first
        of them to each of the others.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Which words sit together in which direction, and the highlighted distances.
    """
    V = as_float_array(vectors, "vectors", min_ndim=2)
    D = as_float_array(directions, "directions", min_ndim=2)
    check_labels(V, list(words), [f"feature {j}" for j in range(V.shape[1])])
    if D.shape != (V.shape[1], 2) or len(features) != V.shape[1]:
        raise ValueError(
            f"need a 2-D direction and a name per feature: vectors has shape {V.shape}, "
            f"directions has shape {D.shape}, {len(features)} feature names given"
        )
    unknown = [w for w in highlight if w not in words]
    if unknown:
        raise ValueError(f"highlight words {unknown} are not among the plotted words")
    P = V @ D  # (m, d) @ (d, 2) -> (m, 2)
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    ax.axhline(0, color="0.85", lw=0.8, zorder=0)
    ax.axvline(0, color="0.85", lw=0.8, zorder=0)
    starred = np.isin(list(words), list(highlight))
    colours = plt.get_cmap(CMAP)([0.15, 0.85])
    ax.scatter(*P[~starred].T, s=30, marker="o", color=colours[0], label="word", zorder=2)
    if starred.any():
        ax.scatter(
            *P[starred].T,
            s=160,
            marker="*",
            color=colours[1],
            edgecolor="black",
            linewidth=0.6,
            label="compared in the text",
            zorder=3,
        )
        ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    reach = max(1.0, np.abs(P).max()) * 1.35
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    edge = []  # the feature names, at the edge of the map in their direction
    for name, (dx, dy) in zip(features, D, strict=True):
        edge.append(
            ax.annotate(
                name,
                xy=(0.5 + 0.47 * dx, 0.5 + 0.47 * dy),
                xycoords="axes fraction",
                ha="center",
                va="center",
                fontsize=9,
                style="italic",
                color="0.3",
            )
        )
    _place_labels(fig, ax, P, list(words), starred, edge)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title)
    fig.tight_layout()
    return fig, f"Map: {title}. " + _map_alt(P, list(words), D, features, list(highlight))


def _place_labels(fig, ax, P, words, starred, fixed) -> None:
    """Label every point, trying a few spots until a label overlaps nothing.

    ``fixed`` are texts already on the axes (the feature names) that labels must avoid.
    """
    renderer = fig.canvas.get_renderer()
    taken = [ax.transData.transform(p) for p in P]  # marker centres, in pixels
    boxes = [t.get_window_extent(renderer).expanded(1.1, 1.2) for t in fixed]
    for (x, y), word, star in zip(P, words, starred, strict=True):
        for dx, dy, ha, va in _OFFSETS:
            label = ax.annotate(
                word,
                (x, y),
                xytext=(dx, dy),
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize=10 if star else 9,
                fontweight="bold" if star else "normal",
            )
            box = label.get_window_extent(renderer).expanded(1.05, 1.1)
            clash = any(box.overlaps(b) for b in boxes) or any(box.contains(*c) for c in taken)
            if not clash:
                break
            label.remove()
        else:  # every spot is taken: keep the first one rather than lose the word
            label = ax.annotate(
                word,
                (x, y),
                xytext=_OFFSETS[0][:2],
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize=9,
            )
            box = label.get_window_extent(renderer)
        boxes.append(box)


def _map_alt(P, words, D, features, highlight) -> str:
    lean = np.argmax(P @ D.T, axis=1)  # the feature direction each point leans towards
    groups = []
    for j, name in enumerate(features):
        members = [w for w, k in zip(words, lean, strict=True) if k == j]
        where = _NAMES.get(tuple(np.sign(np.round(D[j], 6)).astype(int)), "along its arrow")
        if members:
            groups.append(f"{where} ({name}): {', '.join(members)}")
    text = "Words lean " + "; ".join(groups) + "."
    if len(highlight) > 1:
        first = P[words.index(highlight[0])]
        gaps = [
            f"{np.linalg.norm(P[words.index(w)] - first):.2f} from '{w}'" for w in highlight[1:]
        ]
        text += f" '{highlight[0]}' sits " + " and ".join(gaps) + "."
    return text


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
    fig, axes = plt.subplots(1, len(Ms), figsize=(0.6 + (0.75 * d + 0.9) * len(Ms), 1.2 + 0.38 * n))
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

"""Figures for chapter 6: where a blend of value vectors lands, and what it is made of.

* :func:`blend_hull` draws the value vectors as labelled points in two of their
  dimensions, the convex hull around them, and the output of a few weight rows.
* :func:`contributions` splits one output row into the terms ``weight_j * V[j]``, one
  stacked segment per key token.

The small geometry helpers :func:`convex_hull` and :func:`inside_hull` are public too,
so a notebook can assert what the hull figure shows.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..validate import as_float_array
from .base import CMAP

_MARKERS = ("o", "s", "D", "^", "v", "P", "X")
# Okabe & Ito's eight colours, told apart with the common kinds of colour blindness; the
# hatches tell neighbouring segments apart in greyscale too.
_OKABE_ITO = (
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#999999",  # grey in place of Okabe & Ito's black: a black segment outweighs the rest
)
_HATCHES = ("", "//", "..", "xx", "\\\\", "oo", "--", "||")
_EPS = 1e-9


def convex_hull(points) -> np.ndarray:
    """Indices of the corners of the convex hull of 2-D points, counter-clockwise.

    Parameters
    ----------
    points : array_like of shape (m, 2)

    Returns
    -------
    ndarray of int, shape (c,)
        Corners only: a point in the middle of a straight edge is not a corner.

    Notes
    -----
    Andrew's monotone chain: sort the points by x (then y), build the lower and the
    upper chain, and drop every point where the chain does not turn left.
    """
    P = _points(points, "points")
    order = sorted(range(len(P)), key=lambda i: (P[i, 0], P[i, 1]))
    if np.allclose(P, P[order[0]]):
        return np.array([order[0]])

    def chain(indices):
        kept: list[int] = []
        for i in indices:
            while len(kept) >= 2 and _cross(P[kept[-2]], P[kept[-1]], P[i]) <= _EPS:
                kept.pop()
            kept.append(i)
        return kept[:-1]  # the last point starts the other chain

    return np.array(chain(order) + chain(order[::-1]))


def inside_hull(point, points) -> bool:
    """True if ``point`` lies inside the convex hull of ``points`` or on its boundary.

    Parameters
    ----------
    point : array_like of shape (2,)
    points : array_like of shape (m, 2)
    """
    p = as_float_array(point, "point")
    if p.shape != (2,):
        raise ValueError(f"point must have shape (2,), got shape {p.shape}")
    P = _points(points, "points")
    corners = P[convex_hull(P)]  # (c, 2), counter-clockwise
    if len(corners) < 3:  # a single point or a segment: test the distance to it
        a, b = corners[0], corners[-1]
        t = 0.0 if np.allclose(a, b) else np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1)
        return bool(np.linalg.norm(a + t * (b - a) - p) <= 1e-7)
    edges = zip(corners, np.roll(corners, -1, axis=0), strict=True)
    return all(_cross(a, b, p) >= -1e-7 for a, b in edges)  # left of every edge, or on it


def blend_hull(V, tokens, blends: dict, *, dims=(0, 1), features=None, title: str, cards=()):
    r"""Value vectors as points in two dimensions, their convex hull, and blended outputs.

    Parameters
    ----------
    V : array_like of shape (n_k, d_v)
        One value vector per key token; ``d_v >= 2``.
    tokens : sequence of str, length n_k
        Label of each value vector.
    blends : dict of str -> array_like of shape (n_k,)
        A label and a row of weights for each output to mark; the output is
        ``weights @ V``. At most seven.
    dims : (int, int), default (0, 1)
        The two columns of ``V`` on the horizontal and vertical axis.
    features : sequence of str, length d_v, optional
        Names of the value dimensions, for the axis labels.
    title : str
    cards : sequence of str, optional
        Tokens whose pin is labelled "card of '<token>'", to tell it from a blend that
        carries the same token's name.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The hull's corner tokens and, for each blend, where its output lands and whether
        it is inside the hull.

    Notes
    -----
    Projecting to two columns keeps convex combinations: if ``o = w @ V`` with
    :math:`w_j \ge 0` and :math:`\sum_j w_j = 1`, then ``o[dims] = w @ V[:, dims]``,
    so a blend that is inside the hull in :math:`d_v` dimensions is inside it here too.
    """
    V = as_float_array(V, "V", min_ndim=2)
    if V.ndim != 2 or V.shape[1] < 2 or len(tokens) != V.shape[0]:
        raise ValueError(
            f"V must be 2-D (n_k, d_v) with d_v >= 2 and one token per row: V has shape "
            f"{V.shape}, {len(tokens)} tokens given"
        )
    i, j = dims
    features = features or [f"dimension {k}" for k in range(V.shape[1])]
    if not (0 < len(blends) <= len(_MARKERS)):
        raise ValueError(f"give 1 to {len(_MARKERS)} blends to mark, got {len(blends)}")
    P = V[:, [i, j]]  # (n_k, 2): the value vectors in the two chosen dimensions
    outputs = {}
    for label, w in blends.items():
        w = as_float_array(w, f"blends[{label!r}]")
        if w.shape != (V.shape[0],):
            raise ValueError(
                f"blends[{label!r}] must hold one weight per value row, shape "
                f"({V.shape[0]},), got shape {w.shape}"
            )
        outputs[label] = w @ P  # (2,)

    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    corners = convex_hull(P)
    ring = P[np.append(corners, corners[0])]
    fill = plt.get_cmap(CMAP)(0.9)
    ax.fill(ring[:, 0], ring[:, 1], color=fill, alpha=0.25, zorder=0)
    ax.plot(ring[:, 0], ring[:, 1], "--", color="0.35", linewidth=1, label="convex hull")
    ax.scatter(P[:, 0], P[:, 1], s=28, color="0.25", zorder=2, label="value vectors (cards)")
    for k, token in enumerate(tokens):
        pin = f"card of '{token}'" if token in cards else token
        ax.annotate(pin, P[k], xytext=(5, 4), textcoords="offset points", fontsize=9)
    # The k-th blend keeps its shade whatever the count, so a slider frame matches the figure.
    shades = plt.get_cmap(CMAP)(np.linspace(0.0, 0.75, max(len(outputs), 4)))
    for k, (label, o) in enumerate(outputs.items()):
        # A one-hot row lands exactly on its pin: a hollow ring keeps the pin, and any
        # output that comes close to it, in sight.
        hollow = _one_hot(blends[label])
        ax.scatter(
            *o,
            s=170 if hollow else 110 - 12 * k,
            marker=_MARKERS[k],
            facecolor="none" if hollow else shades[k],
            edgecolor=shades[k] if hollow else "black",
            linewidth=2.0 if hollow else 0.8,
            zorder=3 + k,
            label=f"{label}: ({o[0]:.2f}, {o[1]:.2f})",
        )
    span = np.ptp(P, axis=0).max() or 1.0
    # A blend that lands on a pin gets a pointer and its name, set off towards the middle
    # of the board, so it is not taken for the pin (or the ring of a one-hot row there).
    centre = P.mean(axis=0)
    for label, o in outputs.items():
        if _one_hot(blends[label]) or np.linalg.norm(P - o, axis=1).min() > 0.03 * span:
            continue  # a one-hot row belongs on its pin, as a ring
        ax.annotate(
            label,
            o,
            xytext=(-30 * np.sign(o[0] - centre[0]), -45 * np.sign(o[1] - centre[1])),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=9,
            bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "linewidth": 0},
            arrowprops={"arrowstyle": "->", "color": "black", "linewidth": 1},
            zorder=10,
        )
    lo, hi = P.min(axis=0) - 0.12 * span, P.max(axis=0) + 0.15 * span
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel(f"value dimension '{features[i]}'")
    ax.set_ylabel(f"value dimension '{features[j]}'")
    ax.set_title(title)
    # Below the plot, so the labels' text never squeezes the board.
    # Anchored at its left edge: a longer label in one frame widens the legend to the right
    # and leaves every entry where it was.
    ax.legend(loc="upper left", bbox_to_anchor=(-0.1, -0.14), ncol=2, fontsize=9, frameon=False)
    # Fixed margins, not tight_layout: the legend's text changes from one slider frame to
    # the next, and the board must not move under the reader's eye.
    fig.subplots_adjust(left=0.12, right=0.96, top=0.93, bottom=0.27)

    where = [
        f"{label} at ({o[0]:.2f}, {o[1]:.2f}), "
        + ("inside the hull" if inside_hull(o, P) else "OUTSIDE the hull")
        for label, o in outputs.items()
    ]
    alt = (
        f"Scatter plot: {title}. The {len(tokens)} value vectors in dimensions "
        f"'{features[i]}' and '{features[j]}'; the hull's corners are "
        + ", ".join(f"'{tokens[c]}'" for c in corners)
        + ". Blended outputs: "
        + "; ".join(where)
        + "."
    )
    if cards:
        named = ", ".join(f"'{token}'" for token in cards)
        alt += (
            " Each pin is a token's value vector, its card, labelled with the token; the "
            f'pin of {named} reads "card of" to tell it from a blend named after it.'
        )
    return fig, alt


def contributions(
    weights, V, tokens, *, features=None, title: str, fmt: str = ".2f", even: bool = False
):
    r"""One output row as stacked bars: the term ``weights[j] * V[j, f]`` of each key token.

    Parameters
    ----------
    weights : array_like of shape (n_k,)
        One query's attention weights.
    V : array_like of shape (n_k, d_v)
        Non-negative values (stacked bars cannot show signs).
    tokens : sequence of str, length n_k
    features : sequence of str, length d_v, optional
        Names of the value dimensions, one bar each.
    title : str
    fmt : str, default ".2f"
    even : bool, default False
        Mark above and below each bar, with a black triangle, what even weights
        (``1/n_k`` each) would give: the average of that column of ``V``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Each bar's total (the output element) and its largest term.

    Notes
    -----
    Bar ``f`` has length :math:`\text{output}_f = \sum_j w_j V_{jf}`, a sum of one
    segment per key token ``j``.
    """
    w = as_float_array(weights, "weights")
    V = as_float_array(V, "V", min_ndim=2)
    if w.ndim != 1 or V.ndim != 2 or V.shape[0] != w.shape[0] or len(tokens) != w.shape[0]:
        raise ValueError(
            f"need weights (n_k,), V (n_k, d_v) and n_k tokens: weights has shape {w.shape}, "
            f"V has shape {V.shape}, {len(tokens)} tokens given"
        )
    if V.min() < 0 or w.min() < 0:
        raise ValueError("stacked bars need non-negative weights and values to add up")
    d_v = V.shape[1]
    features = list(features or [f"dimension {k}" for k in range(d_v)])
    terms = w[:, None] * V  # (n_k, d_v): one segment per token and value dimension
    totals = terms.sum(axis=0)  # (d_v,) = w @ V

    fig, ax = plt.subplots(figsize=(7.4, 1.2 + 0.62 * d_v))
    height = 0.56  # thin bars leave room above and below for the even-weight marks
    left = np.zeros(d_v)
    names = []  # (text, segment start, segment width): kept only if the name fits
    for k, token in enumerate(tokens):
        ax.barh(
            range(d_v),
            terms[k],
            height=height,
            left=left,
            color=_OKABE_ITO[k % len(_OKABE_ITO)],
            hatch=_HATCHES[k % len(_HATCHES)],
            edgecolor="white",
            linewidth=0.6,
            label=token,
        )
        for f in np.flatnonzero(terms[k] > 0):
            text = ax.text(
                left[f] + terms[k, f] / 2,
                f,
                token,
                ha="center",
                va="center",
                fontsize=10,
                bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "linewidth": 0},
            )
            names.append((text, left[f], terms[k, f]))
        left += terms[k]
    baseline = V.mean(axis=0)  # (d_v,): the output of even weights, 1/n_k each
    if even:
        # A triangle above and one below each bar, never across it: no name hides them.
        for side, marker in ((-1, "v"), (1, "^")):
            ax.scatter(
                baseline,
                np.arange(d_v) + side * (height / 2 + 0.1),
                marker=marker,
                s=42,
                color="black",
                zorder=3,
                label=f"even weights (1/{len(tokens)} each)" if side < 0 else None,
            )
    for f, total in enumerate(totals):
        end = max(total, baseline[f]) if even else total  # the number clears the mark
        ax.annotate(
            format(total, fmt),
            (end, f),
            xytext=(7, 0),  # a gap, so the last segment's name never runs into the total
            textcoords="offset points",
            va="center",
            fontsize=10,
            weight="bold",
        )
    ax.set_yticks(range(d_v), features)
    ax.tick_params(labelsize=10)
    ax.invert_yaxis()  # first value dimension on top, as in the matrix
    ax.set_ylim(d_v - 0.5, -0.5)
    ax.set_xlim(0, max(totals.max(), baseline.max() if even else 0, 1e-12) * 1.2)
    ax.set_xlabel("output value = sum of weight × value over the keys", fontsize=10)
    ax.set_title(title, fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=10, frameon=False)
    fig.tight_layout()
    # Name a segment only where the name fits inside it; the legend names the rest.
    renderer = fig.canvas.get_renderer()
    pad = 2 * 0.25 * 10 * fig.dpi / 72 + 2  # the white box's padding, both sides, and 2 px
    for text, start, width in names:
        x0, x1 = ax.transData.transform([(start, 0), (start + width, 0)])[:, 0]
        if text.get_window_extent(renderer).width + pad > x1 - x0:
            text.remove()

    parts = []
    for f, name in enumerate(features):
        top = int(np.argmax(terms[:, f]))
        parts.append(
            f"'{name}' {format(totals[f], fmt)} (largest term from '{tokens[top]}', "
            f"{format(terms[top, f], fmt)})"
            if totals[f] > 0
            else f"'{name}' {format(0.0, fmt)}"
        )
    alt = (
        f"Stacked bar chart: {title}. One bar per value dimension: "
        + "; ".join(parts)
        + ". A segment carries its token's name where the name fits; the others are matched "
        "to the legend by colour and hatch."
    )
    if even:
        alt += (
            f" Black triangles above and below each bar mark what even weights, "
            f"1/{len(tokens)} each, "
            "would give: "
            + "; ".join(
                f"'{name}' {format(b, fmt)}" for name, b in zip(features, baseline, strict=True)
            )
            + "."
        )
    return fig, alt


def _one_hot(w) -> bool:
    w = np.asarray(w, dtype=float)
    return bool(np.isclose(w.max(), 1.0) and np.allclose(np.sort(w)[:-1], 0.0))


def _points(points, name: str) -> np.ndarray:
    P = as_float_array(points, name, min_ndim=2)
    if P.ndim != 2 or P.shape[1] != 2:
        raise ValueError(f"{name} must have shape (m, 2), got shape {P.shape}")
    return P


def _cross(o, a, b) -> float:
    """z of (a - o) x (b - o): positive when o -> a -> b turns left (counter-clockwise)."""
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))

"""Figures for chapter 6: where a blend of value vectors lands, and what it is made of.

* :func:`blend_hull` draws the value vectors as labelled points in two of their
  dimensions, the convex hull around them, and the output of a few weight rows.
* :func:`~.contributions.contributions` (in ``contributions.py``) splits one output row
  into the terms ``weight_j * V[j]``, one stacked segment per key token.

The geometry behind the hull figure, :func:`~.hull.convex_hull` and
:func:`~.hull.inside_hull`, is in ``hull.py``, public so a notebook can assert what it shows.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..validate import as_float_array
from .base import CMAP
from .hull import convex_hull, inside_hull

_MARKERS = ("o", "D", "^", "s", "v", "P", "X")  # ring, diamond, triangle first
_ESCAPED = "#D55E00"  # Okabe-Ito vermilion: a blend outside the hull
_TOKEN_PT = 11  # a token's tag: 13.75 CSS px at 1280 px, 12.4 on a phone


def blend_hull(
    V,
    tokens,
    blends: dict,
    *,
    dims=(0, 1),
    features=None,
    title: str,
    cards=(),
    named=(),
    rings=(),
    trail=None,
):
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
    named : sequence of str, optional
        Labels of ``blends`` whose output also gets its name on the board, with a pointer
        (the legend names every blend).
    rings : sequence of str, optional
        Labels of ``blends`` drawn as a hollow ring, like a one-hot row, so a blend that
        lands on the same spot stays in sight inside it.
    trail : (str, array_like of shape (m, n_k)), optional
        A label and ``m`` weight rows: their outputs are joined by a faint line, the path
        one output takes as a knob turns. The board's limits take in the whole path, so
        slider frames that share it share one board.

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
    path = None
    if trail is not None:
        trail_label, rows = trail
        rows = as_float_array(rows, "trail")
        if rows.ndim != 2 or rows.shape[1] != V.shape[0]:
            raise ValueError(
                f"the trail needs weight rows of shape (m, {V.shape[0]}), got {rows.shape}"
            )
        path = rows @ P  # (m, 2)

    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    corners = convex_hull(P)
    ring = P[np.append(corners, corners[0])]
    fill = plt.get_cmap(CMAP)(0.9)
    ax.fill(ring[:, 0], ring[:, 1], color=fill, alpha=0.25, zorder=0)
    ax.plot(ring[:, 0], ring[:, 1], "--", color="0.35", linewidth=1, label="convex hull")
    # The pins are drawn above every blend's mark, so a blend that lands on a pin never
    # hides it; the white rim keeps a pin in sight on a dark mark.
    ax.scatter(
        P[:, 0],
        P[:, 1],
        s=30,
        color="0.15",
        edgecolor="white",
        linewidth=0.8,
        zorder=20,
        label="value vectors (cards)",
    )
    centre = P.mean(axis=0)
    span = np.ptp(P, axis=0).max() or 1.0
    for k, token in enumerate(tokens):
        pin = f"card of '{token}'" if token in cards else token
        _pin_label(ax, pin, P[k], P[k] - centre, span)
    if path is not None:
        ax.plot(*path.T, "-", color="0.55", linewidth=1.2, alpha=0.7, zorder=1, label=trail_label)
    # The k-th blend keeps its shade whatever the count, so a slider frame matches the figure.
    shades = plt.get_cmap(CMAP)(np.linspace(0.0, 0.75, max(len(outputs), 4)))
    for k, (label, o) in enumerate(outputs.items()):
        # A one-hot row lands exactly on its pin: a hollow ring keeps the pin, and any
        # output that comes close to it, in sight.
        hollow = _one_hot(blends[label]) or label in rings
        # A blend that escapes the hull is vermilion, apart from the hull's pale fill.
        shade = shades[k] if inside_hull(o, P) else _ESCAPED
        ax.scatter(
            *o,
            s=170 if hollow else 110 - 12 * k,
            marker=_MARKERS[k],
            facecolor="none" if hollow else shade,
            edgecolor=shade if hollow else "black",
            linewidth=2.0 if hollow else 0.8,
            zorder=3 + k,
            label=f"{label}: ({o[0]:.2f}, {o[1]:.2f})",
        )
    # A blend that lands on a pin gets a pointer and its name, set off towards the middle
    # of the board, so it is not taken for the pin (or the ring of a one-hot row there).
    # A blend in ``named`` gets the same, set off below it; every label stays inside the axes.
    for label, o in outputs.items():
        on_pin = np.linalg.norm(P - o, axis=1).min() <= 0.03 * span
        if _one_hot(blends[label]) or not (on_pin or label in named):
            continue  # a one-hot row belongs on its pin, as a ring
        away, ha = (-20 * np.sign(o[0] - centre[0]), -75 * np.sign(o[1] - centre[1])), "center"
        if not on_pin and not inside_hull(o, P):  # outside: named level with it, inwards
            away, ha = (-40 * np.sign(o[0] - centre[0]), 0), "right" if o[0] > centre[0] else "left"
        elif not on_pin:  # inside: below, to the right; near the right edge the text ends
            # there, so it stays inside the axes
            right = o[0] > P[:, 0].min() + 0.75 * np.ptp(P[:, 0])
            away, ha = ((30, -62), "right") if right else ((45, -40), "center")
        ax.annotate(
            label,
            o,
            xytext=away,
            textcoords="offset points",
            ha=ha,
            va="center",
            fontsize=_TOKEN_PT,  # as large as the tokens' tags
            bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "linewidth": 0},
            arrowprops={"arrowstyle": "->", "color": "black", "linewidth": 1},
            zorder=22,
        )
    # Every mark on the board: the pins, each blend (one that escapes too), the whole trail.
    seen = np.vstack([P, *outputs.values(), *([] if path is None else [path])])
    lo, hi = seen.min(axis=0) - 0.16 * span, seen.max(axis=0) + 0.15 * span
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

    def _place(o) -> str:  # a blend on (or within 0.01 of) a corner is on the hull
        near = [c for c in corners if np.abs(o - P[c]).max() < 0.01]
        if near:
            exact = np.allclose(o, P[near[0]])
            return f"on the corner '{tokens[near[0]]}'" + ("" if exact else " (nearly)")
        return "inside the hull" if inside_hull(o, P) else "OUTSIDE the hull"

    where = [f"{label} at ({o[0]:.2f}, {o[1]:.2f}), {_place(o)}" for label, o in outputs.items()]
    alt = (
        f"Scatter plot: {title}. The {len(tokens)} value vectors in dimensions "
        f"'{features[i]}' and '{features[j]}'; the hull's corners are "
        + ", ".join(f"'{tokens[c]}'" for c in corners)
        + ". Blended outputs: "
        + "; ".join(where)
        + "."
    )
    if path is not None:
        alt += (
            f" A faint line, {trail_label}, runs from ({path[0, 0]:.2f}, {path[0, 1]:.2f}) "
            f"to ({path[-1, 0]:.2f}, {path[-1, 1]:.2f})."
        )
    if cards:
        named = ", ".join(f"'{token}'" for token in cards)
        alt += (
            " Each pin is a token's value vector, its card, labelled with the token; the "
            f'pin of {named} reads "card of" to tell it from a blend named after it.'
        )
    return fig, alt


def _one_hot(w) -> bool:
    w = np.asarray(w, dtype=float)
    return bool(np.isclose(w.max(), 1.0) and np.allclose(np.sort(w)[:-1], 0.0))


def _pin_label(ax, text: str, xy, away, span: float) -> None:
    """A token's name in a framed tag, set off from its pin away from the middle of the
    board: clear of any mark on the pin (the one-hot ring is 13 pt wide), and a
    one-letter name such as "I" is a tag to find, not a lone stroke."""
    x, y = np.asarray(away, dtype=float) / span
    norm = np.hypot(x, y)
    x, y = (x / norm, y / norm) if norm > 1e-9 else (0.7, 0.7)  # a pin in the middle
    if abs(x) >= 0.85:  # mostly sideways: straight out, level with the pin, so pins one
        x, y = np.sign(x), 0.0  # above the other ("the", "and", "was") keep their order
    ax.annotate(
        text,
        xy,
        xytext=(15 * x, 15 * y),
        textcoords="offset points",
        arrowprops={"arrowstyle": "-", "color": "0.45", "lw": 0.8, "shrinkA": 0, "shrinkB": 2},
        ha="left" if x > 0.38 else "right" if x < -0.38 else "center",
        va="bottom" if y > 0.38 else "top" if y < -0.38 else "center",
        fontsize=_TOKEN_PT,
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "0.45", "lw": 0.8},
        zorder=21,
    )

"""Figures for chapter 3: dot products as arrows, the score matrix, one query's row."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patheffects
from matplotlib.patches import Rectangle

from ..validate import as_float_array
from .matrices import bar_row, heatmap

# Okabe-Ito colours (blue, vermillion, bluish green, reddish purple), told apart with
# the common kinds of colour blindness; line styles and markers add a second cue.
_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")
_STYLES = ("-", "--", "-.", ":")
_TEXT_PT = 10  # the smallest text of a bar chart
_CELL_PT = 9  # the numbers in a score heatmap's cells: 11.25 px in the PNG
# Arrows that point the same way share one line from the origin, the longest lowest.
# With the query on the line, the longest is widest and each shorter one narrower on top;
# keys alone on a line go the other way, a thick short key over a long thin one (review
# 03_z), so every one stays visible and every one starts at the origin.
_WIDTHS = (4.5, 2.6, 1.4)
_RIM = 1.5  # the white outline of an arrow drawn over a wider one, added to its width


def _widths(vectors) -> list[float]:
    """A line width for each 2-D vector (the query first): 2.2 for one alone in its
    direction; for several in one direction, ``_WIDTHS`` from the longest to the shortest
    if the query is among them, else from the shortest to the longest."""
    units = [tuple(np.round(v / np.linalg.norm(v), 6)) if v.any() else None for v in vectors]
    widths = []
    for i, u in enumerate(units):
        group = [j for j, w in enumerate(units) if w == u and u is not None]
        if len(group) < 2:
            widths.append(2.2)
            continue
        by_length = sorted(group, key=lambda j: -float(np.linalg.norm(vectors[j])))
        if 0 not in group:  # keys alone: the shortest widest
            by_length.reverse()
        widths.append(_WIDTHS[min(by_length.index(i), len(_WIDTHS) - 1)])
    return widths


def _same_ray(u, v) -> bool:
    """Whether two non-zero 2-D vectors point exactly the same way."""
    return bool(abs(u[0] * v[1] - u[1] * v[0]) < 1e-9 and u @ v > 0)


def score_heatmap(matrix, rows, cols=None, *, mark=None, **kwargs):
    """:func:`~attention_lib.plotting.heatmap` with its cell numbers at 9 pt (11.25 px in
    the PNG, so at least 9 px on a 1280 px screen) and its column labels upright when
    each fits in its column; same arguments. Its alt text adds the highest cell of each
    column, so questions about columns can be answered without seeing the figure.
    ``mark=(i, j)`` outlines the cell the prose talks about (black inside a white rim, seen
    on dark and light cells alike) and names it in the alt text."""
    M = np.asarray(matrix, dtype=float)
    if mark is not None and (
        np.shape(mark) != (2,)
        or not all(0 <= m < size for m, size in zip(mark, M.shape, strict=True))
    ):
        raise ValueError(f"mark must be a (row, column) inside shape {M.shape}, got {mark!r}")
    fig, alt = heatmap(matrix, rows, cols, **kwargs)
    cols = rows if cols is None else cols
    fmt = kwargs.get("fmt", ".2f")
    tops = [
        f"'{cols[j]}' from '{rows[int(M[:, j].argmax())]}' ({format(M[:, j].max(), fmt)})"
        for j in range(M.shape[1])
    ]
    head, sep, scale = alt.partition(" Colour scale")  # the columns go after the rows
    alt = f"{head} Highest per column: {', '.join(tops)}.{sep}{scale}"
    ax = fig.axes[0]
    for text in ax.texts:
        text.set_fontsize(_CELL_PT)
    labels = ax.get_xticklabels()
    for label in labels:
        label.set(rotation=0, ha="center")
    renderer = fig.canvas.get_renderer()
    column = ax.get_window_extent(renderer).width / len(labels)
    if max(label.get_window_extent(renderer).width for label in labels) > 0.9 * column:
        for label in labels:  # too wide side by side: back to heatmap's slant
            label.set(rotation=45, ha="right")
    if mark is not None:
        i, j = mark
        rim = [patheffects.withStroke(linewidth=5, foreground="white")]
        box = Rectangle((j - 0.44, i - 0.44), 0.88, 0.88, fill=False, edgecolor="black")
        box.set(linewidth=2, path_effects=rim, zorder=3)
        ax.add_patch(box)
        fmt_ij = format(M[i, j], fmt)
        alt += f" Outlined: '{rows[i]}' -> '{cols[j]}' ({fmt_ij})."
    fig.tight_layout()
    return fig, alt


def score_bars(
    scores, labels, *, title: str, ylim=None, fmt: str = ".2f", top_label: str | None = None
):
    """Draw one query's raw scores against every key as labelled bars.

    Parameters
    ----------
    scores : array_like of shape (n_k,)
        One row of ``Q Kᵀ``.
    labels : sequence of str, length n_k
        Key tokens.
    title : str
    ylim : (float, float) or None
        A fixed axis (use one for every frame of a slider); ``None`` fits the data.
    fmt : str, default ".2f"
        Format of the numbers printed above the bars.
    top_label : str, optional
        A legend entry for the highlighted (largest) bar, e.g. ``"largest score ('cake')"``;
        also in the alt text.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The largest and smallest scores with their keys.

    Notes
    -----
    Same picture as :func:`~attention_lib.plotting.bar_row`, but the axis says *score*:
    these are raw dot products, not weights, so they need not lie in [0, 1].
    """
    fig, alt = bar_row(scores, labels, title=title, ylim=ylim, fmt=fmt, top_label=top_label)
    ax = fig.axes[0]
    ax.set_ylabel("score q · k")
    ax.set_xlabel("key")
    # bar_row prints its numbers and legend at 8 pt; a slider frame is drawn a little
    # narrower than its PNG, so read them at the tick labels' size.
    legend = ax.get_legend()
    for text in [*ax.texts, *(legend.get_texts() if legend is not None else [])]:
        text.set_fontsize(_TEXT_PT)
    fig.tight_layout()
    return fig, alt


def dot_product_arrows(query, keys, key_labels, *, title: str):
    r"""Draw a 2-D query and some keys as arrows, each key labelled with its dot product.

    Parameters
    ----------
    query : array_like of shape (2,)
    keys : array_like of shape (m, 2), 1 <= m <= 4
    key_labels : sequence of str, length m
    title : str

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The query and every key with its score, e.g. "'same way' (1.5, 1.5): 3.00".

    Notes
    -----
    The label of key :math:`k` is :math:`q \cdot k = \lVert q \rVert \lVert k \rVert
    \cos\theta`: large when the arrows point the same way, 0 at a right angle, negative
    when they point apart.
    """
    q = as_float_array(query, "query")
    K = as_float_array(keys, "keys")
    if q.shape != (2,) or K.ndim != 2 or K.shape[1] != 2:
        raise ValueError(
            f"need a 2-D query of shape (2,) and keys of shape (m, 2): query has shape "
            f"{q.shape}, keys have shape {K.shape}"
        )
    if isinstance(key_labels, str) or len(key_labels) != K.shape[0]:
        raise ValueError(f"need one label per key: {K.shape[0]} keys, labels {key_labels!r}")
    if K.shape[0] > len(_STYLES):
        raise ValueError(f"at most {len(_STYLES)} keys fit in one picture, got {K.shape[0]}")
    scores = K @ q  # (m,): one dot product per key
    reach = 1.4 * max(np.abs(K).max(), np.abs(q).max())  # the axes run -reach..reach
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    ax.set_aspect("equal")
    # Arrows that point the same way lie on one line from the origin, the longest lowest;
    # their widths (_widths) keep every one visible.
    vectors = [q, *K]
    widths = _widths(vectors)
    draw = [("query q", q, "black", "-", widths[0])]
    draw += [
        (label, k, colour, style, width)
        for k, label, colour, style, width in zip(
            K, key_labels, _COLOURS, _STYLES, widths[1:], strict=False
        )
    ]
    for _, tip, colour, style, width in draw:
        length = float(np.linalg.norm(tip))
        z = 3 + 1 / (1 + length)  # shorter on top
        # An arrow drawn over a longer one gets a white outline, so it stands out from
        # the colour beneath it rather than blending into it.
        over = any(_same_ray(t, tip) and t @ t > tip @ tip for _, t, _, _, _ in draw)
        outline = over and [patheffects.withStroke(linewidth=width + _RIM, foreground="white")]
        rim = over and [patheffects.withStroke(linewidth=1.5, foreground="white")]
        ax.plot(
            [0, tip[0]],
            [0, tip[1]],
            linestyle=style,
            color=colour,
            linewidth=width,
            zorder=z,
            solid_capstyle="butt",
            path_effects=outline or None,
        )
        ax.annotate(  # a solid head, even on a dashed line, wider than its line
            "",
            tip,
            tip - 1e-3 * tip,
            arrowprops={
                "arrowstyle": "-|>",
                "color": colour,
                "linewidth": 0,
                "mutation_scale": 8 + 4 * width,
                "shrinkA": 0,
                "shrinkB": 0,
                "path_effects": rim or None,
            },
            zorder=z,
        )
    for i, (k, label, score) in enumerate(zip(K, key_labels, scores, strict=True)):
        # Each label sits at its key's tip, on the side away from the query: below a key
        # clockwise of q, above one anticlockwise. A key that ends on the query's shaft
        # (same way, shorter) is labelled below and to the right, clear of the arrowhead;
        # one that ends on a longer key's shaft, beside that shaft, away from q.
        cross = q[0] * k[1] - q[1] * k[0]  # < 0: k is clockwise of q
        on_shaft = abs(cross) < 1e-9 and 0 < k @ q < q @ q
        on_key = any(
            j != i and abs(k[0] * o[1] - k[1] * o[0]) < 1e-9 and 0 < k @ o < o @ o
            for j, o in enumerate(K)
        )
        right = k[0] >= 0
        below = on_shaft or (right and cross < 0)
        text = f"{label}\nq·k = {score:.2f}"
        if on_key and not on_shaft:
            # On a longer key's shaft: the label goes beside it, away from q, with a thin
            # leader line to the tip. Near the y-axis it moves across it, off the axis line.
            away = cross > 0  # anticlockwise of q: up and to the left
            sign = -1 if away else 1
            x = k[0] + sign * 0.1 * reach
            if 0 <= -sign * k[0] < 0.5 * reach:
                x = sign * 0.06 * reach  # wholly on the far side of the y-axis
            ax.annotate(
                text,
                k,
                xytext=(x, k[1] - sign * 0.08 * reach),
                textcoords="data",
                ha="right" if away else "left",
                va="bottom" if away else "top",
                fontsize=9,
                arrowprops={"arrowstyle": "-", "color": "0.3", "linewidth": 0.8, "shrinkB": 3},
            )
            continue
        xytext = (12, -8) if on_shaft else (6 if right else -6, -4 if below else 4)
        ha = "left" if right or on_shaft else "right"
        va = "top" if below else "baseline"
        ax.annotate(text, k, textcoords="offset points", xytext=xytext, ha=ha, va=va, fontsize=9)
    ax.annotate("query q", q, textcoords="offset points", xytext=(8, -2), ha="left", va="top")
    for k in K:  # a right-angle mark where a key is perpendicular to q
        if abs(k @ q) < 1e-9 * np.linalg.norm(k) * np.linalg.norm(q):
            u, v = 0.07 * reach * q / np.linalg.norm(q), 0.07 * reach * k / np.linalg.norm(k)
            corner = np.array([u, u + v, v])  # (3, 2): along q, the square's far corner, along k
            ax.plot(*corner.T, color="0.3", linewidth=0.9, zorder=2, gid="right angle")
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.axvline(0, color="grey", linewidth=0.5)
    ax.set_xlabel("coordinate 1")
    ax.set_ylabel("coordinate 2")
    ax.set_title(title)
    fig.tight_layout()
    parts = [
        f"'{label}' ({k[0]:g}, {k[1]:g}): {score:.2f}"
        for k, label, score in zip(K, key_labels, scores, strict=True)
    ]
    alt = (
        f"Arrows: {title}. Query q = ({q[0]:g}, {q[1]:g}); each key with its dot product "
        "with q: " + ", ".join(parts) + "."
    )
    return fig, alt

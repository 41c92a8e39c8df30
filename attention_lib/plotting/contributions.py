"""Chapter 6's stacked bars: one output row split into the terms ``weight_j * V[j]``, one
segment per key token, with what even weights would give marked on each bar.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.legend_handler import HandlerTuple

from ..validate import as_float_array

# Okabe & Ito's eight colours, told apart with the common kinds of colour blindness; the
# hatches tell neighbouring segments apart in greyscale too.
# Orange and vermilion, the two close hues, sit four apart: on the toy's sentence they fall
# on "I" and "and", never on "I" and "it".
_OKABE_ITO = (
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#D55E00",
    "#CC79A7",
    "#0072B2",
    "#999999",  # grey in place of Okabe & Ito's black: a black segment outweighs the rest
)
_HATCHES = ("", "//", "..", "xx", "\\\\", "oo", "--", "||")


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

    # The legend goes under the bars, so the bars get the full width and more names fit.
    fig, ax = plt.subplots(figsize=(7.4, 2.2 + 0.62 * d_v + 0.15 * even))
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
    marks = []
    if even:
        # A triangle above and one below each bar, never across it: no name hides them.
        for side, marker in ((-1, "v"), (1, "^")):
            marks.append(
                ax.scatter(
                    baseline,
                    np.arange(d_v) + side * (height / 2 + 0.1),
                    marker=marker,
                    s=42,
                    color="black",
                    zorder=3,
                )
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
    handles, labels = ax.get_legend_handles_labels()
    ncol = min(len(tokens), 8)  # one row for a sentence of up to eight tokens
    rows = -(-len(tokens) // ncol)
    # Matplotlib fills a legend column by column: reorder it so it reads row by row,
    # in sentence order.
    order = [r * ncol + c for c in range(ncol) for r in range(rows) if r * ncol + c < len(labels)]
    if marks:  # its own legend, under the tokens', showing both triangles as on the bars
        fig.legend(
            [tuple(marks)],
            [f"even weights (1/{len(tokens)} each)"],
            handler_map={tuple: HandlerTuple(ndivide=None)},
            loc="lower center",
            fontsize=10,
            frameon=False,
        )
    ax.legend(
        [handles[k] for k in order],
        [labels[k] for k in order],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.22),
        ncol=ncol,
        fontsize=10,
        frameon=False,
        handlelength=1.4,
        columnspacing=1.0,
    )
    fig.tight_layout(rect=(0, 0.045 if marks else 0, 1, 1))
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

"""Split, attend, concatenate, project, drawn on a small example (chapter 7).

:func:`split_concat` draws every step of multi-head attention on real numbers, one panel
each: the query matrix cut into head blocks, each head's weights, the heads' outputs side
by side, and that concatenation times ``W_o`` (left out when ``W_o`` is None). The shape
tracer (``tracer.py``) shows the same steps as shapes only.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..heads import multi_head_attention
from .base import CMAP, text_colour

__all__ = ["split_concat"]

DIVERGING = "PuOr"  # the lower row's signed numbers: 0 white, -1 and +1 apart

# Okabe-Ito orange, blue, green, purple: one per head, with a line style each, so the
# heads differ in more than colour.
_HEAD_COLOURS = ("#E69F00", "#0072B2", "#009E73", "#CC79A7")
_HEAD_STYLES = ("-", "--", "-.", ":")


def _short(x: float) -> str:
    """A cell's number in at most four characters: 16, 9.6, .97, -.5."""
    if abs(x) >= 10:
        return f"{x:.0f}"
    if abs(x - round(x)) < 0.005:
        return f"{round(x):.0f}"
    text = f"{x:.2f}" if abs(x) < 1 else f"{x:.1f}"
    return text.replace("0.", ".", 1)


def _panel(ax, M, title, rows, cols, fontsize, numbers, span=None, cmap=CMAP):
    """One labelled heatmap; ``numbers``: True for every cell, or the rows to number."""
    lo, hi = span if span else (float(M.min()), float(M.max()))
    image = ax.imshow(M, cmap=cmap, vmin=lo, vmax=hi if hi > lo else lo + 1, aspect="equal")
    ax.set_title(title, fontsize=fontsize + 1, pad=22)
    ax.set_xticks(range(M.shape[1]), cols, rotation=90, fontsize=fontsize)
    ax.set_yticks(range(M.shape[0]), rows if rows else [], fontsize=fontsize)
    ax.tick_params(length=0)
    for (i, j), value in np.ndenumerate(M):
        if numbers is True or (numbers and i in numbers):
            colour = text_colour((value - lo) / (hi - lo) if hi > lo else 0.0, cmap)
            ax.text(j, i, _short(value), ha="center", va="center", fontsize=fontsize, color=colour)
    return image


def _blocks(ax, n, h, d_k, fontsize, names):
    """Outline head i's block of d_k columns in its colour and style, labelled above."""
    for i in range(h):
        ax.add_patch(
            Rectangle(
                (i * d_k - 0.5, -0.5),
                d_k,
                n,
                fill=False,
                lw=3,
                ec=_HEAD_COLOURS[i % 4],
                ls=_HEAD_STYLES[i % 4],
                clip_on=False,
            )
        )
        ax.text(i * d_k + (d_k - 1) / 2, -0.8, names[i].removesuffix(" head"), ha="center",
                va="bottom", fontsize=fontsize)  # fmt: skip


def split_concat(
    X, W_q, W_k, W_v, W_o, h, tokens, *, query, cols=None, out_cols=None, head_names=None,
    q_cols=None, title, fontsize=11,
):  # fmt: skip
    """Draw multi-head attention step by step on ``X``, for a small ``h`` (at most 4).

    Parameters
    ----------
    X : array_like of shape (n, d_model)
    W_q, W_k, W_v : array_like of shape (d_model, d_model)
    W_o : array_like of shape (d_model, d_model), or None
        None stops the figure at step 3, the concatenation.
    h : int
        Number of heads; ``d_k = d_model // h``.
    tokens : sequence of str, length n
    query : str
        The token whose row is outlined in every head's weights.
    cols : sequence of str, length d_model, optional
        Names of the concatenation's columns (a head's value features, repeated); the rows
        of ``W_o`` get the same names, with their head's name (" head" dropped).
    out_cols : sequence of str, length d_model, optional
        Names of the output's columns (what each column of ``W_o`` computes); only with
        a ``W_o``.
    head_names : sequence of str, length h, optional
        What the text calls each head ("head 1", "head 2", ... by default).
    q_cols : sequence of str, length d_model, optional
        Names of the columns of ``Q`` (numbered from 1 by default).
    title : str
        Drawn above the panels, and the alt text's first sentence.

    Returns
    -------
    fig : matplotlib.figure.Figure
        Without ``W_o``, ``Q`` and the first head's weights fill the upper row, the other
        heads' weights and the concatenation the lower one (for h = 2, a 2 x 2 grid).
        ``Q`` has its own colour bar, the weights one from 0 to 1; the concatenation,
        ``W_o`` and the output share one diverging scale (0 white), symmetric about 0.
        Without ``W_o``, a concatenation with no negative number uses the weights'
        colours, from 0 to 1 (or to its largest number, if that is larger).
        The output's rows other than ``query``'s are faded.
    alt : str
        The steps with their shapes, and the query's top key in each head.
    """
    X = np.asarray(X, dtype=float)
    n, d_model = X.shape
    if len(tokens) != n:
        raise ValueError(f"one token per row of X: {len(tokens)} tokens, X has {n} rows")
    if not isinstance(h, int) or not 1 <= h <= 4 or d_model % h:
        raise ValueError(f"h must be 1 to 4 and divide d_model = {d_model}, got {h!r}")
    if query not in tokens:
        raise ValueError(f"query {query!r} is not one of the tokens {list(tokens)}")
    d_k, row = d_model // h, list(tokens).index(query)
    heads_named = (
        list(head_names) if head_names is not None else [f"head {i + 1}" for i in range(h)]
    )
    if len(heads_named) != h or not all(isinstance(x, str) and x for x in heads_named):
        raise ValueError(f"head_names names the {h} heads, got {head_names!r}")
    Q = X @ np.asarray(W_q, dtype=float)  # (n, d_model)
    # with W_o = I the output is the concatenation itself, (n, h d_k); weights (h, n, n)
    concat, weights = multi_head_attention(X, W_q, W_k, W_v, np.eye(d_model), h=h)
    project = W_o is not None  # step 4, or stop at the concatenation
    W_o = np.asarray(W_o if project else np.eye(d_model), dtype=float)
    output = concat @ W_o  # (n, d_model)
    top_abs = max(np.abs(concat).max(), np.abs(W_o).max(), np.abs(output).max(), 1e-12)
    lower = (-float(top_abs), float(top_abs))  # symmetric, so 0 sits at the map's middle
    # no W_o and no negative output: a plain 0-to-1 scale, as the weights have
    signed = project or concat.min() < 0
    lower, cat_cmap = (lower, DIVERGING) if signed else ((0.0, max(1.0, top_abs)), CMAP)
    numbered = [str(j + 1) for j in range(d_model)]  # columns count from 1, as heads do
    cols = list(cols) if cols is not None else numbered
    out_cols = list(out_cols) if out_cols is not None else numbered
    q_cols = list(q_cols) if q_cols is not None else numbered
    for name, names in (("cols", cols), ("out_cols", out_cols), ("q_cols", q_cols)):
        if len(names) != d_model:
            raise ValueError(f"{name} names the {d_model} columns, got {len(names)} names")
    # W_o's rows: "object noun" for the object head's noun, as out_cols name them
    wo_rows = [f"{heads_named[j // d_k].removesuffix(' head')} {col}" for j, col in enumerate(cols)]
    inch = fontsize * 0.6 / 72  # about one character's width, in inches
    below = max(len(t) for t in [*cols, *out_cols, *tokens]) * inch  # rotated labels

    c, left = 0.32, 0.95  # inches: a cell, and the room for the token labels
    gap = max(len(t) for t in wo_rows) * inch + 0.3  # room for W_o's row labels
    row2_y = max(1.0, below + 0.2)
    above = max(len(t) for t in [*q_cols, *tokens]) * inch  # the upper row's labels
    row1_y = row2_y + n * c + above + 0.75  # bottoms of the two rows of panels
    bar = 0.8  # the weights' colour bar and its ticks
    q_bar = 0.75  # Q's own colour bar, between Q and the maps
    lab = max(len(t) for t in tokens) * inch + 0.1  # each map's own row labels
    x_maps, step = left + d_model * c + 0.35 + q_bar + lab, n * c + 0.25 + lab
    if project:  # Q and every map above; the concatenation, W_o and the output below
        map_xy = [(x_maps + i * step, row1_y) for i in range(h)]
    else:  # no W_o: Q and the first map above, the other maps and the concatenation below
        map_xy = [(x_maps, row1_y)] + [(left + (i - 1) * step, row2_y) for i in range(1, h)]
    x_wbar = map_xy[-1][0] + n * c + 0.15  # the weights' colour bar, after the last map
    x_cat = left if project or h == 1 else x_wbar + 0.57 + lab  # room for the bar's ticks
    fig_w = max(x_maps + n * c + 0.3, x_wbar + 0.65, x_cat + d_model * c + 0.25 + bar, 7.0)
    if project:
        fig_w = max(fig_w, left + 3 * d_model * c + gap + 0.95 + 0.35 + bar)
    fig_h = row1_y + n * c + 0.75 + 0.4  # 0.4: the title
    fig = plt.figure(figsize=(fig_w, fig_h))
    fig.suptitle(title, fontsize=fontsize + 2, x=left / fig_w, y=1 - 0.1 / fig_h, ha="left",
                 va="top")  # fmt: skip

    def axes_at(x, y, cols_, rows_):  # inches from the bottom left
        return fig.add_axes([x / fig_w, y / fig_h, cols_ * c / fig_w, rows_ * c / fig_h])

    ax_q = axes_at(left, row1_y, d_model, n)
    maps = [axes_at(x, y, n, n) for x, y in map_xy]
    ax_cat = axes_at(x_cat, row2_y, d_model, n)
    x = left + d_model * c + gap
    if project:
        ax_wo = axes_at(x, row2_y + (n - d_model) * c, d_model, d_model)  # tops aligned
        ax_out = axes_at(x + d_model * c + 0.95, row2_y, d_model, n)

    q_image = _panel(ax_q, Q, "1. split: Q = X W_q", tokens, q_cols, fontsize, True)
    x_qbar = left + d_model * c + 0.15
    cax = fig.add_axes([x_qbar / fig_w, row1_y / fig_h, 0.12 / fig_w, n * c / fig_h])
    q_ticks = sorted({float(Q.min()), float(Q.max())})
    fig.colorbar(q_image, cax=cax, ticks=q_ticks).ax.tick_params(labelsize=fontsize)
    _blocks(ax_q, n, h, d_k, fontsize, heads_named)
    for i, ax in enumerate(maps):
        step = f"2{'abcd'[i]}" if h > 1 else "2"  # a number per panel: 2a, 2b, ...
        title_i = f"{step}. attend: {heads_named[i]} ({n}×{n})"
        image = _panel(ax, weights[i], title_i, tokens, tokens, fontsize, {row}, span=(0, 1))
        for r, w_row in enumerate(weights[i]):  # a uniform row: one label, as the grid has
            if r != row and np.allclose(w_row, 1 / n):
                ax.text((n - 1) / 2, r, f"all 1/{n}", ha="center", va="center",
                        fontsize=fontsize, color=text_colour(1 / n, CMAP))  # fmt: skip
        for side in ax.spines.values():
            side.set(ec=_HEAD_COLOURS[i % 4], ls=_HEAD_STYLES[i % 4], lw=3)
        # the query's row: a white band under a black line reads on dark and light cells
        ax.add_patch(Rectangle((-0.5, row - 0.5), n, 1, fill=False, lw=4.5, ec="white"))
        ax.add_patch(Rectangle((-0.5, row - 0.5), n, 1, fill=False, lw=2, ec="black"))
    y_wbar = map_xy[-1][1]
    cax = fig.add_axes([x_wbar / fig_w, y_wbar / fig_h, 0.12 / fig_w, n * c / fig_h])
    colour_bar = fig.colorbar(image, cax=cax, ticks=[0, 0.5, 1])
    colour_bar.ax.tick_params(labelsize=fontsize)
    widths = "+".join([str(d_k)] * h)
    title_cat = f"3. concatenate ({n}×({widths}))"
    image = _panel(ax_cat, concat, title_cat, tokens, cols, fontsize, True, lower, cat_cmap)
    _blocks(ax_cat, n, h, d_k, fontsize, heads_named)
    x_bar = x_cat + d_model * c + 0.25  # the lower row's bar, beside the concatenation ...
    if project:
        x_bar = _project(ax_wo, ax_out, W_o, output, row, x, c, d_model, n, tokens, wo_rows,
                         out_cols, fontsize, lower)  # fmt: skip
        image = ax_out.images[0]
    cax = fig.add_axes([x_bar / fig_w, row2_y / fig_h, 0.12 / fig_w, n * c / fig_h])
    fig.colorbar(image, cax=cax, ticks=sorted({lower[0], 0.0, lower[1]})).ax.tick_params(
        labelsize=fontsize
    )

    top = [tokens[int(weights[i, row].argmax())] for i in range(h)]
    others = np.delete(weights, row, axis=1)  # the rows labelled 'all 1/n' in the maps
    uniform = np.isclose(others, 1 / n).all(axis=-1).any()
    labelled = f", and a uniform row is labelled 'all 1/{n}'" if uniform else ""
    finds = "; ".join(
        f"{heads_named[i]} gives '{t}' {weights[i, row].max():.2f}" for i, t in enumerate(top)
    )
    scale = (
        f"scale from {_short(lower[0])} (orange) through 0 (white) to {_short(lower[1])} (purple)"
    )
    alt = (
        f"{title}. {'Four' if project else 'Three'} steps on {n} tokens. 1, split: Q = X W_q, "
        f"shape ({n}, {d_model}), its "
        f"columns cut into {h} heads of {d_k}, each block outlined in its head's colour and "
        f"line style. 2, attend: each head's ({n}, {n}) weights, rows and columns labelled with "
        f"the tokens, the row of '{query}' outlined: "
        f"{finds}; their colour runs from 0 to 1{labelled}. 3, concatenate: the heads' "
        f"outputs side by side, "
        f"({n}, {' + '.join([str(d_k)] * h)}), row '{query}' reading "
        f"({', '.join(_short(v) for v in concat[row])})"
    )
    if not signed:
        return fig, f"{alt}, on the weights' colour scale from 0 to {_short(lower[1])}."
    if not project:
        return fig, f"{alt}, on a diverging colour {scale}."
    alt += (
        f". 4, project: the "
        f"concatenation times W_o, ({n}, {d_model}), these three on one diverging colour "
        f"{scale}; the output's other rows are faded, row '{query}' reads "
        f"({', '.join(_short(v) for v in output[row])})"
        + (f", in the columns {', '.join(out_cols)}." if out_cols != numbered else ".")
    )
    return fig, alt


def _project(ax_wo, ax_out, W_o, output, row, x, c, d_model, n, tokens, wo_rows, out_cols,
             fontsize, lower):  # fmt: skip
    """Step 4: W_o and the output, every output row but the query's faded; the bar's x."""
    title_wo = f"4. project: @ W_o ({d_model}×{d_model})"
    _panel(ax_wo, W_o, title_wo, wo_rows, out_cols, fontsize, True, lower, DIVERGING)
    title_out = f"= output ({n}×{d_model})"
    _panel(ax_out, output, title_out, tokens, out_cols, fontsize, True, lower, DIVERGING)
    for r in range(n):  # every row but the query's faded: the text reads that row only
        if r != row:
            ax_out.add_patch(Rectangle((-0.5, r - 0.5), d_model, 1, fc="white", alpha=0.75,
                                       lw=0, zorder=4))  # fmt: skip
    return x + d_model * c + 0.95 + d_model * c + 0.25  # one bar for the lower row

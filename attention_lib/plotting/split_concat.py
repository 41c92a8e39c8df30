"""Split, attend, concatenate, project, drawn on a small example (chapter 7).

:func:`split_concat` draws every step of multi-head attention on real numbers, one panel
each: the query matrix cut into head blocks, each head's weights, the heads' outputs side
by side, and that concatenation times ``W_o``. The shape tracer (``tracer.py``) shows the
same steps as shapes only.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..heads import multi_head_attention
from .base import CMAP, text_colour

__all__ = ["split_concat"]

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


def _panel(ax, M, title, rows, cols, fontsize, numbers):
    lo, hi = float(M.min()), float(M.max())
    ax.imshow(M, cmap=CMAP, vmin=lo, vmax=hi if hi > lo else lo + 1, aspect="equal")
    ax.set_title(title, fontsize=fontsize + 1, pad=22)
    ax.set_xticks(range(M.shape[1]), cols, rotation=90, fontsize=fontsize)
    ax.set_yticks(range(M.shape[0]), rows if rows else [], fontsize=fontsize)
    ax.tick_params(length=0)
    for (i, j), value in np.ndenumerate(M) if numbers else ():
        colour = text_colour((value - lo) / (hi - lo) if hi > lo else 0.0)
        ax.text(j, i, _short(value), ha="center", va="center", fontsize=fontsize, color=colour)


def _blocks(ax, n, h, d_k, fontsize):
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
        ax.text(i * d_k + (d_k - 1) / 2, -0.8, f"head {i + 1}", ha="center", va="bottom",
                fontsize=fontsize)  # fmt: skip


def split_concat(X, W_q, W_k, W_v, W_o, h, tokens, *, query, cols=None, title, fontsize=11):
    """Draw multi-head attention step by step on ``X``, for a small ``h`` (at most 4).

    Parameters
    ----------
    X : array_like of shape (n, d_model)
    W_q, W_k, W_v, W_o : array_like of shape (d_model, d_model)
    h : int
        Number of heads; ``d_k = d_model // h``.
    tokens : sequence of str, length n
    query : str
        The token whose row is outlined in every head's weights.
    cols : sequence of str, length d_model, optional
        Names of the concatenation's columns (a head's value features, repeated).
    title : str

    Returns
    -------
    fig : matplotlib.figure.Figure
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
    Q = X @ np.asarray(W_q, dtype=float)  # (n, d_model)
    # with W_o = I the output is the concatenation itself, (n, h d_k); weights (h, n, n)
    concat, weights = multi_head_attention(X, W_q, W_k, W_v, np.eye(d_model), h=h)
    output = concat @ np.asarray(W_o, dtype=float)  # (n, d_model)
    cols = list(cols) if cols is not None else [str(j) for j in range(d_model)]
    if len(cols) != d_model:
        raise ValueError(f"cols names the {d_model} columns, got {len(cols)} names")

    c, left = 0.32, 0.95  # inches: a cell, and the room for the token labels
    row2_y, row1_y = 1.0, 1.0 + n * c + 1.5  # bottoms of the two rows of panels
    fig_w = max(left + (d_model + h * n) * c + 0.35 + 0.25 * (h - 1) + 0.15, 7.0)
    fig_h = row1_y + n * c + 0.75
    fig = plt.figure(figsize=(fig_w, fig_h))

    def axes_at(x, y, cols_, rows_):  # inches from the bottom left
        return fig.add_axes([x / fig_w, y / fig_h, cols_ * c / fig_w, rows_ * c / fig_h])

    ax_q = axes_at(left, row1_y, d_model, n)
    x = left + d_model * c + 0.35
    maps = [axes_at(x + i * (n * c + 0.25), row1_y, n, n) for i in range(h)]
    ax_cat = axes_at(left, row2_y, d_model, n)
    x = left + d_model * c + 1.1
    ax_wo = axes_at(x, row2_y + (n - d_model) * c, d_model, d_model)  # tops aligned
    ax_out = axes_at(x + d_model * c + 0.95, row2_y, d_model, n)

    numbered = [str(j) for j in range(d_model)]
    _panel(ax_q, Q, "1. Q = X W_q, split", tokens, numbered, fontsize, True)
    _blocks(ax_q, n, h, d_k, fontsize)
    for i, ax in enumerate(maps):
        _panel(
            ax, weights[i], f"2. head {i + 1}'s weights ({n}×{n})", None, tokens, fontsize, False
        )
        for side in ax.spines.values():
            side.set(ec=_HEAD_COLOURS[i % 4], ls=_HEAD_STYLES[i % 4], lw=3)
        ax.add_patch(Rectangle((-0.5, row - 0.5), n, 1, fill=False, lw=2, ec="white"))
        ax.add_patch(Rectangle((-0.5, row - 0.5), n, 1, fill=False, lw=1, ec="black", ls="--"))
    _panel(ax_cat, concat, f"3. concatenation ({n}×{h}·{d_k})", tokens, cols, fontsize, True)
    _blocks(ax_cat, n, h, d_k, fontsize)
    _panel(
        ax_wo,
        np.asarray(W_o, dtype=float),
        f"4. @ W_o ({d_model}×{d_model})",
        cols,
        numbered,
        fontsize,
        True,
    )
    _panel(ax_out, output, f"= output ({n}×{d_model})", tokens, numbered, fontsize, True)

    top = [tokens[int(weights[i, row].argmax())] for i in range(h)]
    finds = "; ".join(
        f"head {i + 1} gives '{t}' {weights[i, row].max():.2f}" for i, t in enumerate(top)
    )
    alt = (
        f"{title}. Four steps on {n} tokens. 1: Q = X W_q, shape ({n}, {d_model}), its "
        f"columns cut into {h} heads of {d_k}, each block outlined in its head's colour and "
        f"line style. 2: each head's ({n}, {n}) weights, the row of '{query}' outlined: "
        f"{finds}. 3: the heads' outputs side by side, ({n}, {h} x {d_k}). 4: the "
        f"concatenation times W_o, ({n}, {d_model}); row '{query}' reads "
        f"({', '.join(_short(v) for v in output[row])})."
    )
    return fig, alt

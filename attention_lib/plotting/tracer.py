"""A tracer of array shapes through multi-head attention (chapter 7).

:func:`trace_shapes` pushes arrays of the requested size through the library's own
functions and records every shape; :func:`shape_tracer` draws that record, so the figure
cannot disagree with the code.
"""

from __future__ import annotations

from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..core import attention_scores, scaled_dot_product_attention
from ..heads import merge_heads, split_heads
from ..validate import check_positive_int

# --- Following the shapes through multi-head attention -------------------------------------


class Step(NamedTuple):
    """One step of multi-head attention: what it computes and the shape it produces."""

    name: str  # short label, e.g. "split"
    code: str  # the step in the course's notation
    shape: tuple  # shape of the array it produces (for Q/K/V: each of them)
    macs: int  # multiply-adds of the matrix products in this step
    params: int  # learned numbers this step uses (entries of W_q, W_k, W_v, W_o)


def trace_shapes(n: int, d_model: int, h: int) -> list[Step]:
    """Run multi-head attention on zeros of the given size and record every shape.

    ``n`` tokens, model width ``d_model``, ``h`` heads (``h`` divides ``d_model``). The
    shapes come from real calls to :func:`split_heads`, :func:`attention_scores`,
    :func:`scaled_dot_product_attention` and :func:`merge_heads`, not from formulas.
    Returns the steps X, Q/K/V, split, scores, weights, heads, concat, output.
    """
    n, d_model, h = (
        check_positive_int(v, name) for v, name in ((n, "n"), (d_model, "d_model"), (h, "h"))
    )
    if d_model % h:
        raise ValueError(f"h = {h} heads must divide d_model = {d_model}")
    d_k = d_model // h
    X = np.zeros((n, d_model))  # (n, d_model)
    W = np.zeros((d_model, d_model))  # W_q, W_k, W_v and W_o all have this shape
    Q = X @ W  # (n, d_model); K and V alike
    Qh = split_heads(Q, h)  # (h, n, d_k); K and V alike
    scores = attention_scores(Qh, Qh) / np.sqrt(d_k)  # (h, n, n)
    heads, weights = scaled_dot_product_attention(Qh, Qh, Qh)  # (h, n, d_k), (h, n, n)
    concat = merge_heads(heads)  # (n, h * d_k)
    output = concat @ W  # (n, d_model)
    return [
        Step("X", "X", X.shape, 0, 0),
        Step("Q, K, V", "Q = X W_q (and K, V)", Q.shape, 3 * _macs(X, W), 3 * W.size),
        Step("split", "Q_i = split_heads(Q, h)", Qh.shape, 0, 0),
        Step(
            "scores",
            "scores_i = Q_i K_iᵀ / √d_k",
            scores.shape,
            _macs(Qh, np.swapaxes(Qh, -1, -2)),
            0,
        ),
        Step("weights", "weights_i = softmax(scores_i)", weights.shape, 0, 0),
        Step("heads", "head_i = weights_i V_i", heads.shape, _macs(weights, Qh), 0),
        Step("concat", "concat = merge_heads(heads)", concat.shape, 0, 0),
        Step("output", "output = concat W_o", output.shape, _macs(concat, W), W.size),
    ]


def _macs(a: np.ndarray, b: np.ndarray) -> int:
    """Multiply-adds of ``a @ b``: one per (batch, row of a, column of b, shared index)."""
    *batch, p, q = a.shape
    return int(np.prod(batch, dtype=int)) * p * q * b.shape[-1]


def shape_tracer(n: int, d_model: int, h: int):
    """Draw every array of multi-head attention to scale, one row per step.

    Returns ``(fig, alt)``. Each array is drawn as ``rows x columns`` cells; arrays with
    a head axis as ``h`` numbered blocks side by side; each head's columns are striped
    and numbered in Q and in the concatenation. Under each row's (first) box, the name
    of its width: d_model, d_k or n; left of the first, its height n (every box has n
    rows). The input X has no cost; every later row names its multiply-adds. The figure
    is narrow (5.6 in), its text on a line above each row, so that a phone can read it.
    The parameter count is left out on purpose: chapter 7 asks the reader to work it out.
    """
    steps = trace_shapes(n, d_model, h)
    d_k = d_model // h
    colours = plt.get_cmap("viridis")(np.linspace(0.3, 0.95, h))
    gap = max(1.0, 0.15 * max(n, d_k))
    widest = max(_row_width(s.shape, gap) for s in steps)
    text_h = 0.5 * n  # the line of text above each row of blocks, in cells
    mark_h = 0.45 * n  # under each row: the width of its (first) box, d_model, d_k or n
    row_h = text_h + n + mark_h + gap
    left, right = 0.06 * widest, 0.3 * widest  # left: room for the first row's n
    height = len(steps) * row_h
    fig, ax = plt.subplots(figsize=(5.6, 5.4 * height / (widest + right) + 0.7))
    for r, step in enumerate(steps):
        top = -r * row_h
        y = top - text_h  # top edge of the blocks
        ax.text(0, top, f"{r + 1}. {step.code}", va="top", fontsize=11)
        named = f"({_AXES[step.name]}) = {step.shape}"  # every axis named: (h, n, d_k) = ...
        ax.text(widest + right, top, named, va="top", ha="right", fontsize=10)
        if r == 0:  # every box is n rows tall: the first row says so, once
            ax.text(-0.25, y - n / 2, "n", va="center", ha="right", fontsize=10, style="italic")
        cost = f"{step.macs:,} multiply-adds".replace(" ", "\n")
        if step.name == "X":  # the input, not a step: nothing computed
            cost = "input"
        elif step.name == "Q, K, V":  # three products of the same size
            cost = f"3 × {step.macs // 3:,}\n= {step.macs:,}\nmultiply-adds"
        elif step.name == "weights":  # no products, but element-wise work that grows with h
            cost = f"h n² = {h * n * n:,}\nelement-wise"
        ax.text(widest + 0.04 * widest, y - n / 2, cost, va="center", fontsize=10)
        numbered = h <= 16
        if len(step.shape) == 3:  # (h, rows, cols): one block per head
            rows, cols = step.shape[1:]
            for i in range(h):
                label = f"{i + 1}" if numbered else ""
                _block(ax, i * (cols + gap), y, cols, rows, colours[i], label)
        elif step.name in ("Q, K, V", "concat"):  # (n, d_model): one stripe per head
            for i in range(h):
                _block(ax, i * d_k, y, d_k, n, colours[i], f"{i + 1}" if numbered else "")
        else:  # X, and the output: W_o mixes the heads into every column
            _block(ax, 0, y, step.shape[1], n, "0.85", "")
        across = step.shape[-1] if len(step.shape) == 3 else step.shape[1]  # to scale
        width_name = _AXES[step.name].split(", ")[-1]  # the last axis: d_model, d_k or n
        ax.text(across / 2, y - n - 0.08 * n, width_name, **_WIDTH)
    ax.set_xlim(-left, widest + right)
    ax.set_ylim(-height - 0.5, 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    macs = sum(s.macs for s in steps)
    bottom = -(len(steps) - 1) * row_h - text_h - n - mark_h  # under the last row
    ax.text(widest + 0.04 * widest, bottom - 0.3 * n, f"total\n{macs:,}", va="top", fontsize=10)
    ax.set_title(
        f"Shapes through multi-head attention\nn = {n}, d_model = {d_model}, h = {h}, "
        f"d_k = {d_k}: {macs:,} multiply-adds",
        fontsize=11,
    )
    fig.tight_layout()
    chain = " -> ".join(f"{s.name} {s.shape}" for s in steps)
    alt = (
        f"Shape tracer for n = {n}, d_model = {d_model}, h = {h} (d_k = {d_k}): {chain}. "
        f"The concatenated heads are {steps[6].shape[-1]} wide ({h} heads x {d_k}). "
        f"{macs:,} multiply-adds in all; softmax works on h n^2 = {h * n * n:,} numbers. "
        "Boxes are drawn to scale: n rows, and as wide as the last axis, whose name is under "
        "each row's first box."
    )
    return fig, alt


_AXES = {  # the name of each axis of each step's array: rows are always the n tokens
    "X": "n, d_model",
    "Q, K, V": "n, d_model",
    "split": "h, n, d_k",
    "scores": "h, n, n",
    "weights": "h, n, n",
    "heads": "h, n, d_k",
    "concat": "n, d_model",
    "output": "n, d_model",
}


def _row_width(shape: tuple, gap: float) -> float:
    if len(shape) == 3:
        h, _, cols = shape
        return h * cols + (h - 1) * gap
    return shape[1]


_WIDTH = {"ha": "center", "va": "top", "fontsize": 9, "style": "italic"}
_BOX = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}
_LABEL = {"ha": "center", "va": "center", "fontsize": 8, "bbox": _BOX}


def _block(ax, x: float, y: float, width: float, height: float, colour, label: str) -> None:
    """One array (or one head's slice) as a rectangle whose top-left corner is (x, y)."""
    ax.add_patch(Rectangle((x, y - height), width, height, fc=colour, ec="black", lw=0.6))
    if label:
        ax.text(x + width / 2, y - height / 2, label, **_LABEL)

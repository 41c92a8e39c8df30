"""Chapter 11's block diagram: one layer of a BERT-style encoder, with its shapes.

The residual stream runs down the left. Each sub-layer branches off to the right and
comes back at a "+", and a layer norm follows each add on the stream itself (post-LN,
as in BERT); chapter 12's decoder draws its norms on the branches instead.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from .diagram import arrow as _arrow
from .diagram import box as _box
from .diagram import plus as _plus

_INPUT, _SUBLAYER, _NORM, _OUTPUT = "#E69F00", "#56B4E9", "0.9", "#009E73"  # Okabe-Ito


def encoder_diagram(*, n_layers: int, h: int, d_model: int, d_ff: int):
    """One encoder layer as boxes and arrows, top to bottom, as ``encoder_layer`` runs it.

    Returns ``(fig, alt)``.
    """
    if min(n_layers, h, d_model, d_ff) < 1 or d_model % h:
        raise ValueError(
            f"need positive sizes with h dividing d_model: h={h}, d_model={d_model}, "
            f"d_ff={d_ff}, n_layers={n_layers}"
        )
    d_k = d_model // h
    fig, ax = plt.subplots(figsize=(4.8, 6.4))
    ax.set(xlim=(0, 10), ylim=(0.4, 14))
    ax.set_axis_off()
    main, side = 2.4, 6.7  # x of the residual stream and of the sub-layers

    def box(x, y, text, colour):
        _box(ax, x, y, text, colour)

    def arrow(x0, y0, x1, y1):
        _arrow(ax, x0, y0, x1, y1)

    def plus(y):
        _plus(ax, main, y)

    box(main, 13.4, "[CLS] i ate … [SEP]", "white")
    box(main, 11.9, f"word + position\n+ segment, LN\n(n, {d_model})", _INPUT)
    ax.add_patch(
        FancyBboxPatch(
            (0.6, 3.3), 8.9, 7.3, boxstyle="round,pad=0.1", fc="none", ec="0.4", ls="--", lw=1
        )
    )
    ax.text(9.4, 10.35, f"× {n_layers} layers", ha="right", va="top", fontsize=10)
    branches = (
        (9.2, f"attention, {h} heads\nQ, K, V: ({h}, n, {d_k})\n+ biases, W_o"),
        (5.6, f"feed-forward\n(n, {d_ff}), GELU\nback to (n, {d_model})"),
    )
    for y, what in branches:
        box(side, y, what, _SUBLAYER)
        arrow(main, y + 0.9, side - 1.6, y + 0.6)  # the branch leaves the stream ...
        arrow(side - 1.6, y - 0.6, main + 0.35, y - 1.05)  # ... and comes back at "+"
        plus(y - 1.2)
        box(main, y - 2.1, "LN", _NORM)
    for y0, y1 in ((13.1, 12.6), (11.2, 8.3), (7.7, 7.4), (6.8, 4.7), (4.1, 3.8), (3.2, 2.6)):
        arrow(main, y0, main, y1)  # the stream, from box to box
    ax.text(main - 0.75, 9.4, "residual stream", rotation=90, ha="center", va="center", fontsize=10)
    box(main, 2.3, f"(n, {d_model})", "white")
    arrow(main, 1.95, main + 0.8, 1.45)
    box(main + 2.4, 1.1, f"mean of the real tokens,\nscaled to length 1 ({d_model},)", _OUTPUT)
    fig.tight_layout(pad=0.2)
    alt = (
        f"Block diagram of the whole encoder, top to bottom: embeddings, {n_layers} layers, "
        "pooling. The tokens, [CLS] first and [SEP] last, become the sum of a word, a "
        "position and a segment vector, then a "
        f"layer norm (LN): shape (n, {d_model}). This residual stream (labelled so) runs "
        f"down through a dashed box repeated {n_layers} times. In it the stream "
        f"branches into attention with {h} heads (Q, K and V of shape ({h}, n, {d_k}), "
        "with biases and W_o), whose output is added back (+) and then layer-normed; then into the "
        f"feed-forward network ({d_ff} wide, GELU, back to {d_model}), added back and "
        f"layer-normed again. The output, (n, {d_model}), is averaged over the real tokens "
        f"and scaled to length 1: one sentence vector of {d_model} numbers."
    )
    return fig, alt

"""Figures for chapter 12, the tiny decoder: its loss against two baselines, and its writing.

Curves differ by line style and marker as well as by colour, and every bar is labelled
with its word and value, so nothing relies on colour alone.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch, Rectangle
from matplotlib.text import Text

from ..validate import as_float_array
from .diagram import arrow as _arrow
from .diagram import box as _box
from .diagram import plus as _plus
from .heads import head_heatmaps, keys_below_ticks
from .learning import _TEST, _TRAIN, _UNIFORM, _curve


def loss_vs_baselines(steps, train_loss, test_loss, baselines: dict):
    """The decoder's loss over training, against the held-out loss of simpler models.

    Parameters
    ----------
    steps : array_like of shape (k,)
        The training steps at which the losses were recorded.
    train_loss, test_loss : array_like of shape (k,)
        Loss on (a fixed sample of) training sentences and on held-out sentences, both
        measured with the weights of that step, in nats.
    baselines : dict of str to float
        Held-out loss of each baseline (e.g. ``{"unigram": 4.3, "bigram": 2.3}``),
        drawn as labelled horizontal lines.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        First and last value of each curve, and each baseline.
    """
    s = _curve(steps, "steps")
    train = _curve(train_loss, "train_loss", s.size)
    test = _curve(test_loss, "test_loss", s.size)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(s, train, **_TRAIN, markersize=4, label="decoder, training sentences")
    ax.plot(s, test, **_TEST, markersize=4, label="decoder, held-out sentences")
    styles = ((0, (1, 2)), (0, (6, 2, 1, 2)))
    for (name, value), style in zip(baselines.items(), styles, strict=False):
        ax.axhline(value, color=_UNIFORM["color"], linestyle=style, linewidth=1.4)
        ax.text(s[-1], value, f"{name}, held-out: {value:.2f}", ha="right", va="bottom")
    top = max(train.max(), test.max(), *baselines.values())
    low = min(train.min(), test.min(), *baselines.values())
    ax.set_yscale("log")  # the end, 1.4 to 2, gets room next to a start near 6
    ax.set_ylim(low * 0.9, top * 1.12)  # every point drawn, the starting loss included
    ticks = [t for t in (1, 1.5, 2, 3, 4, 5, 6, 8) if low * 0.9 <= t <= top * 1.12]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats per word, log scale)")
    ax.set_title("Next-word loss: lower is better")
    ax.legend(fontsize=9, loc="upper right")  # above the curves, clear of the baselines
    gap = test[-1] - train[-1]
    ax.annotate(
        f"end: held-out {test[-1]:.2f}, training {train[-1]:.2f} (gap {gap:.2f})",
        (s[-1], test[-1]),
        xytext=(s[-1], test[-1] * 1.25),
        ha="right",
        fontsize=9,
        arrowprops=dict(arrowstyle="-", lw=0.8),
    )
    fig.tight_layout()
    lines = "; ".join(
        f"{name} baseline {value:.2f}" + _first_below(s, test, value)
        for name, value in baselines.items()
    )
    under = "just under" if np.all(train[1:] < test[1:]) else "close to"
    alt = (
        f"Line plot over {int(s[-1])} training steps; the loss axis is logarithmic. "
        f"Training loss from {train[0]:.2f} to {train[-1]:.2f}; held-out loss from "
        f"{test[0]:.2f} to {test[-1]:.2f}; after the start the training curve lies {under} "
        "the held-out curve, so the two look like one line (a note gives the final gap, "
        f"{gap:.2f}). Horizontal "
        f"lines for the held-out loss of models without attention: {lines}."
    )
    return fig, alt


def writing_frame(T: float, words, probs, samples, *, prompt: str, top=8, note="", mark=("", ())):
    """One frame of the temperature slider: the next-word distribution, and what it writes.

    Parameters
    ----------
    T : float
        The temperature the probabilities and samples were made with.
    words : sequence of str
        The vocabulary, one word per entry of ``probs``.
    probs : array_like of shape (len(words),)
        P(next word | prompt) at temperature ``T``; the ``top`` largest are drawn, and one
        hatched bar holds all the other words together.
    samples : sequence of str
        What the model wrote after ``prompt`` at this temperature, one line each under
        the bars (cut with "…" past one line).
    prompt : str
        The words the distribution and the samples continue, for the title.
    note : str, optional
        One more line under the sentences (say, a count over more samples), also in the
        alt text.
    mark : (str, collection of str), optional
        A label and the words whose bars are orange, not navy (say, the ones ``note`` counts).

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The likeliest words with their probabilities, then the sentences.
    """
    p = as_float_array(probs, "probs", min_ndim=1)
    if p.ndim != 1 or len(words) != p.size:
        raise ValueError(f"need one word per probability: probs {p.shape}, {len(words)} words")
    order = np.argsort(-p, kind="stable")[:top]
    labels = [words[i] for i in order]
    rest = float(p.sum() - p[order].sum())  # where the flattened probability goes
    lines = [f"continued at T = {T:g}:"]
    for i, s in enumerate(samples):  # a no-break space keeps the final "." with its word
        line = f"{i + 1}. … {s}".replace(" .", "\u00a0.")
        lines.append(
            textwrap.wrap(line, 70, max_lines=1, placeholder=" …")[0].replace("\u00a0", " ")
        )
    if note:
        lines.append(note)
    text_h = 0.15 * len(lines) + 0.08  # one line each (9 pt): every frame the same size
    height = 0.45 + 1.9 + 0.6 + text_h  # title, bars, word labels, sentences
    fig = plt.figure(figsize=(6.4, height))
    ax = fig.add_axes((0.1, (text_h + 0.6) / height, 0.87, 1.9 / height))
    marked = [w in mark[1] for w in labels]
    kinds = [("#E69F00", mark[0]), (_TRAIN["color"], "other words")]  # Okabe-Ito orange, navy:
    ax.bar(range(len(order)), p[order], color=[kinds[not m][0] for m in marked])  # apart in CVD
    if any(marked):  # the legend names the colour; the tick labels name each word
        handles = [Patch(color=c, label=x) for c, x in kinds]
        ax.legend(handles=handles, loc="upper right", frameon=False, fontsize=9)
    others = f"all {p.size - len(order)} others"
    ax.bar(len(order), rest, color="0.75", edgecolor="black", hatch="//")  # the long tail
    for x, value in enumerate([*p[order], rest]):
        ax.text(x, value + 0.02, f"{value:.2f}", ha="center", fontsize=8)
    ax.set_xticks(range(len(order) + 1), [*labels, others], rotation=30, ha="right", fontsize=9)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("probability")
    ax.set_title(f"T = {T:g}: the next word after “{prompt}”", fontsize=10)
    fig.text(0.02, 0.05 / height, "\n".join(lines), fontsize=9, va="bottom", family="monospace")
    shown = ", ".join(f"'{w}' ({v:.2f})" for w, v in zip(labels, p[order], strict=True))
    named = ", ".join(f"'{w}'" for w, m in zip(labels, marked, strict=True) if m)
    named = f"In orange, the {mark[0]}: {named}. " if named else ""
    alt = (
        f"Bar chart at temperature {T:g} of the likeliest next words after '{prompt}': "
        f"{shown}; all {p.size - len(order)} other words together {rest:.2f}. {named}"
        f"Continued at T = {T:g}: " + " | ".join(samples) + (f" ({note})" if note else "")
    )
    return fig, alt


def _first_below(steps: np.ndarray, loss: np.ndarray, value: float) -> str:
    """', held-out first below it at step 50' (the first measured step under ``value``), or ''."""
    below = np.flatnonzero(loss < value)
    return f", held-out first below it at step {int(steps[below[0]])}" if below.size else ""


def decoder_heads(weights, tokens, *, title: str, head: int, query: str, key: str):
    """:func:`head_heatmaps` at page size, with one cell marked and only row maxima numbered.

    Only each row's largest weight keeps its number (10 pt, bold): 256 numbers would
    shrink to unreadable on the page, and the colour already shows the rest. ``head``
    (counted from 1), ``query`` and ``key`` name the cell that gets a thick pink frame
    (Okabe-Ito reddish purple, unlike either end of cividis) with a black halo, drawn just
    outside the cell so that a row maximum's black-and-white outline stays visible inside
    it; the alt text opens with its weight.
    """
    fig, alt = head_heatmaps(weights, tokens, title=title, cell=0.38)
    for ax in fig.axes[: len(weights)]:  # the panels, not the colour bar
        for text in list(ax.texts):
            if text.get_fontweight() == "bold":
                text.set_fontsize(10)
            elif not text.get_text().startswith("all "):  # a uniform row keeps its one label
                text.remove()
    for text in fig.findobj(Text):  # readable at the page's width: 9 px and more once shrunk
        text.set_fontsize(max(text.get_fontsize(), 11))
    for text in fig.texts:  # the query label next to the tick labels, not at the edge
        if text.get_text() == "query (attending)":
            text.set_x(fig.axes[0].get_position().x0 - 0.75 / fig.get_figwidth())
    n = len(tokens)
    for ax in fig.axes[: len(weights)]:  # masked cells hatched, apart from a learned 0
        for i, j in zip(*np.triu_indices(n, 1), strict=True):
            cell = Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", lw=0, ec="0.6")
            ax.add_patch(cell)
    r, c = tokens.index(query), tokens.index(key)
    pad = 0.125  # of a cell: outside the black outline (3 pt wide) on the cell's edge
    for ax in fig.axes[: len(weights)]:  # the key labels a little lower, clear of the frame
        ax.tick_params(axis="x", pad=5)
    for colour, lw in (("black", 4.5), ("#CC79A7", 3.5)):  # pink on a dark halo: seen on any cell
        box = Rectangle((c - 0.5 - pad, r - 0.5 - pad), 1 + 2 * pad, 1 + 2 * pad, fill=False)
        box.set(lw=lw, ec=colour, clip_on=False, zorder=0.9)  # under outlines and numbers
        fig.axes[head - 1].add_patch(box)
    keys_below_ticks(fig, fig.axes[: len(weights)])  # under the enlarged tick labels
    W = np.asarray(weights)
    lead = f"Head {head} puts {W[head - 1, r, c]:.2f} of the weight of '{query}' on '{key}'"
    lead += " (the cell framed in pink)"
    others = [
        f"head {i + 1} {W[i, r, c]:.2f}, its most on '{tokens[int(np.argmax(W[i, r]))]}' "
        f"({W[i, r].max():.2f})"
        for i in range(len(W))
        if i != head - 1
    ]
    lead += f". From '{query}', the other heads put on '{key}': {'; '.join(others)}"
    lead += ". Only each row's largest weight is printed; the masked cells above the diagonal"
    return fig, f"{lead} are hatched. {alt}"


def decoder_diagram(*, h: int, d_model: int, d_ff: int, n_vocab: int):
    """The one-block decoder as boxes and arrows, top to bottom, as :func:`decoder.forward` runs.

    The residual stream runs down the left; each sub-layer branches off to the right
    through its layer norm and comes back at a "+". Returns ``(fig, alt)``.
    """
    if min(h, d_model, d_ff, n_vocab) < 1 or d_model % h:
        raise ValueError(f"need positive sizes with h dividing d_model: h={h}, d_model={d_model}")
    fig, ax = plt.subplots(figsize=(4.6, 6.2))
    ax.set(xlim=(0, 10), ylim=(0, 14))
    ax.set_axis_off()
    main, side = 2.6, 6.3  # x of the residual stream and of the sub-layers

    def box(x, y, text, colour):
        _box(ax, x, y, text, colour, fontsize=11)

    def arrow(x0, y0, x1, y1):
        _arrow(ax, x0, y0, x1, y1)

    box(main, 13.3, "token ids: <s> I ate the cake …", "white")
    box(main, 11.6, f"$E$[ids] + $E_{{pos}}$\n(n, {d_model})", "#E69F00")  # orange
    ffn = f"FFN, ReLU\n{d_model} → {d_ff} → {d_model}"
    rows = ((8.6, "LN1", f"causal attention\n{h} heads"), (4.9, "LN2", ffn))
    for y, norm, what in rows:
        box(side, y + 1.4, norm, "0.9")
        box(side, y, what, "#56B4E9")  # sky blue
        arrow(main, y + 2.2, side, y + 1.8)  # the branch leaves the stream ...
        arrow(side, y + 1.0, side, y + 0.6)
        arrow(side - 1.4, y - 0.4, main + 0.35, y - 1.1)  # ... and comes back at "+"
        _plus(ax, main, y - 1.3)
    for y0, y1 in ((13.3, 12.3), (11.0, 7.6), (7.0, 3.9), (3.3, 2.3)):
        arrow(main, y0 - 0.3, main, y1)
    _mask_icon(ax, side + 2.55, 8.5)
    ax.text(main - 0.25, 6.2, "residual stream", rotation=90, ha="right", va="center", fontsize=10)
    ax.add_patch(Rectangle((1.2, 2.75), 8.7, 8.0, fill=False, ls="--", ec="0.4", lw=1))
    ax.text(9.8, 2.9, "1 block (real models: N)", ha="right", va="bottom", fontsize=10)
    box(main, 1.7, "LN$_f$", "0.9")  # mathtext: subscripts, no underscores
    box(4.6, 0.4, f"× $W_{{out}}$ + $b_{{out}}$ → logits (n, {n_vocab})", "#009E73")  # green
    arrow(main, 1.3, main, 0.8)
    fig.tight_layout(pad=0.2)
    alt = (
        "Block diagram of the decoder, top to bottom. Token ids become E[ids] + E_pos, shape "
        f"(n, {d_model}). This residual stream, labelled, runs straight down; it branches through "
        f"layer norm LN1 into causal attention with {h} heads, whose output is added back (+), "
        f"then through LN2 into the feed-forward network ({d_model} to {d_ff} to {d_model}, ReLU), "
        "added back again. A dashed frame around the two sub-layers reads '1 block (real "
        "models: N)': real decoders repeat it N times. "
        f"A final layer norm LN_f, W_out and b_out give the logits, shape (n, {n_vocab}). "
        "A small lower-triangular grid beside the attention box, labelled mask, with "
        "queries down and keys across, shows that each token attends only to itself and "
        "earlier tokens."
    )
    return fig, alt


def _mask_icon(ax, x: float, y: float, n: int = 4, size: float = 0.34) -> None:
    """A tiny causal mask centred at (x, y): the lower triangle filled, labelled "mask"."""
    left, top = x - n * size / 2, y + n * size / 2
    for i in range(n):
        for j in range(n):
            fill = "#0072B2" if j <= i else "white"  # blue: may attend
            ax.add_patch(
                Rectangle(
                    (left + j * size, top - (i + 1) * size),
                    size,
                    size,
                    fc=fill,
                    ec="black",
                    lw=0.6,
                    zorder=4,
                )
            )
    ax.text(x, top + 0.15, "mask", ha="center", va="bottom", fontsize=10, zorder=4)
    bottom, right = top - n * size, left + n * size
    ax.text(x, bottom - 0.08, "key →", ha="center", va="top", fontsize=10, zorder=4)
    ax.text(right + 0.08, y, "query →", ha="left", va="center", rotation=270, fontsize=10)

"""Chapter 9's first figure: what each output waits for, in an RNN and in attention."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .base import CMAP

_PATH = "#D55E00"  # Okabe-Ito vermilion: apart from cividis's navy and khaki


def dependency_figure(tokens, path: tuple[str, str] | None = None):
    """What each step waits for: a recurrent network (a chain) next to attention (none).

    Parameters
    ----------
    tokens : sequence of str
        One label per position, e.g. ``toy.TOKENS``.
    path : (str, str), optional
        Two of the tokens, earlier first: the way from the first to the second is drawn
        in vermilion, a chain of state updates above and one line below.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        How many steps each has to take one after another.
    """
    if isinstance(tokens, str) or not hasattr(tokens, "__len__") or len(tokens) < 2:
        raise ValueError(f"tokens must be a list of at least 2 labels, got {tokens!r}")
    n = len(tokens)
    if path is not None:
        if not all(t in list(tokens) for t in path) or len(path) != 2:
            raise ValueError(f"path must be two of the tokens, got {path!r}")
        a, b = (list(tokens).index(t) for t in path)
        if a >= b:
            raise ValueError(f"path must name an earlier token first, got {path!r}")
    x = np.arange(n)
    dark, light = plt.get_cmap(CMAP)(0.0), plt.get_cmap(CMAP)(0.8)
    fig, (rnn, att) = plt.subplots(2, 1, figsize=(7.6, 4.6))  # the page's width at 90 dpi
    arrow = {"arrowstyle": "-|>", "color": dark, "lw": 1.2, "shrinkA": 9, "shrinkB": 9}
    for ax in (rnn, att):
        ax.scatter(x, np.zeros(n), s=170, color=light, edgecolor="black", zorder=3)
        ax.scatter(x, np.ones(n), s=170, color=dark, edgecolor="black", marker="s", zorder=3)
        ax.set_xticks(x, tokens, fontsize=9)  # one above the other: room for level labels
        ax.set_xlim(-0.6, n - 0.4)
        ax.set_ylim(-0.3, 1.45)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    for t in x:
        rnn.annotate("", (t, 1), (t, 0), arrowprops=arrow)
        if t:
            rnn.annotate("", (t, 1), (t - 1, 1), arrowprops={**arrow, "color": "black", "lw": 2})
        att.plot([x, np.full(n, t)], [np.zeros(n), np.ones(n)], color="0.6", lw=0.6, zorder=1)
    if path is not None:  # the way from token a to token b, drawn over the rest
        mark = {**arrow, "color": _PATH, "lw": 2.5}
        rnn.annotate("", (a, 1), (a, 0), arrowprops=mark)
        for t in range(a + 1, b + 1):
            rnn.annotate("", (t, 1), (t - 1, 1), arrowprops=mark)
        att.plot([a, b], [0, 1], color=_PATH, lw=2.5, zorder=2)
    rnn.set_yticks([0, 1], ["input $x_t$", "state $h_t$"], fontsize=9)
    att.set_yticks([0, 1], ["input $x_t$", "output"], fontsize=9)
    rnn.set_title(f"Recurrent: $h_t$ waits for $h_{{t-1}}$: {n} steps in a row", fontsize=11)
    att.set_title("Attention: 1 step, no output waits for another", fontsize=11)
    fig.tight_layout()
    alt = (
        f"Two diagrams over the {n} tokens {', '.join(repr(t) for t in tokens)}. Top, a "
        f"recurrent network: each state is computed from its input and the previous state, "
        f"a chain of {n} steps that must run one after another. Bottom, attention: each of "
        f"the {n} outputs is computed from all {n} inputs ({n * n} lines) and from no other "
        f"output, so all {n} can be computed at the same time."
    )
    if path is not None:
        alt += (
            f" In vermilion, the way from {path[0]!r} to {path[1]!r}: above, the update that "
            f"reads {path[0]!r} and {b - a} more; below, one line."
        )
    return fig, alt

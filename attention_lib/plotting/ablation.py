"""Chapter 12's ablation chart: one probability with the model intact and with each head cut.

Kept apart from :mod:`.decoder`, which is near 300 lines. Every bar is named under it and
carries its value and the likeliest word above it, and the intact model's bar is hatched
as well as coloured, so nothing relies on colour alone.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..validate import as_float_array

_INTACT, _CUT, _MARKED = "#0072B2", "#56B4E9", "#CC79A7"  # Okabe-Ito blue, sky blue, pink


def ablation_bars(intact, ablated, *, measure: str, prompt: str, top_words=None, mark=None):
    """A bar for the intact model, then one for each head mean-ablated in turn.

    Parameters
    ----------
    intact : float
        The probability with every head in place, e.g. P(a dessert taste next).
    ablated : array_like of shape (h,)
        The same probability with head ``k`` (counted from 1) ablated, in head order.
    measure : str
        What the probability is of, for the axis and the alt text ("a dessert taste next").
    prompt : str
        The words the prediction continues, for the title.
    top_words : sequence of str of length h + 1, optional
        The likeliest next word in each case, intact first, printed under each value.
    mark : int, optional
        A head (counted from 1) whose bar is drawn in pink, as the chapter's heatmap frames it.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Every bar's value (and likeliest word), and the head whose removal moves it most.
    """
    cut = as_float_array(ablated, "ablated", min_ndim=1)
    values = np.concatenate([[float(intact)], cut])  # (h + 1,)
    if cut.ndim != 1 or np.any(values < 0) or np.any(values > 1):
        raise ValueError(f"need probabilities in [0, 1], one per head: got {values}")
    h = cut.size
    if top_words is not None and len(top_words) != h + 1:
        raise ValueError(f"need h + 1 = {h + 1} top words, intact first: got {len(top_words)}")
    if mark is not None and not 1 <= mark <= h:
        raise ValueError(f"mark is a head counted from 1 to {h}, got {mark}")
    labels = ["all heads", *(f"head {k}\nablated" for k in range(1, h + 1))]
    colours = [_INTACT, *(_MARKED if k == mark else _CUT for k in range(1, h + 1))]
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    bars = ax.bar(range(h + 1), values, color=colours, edgecolor="black", linewidth=0.8)
    bars[0].set_hatch("//")  # the model as trained: told apart by pattern, not colour alone
    ax.axhline(values[0], color="0.3", linestyle="--", linewidth=1, zorder=0)
    for x, value in enumerate(values):
        word = f"\n“{top_words[x]}”" if top_words is not None else ""
        box = dict(fc="white", ec="none", pad=1)  # clear of the dashed line behind it
        ax.text(x, value + 0.02, f"{value:.2f}{word}", ha="center", va="bottom", bbox=box)
    ax.set_xticks(range(h + 1), labels, fontsize=10)
    ax.set_ylim(0, 1.3)  # room for the value and its word above a bar near 1
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
    ax.set_ylabel(f"P({measure})", fontsize=10)
    ax.set_title(f"After “{prompt}”: one head mean-ablated at a time", fontsize=10)
    handles = [Line2D([], [], color="0.3", linestyle="--", label="all heads, for comparison")]
    if top_words is not None:
        handles.append(Patch(color="none", label="above each bar: its value, its top word"))
    ax.legend(handles=handles, loc="upper right", frameon=False, fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    words = top_words if top_words is not None else [None] * (h + 1)
    said = [
        f"{name.replace(chr(10), ' ')} {v:.2f}" + (f" (top word '{w}')" if w else "")
        for name, v, w in zip(labels, values, words, strict=True)
    ]
    worst = int(np.argmax(np.abs(cut - values[0]))) + 1
    alt = (
        f"Bar chart of P({measure}) after '{prompt}', with the model intact and with each of "
        f"its {h} heads mean-ablated in turn: {'; '.join(said)}. A dashed line marks the "
        f"intact value. Removing head {worst} moves it most, from {values[0]:.2f} to "
        f"{cut[worst - 1]:.2f}."
    )
    return fig, alt

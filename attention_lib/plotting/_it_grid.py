"""The attention grid of chapter 10's figures: one row per sentence, one cell per token.

The noun "it" refers to is outlined and set in bold, the plural noun has a dashed
outline, and the query "it" is marked with a small triangle; a legend below the grid
says which is which, so nothing relies on colour.
"""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from ..validate import as_float_array
from .base import CMAP, text_colour

_DASHED = (0, (6, 3))  # long dashes: the default ones read as dots
_QUERY = {"marker": ">", "markersize": 6, "color": "white", "markeredgecolor": "black"}
_BELOW = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.17), "frameon": False}
_BELOW |= {"ncol": 3, "fontsize": 8, "handlelength": 1.6}


def _key(plural: bool) -> list:
    """The legend: what the solid and dashed outlines and the triangle mark."""
    handles = [Rectangle((0, 0), 1, 1, fill=False, lw=1.2, label='noun "it" means (bold)')]
    if plural:
        handles.append(Rectangle((0, 0), 1, 1, fill=False, lw=1.5, ls=_DASHED, label="plural"))
    return [*handles, Line2D([], [], ls="none", **_QUERY, label='query "it"')]


def _grid_inputs(weights, tokens, referent, distractor=None):
    W = as_float_array(weights, "weights", min_ndim=2)
    if W.ndim != 2:
        raise ValueError(f"weights must be (sentences, tokens), got shape {W.shape}")
    if isinstance(tokens, str) or len(tokens) != W.shape[0]:
        raise ValueError(f"need one token list per row of weights ({W.shape[0]})")
    if any(len(t) != W.shape[1] for t in tokens):
        raise ValueError(f"every sentence needs {W.shape[1]} tokens, one per column")
    ref = np.asarray(referent)
    if ref.shape != (W.shape[0],) or ref.dtype.kind not in "iu":
        raise ValueError(f"referent needs one position per sentence, got {referent!r}")
    if distractor is None:
        return W, ref, None
    other = np.asarray(distractor)
    if other.shape != ref.shape or other.dtype.kind not in "iu" or np.any(other == ref):
        raise ValueError(
            f"distractor needs one position per sentence, not the referent's: {distractor!r}"
        )
    return W, ref, other


def _even(W: np.ndarray) -> np.ndarray:
    """Rows whose weights are all 1/n to within 1%: printed "1/n", not 0.12 and 0.13."""
    return np.all(np.abs(W * W.shape[1] - 1) < 0.01, axis=1)


def _draw_grid(ax, W: np.ndarray, tokens, ref: np.ndarray, title: str, other=None):
    image = ax.imshow(W, cmap=CMAP, vmin=0.0, vmax=1.0, aspect="auto")
    even = _even(W)
    for i, words in enumerate(tokens):
        for j, word in enumerate(words):
            colour = text_colour(W[i, j])  # the grid runs 0 to 1
            weight = "bold" if j == ref[i] else "normal"
            text = f"{word}\n1/{W.shape[1]}" if even[i] else f"{word}\n{W[i, j]:.2f}"
            ax.text(
                j, i, text, ha="center", va="center", fontsize=9, color=colour, fontweight=weight
            )
        if "it" in words:  # the query: a triangle pointing at the word
            ax.plot(list(words).index("it") - 0.36, i, **_QUERY, scalex=False, scaley=False)
        outline = Rectangle((ref[i] - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="white")
        ax.add_patch(outline)
        ax.add_patch(Rectangle((ref[i] - 0.45, i - 0.45), 0.9, 0.9, fill=False, linewidth=1.2))
        if other is not None:  # the plural: dashes in the colour of its text, so they show
            edge = {"edgecolor": text_colour(W[i, other[i]]), "ls": _DASHED, "linewidth": 1.5}
            ax.add_patch(Rectangle((other[i] - 0.45, i - 0.45), 0.9, 0.9, fill=False, **edge))
    ax.set_xticks(range(W.shape[1]), [str(j) for j in range(W.shape[1])], fontsize=9)
    ax.set_yticks(range(W.shape[0]), [f"#{i + 1}" for i in range(W.shape[0])], fontsize=9)
    ax.set_ylabel("sentence", fontsize=9)  # a row is a sentence, not a query
    ax.set_xlabel("position in the sentence", fontsize=9)
    ax.legend(handles=_key(other is not None), **_BELOW)
    ax.set_title(title, fontsize=10)
    return image


def _grid_summary(W: np.ndarray, ref: np.ndarray, other=None) -> str:
    if _even(W).all():
        return f"every weight is 1/{W.shape[1]} to within 1%, the referent's too"
    rows = np.arange(W.shape[0])
    shown = W.round(2)  # judged on the numbers the cells print, as a reader sees them
    others = np.where(np.arange(W.shape[1]) == ref[:, None], -1.0, shown).max(axis=1)
    hits = int(np.sum(shown[rows, ref] > others))
    ties = int(np.sum(shown[rows, ref] == others))
    low, high = f"{W[rows, ref].min():.2f}", f"{W[rows, ref].max():.2f}"
    share = f"{W[rows, ref].mean():.2f} of the attention of 'it'"
    rows_said = f"the {W.shape[0]} sentences shown"
    share += (
        f" in every row of {rows_said}"
        if low == high
        else f" on average over {rows_said} (from {low} to {high})"
    )
    if other is not None:
        share += f"; the plural noun (dashed outline) gets {W[rows, other].mean():.2f}"
    return (
        f"the referent gets {share}; the largest weight "
        f"in a row is {W.max():.2f}; the referent is "
        + (
            f"tied for top in {ties} of {W.shape[0]}"
            + (f", alone on top in {hits}" if hits else "")
            if ties
            else f"the top token in {hits} of {W.shape[0]}"
        )
    )

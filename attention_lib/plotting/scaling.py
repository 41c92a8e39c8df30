r"""Figures for chapter 4, scaling by :math:`\sqrt{d_k}`: raw scores grow with ``d_k``.

Raw and scaled data are always drawn in two cividis colours that differ in lightness,
*and* with different markers, line styles or hatching, so no figure relies on colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..validate import as_float_array, check_positive_int
from .base import CMAP

# Dark and light ends of cividis: they differ in lightness, so they also read in greyscale.
RAW = {"color": plt.get_cmap(CMAP)(0.1), "marker": "o", "linestyle": "-"}
SCALED = {"color": plt.get_cmap(CMAP)(0.8), "marker": "s", "linestyle": "--"}


def _series(values, name: str, length: int) -> np.ndarray:
    v = as_float_array(values, name, min_ndim=1)
    if v.shape != (length,):
        raise ValueError(f"{name} needs one value per d_k: shape ({length},), got {v.shape}")
    return v


def _dims(d_k) -> np.ndarray:
    d = as_float_array(d_k, "d_k", min_ndim=1)
    if d.ndim != 1 or np.any(d <= 0):
        raise ValueError(f"d_k must be a 1-D list of positive widths, got {d}")
    return d


def _plain_log2_ticks(ax, d: np.ndarray) -> None:
    """Label a base-2 log x axis with the widths themselves (64, not 2^6)."""
    ax.minorticks_off()
    ax.set_xticks(d, [f"{v:g}" for v in d], fontsize=9)


def _pair(values, name: str, length: int) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(values, tuple | list) or len(values) != 2:
        raise TypeError(
            f"{name} must be a pair (raw, scaled) of arrays, got {type(values).__name__}"
        )
    raw, scaled = values
    return _series(raw, f"{name}[0] (raw)", length), _series(scaled, f"{name}[1] (scaled)", length)


def _span(v: np.ndarray, fmt: str) -> str:
    low, high = format(v.min(), fmt), format(v.max(), fmt)
    return f"{low} at every width" if low == high else f"between {low} and {high}"


def scaling_vs_dimension(d_k, *, variance, largest, deaf, n: int):
    r"""The chapter's three measurements against ``d_k``, raw scores beside scaled ones.

    Parameters
    ----------
    d_k : array_like of shape (m,)
        The vector widths that were tried.
    variance : pair of array_like of shape (m,)
        ``(raw, scaled)``: the variance of ``q · k`` and of ``q · k / sqrt(d_k)``.
    largest : pair of array_like of shape (m,)
        ``(raw, scaled)``: the largest softmax weight of a row, averaged over rows.
    deaf : pair of array_like of shape (m,)
        ``(raw, scaled)``: the share of rows, between 0 and 1, that barely respond to a
        small nudge of their scores.
    n : int
        Keys per row; an even row has largest weight :math:`1/n`, drawn as a dotted line.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Both ends of each raw curve and the range of each scaled one.

    Notes
    -----
    The pale wide lines of the left panel are the theory:
    :math:`\operatorname{Var}(q \cdot k) = d_k`, and 1 after scaling.
    """
    d = _dims(d_k)
    var = _pair(variance, "variance", d.size)
    top = _pair(largest, "largest", d.size)
    quiet = _pair(deaf, "deaf", d.size)
    n = check_positive_int(n, "n")
    fig, axes = plt.subplots(1, 3, figsize=(8.4, 3.3))
    fig.subplots_adjust(left=0.075, right=0.99, bottom=0.28, top=0.91, wspace=0.42)
    left, middle, right = axes
    theory = {"color": "0.8", "linewidth": 5, "solid_capstyle": "butt"}
    (theory_line,) = left.plot(d, d, **theory)
    left.plot(d, np.ones_like(d), **theory)
    even_line = middle.axhline(1 / n, color="0.4", linestyle=":", linewidth=1.5)
    for ax, (raw, scaled) in zip(axes, (var, top, quiet), strict=True):
        (raw_line,) = ax.plot(d, raw, **RAW)
        (scaled_line,) = ax.plot(d, scaled, **SCALED)
        ax.set_xscale("log", base=2)
        ax.minorticks_off()
        ax.set_xticks(d[::2], [f"{v:g}" for v in d[::2]], fontsize=9)  # every other width
        ax.tick_params(axis="y", labelsize=9)
        ax.set_xlabel("$d_k$", fontsize=10)
    left.set_yscale("log", base=2)
    ticks = d[::3] / 2
    left.set_yticks(ticks, [f"{v:g}" for v in ticks])
    left.set_title("variance of a score", fontsize=10)
    middle.set_ylim(0, 1.05)
    middle.set_title("largest weight in a row", fontsize=10)
    right.set_ylim(-0.03, 1.03)
    right.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    right.set_title("deaf rows", fontsize=10)
    labels = ["raw scores", r"scaled by $1/\sqrt{d_k}$", "theory: $d_k$, and 1 scaled"]
    handles = [raw_line, scaled_line, theory_line, even_line]
    legend = {"loc": "lower center", "ncol": 4, "fontsize": 9, "frameon": False}
    fig.legend(handles, [*labels, f"even row: 1/{n}"], **legend)
    alt = (
        f"Three line plots against d_k from {d[0]:g} to {d[-1]:g}, raw scores beside scores "
        f"divided by the square root of d_k. Variance of a score: raw from {var[0][0]:.3g} to "
        f"{var[0][-1]:.4g}, on the line y = d_k; scaled {_span(var[1], '.2f')}. Largest "
        f"weight in a row of {n}: raw from {top[0][0]:.2f} to {top[0][-1]:.2f}; scaled "
        f"{_span(top[1], '.2f')} (an even row has {1 / n:.2f}). Deaf rows: raw from "
        f"{quiet[0][0]:.1%} to {quiet[0][-1]:.1%}; scaled {_span(quiet[1], '.1%')}."
    )
    return fig, alt


def gradients_vs_dimension(d_k, raw, scaled):
    r"""How strongly each softmax row responds to its raw scores, raw against scaled.

    Parameters
    ----------
    d_k : array_like of shape (m,)
        The vector widths that were tried.
    raw, scaled : array_like of shape (m, rows)
        For each width, the size (Frobenius norm) of the derivative of every row's weights
        with respect to its raw scores, without and with the :math:`1/\sqrt{d_k}` factor.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The median of each series at both ends, the raw 10th percentile at the widest, and
        every scaled row's range at ``d_k = 512`` (or the widest).

    Notes
    -----
    A line is the median row. The raw rows spread over many powers of ten, so they get a
    band from the 10th to the 90th percentile (a deep band means rows that pass back almost
    nothing). The scaled rows stay within a factor of about 2 of their median, too narrow
    for a band: a label gives their range at d_k = 512 instead.
    """
    d, series = _dims(d_k), {}
    for name, values in [("raw", raw), ("scaled", scaled)]:
        v = as_float_array(values, name, min_ndim=2)
        if v.ndim != 2 or v.shape[0] != d.size:
            raise ValueError(f"{name} needs one row of sizes per d_k: got shape {v.shape}")
        series[name] = v
    r_lo, r_mid, r_hi = np.percentile(series["raw"], [10, 50, 90], axis=1)
    s_mid = np.median(series["scaled"], axis=1)
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    ax.plot(d, r_mid, **RAW, label="raw scores: median row", zorder=2)
    band = {"color": RAW["color"], "alpha": 0.25, "hatch": "//", "lw": 0, "zorder": 1}
    ax.fill_between(d, r_lo, r_hi, **band, label="raw scores: middle 80% of rows")
    ax.plot(d, s_mid, **SCALED, label=r"scaled by $1/\sqrt{d_k}$: median row", zorder=3)
    i = int(np.flatnonzero(d == 512)[0]) if 512 in d else d.size - 1  # the prose's width
    v = series["scaled"][i]  # every scaled row at that width, min to max
    note = f"every scaled row at $d_k$ = {d[i]:g}:\n{v.min():.2g} to {v.max():.2g}"
    ax.annotate(note, (d[i], v.min()), (0.45, 0.5), textcoords="axes fraction",
                ha="center", fontsize=9, arrowprops={"arrowstyle": "-"})  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _plain_log2_ticks(ax, d)
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("size of d weights / d raw scores")
    ax.set_title("Many raw rows pass back almost nothing")
    ax.legend(fontsize=9, loc="lower left")
    fig.tight_layout()
    alt = (
        f"Line plot on log axes against d_k from {d[0]:g} to {d[-1]:g} of how strongly a "
        f"row's weights respond to its raw scores. Median row, raw scores: from "
        f"{r_mid[0]:.2g} to {r_mid[-1]:.2g}, with a band from the 10th to the 90th "
        f"percentile of rows that reaches down to {r_lo[-1]:.2g} at the widest d_k. Scaled, "
        f"with the 1/sqrt(d_k) factor: median from {s_mid[0]:.2g} to {s_mid[-1]:.2g}; at "
        f"d_k = {d[i]:g} every scaled row lies between {v.min():.2g} and {v.max():.2g}."
    )
    return fig, alt

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


def scaling_vs_dimension(d_k, *, variance, largest, saturated, n: int, cutoff: float = 0.99):
    r"""The chapter's three measurements against ``d_k``, raw scores beside scaled ones.

    Parameters
    ----------
    d_k : array_like of shape (m,)
        The vector widths that were tried.
    variance : pair of array_like of shape (m,)
        ``(raw, scaled)``: the variance of ``q · k`` and of ``q · k / sqrt(d_k)``.
    largest : pair of array_like of shape (m,)
        ``(raw, scaled)``: the largest softmax weight of a row, averaged over rows.
    saturated : pair of array_like of shape (m,)
        ``(raw, scaled)``: the share of all rows, between 0 and 1, whose largest weight
        is above ``cutoff``.
    n : int
        Keys per row; an even row has largest weight :math:`1/n`, drawn as a dotted line.
    cutoff : float, default 0.99
        The largest weight above which a row counts as saturated; named on the axis.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Both ends of each raw curve and the range of each scaled one.

    Notes
    -----
    The pale wide lines of the left panel are the prediction:
    :math:`\operatorname{Var}(q \cdot k) = d_k`, and 1 after scaling.
    """
    d = _dims(d_k)
    var = _pair(variance, "variance", d.size)
    top = _pair(largest, "largest", d.size)
    sat = _pair(saturated, "saturated", d.size)
    n = check_positive_int(n, "n")
    cutoff = float(cutoff)
    if not 0 < cutoff < 1:
        raise ValueError(f"cutoff must be a weight between 0 and 1, got {cutoff}")
    fig, axes = plt.subplots(1, 3, figsize=(8.4, 3.4))
    fig.subplots_adjust(left=0.085, right=0.99, bottom=0.27, top=0.91, wspace=0.5)
    left, middle, right = axes
    theory = {"color": "0.8", "linewidth": 5, "solid_capstyle": "butt"}
    (theory_line,) = left.plot(d, d, **theory)
    left.plot(d, np.ones_like(d), **theory)
    even_line = middle.axhline(1 / n, color="0.4", linestyle=":", linewidth=1.5)
    for ax, (raw, scaled) in zip(axes, (var, top, sat), strict=True):
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
    left.set_ylabel("variance", fontsize=9)
    middle.set_ylim(0, 1.05)
    middle.set_title("largest weight in a row", fontsize=10)
    middle.set_ylabel("weight, mean over rows", fontsize=9)
    right.set_ylim(-0.03, 1.03)
    right.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    right.set_title("saturated rows", fontsize=10)
    right.set_ylabel(f"share of all rows\nwith top weight > {cutoff:g}", fontsize=9)
    labels = ["raw scores", r"scaled by $1/\sqrt{d_k}$", "predicted variance: $d_k$ raw, 1 scaled"]
    handles = [raw_line, scaled_line, theory_line, even_line]
    legend = {"loc": "lower center", "ncol": 4, "fontsize": 9, "frameon": False}
    fig.legend(handles, [*labels, f"even row: 1/{n}"], **legend)
    alt = (
        f"Three line plots against d_k from {d[0]:g} to {d[-1]:g}, raw scores beside scores "
        f"divided by the square root of d_k. Variance of a score: raw from {var[0][0]:.3g} to "
        f"{var[0][-1]:.4g}, on the line y = d_k; scaled {_span(var[1], '.2f')}. Largest "
        f"weight in a row of {n}: raw from {top[0][0]:.2f} to {top[0][-1]:.2f}; scaled "
        f"{_span(top[1], '.2f')} (an even row has {1 / n:.2f}). Share of all rows whose top "
        f"weight is above {cutoff:g}: raw from {sat[0][0]:.1%} to {sat[0][-1]:.1%}; scaled "
        f"{_span(sat[1], '.1%')}."
    )
    return fig, alt


def gradients_vs_dimension(d_k, raw, scaled):
    r"""How strongly each softmax row responds to its raw scores, raw against scaled.

    Parameters
    ----------
    d_k : array_like of shape (m,)
        The vector widths that were tried.
    raw, scaled : array_like of shape (m, rows)
        For each width, every row's response to its raw scores ``q · k``: the size
        (Frobenius norm) of softmax's Jacobian, :math:`\lVert J \rVert_F`, and for the
        scaled path :math:`\lVert J \rVert_F / \sqrt{d_k}`, as the raw score enters
        divided by :math:`\sqrt{d_k}`.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The median of each series at both ends, and the band of each at the widest.

    Notes
    -----
    A line is the median row; around each, a band from the 10th to the 90th percentile
    of rows. The raw band spreads over many powers of ten (rows that pass back almost
    nothing); the scaled band is thin, as every scaled row responds about alike.
    """
    d, series = _dims(d_k), {}
    for name, values in [("raw", raw), ("scaled", scaled)]:
        v = as_float_array(values, name, min_ndim=2)
        if v.ndim != 2 or v.shape[0] != d.size:
            raise ValueError(f"{name} needs one row of sizes per d_k: got shape {v.shape}")
        series[name] = v
    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    bands = {}
    for name, style, hatch, alpha, label in [
        ("raw", RAW, "//", 0.3, "raw scores"),
        ("scaled", SCALED, "\\\\", 0.6, "scaled scores"),  # a thin band: more opaque
    ]:
        lo, mid, hi = np.percentile(series[name], [10, 50, 90], axis=1)
        bands[name] = (lo, mid, hi)
        z = 3 if name == "scaled" else 2
        ax.plot(d, mid, **style, label=f"{label}: median row", zorder=z)
        band = {"color": style["color"], "alpha": alpha, "hatch": hatch, "lw": 0, "zorder": 1}
        ax.fill_between(d, lo, hi, **band, label=f"{label}: middle 80% of rows")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _plain_log2_ticks(ax, d)
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("size of softmax's response\n" + r"to the raw scores, $\Vert J \Vert_F$")
    ax.set_title("Raw rows stop responding as $d_k$ grows")
    # Below the axes, in the order raw, scaled: the raw band fills the lower right.
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.45, -0.16), ncol=2)
    fig.tight_layout()
    (r_lo, r_mid, r_hi), (s_lo, s_mid, s_hi) = bands["raw"], bands["scaled"]
    alt = (
        f"Line plot on log axes against d_k from {d[0]:g} to {d[-1]:g} of how strongly a "
        f"row's softmax weights respond to its raw scores (the size of the Jacobian), each "
        f"line the median row with a band from the 10th to the 90th percentile of rows. "
        f"Raw scores: median from {r_mid[0]:.2g} to {r_mid[-1]:.2g}; at the widest d_k the "
        f"band reaches from {r_lo[-1]:.2g} to {r_hi[-1]:.2g}. Scaled: median from "
        f"{s_mid[0]:.2g} to {s_mid[-1]:.2g}; at the widest d_k the band is {s_lo[-1]:.2g} "
        f"to {s_hi[-1]:.2g}."
    )
    return fig, alt

r"""Figures for chapter 4, scaling by :math:`\sqrt{d_k}`: raw scores grow with ``d_k``.

Raw and scaled data are always drawn in two cividis colours that differ in lightness,
*and* with different markers, line styles or hatching, so no figure relies on colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..core import softmax
from ..validate import as_float_array, check_positive_int
from .base import CMAP

# Dark and light ends of cividis: they differ in lightness, so they also read in greyscale.
RAW = {"color": plt.get_cmap(CMAP)(0.1), "marker": "o", "linestyle": "-"}
SCALED = {"color": plt.get_cmap(CMAP)(0.8), "marker": "s", "linestyle": "--"}
EDGE = tuple(0.45 * c for c in SCALED["color"][:3])  # dark edge of the pale scaled band


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


def _plain_log2_ticks(ax, d: np.ndarray, axis: str = "x") -> None:
    """Label a base-2 log axis with the widths themselves (64, not 2^6)."""
    set_ticks = ax.set_xticks if axis == "x" else ax.set_yticks
    ax.minorticks_off()
    set_ticks(d, [f"{v:g}" for v in d], fontsize=8)


def variance_vs_dimension(d_k, raw_variance, scaled_variance):
    r"""Measured variance of raw and scaled dot products against ``d_k``, on log axes.

    Parameters
    ----------
    d_k : array_like of shape (m,)
        The vector widths that were tried.
    raw_variance : array_like of shape (m,)
        Variance of ``q · k`` measured at each width.
    scaled_variance : array_like of shape (m,)
        Variance of ``q · k / sqrt(d_k)`` at each width.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The range of ``measured / d_k`` for raw scores, and the range of the scaled ones.

    Notes
    -----
    The dotted reference lines are the theory: :math:`\operatorname{Var}(q \cdot k) = d_k`
    and, after scaling, :math:`\operatorname{Var}(q \cdot k / \sqrt{d_k}) = 1`.
    """
    d = _dims(d_k)
    raw = _series(raw_variance, "raw_variance", d.size)
    scaled = _series(scaled_variance, "scaled_variance", d.size)
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    # The theory lines are wide and pale, so the measured points stay visible on top.
    theory = {"color": "0.75", "linewidth": 5, "solid_capstyle": "butt"}
    ax.plot(d, d, **theory, label="theory: y = $d_k$ and y = 1")
    ax.plot(d, np.ones_like(d), **theory)
    ax.plot(d, raw, **RAW, label=r"measured: raw $q \cdot k$")
    ax.plot(d, scaled, **SCALED, label=r"measured: $q \cdot k / \sqrt{d_k}$")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    _plain_log2_ticks(ax, d)
    _plain_log2_ticks(ax, d[::2] / 2, axis="y")
    ax.set_xlabel("$d_k$ (width of the query and key vectors)")
    ax.set_ylabel("variance of the score")
    ax.set_title("Raw scores spread out with $d_k$; scaled ones do not")
    ax.legend(fontsize=8)
    fig.tight_layout()
    ratio = raw / d
    alt = (
        f"Log-log line plot of the variance of a dot product of two random vectors "
        f"against d_k from {d[0]:g} to {d[-1]:g}. The raw variance follows the line "
        f"y = d_k (measured / d_k between {ratio.min():.2f} and {ratio.max():.2f}); "
        f"after dividing by the square root of d_k it stays flat, between "
        f"{scaled.min():.2f} and {scaled.max():.2f}, on the line y = 1."
    )
    return fig, alt


def sharpness_vs_dimension(d_k, *, raw_max, scaled_max, n: int):
    r"""How peaky softmax rows get as ``d_k`` grows: the largest weight in a row.

    Parameters
    ----------
    d_k : array_like of shape (m,)
    raw_max, scaled_max : array_like of shape (m,)
        Average largest weight of a softmax row, without and with the
        :math:`1/\sqrt{d_k}` scaling.
    n : int
        Keys per row; a uniform row has largest weight :math:`1/n`, drawn as a dotted
        reference.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        First and last values of each curve.
    """
    d = _dims(d_k)
    raw = _series(raw_max, "raw_max", d.size)
    scaled = _series(scaled_max, "scaled_max", d.size)
    n = check_positive_int(n, "n")
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    ax.axhline(1 / n, color="grey", linestyle=":", linewidth=1.5, label=f"uniform row: 1/{n}")
    ax.plot(d, raw, **RAW, label="raw scores")
    ax.plot(d, scaled, **SCALED, label=r"scaled by $1/\sqrt{d_k}$")
    ax.set_xscale("log", base=2)
    _plain_log2_ticks(ax, d)
    ax.legend(fontsize=9, loc="center right")
    ax.set_xlabel("$d_k$ (width of the query and key vectors)")
    ax.set_ylabel("largest weight in a row")
    ax.set_ylim(0, 1.05)
    ax.set_title("Raw rows pile onto one key; scaled ones do not")
    fig.tight_layout()
    alt = (
        f"Line plot against d_k from {d[0]:g} to {d[-1]:g} of the largest softmax weight "
        f"in a row of {n} keys, averaged over rows. Raw scores: from {raw[0]:.2f} to "
        f"{raw[-1]:.2f}. Scaled: from {scaled[0]:.2f} to {scaled[-1]:.2f}. A uniform row "
        f"has {1 / n:.2f}."
    )
    return fig, alt


def gradients_vs_dimension(d_k, raw, scaled):
    r"""How strongly each softmax row responds to its raw scores (``‖J‖_F``), raw against scaled.

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
        The median of each series at both ends, and the raw 10th percentile at the widest.

    Notes
    -----
    A line is the median row, a band the 10th to 90th percentile (log axis: a deep band means
    rows that pass back almost nothing); a label gives the scaled rows' range at d_k = 512.
    """
    d, series = _dims(d_k), {}
    for name, values in [("raw", raw), ("scaled", scaled)]:
        v = as_float_array(values, name, min_ndim=2)
        if v.ndim != 2 or v.shape[0] != d.size:
            raise ValueError(f"{name} needs one row of sizes per d_k: got shape {v.shape}")
        series[name], series[f"{name}_all"] = np.percentile(v, [10, 50, 90], axis=1), v
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for name, style, hatch, alpha in [("raw", RAW, "//", 0.25), ("scaled", SCALED, "", 0.6)]:
        low, mid, high = series[name]
        label = "raw scores" if name == "raw" else r"scaled by $1/\sqrt{d_k}$ (factor included)"
        z = 3 if name == "scaled" else 1
        ax.plot(d, mid, **style, label=f"{label}: median row", zorder=z + 1)
        edge = {"edgecolor": EDGE, "lw": 1.0} if name == "scaled" else {"lw": 0}  # legend too
        band = {"color": style["color"], "alpha": alpha, "hatch": hatch, "zorder": z, **edge}
        ax.fill_between(d, low, high, **band, label="10th to 90th percentile of rows")
        if name == "scaled":  # narrow (a factor of ~2): opaque, on top, dark-edged, labelled
            ax.plot(d, low, d, high, color=EDGE, lw=1.0, zorder=z)  # under the median
            i = int(np.flatnonzero(d == 512)[0]) if 512 in d else d.size - 1  # the prose's width
            v = series["scaled_all"][i]  # every row, as the prose: min to max
            note = f"every scaled row at $d_k$ = {d[i]:g}: {v.min():.2g} to {v.max():.2g}"
            ax.annotate(note, (d[i], v.min()), (0.4, 0.55), textcoords="axes fraction",
                        ha="center", fontsize=8, arrowprops={"arrowstyle": "-"})  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _plain_log2_ticks(ax, d)
    ax.set_xlabel("$d_k$")
    ax.set_ylabel(r"size of softmax's Jacobian, $\|J\|_F$")
    ax.set_title("Raw rows commit and stop passing gradient")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    (r_lo, r_mid, _), (_, s_mid, _) = series["raw"], series["scaled"]
    alt = (
        f"Line plot on log axes against d_k from {d[0]:g} to {d[-1]:g}, with bands from the "
        f"10th to the 90th percentile of rows. Median row, raw scores: from "
        f"{r_mid[0]:.2g} to {r_mid[-1]:.2g}; scaled, with the 1/sqrt(d_k) factor: from "
        f"{s_mid[0]:.2g} to {s_mid[-1]:.2g}. The raw band reaches down to "
        f"{r_lo[-1]:.2g} at the widest d_k."
    )
    return fig, alt


def scaling_frame(raw_scores, d_k: int, *, xlim=None, ylim=None, bins: int = 64):
    r"""One slider frame: the score distribution and the mean sorted softmax row, raw and scaled.

    Parameters
    ----------
    raw_scores : array_like of shape (m, n)
        Raw scores :math:`q \cdot k` of ``m`` queries against ``n`` keys each.
    d_k : int
        The width they were computed at; the scaled scores are ``raw_scores / sqrt(d_k)``.
    xlim : (float, float), optional
        Range of the histogram; defaults to a symmetric range around 0 that holds every
        raw score, so each frame fits its own width. A slider should pass one range for
        every frame: the bins are then the same in every frame too, so the scaled
        scores, which do not change with ``d_k``, look the same while the raw ones widen.
    ylim : (float, float), optional
        Density axis of the histogram; defaults to fitting the data.
    bins : int, default 64
        Number of equal bins across ``xlim``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The spread of both distributions and the average largest weight, raw and scaled.

    Notes
    -----
    The right panel is not one query's row: each query's softmax weights are sorted from
    largest to smallest, then averaged over the ``m`` queries (the mean sorted row).
    One random row can happen to have two keys that tie; the average cannot.
    """
    raw = as_float_array(raw_scores, "raw_scores", min_ndim=2)
    if raw.ndim != 2:
        raise ValueError(f"raw_scores must be (queries, keys), got shape {raw.shape}")
    d_k = check_positive_int(d_k, "d_k")
    scaled = raw / np.sqrt(d_k)  # (m, n)
    m, n = raw.shape
    # Sort each row's weights in decreasing order, then average over the m queries.
    w_raw = -np.sort(-softmax(raw), axis=-1).mean(axis=0)  # (n,)
    w_scaled = -np.sort(-softmax(scaled), axis=-1).mean(axis=0)  # (n,)
    edge = np.abs(raw).max() * 1.05 or 1.0  # all-zero scores still get an axis
    lo, hi = xlim if xlim is not None else (-edge, edge)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"xlim must be two finite numbers, low < high; got {xlim}")
    bins = np.linspace(lo, hi, check_positive_int(bins, "bins") + 1)
    # A fixed layout instead of tight_layout: a slider draws many frames, and measuring
    # the text for tight_layout would double the time each one takes.
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 2.9))
    fig.subplots_adjust(left=0.085, right=0.99, bottom=0.17, top=0.9, wspace=0.25)
    x = np.arange(n)
    for name, scores, weights, style, shift, hatch, edge in [
        ("raw", raw, w_raw, RAW, -0.2, "//", "white"),
        ("scaled", scaled, w_scaled, SCALED, 0.2, "", "black"),
    ]:
        density, _ = np.histogram(scores, bins=bins, density=True)
        label = f"{name}: std {scores.std():.1f}"
        left.stairs(density, bins, color=style["color"], ls=style["linestyle"], lw=1.6, label=label)
        bar = {"color": style["color"], "hatch": hatch, "edgecolor": edge}
        right.bar(x + shift, weights, width=0.4, **bar, label=f"softmax({name})")
    left.set_xlim(lo, hi)
    if ylim is not None:
        left.set_ylim(*ylim)
    left.set_xlabel("score")
    left.set_ylabel("density")
    left.set_title(f"All {raw.size} scores, $d_k$ = {d_k}")
    left.legend(fontsize=9)
    ranks = x if n <= 10 else np.unique(np.r_[0, np.arange(3, n, 4), n - 1])  # 1, 4, 8, ...
    right.set_xticks(ranks, [str(j + 1) for j in ranks])
    right.set_ylim(0, 1)
    right.set_xlabel("key, ranked by its weight (1 = largest)")
    right.set_ylabel("mean weight")
    right.set_title(f"Mean sorted row of {n} keys")
    right.legend(fontsize=9, loc="upper right")
    alt = (
        f"d_k = {d_k}. Left: histogram of {raw.size} scores; raw scores have standard "
        f"deviation {raw.std():.1f}, scaled ones {scaled.std():.1f}. Right: softmax weights "
        f"of {m} queries over {n} keys, sorted and averaged; the top key gets "
        f"{w_raw[0]:.2f} of a raw row and {w_scaled[0]:.2f} of a scaled row."
    )
    return fig, alt

r"""Figures for chapter 4, scaling by :math:`\sqrt{d_k}`: what reaches a query as ``d_k`` grows.

Raw and scaled data are always drawn in two colours, cividis navy and Okabe-Ito vermilion,
that colour-blind readers tell apart and that differ in lightness, *and* with different
markers, line styles or hatching, so no figure relies on colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..validate import as_float_array
from .base import CMAP

# Navy (12:1 against white) and vermilion (3.9:1, above WCAG's 3:1 for graphics): blue
# against orange-red survives the common colour blindnesses, and they differ in lightness.
RAW = {"color": plt.get_cmap(CMAP)(0.1), "marker": "o", "linestyle": "-"}
SCALED = {"color": "#D55E00", "marker": "s", "linestyle": "--"}


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
    ax.set_xticks(d, [f"{v:g}" for v in d], fontsize=10)


def gradients_vs_dimension(
    d_k,
    raw,
    scaled,
    *,
    raw_band=None,
    scaled_band=None,
    band_label=None,
    floor=None,
):
    r"""The gradient that reaches a query, median over rows, raw scores against scaled ones.

    Parameters
    ----------
    d_k : array_like of shape (m,)
        The vector widths that were tried.
    raw, scaled : array_like of shape (m,)
        For each width, the median over rows of :math:`\lVert \partial L / \partial q_i
        \rVert`, the size of the gradient that reaches query ``i``, when softmax is fed the
        raw scores and when it is fed the scores divided by :math:`\sqrt{d_k}`.
    raw_band, scaled_band : array_like of shape (2, m), optional
        For each width, a low and a high percentile of the same sizes (10th and 90th, say),
        shaded around each median line so the spread over rows shows.
    band_label : str, optional
        What the bands are, for the title and the alt text: "10th to 90th percentile".
    floor : float, optional
        Where the y axis starts: the bands are cut off there (the alt text says how far down
        each goes), so that many decades of a raw band do not squeeze the rest flat. Every
        median must lie above it.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Both series at the narrowest and the widest width, the range of the scaled one, and
        the bands at the widest width.
    """
    d = _dims(d_k)
    raw, scaled = _series(raw, "raw", d.size), _series(scaled, "scaled", d.size)
    if np.any(raw <= 0) or np.any(scaled <= 0):
        raise ValueError("raw and scaled are sizes of gradients: they must be positive")
    bands = {
        name: None if b is None else _band(b, name, median)
        for name, b, median in [("raw_band", raw_band, raw), ("scaled_band", scaled_band, scaled)]
    }
    shaded = any(b is not None for b in bands.values())
    if shaded and not band_label:
        raise ValueError("bands need a band_label saying what they span")
    if floor is not None:
        floor = _floor(floor, min(raw.min(), scaled.min()))
    fig, ax = plt.subplots(figsize=(7.0, 5.0))  # 630 x 450 px at the course's 90 dpi
    line = {"lw": 1.2, "markersize": 4.5, "markeredgecolor": "0.15", "zorder": 3}  # thin lines
    ax.plot(d, raw, **RAW, **line, label="raw scores, median")
    ax.plot(d, scaled, **SCALED, **line, label="scaled scores, median")
    for (name, low_high), style, look in zip(
        bands.items(), (RAW, SCALED), _BAND_LOOKS, strict=True
    ):
        if low_high is not None:  # hatched as well as tinted: the bands differ without colour
            who = "raw" if name == "raw_band" else "scaled"
            low = low_high[0] if floor is None else np.maximum(low_high[0], floor)
            ax.fill_between(
                d, low, low_high[1], facecolor=style["color"], **look, label=f"{who}: {band_label}"
            )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if floor is not None:
        ax.set_ylim(bottom=floor)
        for name, low_high in bands.items():  # say on the plot that a band is cut off
            if low_high is not None and low_high[0].min() < floor:
                who = "raw" if name == "raw_band" else "scaled"
                at = int(np.argmin(low_high[0]))
                ax.annotate(
                    f"{who} band continues\ndown to {low_high[0].min():.0e}",
                    (d[at], floor),
                    xytext=(-6, 8),
                    textcoords="offset points",
                    ha="right",
                    va="bottom",
                    fontsize=9,
                    arrowprops={"arrowstyle": "->", "color": "0.3"},
                )
    _plain_log2_ticks(ax, d)
    ax.set_xlabel("$d_k$")
    norm = r"$\Vert \partial L / \partial q_i \Vert$"
    ax.set_ylabel(f"size of the gradient, {norm}")
    ax.set_title("Gradient reaching a query, by width")  # names the quantity drawn
    handles, labels = ax.get_legend_handles_labels()
    # Column by column: raw line, raw band; then scaled line, scaled band.
    starts = ("raw scores", "raw:", "scaled scores", "scaled:")
    rank = [next(r for r, t in enumerate(starts) if label.startswith(t)) for label in labels]
    order = np.argsort(rank, kind="stable")
    ax.legend(  # below the axes, where it covers nothing
        [handles[i] for i in order],
        [labels[i] for i in order],
        fontsize=10,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
        ncol=2,
        frameon=False,
    )
    fig.tight_layout()
    alt = (
        f"Line plot on log axes against d_k from {d[0]:g} to {d[-1]:g} of the size of the "
        f"gradient that reaches a query, median over rows. Scaled scores: between "
        f"{scaled.min():.2g} and {scaled.max():.2g} at every width. Raw scores: {raw[0]:.2g} "
        f"at d_k = {d[0]:g}, highest ({raw.max():.2g}) at d_k = {d[raw.argmax()]:g}, then "
        f"falling to {raw[-1]:.2g} at d_k = {d[-1]:g}."
    )
    for name, low_high in bands.items():
        if low_high is not None:
            who = "raw" if name == "raw_band" else "scaled"
            alt += (
                f" A shaded band around the {who} line ({band_label}) spans "
                f"{low_high[0][-1]:.2g} to {low_high[1][-1]:.2g} at d_k = {d[-1]:g}."
            )
            if floor is not None and low_high[0].min() < floor:
                alt += f" The y axis starts at {floor:g}, which cuts off the {who} band below it."
    return fig, alt


# The raw band spans many decades and stays faint; the scaled one is a thin strip on the same
# log axis, so it is filled more strongly and edged, to show above the raw band and its line.
_BAND_LOOKS = (
    {"alpha": 0.15, "hatch": "////", "edgecolor": RAW["color"], "lw": 0, "zorder": 1},
    {"alpha": 0.4, "hatch": "\\\\", "lw": 0.8, "edgecolor": "0.25", "zorder": 2},
)


def _floor(floor, lowest: float) -> float:
    """``floor`` as a float, checked to lie between 0 and the lowest median."""
    try:
        value = float(floor)
    except (TypeError, ValueError):
        raise ValueError(f"floor must be one positive number, got {floor!r}") from None
    if not (np.isfinite(value) and 0 < value < lowest):
        raise ValueError(
            f"floor must be positive and below every median ({lowest:.2g}), got {floor}"
        )
    return value


def _band(values, name: str, median: np.ndarray) -> np.ndarray:
    """A (2, m) array of positive low and high sizes that hold the median between them."""
    b = as_float_array(values, name, min_ndim=1)
    if b.shape != (2, median.size):
        raise ValueError(
            f"{name} needs a low and a high row: shape (2, {median.size}), got {b.shape}"
        )
    if np.any(b <= 0) or np.any(b[0] > median) or np.any(median > b[1]):
        raise ValueError(f"{name} must be positive, with low <= median <= high at every width")
    return b

"""Chapter 4's slider frame: raw scores, scaled scores, and the rows they give."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..core import softmax
from ..validate import as_float_array, check_positive_int
from .scaling import RAW, SCALED


def scaling_frame(
    raw_scores,
    d_k: int,
    *,
    xlim=None,
    ylim=None,
    bins: int = 64,
    scaled_xlim=(-4.0, 4.0),
    scaled_bins: int = 32,
):
    r"""One slider frame: raw scores, scaled scores, and the mean sorted softmax row of each.

    Parameters
    ----------
    raw_scores : array_like of shape (m, n)
        Raw scores :math:`q \cdot k` of ``m`` queries against ``n`` keys each.
    d_k : int
        The width they were computed at; the scaled scores are ``raw_scores / sqrt(d_k)``.
    xlim : (float, float), optional
        Score axis of the raw histogram; defaults to a symmetric range around 0 that holds
        every raw score. A slider passes one range for every frame, so the raw scores
        visibly widen from frame to frame.
    ylim : (float, float), optional
        Density axis of both histograms; defaults to fitting the data.
    bins : int, default 64
        Number of equal bins across ``xlim``.
    scaled_xlim : (float, float), default (-4, 4)
        Score axis of the scaled histogram, drawn in its own panel: scaled scores spread
        about 1, so on the raw axis they would be a needle.
    scaled_bins : int, default 32
        Number of equal bins across ``scaled_xlim``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The spread of both distributions and the average largest weight, raw and scaled.

    Notes
    -----
    The right panel is not one query's row: each query's softmax weights are sorted from
    largest to smallest, then averaged over the ``m`` queries (the mean sorted row).
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
    lo, hi = _range(xlim if xlim is not None else (-edge, edge), "xlim")
    s_lo, s_hi = _range(scaled_xlim, "scaled_xlim")
    bins = check_positive_int(bins, "bins")
    scaled_bins = check_positive_int(scaled_bins, "scaled_bins")
    edges = {
        "raw": np.linspace(lo, hi, bins + 1),
        "scaled": np.linspace(s_lo, s_hi, scaled_bins + 1),
    }
    # A fixed layout instead of tight_layout: a slider draws many frames, and measuring
    # the text for tight_layout would double the time each one takes.
    fig, (left, middle, right) = plt.subplots(
        1, 3, figsize=(7.6, 2.9), gridspec_kw={"width_ratios": [1.3, 0.9, 1.2]}
    )
    fig.subplots_adjust(left=0.075, right=0.99, bottom=0.17, top=0.89, wspace=0.32)
    count = f"{raw.size:,}".replace(",", " ")  # 25 600, as the chapter writes it
    panels = [("raw", raw, left, RAW), ("scaled", scaled, middle, SCALED)]
    for name, scores, ax, style in panels:
        density, _ = np.histogram(scores, bins=edges[name], density=True)
        ax.stairs(
            density,
            edges[name],
            color=style["color"],
            ls=style["linestyle"],
            lw=1.6,
            label=f"spread {scores.std():.1f}",
        )
        ax.set_xlim(edges[name][0], edges[name][-1])
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel("score")
        ax.legend(fontsize=9, loc="upper right", handlelength=1.5)
    middle.set_ylim(left.get_ylim())  # one density axis: the heights compare
    middle.set_title("scaled: ÷ √$d_k$", fontsize=10)
    left.set_ylabel("density")
    middle.set_ylabel("density")
    # On a shared axis, a wide raw histogram can sink to a line near the floor.
    tallest = np.histogram(raw, bins=edges["raw"], density=True)[0].max()
    flat = tallest < 0.05 * left.get_ylim()[1]
    # d_k in the title: one frame alone names its width (the count is in the alt text)
    left.set_title(f"raw scores, $d_k$ = {d_k}" + (": spread wide" if flat else ""), fontsize=10)
    # Markers on lines, not bars: a weight near 0 stays visible as a marker on the floor.
    x = np.arange(n)
    for name, weights, style in [("raw", w_raw, RAW), ("scaled", w_scaled, SCALED)]:
        right.plot(x, weights, **style, ms=4, lw=1.2, clip_on=False, label=f"softmax({name})")
    ranks = x if n <= 10 else np.unique(np.r_[0, np.arange(3, n, 4), n - 1])  # 1, 4, 8, ...
    right.set_xticks(ranks, [str(j + 1) for j in ranks])
    right.set_ylim(0, 1)
    right.set_xlabel("key, ranked by weight")
    right.set_ylabel("mean weight")
    right.set_title(f"$d_k$ = {d_k}: sorted weights", fontsize=10)  # fits at 1024
    right.legend(fontsize=9, loc="upper right")
    alt = (
        f"d_k = {d_k}. Left: histogram of {count} raw scores on a score axis from {lo:g} to "
        f"{hi:g}; their spread (standard deviation) is {raw.std():.1f}. Middle: the same "
        f"scores divided by √{d_k}, on an axis from {s_lo:g} to {s_hi:g}; spread "
        f"{scaled.std():.1f}. Right: softmax weights of {m} queries over {n} keys, sorted and "
        f"averaged; the top key gets {w_raw[0]:.2f} of a raw row and {w_scaled[0]:.2f} of a "
        "scaled row."
    )
    if flat:
        alt += (
            f" The raw histogram is spread wide on its axis: its tallest bin reaches {tallest:.2g}."
        )
    return fig, alt


def _range(pair, name: str) -> tuple[float, float]:
    """Two finite numbers, low < high, or a ValueError naming ``name``."""
    try:
        low, high = (float(v) for v in pair)
    except (TypeError, ValueError):
        low = high = np.nan  # not two numbers: reported just below
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"{name} must be two finite numbers, low < high; got {pair!r}")
    return low, high

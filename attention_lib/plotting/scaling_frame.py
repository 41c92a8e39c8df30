"""Chapter 4's slider frame: the scores and the rows they give, raw beside scaled."""

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
    scaled_bins: int | None = None,
    zoom=None,
):
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
    scaled_bins : int, optional
        Number of equal bins across ``xlim`` for the scaled scores; defaults to ``bins``.
        Scaled scores spread about 1, so on axes wide enough for raw scores at a large
        ``d_k`` they need finer bins than the raw ones to show their bell shape.
    zoom : (float, float), optional
        A narrower range of scores to show again in an inset, magnified, so that the
        scaled scores' shape can be read next to the wide raw ones.

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
    bins = check_positive_int(bins, "bins")
    scaled_bins = bins if scaled_bins is None else check_positive_int(scaled_bins, "scaled_bins")
    edges = {"raw": np.linspace(lo, hi, bins + 1), "scaled": np.linspace(lo, hi, scaled_bins + 1)}
    if zoom is not None:
        try:
            z_lo, z_hi = (float(v) for v in zoom)
        except (TypeError, ValueError):
            z_lo = z_hi = np.nan  # not two numbers: reported just below
        if not (lo <= z_lo < z_hi <= hi):  # False for NaN, so also for infinities and junk
            raise ValueError(
                f"zoom must be two finite numbers inside xlim ({lo:g}, {hi:g}), low < high; "
                f"got {zoom!r}"
            )
        zoom = (z_lo, z_hi)
    # A fixed layout instead of tight_layout: a slider draws many frames, and measuring
    # the text for tight_layout would double the time each one takes.
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 2.9))
    fig.subplots_adjust(left=0.085, right=0.99, bottom=0.17, top=0.9, wspace=0.25)
    x = np.arange(n)
    # The inset repeats both histograms over the zoom range, on the same density axis.
    # Low enough that its title stays inside the panel, wide enough for y tick labels.
    inset = None if zoom is None else left.inset_axes([0.12, 0.3, 0.27, 0.5])
    for name, scores, weights, style, shift, hatch, edge in [
        ("raw", raw, w_raw, RAW, -0.2, "//", "white"),
        ("scaled", scaled, w_scaled, SCALED, 0.2, "", "black"),
    ]:
        density, _ = np.histogram(scores, bins=edges[name], density=True)
        label = f"{name}: spread {scores.std():.1f}"
        line = {"color": style["color"], "ls": style["linestyle"], "lw": 1.6, "label": label}
        left.stairs(density, edges[name], **line)
        if inset is not None:
            inset.stairs(density, edges[name], **{**line, "lw": 1.2})
        bar = {"color": style["color"], "hatch": hatch, "edgecolor": edge}
        right.bar(x + shift, weights, width=0.4, **bar, label=f"softmax({name})")
    left.set_xlim(lo, hi)
    if ylim is not None:
        left.set_ylim(*ylim)
    if inset is not None:
        inset.set_xlim(*zoom)
        inset.set_ylim(left.get_ylim())
        ticks = [zoom[0], 0.0, zoom[1]] if zoom[0] < 0 < zoom[1] else list(zoom)
        inset.set_xticks(ticks, [f"{v:g}".replace("-", "\u2212") for v in ticks])  # minus signs
        inset.set_xlabel("score", fontsize=9, labelpad=1)
        step = float(f"{inset.get_ylim()[1] / 2:.1g}")  # 0.45 -> 0.2: ticks 0, 0.2, 0.4
        inset.set_yticks(np.arange(3) * step, [f"{v:g}" for v in np.arange(3) * step])
        inset.tick_params(labelsize=9, pad=1)  # the legend's size, the figure's smallest
        inset.set_title("zoomed in", fontsize=9, pad=2)
    # On axes shared by every frame, a wide raw histogram can sink to a line on the axis.
    tallest = np.histogram(raw, bins=edges["raw"], density=True)[0].max()
    flat = tallest < 0.05 * left.get_ylim()[1]
    left.set_xlabel("score")
    left.set_ylabel("density")
    title = f"All {raw.size} scores, $d_k$ = {d_k}"
    left.set_title(title + (": raw nearly flat" if flat else ""), fontsize=11 if flat else None)
    left.legend(fontsize=9)
    ranks = x if n <= 10 else np.unique(np.r_[0, np.arange(3, n, 4), n - 1])  # 1, 4, 8, ...
    right.set_xticks(ranks, [str(j + 1) for j in ranks])
    right.set_ylim(0, 1)
    right.set_xlabel("key, ranked by its weight (1 = largest)")
    right.set_ylabel("mean weight")
    right.set_title(f"Mean sorted row of {n} keys")
    right.legend(fontsize=9, loc="upper right")
    alt = (
        f"d_k = {d_k}. Left: histogram of {raw.size} scores; raw scores have a spread "
        f"(standard deviation) of {raw.std():.1f}, scaled ones {scaled.std():.1f}. Right: "
        f"softmax weights of {m} queries over {n} keys, sorted and averaged; the top key gets "
        f"{w_raw[0]:.2f} of a raw row and {w_scaled[0]:.2f} of a scaled row."
    )
    if flat:
        alt += (
            f" The raw histogram is nearly flat on this axis: its tallest bin reaches "
            f"{tallest:.2g}."
        )
    if zoom is not None:
        alt += f" An inset repeats the histograms for scores from {zoom[0]:g} to {zoom[1]:g}."
    return fig, alt

"""Chapter 7: how a number spreads over many random draws, with the values to compare marked.

One draw of random weights can be lucky or unlucky. The honest picture is the whole
distribution over seeds, with the draw the page happened to show and the value it is
compared with marked on it. The first series is drawn as filled bars, the second as a
hatched outline on top of them, so neither hides the other where they overlap; they
differ by fill, hatching and colour (blue and orange), so also in greyscale.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..validate import as_float_array

_STYLES = (  # filled bars, then an unfilled hatched outline through which they show
    {"color": "#3b5b92", "alpha": 0.6, "edgecolor": "black"},
    {"histtype": "step", "color": "#b35806", "linewidth": 2.2, "hatch": "//"},
)
_MARKS = ("-", "--", ":")


def seed_histogram(series: dict, marks: dict, *, title: str, xlabel: str, bins: int = 20):
    """Histograms of values in [0, 1] over random seeds, with vertical lines for ``marks``.

    Parameters
    ----------
    series : dict of str to array_like of shape (m,)
        One or two sets of values, each drawn over the same bins from 0 to 1.
    marks : dict of str to float
        Up to three values to mark with a labelled vertical line (e.g. one seed's value).
    title, xlabel : str
    bins : int

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Each series' median and share above 0.5, and the marked values with the share of
        each series below them.
    """
    if not 1 <= len(series) <= len(_STYLES):
        raise ValueError(f"series needs 1 to {len(_STYLES)} sets of values, got {len(series)}")
    if len(marks) > len(_MARKS):
        raise ValueError(f"marks takes at most {len(_MARKS)} values, got {len(marks)}")
    data = {}
    for name, values in series.items():
        v = as_float_array(values, f"series {name!r}", min_ndim=1)
        if v.ndim != 1 or v.size == 0 or v.min() < 0 or v.max() > 1:
            raise ValueError(f"series {name!r} must be a non-empty 1-D list of values in [0, 1]")
        data[name] = v
    edges = np.linspace(0, 1, bins + 1)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for (name, v), style in zip(data.items(), _STYLES, strict=False):
        ax.hist(v, bins=edges, label=f"{name} ({v.size} seeds)", **style)
    parts = []
    for (name, value), style in zip(marks.items(), _MARKS, strict=False):
        ax.axvline(
            value, color="black", linestyle=style, linewidth=1.6, label=f"{name}: {value:.2f}"
        )
        below = ", ".join(f"{_percent(np.mean(v < value))} of {n}" for n, v in data.items())
        parts.append(f"{name} at {value:.2f} (above {below})")
    ax.set_xlim(0, 1)
    ax.set_xlabel(xlabel, fontsize=11)
    ax.set_ylabel("number of seeds", fontsize=11)
    ax.tick_params(labelsize=10)
    ax.set_title(title, fontsize=11)
    # Under the axes, where no bar and no marked line can run through it.
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.tight_layout()
    summary = "; ".join(
        f"{name}: median {np.median(v):.2f}, above 0.5 in {_percent(np.mean(v > 0.5))} of seeds"
        for name, v in data.items()
    )
    alt = f"Histogram: {title}. {summary}. Marked: " + "; ".join(parts) + "."
    return fig, alt


def _percent(share: float) -> str:
    """A share as a percentage with one decimal, dropped when it is 0: 0.045 -> '4.5%'."""
    return f"{100 * share:.1f}".removesuffix(".0") + "%"

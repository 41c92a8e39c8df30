"""Figures for chapter 9, all at once: time, speed-up and memory against ``n``.

Each series gets its own Okabe-Ito colour *and* marker *and* line style, so the lines can
be told apart in greyscale and without colour vision. Sizes go on a base-2 log axis
labelled with the sizes themselves (8, 16, ..., not 2^3).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patheffects

from ..validate import as_float_array

STYLES = [  # Okabe-Ito colours, far apart in hue and lightness, each with its own marker
    {"color": c, "marker": m, "linestyle": ls, "linewidth": 1.8, "markeredgecolor": "black"}
    for c, m, ls in [
        ("#0072b2", "o", "-"),  # blue
        ("#e69f00", "s", "--"),  # orange
        ("#009e73", "^", "-."),  # bluish green
        ("#000000", "D", "-"),  # black
        ("#d55e00", "v", (0, (5, 1, 1, 1))),  # vermillion
    ]
]

# A white casing under each measured line, so lines that cross stay apart in greyscale.
HALO = [patheffects.Stroke(linewidth=4.5, foreground="white"), patheffects.Normal()]


def fmt_time(seconds: float) -> str:
    """A duration in the unit that reads best: ``'45 µs'``, ``'1.2 ms'``, ``'3.4 s'``."""
    unit, size = "µs", 1e-6
    for bigger, bigger_size in (("ms", 1e-3), ("s", 1.0)):
        if seconds >= bigger_size:
            unit, size = bigger, bigger_size
    value = seconds / size
    return f"{value:.2g} {unit}" if value < 10 else f"{value:.0f} {unit}"


def fmt_bytes(n_bytes: float) -> str:
    """Bytes in binary units: ``'512 B'``, ``'345 KiB'``, ``'2 GiB'`` (3 significant digits)."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size:
            return f"{n_bytes / size:.3g} {unit}"
    return f"{n_bytes:.0f} B"


def _sizes(n) -> np.ndarray:
    n = as_float_array(n, "n", min_ndim=1)
    if n.ndim != 1 or np.any(n < 1) or np.any(np.diff(n) <= 0):
        raise ValueError(f"n must be a 1-D list of increasing sizes >= 1, got {n}")
    return n


def _series(n: np.ndarray, series: dict, what: str) -> dict:
    """Check ``{label: values}``: one value per size, NaN where nothing was measured."""
    if not series or len(series) > len(STYLES):
        raise ValueError(f"{what} needs 1 to {len(STYLES)} series, got {len(series)}")
    out = {}
    for label, values in series.items():
        v = np.asarray(values, dtype=float)
        if v.shape != n.shape:
            raise ValueError(
                f"{what} {label!r} needs one value per n, shape {n.shape}: got {v.shape}"
            )
        if np.any(v[~np.isnan(v)] <= 0) or np.isnan(v).all():
            raise ValueError(f"{what} {label!r} must be positive numbers (NaN = not measured)")
        out[label] = v
    return out


def _size_axis(ax, n: np.ndarray) -> None:
    ax.set_xscale("log", base=2)
    ax.minorticks_off()
    ax.set_xticks(n, [f"{v:g}" for v in n], fontsize=8)
    ax.set_xlabel("n (number of tokens)")


def timing_plot(
    n,
    times: dict,
    *,
    title: str = "Time for one attention call",
    guide: bool | str = True,
    guide_from: float | None = None,
    cross: tuple[str, str] | None = None,
):
    """Log-log plot of run time against ``n``, one line per way of computing attention.

    Parameters
    ----------
    n : array_like of shape (m,)
        Sequence lengths, increasing.
    times : dict of str -> array_like of shape (m,)
        Seconds per call for each way, in legend order; NaN where it was not run.
    title : str
    guide : bool or str
        Draw a dotted "grows like n²" line beside the first way (or the way named), a third
        below its last point so that it does not hide under the data; it spans the way's
        sizes, within the axis. Leave it out where the data do not follow n² (a guide the
        data refute misleads).
    guide_from : float, optional
        Start the n² guide at this size, on the way's own point there, so that the data
        can be read against it from that size on.
    cross : (str, str), optional
        Ways ``(a, b)``: a dotted line where ``b``'s line first drops below ``a``'s, if it does.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Each way's time at its smallest and largest measured ``n``.
    """
    n = _sizes(n)
    times = _series(n, times, "times")
    if cross and not set(cross) <= set(times):
        raise ValueError(f"cross needs two ways in times, got {cross}")
    r = np.log(times[cross[1]] / times[cross[0]]) if cross else []  # < 0 where b is faster
    i = next((i for i in range(len(r) - 1) if r[i] >= 0 > r[i + 1]), None)  # b overtakes a
    fig, ax = plt.subplots(figsize=(6.2, 3.6))
    for (label, t), style in zip(times.items(), STYLES, strict=False):
        ax.plot(n, t, **style, label=label)
    lo = min(np.nanmin(t) for t in times.values())
    hi = max(np.nanmax(t) for t in times.values())
    way2 = guide if isinstance(guide, str) else next(iter(times))
    if way2 not in times or (guide_from is not None and guide_from not in n):
        raise ValueError(f"guide names a way in times, guide_from a size in n: {guide_from}")
    if guide:  # parallel to the way: a third below its last point, or on it from guide_from
        t = times[way2]
        at = np.flatnonzero(~np.isnan(t))[-1] if guide_from is None else list(n).index(guide_from)
        line = t[at] / (3 if guide_from is None else 1) * (n / n[at]) ** 2
        line[np.isnan(t) | (line < lo / 2) | (line > hi * 2)] = np.nan  # in range
        if guide_from is not None:
            line[n < guide_from] = np.nan
        ax.plot(n, line, color="0.55", linestyle=":", label="grows like n²")
        drawn = np.flatnonzero(~np.isnan(line))  # named at its end, not by dots alone
        end = (n[drawn[-1]], line[drawn[-1]]) if drawn.size else (n[0], lo)
        ax.annotate(
            "n²" if drawn.size else "", end,
            xytext=(4, 0), textcoords="offset points", va="center", fontsize=9, color="0.35",
        )  # fmt: skip
    ax.set_yscale("log")
    ax.set_ylim(lo / 2, hi * 2)
    ticks = 10.0 ** np.arange(np.floor(np.log10(lo / 2)), np.ceil(np.log10(hi * 2)) + 1)
    ax.set_yticks(ticks, [fmt_time(t) for t in ticks], fontsize=8)
    ax.minorticks_off()
    _size_axis(ax, n)
    ax.set_ylabel("time per call (log scale)")
    ax.set_title(title)
    ax.grid(True, which="major", color="0.92")
    if i is not None:  # where the lines cross on the log-log axes
        x_cross = np.exp(np.interp(0, [r[i + 1], r[i]], np.log(n[[i + 1, i]])))
        ax.axvline(x_cross, color="0.35", linestyle=":", linewidth=1.5)
        note = f"{cross[1]} faster than {cross[0]}"
        arrow = f"{cross[1]} faster to the right → "  # past the line, not at it
        ax.text(x_cross, lo / 1.7, arrow, fontsize=8, va="bottom", ha="right")
    ax.legend(fontsize=8)
    fig.tight_layout()
    parts = []
    for label, t in times.items():
        ok = np.flatnonzero(~np.isnan(t))
        a, b = ok[0], ok[-1]
        parts.append(f"{label}: {fmt_time(t[a])} at n = {n[a]:g}, {fmt_time(t[b])} at n = {n[b]:g}")
    alt = f"Log-log line plot of the time one call takes against n from {n[0]:g} to {n[-1]:g}. "
    alt += "; ".join(parts) + "."
    if cross and i is not None:
        alt += f" A dotted line near n = {x_cross:.0f}: {note} after it."
    elif cross:  # on another machine the lines may not cross: no line, and the text says so
        alt += f" The {cross[0]} and {cross[1]} lines do not cross."
    return fig, alt


def memory_plot(
    n, measured: dict, *, itemsize: int = 8, title: str | None = None, ylabel: str | None = None
):
    """Bytes of the ``n x n`` weights (a computed line) with measured memory on top.

    Parameters
    ----------
    n : array_like of shape (m,)
        Sizes for the computed line :math:`n^2 \\times` ``itemsize``, increasing.
    measured : dict of str -> (array_like of shape (k,), array_like of shape (k,))
        Measured series, each ``(sizes, bytes)``, drawn as markers joined by lines.
    itemsize : int, default 8
        Bytes per number: 8 in float64, 4 in float32.
    title : str, optional
    ylabel : str, optional
        The y axis label; by default the bytes' dtype and the log scale.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The computed line's ends, and each measured series' range and its ratio to the
        computed weights at its largest size.
    """
    n = _sizes(n)
    if not measured or len(measured) > len(STYLES):
        raise ValueError(f"measured needs 1 to {len(STYLES)} series, got {len(measured)}")
    series = {}  # checked before drawing, so bad input leaves no figure open
    for label, (sizes, values) in measured.items():
        sizes, values = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
        if sizes.shape != values.shape or sizes.ndim != 1 or np.any(values <= 0):
            raise ValueError(f"measured {label!r} needs (sizes, bytes) of one length, bytes > 0")
        series[label] = sizes, values
    computed = n**2 * itemsize
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    ax.plot(  # thin, dotted and on top: a measured line lying on it still shows around it
        n, computed, color="0.25", linestyle=":", linewidth=1.6, zorder=4,
        marker="o", markevery=[len(n) - 1], markersize=4,  # a dot where the label points
        label=f"the weights: n² × {itemsize} bytes",
    )  # fmt: skip
    ax.annotate(  # just left of the end dot, level with it: the line rises from below
        f"{fmt_bytes(computed[-1])} at n = {n[-1]:g}",
        (n[-1], computed[-1]),
        xytext=(-7, 0),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=8,
    )
    parts = []
    for (label, (sizes, values)), style in zip(series.items(), STYLES, strict=False):
        style = {**style, "linewidth": 3.0}  # thick, so the dotted reference shows on top
        ax.plot(sizes, values, **style, label=label, path_effects=HALO, zorder=3)
        ratio = values[-1] / (sizes[-1] ** 2 * itemsize)
        parts.append(
            f"{label}: {fmt_bytes(values[0])} at n = {sizes[0]:g} to {fmt_bytes(values[-1])} "
            f"at n = {sizes[-1]:g} ({ratio:.3g} times the weights there)"
        )
    ax.set_yscale("log", base=2)
    top = int(np.ceil(np.log2(computed[-1])))
    ax.set_ylim(top=2.0 ** (top + 2))  # room for the label above the line's end
    low = int(np.floor(np.log2(min(computed[0], *(np.min(v) for _, v in series.values())))))
    # Evenly spaced labels: every power of 4 (1 KiB, 4 KiB, 16 KiB, ...) over a short
    # axis, every power of 32 (1 KiB, 32 KiB, 1 MiB, ...) over a long one.
    step = 2 if top - low <= 16 else 5
    low = min(low, top - 2 * step)  # at least three labels
    ticks = [2.0**k for k in range(low, top + 1) if k % step == 0]
    ax.set_yticks(ticks, [fmt_bytes(t) for t in ticks], fontsize=8)
    ax.minorticks_off()
    _size_axis(ax, n)
    ax.set_ylabel(ylabel or f"bytes (float{8 * itemsize}, log scale)")
    ax.set_title(title or "Memory of attention against n")
    ax.grid(True, which="major", color="0.92")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    alt = (
        f"Log-log plot of memory against n from {n[0]:g} to {n[-1]:g}. The computed size of "
        f"the n x n weights (a dotted line), n squared times {itemsize} "
        f"bytes, grows from "
        f"{fmt_bytes(computed[0])} to {fmt_bytes(computed[-1])}. Measured: "
        + "; ".join(parts)
        + "."
    )
    return fig, alt

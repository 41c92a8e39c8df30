"""Chapter 5's picture of softmax as a function: two keys, the weight against the score gap.

With two keys the softmax weight of the first is a sigmoid of the gap over ``T``; the hard
arg max is the step it tends to as ``T`` falls. Each temperature gets its own cividis
lightness *and* line style, so the figure does not rely on colour; the smallest ``T``
(the only one, if just one is drawn), which runs along the light grey step, is solid and
the darkest, so it differs from the step in lightness, not only in thickness.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..core import softmax
from ..validate import as_float_array
from .base import CMAP

_STYLES = ("-", "--", ":", "-.")


def two_key_softmax(temperatures, keys=("cake", "delicious"), gap=None, span=1.0):
    r"""The weight softmax gives the first of two keys, against the gap between their scores.

    Parameters
    ----------
    temperatures : array_like of shape (m,)
        One to four positive temperatures, one curve each.
    keys : (str, str)
        The two keys' tokens; the x axis is the first one's score minus the second's.
    gap : float, optional
        A gap to mark with a vertical line (the real one of the running example).
    span : float
        The x axis runs from ``-span`` to ``span``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The step of the hard arg max, and each curve's weight at ``gap`` (or at ``span / 2``).
    """
    T = as_float_array(temperatures, "temperatures", min_ndim=1)
    if T.ndim != 1 or not 1 <= T.size <= len(_STYLES) or np.any(T <= 0):
        raise ValueError(f"temperatures must be 1 to 4 positive numbers, got {T}")
    if len(keys) != 2 or not all(isinstance(k, str) and k for k in keys):
        raise ValueError(f"keys must be two non-empty tokens, got {keys!r}")
    if not span > 0:
        raise ValueError(f"span must be positive, got {span}")
    first, second = keys
    x = np.linspace(-span, span, 401)  # (401,): the gap z_first - z_second
    pairs = np.stack([x, np.zeros_like(x)], axis=-1)  # (401, 2): the two scores

    fig, ax = plt.subplots(figsize=(5.6, 3.2))
    ax.step(
        [-span, 0, span],
        [0, 1, 1],
        where="post",
        color="0.85",
        lw=6,
        zorder=1,
        label="hard arg max",
    )
    at = span / 2 if gap is None else float(gap)
    read = []
    # the smallest T, the curve nearest the grey step, gets the darkest shade
    rank = np.argsort(np.argsort(T))  # 0 for the smallest T: solid and darkest
    shades = np.linspace(0.0, 0.55, T.size)[rank]
    styles = [_STYLES[r] for r in rank]
    for t, style, shade in zip(T, styles, shades, strict=True):
        weight = softmax(pairs, temperature=t)[:, 0]  # (401,)
        ax.plot(
            x,
            weight,
            style,
            color=plt.get_cmap(CMAP)(shade),
            linewidth=2,
            label=f"softmax, T = {t:g}",
        )
        read.append(f"{softmax(np.array([at, 0.0]), temperature=t)[0]:.2f} at T = {t:g}")
    if gap is not None:
        # thin, solid and grey: no curve's style (the T = 1 curve is dotted)
        ax.axvline(at, color="0.45", linewidth=1, linestyle="-", zorder=1.5)
        ax.annotate(
            f"real gap {at:.2f}", (at, 0.04), xytext=(5, 0), textcoords="offset points", fontsize=10
        )
    ax.set_xlim(-span, span)
    ax.set_xticks(np.linspace(-span, span, 5))
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(f"score of '{first}' minus score of '{second}'", fontsize=10)
    ax.set_ylabel(f"weight on '{first}'", fontsize=10)
    ax.tick_params(labelsize=10)
    ax.legend(fontsize=10, loc="upper left", frameon=False)
    ax.set_title(
        f"Two keys, '{first}' and '{second}': softmax against the hard arg max", fontsize=10
    )
    fig.tight_layout()
    where = f"the real gap {at:.2f}" if gap is not None else f"a gap of {at:g}"
    curves = "Each softmax curve passes" if T.size > 1 else "The softmax curve passes"
    steeper = " and is steeper for a smaller T" if T.size > 1 else ""
    readings = " and ".join(filter(None, [", ".join(read[:-1]), read[-1]]))  # "a, b and c"
    alt = (
        f"Weight on '{first}' when a query has only the keys '{first}' and '{second}', "
        f"against their score gap from {-span:g} to {span:g}. The hard arg max is a step: "
        f"0 below a gap of 0, 1 above it. {curves} 0.5 at a gap of 0{steeper}; "
        f"at {where}, softmax gives {readings}."
    )
    return fig, alt

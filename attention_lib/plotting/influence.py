"""Chapter 11's weight-against-share scatter: for each head that parks on one token, the
weight its queries give that token and the token's share of what actually arrives.

A point on the diagonal is a head where weight and influence agree; a point below it is a
head where the token gets more attention than it passes on.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from ..validate import as_float_array

_POINT, _MEAN = "#0072B2", "#D55E00"  # Okabe-Ito blue and vermilion, apart in colour blindness


def weight_vs_share(weight, share, *, token: str = "[CLS]", title: str):
    """One point per head: mean weight on ``token`` (x) against its mean share (y).

    Parameters
    ----------
    weight, share : array_like of shape (m,)
        For each of m heads, the weight its queries give ``token`` and the token's share of
        the sizes of the pieces that arrive, both averaged over the queries; each in [0, 1].
    token : str, default "[CLS]"
    title : str

    Returns
    -------
    fig : matplotlib.figure.Figure
        The points, the diagonal ``share = weight`` and a cross at the two means.
    alt : str
        How many heads there are, how many lie below the diagonal, and the two means.
    """
    W = as_float_array(weight, "weight")
    S = as_float_array(share, "share")
    if W.ndim != 1 or W.shape != S.shape or W.size == 0:
        raise ValueError(
            f"weight and share must be two 1-d arrays of the same length, one number per "
            f"head; got shapes {W.shape} and {S.shape}"
        )
    if min(W.min(), S.min()) < 0 or max(W.max(), S.max()) > 1:
        raise ValueError("weight and share are fractions of a total of 1: keep them in [0, 1]")
    w_mean, s_mean = float(W.mean()), float(S.mean())
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    ax.plot([0, 1], [0, 1], color="0.4", lw=1, ls="--", zorder=1)
    ax.text(
        0.52,
        0.62,
        "share = weight",
        rotation=45,
        fontsize=10,
        color="0.3",
        ha="center",
        va="center",
        rotation_mode="anchor",
    )
    ax.scatter(
        W,
        S,
        s=28,
        color=_POINT,
        edgecolors="black",
        linewidths=0.4,
        zorder=2,
        label=f"one head ({W.size})",
    )
    ax.scatter(
        [w_mean],
        [s_mean],
        s=120,
        marker="X",
        color=_MEAN,
        edgecolors="black",
        linewidths=0.6,
        zorder=3,
        label=f"mean: weight {w_mean:.2f}, share {s_mean:.2f}",
    )
    ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal")
    ax.set_xlabel(f"weight on {token}", fontsize=10)
    ax.set_ylabel(f"{token}'s share of what arrives", fontsize=10)
    ax.tick_params(labelsize=10)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper left", fontsize=10, frameon=False)
    fig.tight_layout()
    below = int((S < W).sum())
    alt = (
        f"{title}. A scatter, one point per head ({W.size}): x is the weight its queries give "
        f"{token}, y is {token}'s share of what arrives, both 0 to 1, with a dashed "
        f"diagonal where they would be equal. {below} of the {W.size} points lie below "
        f"the diagonal. Mean weight {w_mean:.2f}, mean share {s_mean:.2f} (a cross)."
    )
    return fig, alt

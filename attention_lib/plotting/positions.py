"""Chapter 1 figure: a positional encoding as a heatmap, with some columns as waves."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from ..validate import as_float_array
from .embeddings import DIVERGING

# Okabe-Ito colours, told apart under the common colour blindnesses, and line styles.
_LINES = (("#0072B2", "-"), ("#D55E00", "--"), ("#009E73", "-."), ("#000000", ":"))
_PLAIN_TICK = "#4d4d4d"  # a tick with no line: dark grey (8:1 on white), not black


def encoding_heatmap(PE, *, title: str, columns=()):
    """Draw a positional encoding as a heatmap, positions down and dimensions across.

    Parameters
    ----------
    PE : array_like of shape (n, d_model)
        E.g. :func:`attention_lib.positional_encoding` ``(n, d_model)``.
    title : str
    columns : sequence of int, optional
        Columns also drawn as lines against the position, in a panel under the heatmap;
        the legend gives each its sin or cos and the wavelength of the base-10000 formula.
        A fast column, sampled only a few times per turn, is marked at its samples and
        drawn over a faint continuous wave when it follows that formula.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The size, and how fast the first and the last column change.
    """
    M = as_float_array(PE, "PE", min_ndim=2)
    if M.ndim != 2:
        raise ValueError(f"PE must be 2-D (positions x dimensions), got shape {M.shape}")
    n, d = M.shape
    columns = [int(j) for j in columns]
    if any(not 0 <= j < d for j in columns) or len(columns) > len(_LINES):
        raise ValueError(f"columns must be at most {len(_LINES)} of 0 to {d - 1}, got {columns}")
    if columns:
        fig, (ax, low) = plt.subplots(2, 1, figsize=(6.4, 6.6), height_ratios=[3, 2])
    else:
        fig, ax = plt.subplots(figsize=(6.4, 3.9))
    image = ax.imshow(M, cmap=DIVERGING, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    if columns:  # ticks at the drawn columns in their lines' colours (one line is black),
        ax.set_xticks(sorted({*columns, d - 1}))  # so the last column's tick is grey
        for tick, j in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True):
            if j in columns:
                tick.set(color=_LINES[columns.index(j)][0], fontweight="bold")
            else:
                tick.set(color=_PLAIN_TICK)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no "dimension 0.5"
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("dimension (sin in the even columns 0, 2, ..., cos in the odd)")
    ax.set_ylabel("position")
    ax.set_title(title)
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03, label="value")
    bar.set_ticks([-1, -0.5, 0, 0.5, 1])
    waves = [2 * np.pi * 10000 ** (2 * (j // 2) / d) for j in columns]  # positions per turn
    turns = [f"{w:.1f}" if w < 100 else f"{w:.0f}" for w in waves]  # 6.3, ..., 628
    smooth, handles, labels = [], [], []  # columns drawn over their wave; legend entries
    for j, wave, turn, (colour, style) in zip(columns, waves, turns, _LINES, strict=False):
        labels.append(f"column {j}: {('sin', 'cos')[j % 2]},\nwavelength {turn}")
        curve = _continuous(M[:, j], wave, j % 2) if wave < 12 else None  # (x, y) or None
        if curve is None:
            marker = "o" if wave < 12 else None  # few samples per turn: show where they are
            kw = {"ls": style, "lw": 1.8, "marker": marker, "ms": 3.5}
            handles.append(low.plot(M[:, j], color=colour, label=labels[-1], **kw)[0])
        else:  # the samples on the wave they come from: joined up, they would zig-zag
            wave_line = low.plot(*curve, color=colour, ls=style, lw=1.5, alpha=0.45)[0]
            kw = {"ls": "none", "marker": "o", "ms": 4.5}
            dots = low.plot(M[:, j], color=colour, label=labels[-1], **kw)[0]
            handles.append((wave_line, dots))
            smooth.append(j)
    if columns:
        low.set(xlabel="position", ylabel="value", ylim=(-1.15, 1.15), xlim=(0, n - 1))
        low.set_title("the same columns as lines: position now runs across", fontsize=10)
        low.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.tight_layout()
    flips = _sign_changes(M[:, 0])
    slow = M[:, -2:] if d > 1 else M  # the last (sin, cos) pair
    span = float(np.max(slow.max(axis=0) - slow.min(axis=0)))
    bound = 10.0 ** np.floor(np.log10(span) + 1) if span > 0 else 0.0  # 0.0084 -> 0.01
    moves = f"move by less than {bound:g}" if span > 0 else "stay constant"
    alt = (
        f"Heatmap: {title}. {n} positions (rows) by {d} dimensions (columns), values from "
        f"{M.min():.2f} to {M.max():.2f}; sines in the even columns, cosines in the odd. "
        f"Column 0 changes sign {flips} times; the last "
        f"two columns {moves} over all {n} positions."
    )
    if columns:
        counts = ", ".join(str(_sign_changes(M[:, j])) for j in columns)
        alt += (
            f" Below, the same columns {', '.join(map(str, columns))} as lines, position "
            f"running across (line styles differ; wavelengths {', '.join(turns)} positions); "
            f"they change sign {counts} times; the heatmap's ticks mark them in the "
            "lines' colours."
        )
        if smooth:
            which = f"Column {smooth[0]} is" if len(smooth) == 1 else f"Columns {smooth} are"
            alt += (
                f" {which} marked at the whole-number positions, over a faint continuous "
                "wave that the samples lie on."
            )
    return fig, alt


def _continuous(samples: np.ndarray, wave: float, is_cos: int):
    """The sine (or cosine) of wavelength ``wave`` between the positions, when ``samples``
    are that wave at positions 0, 1, 2, ...; otherwise None (any other table)."""
    n = len(samples)
    if not np.allclose((np.sin, np.cos)[is_cos](2 * np.pi * np.arange(n) / wave), samples):
        return None
    x = np.linspace(0.0, n - 1, 20 * n)  # (20n,): twenty points per position
    return x, (np.sin, np.cos)[is_cos](2 * np.pi * x / wave)


def _sign_changes(column: np.ndarray) -> int:
    signs = np.sign(np.round(column, 12))  # -1, 0 or 1
    signs = signs[signs != 0]  # sin 0 = 0 has no sign: a zero is not a change of sign
    return int(np.sum(np.diff(signs) != 0))


def clock_hands(PE, tokens, *, pairs=(0, 1)):
    """Draw (sin, cos) pairs of a positional encoding as the hands of clocks, one per pair.

    With the sine across and the cosine up, the point of pair ``i`` at position ``pos``
    sits at angle ``omega_i * pos`` clockwise from the top, as a clock hand does. Each
    position is a dot. A hand that moves far enough has its dots labelled with the
    position and its token; a hand whose dots stay within a quarter turn gets one label
    for the bunch and rings where it would be a quarter, a half and three quarters round.

    Parameters
    ----------
    PE : array_like of shape (n, d_model)
        E.g. :func:`attention_lib.positional_encoding` ``(n, d_model)``, d_model even.
    tokens : sequence of str, length n
        The token at each position.
    pairs : sequence of int, optional
        One or two pairs to draw (pair ``i`` is columns ``2i`` and ``2i + 1``), a panel each.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        Each hand's pace and where the positions fall on its clock.
    """
    M = as_float_array(PE, "PE", min_ndim=2)
    if M.ndim != 2 or M.shape[1] % 2:
        raise ValueError(f"PE must be 2-D (positions x dimensions) with even width, got {M.shape}")
    n, d = M.shape
    if isinstance(tokens, str) or len(tokens) != n:
        raise ValueError(f"need one token per position: PE has {n} rows, tokens {tokens!r}")
    pairs = [int(i) for i in pairs]
    if not 1 <= len(pairs) <= 2 or any(not 0 <= i < d // 2 for i in pairs):  # fits a page
        raise ValueError(f"pairs must be one or two of 0 to {d // 2 - 1}, got {pairs}")
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.6 * len(pairs), 4.0), squeeze=False)
    ring = np.linspace(0.0, 2 * np.pi, 200)
    caption = ""  # what the rings of a bunched hand mark
    alt = [
        f"Clock faces, one per pair of a positional encoding at d_model = {d}, positions 0 to "
        f"{n - 1} ({' '.join(tokens)}); each dot is one position's (sin, cos) pair, sin "
        "across and cos up, so position 0 sits at the top and the hand turns clockwise; "
        f"an arrow, the hand, points at the last position ({tokens[-1]!r})."
    ]
    for ax, i, (colour, _) in zip(axes[0], pairs, _LINES, strict=False):
        wave = 2 * np.pi * 10000 ** (2 * i / d)  # positions per turn
        turn = f"{wave:.1f}" if wave < 100 else f"{wave:.0f}"
        x, y = M[:, 2 * i], M[:, 2 * i + 1]  # (n,) sines, (n,) cosines
        angle = np.mod(np.arctan2(x, y), 2 * np.pi)  # clockwise from the top
        ax.plot(np.sin(ring), np.cos(ring), color="#8c8c8c", lw=1.0, zorder=0)
        ax.annotate(  # the hand, pointing at the last position
            "",
            xy=(x[-1], y[-1]),
            xytext=(0, 0),
            zorder=2,
            arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2, "shrinkB": 4},
        )
        ax.plot(x, y, "o", color=colour, ms=6, zorder=3)
        spread = np.ptp(np.unwrap(np.arctan2(x, y)))
        pace = ("fast", "slow")[i != min(pairs)] if len(pairs) == 2 else "pair"
        if spread > np.pi / 2:  # spread out: label every dot
            for pos, (a, token) in enumerate(zip(angle, tokens, strict=True)):
                _rim_label(ax, a, f"{pos} {token}")
            where = f"the {n} positions spread over {spread / (2 * np.pi):.1f} turns"
        else:  # bunched: one label, and rings at a quarter, a half and three quarters
            _rim_label(ax, angle.mean(), f"0 to {n - 1}")
            marks = [round(wave * k / 4) for k in (1, 2, 3)]
            for pos in marks:
                a = 2 * np.pi * pos / wave
                ax.plot(np.sin(a), np.cos(a), "o", color=colour, mfc="white", ms=7, mew=1.5)
                ax.text(
                    1.3 * np.sin(a), 1.3 * np.cos(a), f"{pos}", fontsize=9, ha="center", va="center"
                )
            caption = (
                f"Rings on the {pace} clock: where positions {', '.join(map(str, marks))} would "
                "stand,\na quarter, a half and three quarters of a turn on."
            )
            where = (
                f"all {n} positions lie within about {np.degrees(spread):.0f} degrees of the top; "
                f"rings mark positions {', '.join(map(str, marks))}, where it would be a "
                "quarter, a half and three quarters round"
            )
        ax.set_title(f"{pace} hand, pair {i}:\none turn per {turn} positions", fontsize=10)
        ax.set_xlabel(f"sin (column {2 * i})", fontsize=9)
        ax.set_ylabel(f"cos (column {2 * i + 1})", fontsize=9)
        ax.set(
            xlim=(-1.6, 1.6), ylim=(-1.6, 1.6), aspect="equal", xticks=[-1, 0, 1], yticks=[-1, 0, 1]
        )
        ax.tick_params(labelsize=9)
        alt.append(f"Pair {i} turns once per {turn} positions: {where}.")
    if caption:  # visible, not in the alt text only: two lines more below the clocks
        fig.set_size_inches(fig.get_size_inches()[0], 4.4)
        fig.text(0.5, 0.01, caption, ha="center", va="bottom", fontsize=9)
    fig.tight_layout(rect=(0, 0.35 / 4.4 if caption else 0, 1, 1))
    return fig, " ".join(alt)


def _rim_label(ax, angle: float, text: str) -> None:
    """Write ``text`` just outside a clock face of radius 1, at ``angle`` (0 at the top)."""
    ax.text(1.32 * np.sin(angle), 1.32 * np.cos(angle), text, fontsize=9, ha="center", va="center")

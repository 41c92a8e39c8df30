"""Figures for chapter 8, masking: weights with the masked cells drawn as *blocked*.

A masked weight is exactly 0, but so, nearly, is a weight that attention merely ignores.
To tell them apart without relying on colour, masked cells are not coloured at all: they
are light grey, hatched, and carry a dash ("—") instead of a number.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..validate import as_float_array
from .base import CMAP, check_labels, text_colour

MASKED = "masked\n(0)"  # the label of a masked key in a bar chart
_BLOCKED = {"facecolor": "0.93", "edgecolor": "0.55", "hatch": "///", "linewidth": 0.0}
DASH = "—"
# An orange outline (Okabe-Ito vermilion) stands out on every shade of cividis.
_OUTLINE = {"fill": False, "edgecolor": "#D55E00", "linewidth": 2.5}
# The weights without the mask, drawn over the bars as dashed outlines: no colour needed.
_GHOST = {"fill": False, "edgecolor": "0.2", "linestyle": "--", "linewidth": 1.0}
# Rows whose outputs nobody reads (the pads' queries): near white, grey numbers, no hatch.
_FADED = {"facecolor": "0.97", "edgecolor": "none", "linewidth": 0.0}
_FADED_TEXT = "0.4"  # 5.4:1 on the faded cells (0.97): above WCAG AA's 4.5:1


def _as_mask(mask, shape: tuple, name: str) -> np.ndarray:
    """A boolean mask broadcast to ``shape`` (all True for ``None``)."""
    if mask is None:
        return np.ones(shape, dtype=bool)
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"{name} must be boolean (True = may attend), got dtype {m.dtype}")
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(
            f"{name} of shape {m.shape} does not fit weights of shape {shape}"
        ) from None


def _masked_but_weighted(W: np.ndarray, M: np.ndarray, name: str) -> None:
    """A figure must not hide a weight under a hatch: masked weights have to be 0."""
    leak = W[~M]
    if leak.size and np.abs(leak).max() > 0:
        raise ValueError(
            f"{name} marks cells as masked whose weight is not 0 (largest {leak.max():.3g}); "
            "pass the weights computed with that mask"
        )


def masked_heatmaps(
    weights,
    masks,
    rows,
    cols=None,
    *,
    titles,
    title: str,
    fmt: str = ".2f",
    highlight=None,
    block=None,
    faded_rows=None,
    vmax: float = 1.0,
    takeaway: str = "",
):
    """Draw attention weights side by side, masked cells hatched with a dash.

    Parameters
    ----------
    weights : sequence of array_like, each of shape (n_q, n_k)
        One weight matrix per panel (one to three panels), e.g. before and after a mask.
    masks : sequence of (bool array_like broadcastable to (n_q, n_k) or None)
        The mask each panel was computed with; ``None`` for no mask. True = may attend.
    rows : sequence of str, length n_q
        Query tokens.
    cols : sequence of str, length n_k, optional
        Key tokens; defaults to ``rows``.
    titles : sequence of str
        One title per panel.
    title : str
        Shown above the panels and used in the alt text.
    fmt : str, default ".2f"
        Format of the numbers in the cells.
    highlight : tuple of int (row, col), optional
        One cell to outline in every panel, so that a change too small for the colour
        scale (0.21 -> 0.28, say) is still seen; the alt text gives its values.
    block : tuple ((row_start, row_stop), (col_start, col_stop)), optional
        A block of cells to outline (dashed) in every panel, half-open ranges, e.g. the
        real queries' weights on the padding keys; the alt text gives how much of each
        of its rows the block holds, per panel.
    faded_rows : tuple of int (start, stop), optional
        Query rows to grey out in every panel, a half-open range, e.g. the pads, whose
        outputs are ignored: their cells are near white with grey numbers, so that they
        do not draw the eye; the alt text names them.
    vmax : float, default 1.0
        The weight that gets the top colour, in (0, 1]. Below 1 the colour bar ends in an
        arrow and says that every larger weight shares that colour, so small weights
        (all of them near 1/n) get more of the colour range.
    takeaway : str, optional
        One sentence that opens the alt text: what the figure shows, before its data.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The takeaway, then for each panel how many cells are masked and each row's
        largest weight.

    Notes
    -----
    Every panel uses the same colour scale, 0 to ``vmax``, so panels compare at a glance.
    A row whose allowed weights all tie shows them as a fraction, "1/8", which a rounded
    "0.12" would not add up to.
    A masked cell whose weight is not exactly 0 is an error: the figure would hide it.
    """
    cols = rows if cols is None else cols
    Ws = [as_float_array(W, f"weights[{i}]") for i, W in enumerate(weights)]
    masks, titles = list(masks), list(titles)
    if not 1 <= len(Ws) <= 3 or len(masks) != len(Ws) or len(titles) != len(Ws):
        raise ValueError(
            f"need 1 to 3 panels with one mask and one title each: got {len(Ws)} weight "
            f"matrices, {len(masks)} masks and {len(titles)} titles"
        )
    Ms = []
    for i, W in enumerate(Ws):
        check_labels(W, rows, cols)
        Ms.append(_as_mask(masks[i], W.shape, f"masks[{i}]"))
        _masked_but_weighted(W, Ms[i], f"masks[{i}]")
    if not (isinstance(vmax, (int, float)) and 0 < vmax <= 1):
        raise ValueError(f"vmax must be a number in (0, 1], got {vmax!r}")
    n_q, n_k = Ws[0].shape
    if highlight is not None and not (0 <= highlight[0] < n_q and 0 <= highlight[1] < n_k):
        raise ValueError(f"highlight {highlight} is outside the {n_q} x {n_k} weights")
    if block is not None:
        (r0, r1), (c0, c1) = block
        if not (0 <= r0 < r1 <= n_q and 0 <= c0 < c1 <= n_k):
            raise ValueError(
                f"block {block} must be ((start, stop), (start, stop)) within the "
                f"{n_q} x {n_k} weights, start < stop"
            )
    faded = np.zeros(n_q, dtype=bool)
    if faded_rows is not None:
        f0, f1 = faded_rows
        if not (0 <= f0 < f1 <= n_q):
            raise ValueError(
                f"faded_rows {faded_rows} must be (start, stop) within the {n_q} query "
                "rows, start < stop"
            )
        faded[f0:f1] = True
    # A fixed layout in inches (no layout engine), like the other panel figures.
    left, gap, right, top, bottom = 0.95, 0.35, 0.95, 0.75, 0.95
    # Cells of up to 0.48 in, smaller when the panels would be wider than the page's
    # column (688 px at 1280, 7.6 in at 90 dpi): never shrunk, so 9 pt shows at 11 CSS px.
    cell = min(0.48, (7.6 - left - right - (len(Ws) - 1) * gap) / (len(Ws) * n_k))
    pw, ph = cell * n_k, cell * n_q
    width = left + len(Ws) * pw + (len(Ws) - 1) * gap + right
    height = top + ph + bottom
    fig = plt.figure(figsize=(width, height))
    parts = []
    for i, (W, M) in enumerate(zip(Ws, Ms, strict=True)):
        x0 = left + i * (pw + gap)
        ax = fig.add_axes((x0 / width, bottom / height, pw / width, ph / height))
        shown = M & ~faded[:, None]  # coloured cells: allowed, and not in a faded row
        image = ax.imshow(np.where(shown, W, np.nan), cmap=CMAP, vmin=0.0, vmax=vmax)
        ax.set_xticks(range(n_k), cols, rotation=55, ha="right", fontsize=9)
        ax.set_yticks(range(n_q), rows if i == 0 else [], fontsize=9)
        for tick, grey in zip(ax.get_yticklabels(), faded, strict=False):
            if grey:
                tick.set_color(_FADED_TEXT)
        ax.set_title(titles[i], fontsize=9)
        _fill_cells(ax, W, M, fmt, vmax, faded)
        if highlight is not None:
            r, c = highlight
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, **_OUTLINE))
        if block is not None:
            (r0, r1), (c0, c1) = block
            corner = (c0 - 0.5, r0 - 0.5)
            ax.add_patch(Rectangle(corner, c1 - c0, r1 - r0, linestyle="--", **_OUTLINE))
        parts.append(f"{titles[i]}: {_describe(W, M, rows, cols, fmt)}")
    fig.suptitle(title, fontsize=10, y=1 - 0.1 / height, va="top")
    middle = (left + (len(Ws) * pw + (len(Ws) - 1) * gap) / 2) / width
    fig.text(middle, 0.08 / height, "key (attended to)", ha="center", fontsize=10)
    fig.text(0.1 / width, 0.5, "query (attending)", va="center", rotation=90, fontsize=10)
    cax = fig.add_axes(((width - 0.82) / width, bottom / height, 0.14 / width, ph / height))
    # An arrow on the bar only when a coloured weight is above vmax and shares the top colour.
    if any((W[M & ~faded[:, None]] > vmax).any() for W, M in zip(Ws, Ms, strict=True)):
        fig.colorbar(image, cax=cax, label=f"weight ({vmax:g} and above: top colour)", extend="max")
        scale = f"colour 0 to {vmax:g} (larger weights share the top colour)"
    else:
        fig.colorbar(image, cax=cax, label="weight")
        scale = f"colour 0 to {vmax:g}"
    alt = (
        f"{takeaway} "
        * bool(takeaway)
        + f"{len(Ws)} heatmap{'s' * (len(Ws) > 1)}: {title}. Rows are queries, columns "
        f"keys, {scale}; masked cells are hatched with a dash. " + "; ".join(parts) + "."
    )
    if highlight is not None:
        r, c = highlight
        values = " then ".join(format(W[r, c], fmt) for W in Ws)
        alt += f" Outlined: {rows[r]} to {cols[c]}, {values}."
    if block is not None:
        (r0, r1), (c0, c1) = block
        shares = []
        for t, W in zip(titles, Ws, strict=True):
            held = W[r0:r1, c0:c1].sum(axis=-1)  # (r1 - r0,): each row's share of the block
            low, high = (format(v, fmt) for v in (held.min(), held.max()))
            shares.append(f"{t} {low}" if low == high else f"{t} {low} to {high}")
        alt += (
            f" Dashed outline: queries {rows[r0]} to {rows[r1 - 1]} on keys "
            f"{cols[c0]} to {cols[c1 - 1]} ({c0} to {c1 - 1}); each row's total there: "
            f"{', '.join(shares)}."
        )
    if faded_rows is not None:
        f0, f1 = faded_rows
        alt += f" Greyed out: rows {rows[f0]} to {rows[f1 - 1]} ({f0} to {f1 - 1})."
    return fig, alt


def _fill_cells(ax, W: np.ndarray, M: np.ndarray, fmt: str, vmax: float, faded) -> None:
    """Numbers in the allowed cells, a hatched dash in the masked ones; faded rows grey."""
    text = {"ha": "center", "va": "center", "fontsize": 9}
    for r in range(W.shape[0]):
        even = _even(W[r], M[r])
        for c in range(W.shape[1]):
            if M[r, c] and faded[r]:
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, **_FADED))
                label = f"1/{int(M[r].sum())}" if even else format(W[r, c], fmt)
                ax.text(c, r, label, color=_FADED_TEXT, **text)
            elif M[r, c]:
                colour = text_colour(W[r, c] / vmax)  # the colour scale runs 0 to vmax
                label = f"1/{int(M[r].sum())}" if even else format(W[r, c], fmt)
                ax.text(c, r, label, color=colour, **text)
            else:
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, **_BLOCKED))
                ax.text(c, r, DASH, color="0.3", **text)


def _even(w: np.ndarray, allowed: np.ndarray) -> bool:
    """True when a row spreads its weight evenly over two or more allowed keys."""
    return bool(allowed.sum() > 1 and np.allclose(w[allowed], w[allowed][0]))


def _describe(W: np.ndarray, M: np.ndarray, rows, cols, fmt: str) -> str:
    blocked = int((~M).sum())
    tops = [_top(W[i], M[i], rows[i], cols, fmt) for i in range(W.shape[0])]
    runs = []  # [text, count]: identical neighbours (the <pad> rows) are said once
    for top in tops:
        if runs and runs[-1][0] == top:
            runs[-1][1] += 1
        else:
            runs.append([top, 1])
    tops = ", ".join(f"{top} ({k} rows)" if k > 1 else top for top, k in runs)
    return f"{blocked} of {W.size} masked; each row's largest weight: {tops}"


def _top(w: np.ndarray, allowed: np.ndarray, query: str, cols, fmt: str) -> str:
    """A row's largest weight, or "1/k each" when its k allowed weights all tie."""
    if not allowed.any():  # an empty row has no weight to name
        return f"{query} no key"
    if _even(w, allowed):
        return f"{query} 1/{int(allowed.sum())} each"
    return f"{query} to {cols[int(np.argmax(w))]} {format(w.max(), fmt)}"

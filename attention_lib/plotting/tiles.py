"""A picture of tiled attention (chapter 9): which tile of the scores is in memory.

The score matrix is cut into tiles: a block of queries times a block of keys. Tiled
attention walks the tiles of one query block from left to right, folds each tile into
three running numbers per query (the maximum ``m``, the sum ``ℓ`` and the output ``o``)
and throws it away. The figure shows one step of that walk: the current tile with its
numbers, the tiles already folded in (hatched), and the tiles not computed yet (blank).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..validate import as_float_array
from .base import CMAP, annotate_cells, check_labels

BAR_LABEL = "colour: scaled logit z, whole matrix's range"
_DONE = {"facecolor": "0.9", "edgecolor": "0.55", "hatch": "\\\\\\", "linewidth": 0.0}


def tile_steps(q_edges, k_edges) -> list[tuple[int, int]]:
    """The order tiled attention visits its tiles: ``(query block, key block)`` pairs.

    ``q_edges`` and ``k_edges`` are the block boundaries, e.g. ``[0, 4, 8]``.
    """
    q, k = _edges(q_edges, "q_edges"), _edges(k_edges, "k_edges")
    return [(a, b) for a in range(len(q) - 1) for b in range(len(k) - 1)]


def _edges(edges, name: str) -> list[int]:
    e = [int(x) for x in edges]
    if len(e) < 2 or e[0] != 0 or any(b <= a for a, b in zip(e, e[1:], strict=False)):
        raise ValueError(f"{name} must start at 0 and increase, e.g. [0, 4, 8]; got {edges}")
    return e


def running_state(logits, V, k_end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's ``(m, ℓ, o)`` once the keys before ``k_end`` are folded in.

    The same numbers the online softmax carries, computed directly: ``m`` the largest
    logit so far, ``ℓ`` the sum of ``e^(z - m)``, ``o`` the sum of ``e^(z - m) v``.
    """
    Z = as_float_array(logits, "logits")[:, :k_end]
    m = Z.max(axis=-1)  # (n_q,)
    p = np.exp(Z - m[:, None])  # (n_q, k_end)
    return m, p.sum(axis=-1), p @ as_float_array(V, "V")[:k_end]


def tile_figure(logits, tokens, q_edges, k_edges, step: int, V=None):
    """Draw step ``step`` of the walk over the tiles of ``logits`` (queries x keys).

    Steps count from 1, as in the title ("Step 1 of 4"), in the order of :func:`tile_steps`.
    With ``V`` (n_k, d_v), a panel beside the tiles lists every query's running ``m``,
    ``ℓ`` and ``o`` after this step: the numbers the walk keeps instead of the tiles.
    Returns ``(fig, alt)``.
    """
    Z = as_float_array(logits, "logits")
    check_labels(Z, tokens, tokens)
    if V is not None and (np.ndim(V) != 2 or np.shape(V)[0] != Z.shape[1]):
        raise ValueError(
            f"V must have one row per key, shape ({Z.shape[1]}, d_v); got {np.shape(V)}"
        )
    q, k = _edges(q_edges, "q_edges"), _edges(k_edges, "k_edges")
    if q[-1] != Z.shape[0] or k[-1] != Z.shape[1]:
        raise ValueError(
            f"the last edges must be the matrix size {Z.shape}: got q_edges {q}, k_edges {k}"
        )
    steps = tile_steps(q, k)
    if not 1 <= step <= len(steps):
        raise ValueError(f"step must be 1 to {len(steps)}, got {step}")
    qb, kb = steps[step - 1]
    rows, cols = slice(q[qb], q[qb + 1]), slice(k[kb], k[kb + 1])
    lo, hi = float(Z.min()), float(Z.max())
    shown = np.full(Z.shape, np.nan)
    shown[rows, cols] = Z[rows, cols]

    if V is None:
        fig, ax = plt.subplots(figsize=(7.0, 5.2), layout="constrained")
        bar = {"ax": ax, "fraction": 0.046, "pad": 0.03}
    else:  # fixed boxes in inches, so the panel's lines sit level with the heatmap's rows
        width, height, box = 9.3, 5.85, 3.9
        fig = plt.figure(figsize=(width, height))
        ax = fig.add_axes((1.0 / width, 1.05 / height, box / width, box / height))
        side = fig.add_axes((5.95 / width, 1.05 / height, 3.3 / width, box / height))
        bar = {"cax": fig.add_axes((5.05 / width, 1.05 / height, 0.15 / width, box / height))}
    image = ax.imshow(shown, cmap=CMAP, vmin=lo, vmax=hi, aspect="auto")
    fig.colorbar(image, **bar, label=BAR_LABEL)
    annotate_cells(ax, Z[rows, cols], lo, hi, ".2f", fontsize=9)  # at (0, 0) of the tile ...
    for text in ax.texts:  # ... so move the numbers onto the tile
        x, y = text.get_position()
        text.set_position((x + cols.start, y + rows.start))
    for done in steps[: step - 1]:
        r0, c0 = q[done[0]], k[done[1]]
        height, width = q[done[0] + 1] - r0, k[done[1] + 1] - c0
        ax.add_patch(Rectangle((c0 - 0.5, r0 - 0.5), width, height, **_DONE))
    for a in range(len(q) - 1):  # the tile grid
        for b in range(len(k) - 1):
            box = (k[b] - 0.5, q[a] - 0.5), k[b + 1] - k[b], q[a + 1] - q[a]
            now = (a, b) == (qb, kb)
            ax.add_patch(
                Rectangle(*box, fill=False, edgecolor="black", linewidth=3.5 if now else 1.2)
            )
    ax.set_xticks(range(len(tokens)), tokens, rotation=45, ha="right")
    ax.set_yticks(range(len(tokens)), tokens)
    ax.set_xlabel("keys")
    ax.set_ylabel("queries")
    title = (
        f"Step {step} of {len(steps)}: query block {qb + 1}, key block {kb + 1}\n"
        "numbers: the current tile's scaled logits z = q·k / √d_k\n"
        "hatched: folded into m, ℓ, o and freed; blank: not computed yet"
    )
    if V is None:
        ax.set_title(title, fontsize=10)
    else:
        fig.suptitle(title, fontsize=10, y=0.995, va="top")
    state = "" if V is None else _state_panel(side, Z, V, tokens, q, k, qb, kb)
    q_tokens, k_tokens = tokens[rows], tokens[cols]
    alt = (
        f"Tiled attention, step {step} of {len(steps)}: the score matrix of "
        f"{len(tokens)} tokens cut into {len(q) - 1} query blocks and {len(k) - 1} key "
        f"blocks. Only the current tile, queries {q_tokens[0]!r} to {q_tokens[-1]!r} "
        f"against keys {k_tokens[0]!r} to {k_tokens[-1]!r}, shows its numbers, the scaled "
        f"logits z = q·k / √d_k, coloured from dark (lowest, {lo:.2f}) to light (highest, "
        f"{hi:.2f}) on the range of the whole matrix; "
        f"{_tiles(step - 1, 'earlier')} hatched as already folded into the running maximum, "
        f"sum and output, and {_tiles(len(steps) - step, 'more')} blank.{state}"
    )
    return fig, alt


def _tiles(count: int, which: str) -> str:
    """'no earlier tile is', '1 more tile is', '3 earlier tiles are'."""
    if count == 0:
        return f"no {which} tile is"
    return f"{count} {which} tile{'s are' if count > 1 else ' is'}"


def _state_panel(ax, Z, V, tokens, q: list, k: list, qb: int, kb: int) -> str:
    """Write each query's running m, ℓ and o after this step; return it for the alt text."""
    m, ell, o = running_state(Z, V, k[kb + 1])
    m_all, ell_all, o_all = running_state(Z, V, k[-1])
    ax.set_xlim(0, 1)
    ax.set_ylim(len(tokens) - 0.5, -0.5)  # rows line up with the heatmap's rows
    ax.axis("off")
    ax.set_title("what each query keeps", fontsize=10, loc="left")
    said = []
    for i, token in enumerate(tokens):
        if i >= q[qb + 1]:
            line, weight = "not started", "normal"
        elif i < q[qb]:
            line, weight = f"done: m {m_all[i]:.2f}  ℓ {ell_all[i]:.2f}", "normal"
        else:
            vector = " ".join(f"{v:.2f}" for v in o[i])
            line, weight = f"m {m[i]:.2f}  ℓ {ell[i]:.2f}  o ({vector})", "bold"
            said.append(f"{token!r}: m {m[i]:.2f}, ℓ {ell[i]:.2f}")
        ax.text(0.0, i, line, va="center", fontsize=9, fontweight=weight)
    return " Each query of the current block keeps " + "; ".join(said) + "."

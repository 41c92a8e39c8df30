"""A picture of tiled attention (chapter 9): which tile of the scores is in memory.

The score matrix is cut into tiles: a block of queries times a block of keys. Tiled
attention walks the tiles of one query block from left to right, folds each tile into
three running numbers per query (the maximum ``m``, the sum ``ℓ`` and the sum ``o``)
and throws it away. The figure shows one step of that walk: the current tile with its
numbers, the tiles already added in (hatched), the tiles still to come (blank), and
beside them the running ``m``, ``ℓ`` and ``o`` of each query.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ..validate import as_float_array
from .base import check_labels

NOW = "#d4ebf7"  # pale Okabe-Ito sky blue: the current tile and its queries' lines
_DONE = {"facecolor": "0.92", "edgecolor": "0.6", "hatch": "\\\\\\", "linewidth": 0.0}
_ROW = 0.45  # inches per token, in the grid and in the panel beside it
_PANEL = 5.9  # inches: the panel of running m, ℓ, o and the output (12 pt, 4 numbers each)
_MARK = "#0072b2"  # Okabe-Ito blue: the row the text follows (``row``)


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
    """Each query's ``(m, ℓ, o)`` once the keys before ``k_end`` are added in.

    The same numbers the online softmax carries, computed directly: ``m`` the largest
    logit so far, ``ℓ`` the sum of ``e^(z - m)``, ``o`` the sum of ``e^(z - m) v``.
    """
    Z = as_float_array(logits, "logits")[:, :k_end]
    m = Z.max(axis=-1)  # (n_q,)
    p = np.exp(Z - m[:, None])  # (n_q, k_end)
    return m, p.sum(axis=-1), p @ as_float_array(V, "V")[:k_end]


def tile_figure(logits, tokens, q_edges, k_edges, step: int, V=None, row: str | None = None):
    """Draw step ``step`` of the walk over the tiles of ``logits`` (queries x keys).

    Steps count from 1, as in the title ("Step 1 of 4"), in the order of :func:`tile_steps`.
    With ``V`` (n_k, d_v), a panel beside the tiles lists every query's running ``m``,
    ``ℓ`` and ``o`` after this step: the numbers the walk keeps instead of the tiles. The
    alt text reads out the line of ``row`` (a token) when it is in the current query
    block, else the block's first query. Returns ``(fig, alt)``.
    """
    Z = as_float_array(logits, "logits")
    check_labels(Z, tokens, tokens)
    tokens = list(tokens)
    if V is not None and (np.ndim(V) != 2 or np.shape(V)[0] != Z.shape[1]):
        raise ValueError(
            f"V must have one row per key, shape ({Z.shape[1]}, d_v); got {np.shape(V)}"
        )
    if row is not None and row not in tokens:
        raise ValueError(f"row must be one of the tokens {tokens}; got {row!r}")
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

    # Fixed boxes in inches, so the panel's lines sit level with the grid's rows.
    grid_w, grid_h = _ROW * Z.shape[1], _ROW * Z.shape[0]
    width = 1.0 + grid_w + (0.4 + _PANEL if V is not None else 0.2)
    height = 1.0 + grid_h + 1.0  # the title, and the panel's two-line heads
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((1.0 / width, 1.0 / height, grid_w / width, grid_h / height))
    ax.set_xlim(-0.5, Z.shape[1] - 0.5)
    ax.set_ylim(Z.shape[0] - 0.5, -0.5)
    for a, b in steps:
        r0, c0 = q[a], k[b]
        box = (c0 - 0.5, r0 - 0.5), k[b + 1] - c0, q[a + 1] - r0
        middle = (c0 + k[b + 1] - 1) / 2, (r0 + q[a + 1] - 1) / 2
        if (a, b) == (qb, kb):
            ax.add_patch(Rectangle(*box, facecolor=NOW, edgecolor="black", linewidth=3.5))
        elif (a, b) in steps[: step - 1]:
            ax.add_patch(Rectangle(*box, **_DONE))
            ax.add_patch(Rectangle(*box, fill=False, edgecolor="black", linewidth=1.2))
            label = {"color": "0.2", "bbox": {"facecolor": "white", "edgecolor": "none"}}
            ax.text(*middle, "already\nsummed", ha="center", va="center", fontsize=11, **label)
        else:
            ax.add_patch(Rectangle(*box, fill=False, edgecolor="black", linewidth=1.2))
            ax.text(*middle, "to come", ha="center", va="center", fontsize=11, color="0.35")
    for i in range(rows.start, rows.stop):
        for j in range(cols.start, cols.stop):
            ax.text(j, i, f"{Z[i, j]:.2f}", ha="center", va="center", fontsize=11)
    ax.set_xticks(range(len(tokens)), tokens, rotation=45, ha="right", fontsize=11)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=11)
    if row is not None:  # the row the text follows, in bold blue here and in the panel
        label = ax.get_yticklabels()[tokens.index(row)]
        label.set(fontweight="bold", color=_MARK)
    ax.set_xlabel("keys", fontsize=11)
    ax.set_ylabel("queries", fontsize=11)
    now, keys = tokens[rows], tokens[cols]
    fig.suptitle(  # which tile: its first and last query and key
        f"Step {step} of {len(steps)}: add in queries '{now[0]}'…'{now[-1]}' × keys "
        f"'{keys[0]}'…'{keys[-1]}', their scaled logits "
        r"$z = q \cdot k / \sqrt{d_k}$",
        fontsize=12,
        x=0.5 / width,
        ha="left",
        y=1 - 0.15 / height,
        va="top",
    )
    alt = (
        f"Tiled attention, step {step} of {len(steps)}: the tile of queries {now[0]!r} to "
        f"{now[-1]!r} against keys {tokens[cols][0]!r} to {tokens[cols][-1]!r} is added in. "
        f"Left, the {Z.shape[0]} by {Z.shape[1]} score matrix in {len(steps)} tiles: this "
        "tile shows its scaled logits z, tiles already added in are hatched, tiles to "
        "come are blank."
    )
    if V is not None:
        side = fig.add_axes(((1.3 + grid_w) / width, 1.0 / height, _PANEL / width, grid_h / height))
        named = tokens.index(row) if row in now else rows.start
        mark = tokens.index(row) if row is not None else None
        keys_in = k[kb], k[kb + 1]  # the keys added in before this step, and after it
        alt += " " + _state_panel(side, Z, V, tokens, rows, keys_in, named, mark)
    return fig, alt


def _state_panel(ax, Z, V, tokens, rows: slice, keys_in, named: int, mark=None) -> str:
    """List each query's running m, ℓ, o and, once done, its output; return alt text."""
    k_start, k_end = keys_in
    m, ell, o = running_state(Z, V, k_end)
    ax.set_xlim(0, _PANEL)  # in inches
    ax.set_ylim(len(tokens) - 0.5, -0.5)  # rows line up with the grid's rows
    ax.axis("off")
    _, ell_all, o_all = running_state(Z, V, Z.shape[1])  # every key added in
    columns = (0.1, "max m"), (0.85, "sum ℓ"), (1.6, "running sum o"), (3.75, "output o / ℓ")
    for x, head in columns:
        ax.text(x, -0.75, head, fontsize=12, fontweight="bold", va="bottom")
    ax.add_patch(Rectangle((0, rows.start - 0.5), _PANEL, rows.stop - rows.start, facecolor=NOW))
    if mark is not None:
        ax.add_patch(Rectangle((0, mark - 0.5), _PANEL, 1, fill=False, edgecolor=_MARK, lw=2))
    for i in range(len(tokens)):
        bold = {"fontweight": "bold"} if i == mark else {}
        output = "  ".join(f"{v:.2f}" for v in o_all[i] / ell_all[i])
        if rows.start <= i < rows.stop:
            texts = [f"{m[i]:.2f}", f"{ell[i]:.2f}", "  ".join(f"{v:.2f}" for v in o[i])]
            texts += [output] if k_end == Z.shape[1] else []  # every key in: the output
            for (x, _), text in zip(columns, texts, strict=False):
                ax.text(x, i, text, fontsize=12, va="center", **bold)
        elif i < rows.start:  # a finished query keeps only its output
            ax.text(0.1, i, "done", fontsize=12, va="center", color="0.35", **bold)
            ax.text(3.75, i, output, fontsize=12, va="center", **bold)
        else:
            ax.text(0.1, i, "not started", fontsize=12, va="center", color="0.35", **bold)
    vector = ", ".join(f"{v:.2f}" for v in o[named])
    alt = (
        "Right, each query's running maximum m, sum ℓ and running sum o; the row of "
        f"{tokens[named]!r} now holds m {m[named]:.2f}, ℓ {ell[named]:.2f}, o ({vector})."
    )
    if mark is not None and rows.start <= mark < rows.stop:  # the followed row's α
        m_old = running_state(Z, V, k_start)[0][mark] if k_start else -np.inf
        alpha = np.exp(m_old - m[mark])  # 0 on the first key block
        note = f"α for {tokens[mark]!r} this step: {alpha:.2f}"
        ax.text(0.1, len(tokens) + 0.7, note, fontsize=12, va="center", color=_MARK)
        alt += f" This step rescales the old sums of {tokens[mark]!r} by α = {alpha:.2f}."
    if rows.start > 0:
        alt += " Queries already done show their output, o divided by ℓ."
    if k_end == Z.shape[1]:  # the block's last tile: its queries' outputs are ready
        out = ", ".join(f"{v:.2f}" for v in o[named] / ell[named])
        below = len(tokens) - 0.5 + 0.6  # under the panel's lower edge, in rows
        note = f"the output of {tokens[named]!r} is its row of softmax(z) V"
        if named != mark:  # the followed row is not in this block: name the whole block
            note = f"the outputs of {tokens[rows.start]!r}…{tokens[rows.stop - 1]!r} are final"
        ax.text(0.1, below, note, fontsize=12, va="center", ha="left")  # under α
        alt += f" All keys are in: o / ℓ for {tokens[named]!r} is ({out}), its row of softmax(z) V."
        if named != mark:
            alt += f" The outputs of {tokens[rows.start]!r} to {tokens[rows.stop - 1]!r} are final."
    return alt

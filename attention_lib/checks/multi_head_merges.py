"""Chapter 7 checker: wrong ways to merge the heads back into one (n, d_model) array.

Kept apart from ``multi_head_mistakes.py``, which lists the slips before the merge.
"""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, scaled_dot_product_attention, softmax
from ..heads import merge_heads, split_heads


def merge_slips(heads: np.ndarray, W_o: np.ndarray) -> list[tuple]:
    """Merges of the right heads, (h, n, d_k), that put their columns in the wrong place."""
    h, n, _ = heads.shape
    if h < 2:
        return []
    # np.stack(heads, axis=-1).reshape(n, -1): (n, d_k, h), so column j*h + i is head i's j
    interleaved = np.stack(list(heads), axis=-1).reshape(n, -1)
    return [
        (
            interleaved @ W_o,
            "stacking the heads on a new last axis, np.stack(heads, axis=-1), then "
            "reshaping interleaves them: column 0 of every head first, then column 1. "
            "Concatenate instead, np.concatenate(heads, axis=-1), so head i keeps its "
            "block of d_k columns.",
        )
    ]


def token_axis_hint(out, n: int, d_model: int, h: int, case: str) -> str:
    """The hint for heads concatenated along the token axis, shape (h n, d_k); else ""."""
    if h > 1 and np.shape(out) == (h * n, d_model // h):
        return (
            f"returned shape {np.shape(out)} (on {case}), h x n = {h * n} rows of d_k = "
            f"{d_model // h}; you stacked the heads along the token axis: concatenate along "
            "axis=-1, np.concatenate(heads, axis=-1), then multiply by W_o."
        )
    return ""


def softmax_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """Heads whose softmax ran over the queries, unscaled, or was left out."""
    Q, K, V = (split_heads(X @ W, h) for W in (W_q, W_k, W_v))  # (h, n, d_k) each
    scores = attention_scores(Q, K)  # (h, n, n): queries down, keys across
    scaled = scores / np.sqrt(Q.shape[-1])

    def out(weights):  # (h, n, n) weights -> (n, d_model)
        return merge_heads(weights @ V) @ W_o

    no_softmax = (
        "you skipped the softmax: the scores went straight into weights @ V_i. Each row "
        "of scores must pass through softmax(..., axis=-1) first, so it sums to 1."
    )
    return [
        (
            out(softmax(scores, axis=-2)),
            "softmax ran over axis 0 of each head's (n, n) scores, the queries, and the "
            "scores were not scaled: take softmax over the last axis (the keys), so each "
            "query's row sums to 1, after dividing Q_i K_iᵀ by sqrt(d_k).",
        ),
        (out(scaled), no_softmax),
        (out(scores), no_softmax + " Divide the scores by sqrt(d_k) too."),
    ]


def value_block_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """Review 07_hh: every head's values from W_v's first block, W_q and W_k sliced right."""
    d_k = X.shape[-1] // h
    V_0 = X @ W_v[:, :d_k]  # (n, d_k): head 0's values, copied to every head
    heads = [
        scaled_dot_product_attention(X @ W_q[:, c], X @ W_k[:, c], V_0)[0]
        for c in (slice(i * d_k, (i + 1) * d_k) for i in range(h))
    ]
    return [
        (
            np.concatenate(heads, axis=-1) @ W_o,
            "every head took its values from the first block of W_v, W_v[:, :d_k], while "
            "its queries and keys used its own block. Slice W_v like W_q and W_k: "
            "V_i = X @ W_v[:, i*d_k:(i+1)*d_k].",
        )
    ]


def overlap_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """Review 07_ii: head i sliced columns i:i+d_k, so the heads overlap."""
    d_k = X.shape[-1] // h
    heads = [
        scaled_dot_product_attention(X @ W_q[:, c], X @ W_k[:, c], X @ W_v[:, c])[0]
        for c in (slice(i, i + d_k) for i in range(h))
    ]
    return [
        (
            np.concatenate(heads, axis=-1) @ W_o,
            "your heads overlap: head i took columns i:i+d_k, so each starts one column "
            "after the last and shares d_k - 1 columns with it. Did you forget to multiply "
            "by d_k? Head i owns columns i*d_k:(i+1)*d_k.",
        )
    ]


def transposed_k_hint(message: str, X, h: int) -> str:
    """Review 07_ii: K_i.T passed to al.scaled_dot_product_attention, which transposes K."""
    n, d_k = X.shape[0], X.shape[-1] // h
    if "must share d_k" in message and f"K has shape ({d_k}, {n})" in message:
        return (
            "Pass K, not K.T: al.scaled_dot_product_attention transposes K itself, so "
            "give it K_i = X @ W_k[:, cols], shape (n, d_k)."
        )
    return ""


def wide_hint(message: str, X, h: int) -> str:
    """Review 07_ii: slices i*d_k:(i+1)*d_k+1, read off the error at W_o (the last is clipped)."""
    n, d_model = X.shape
    wide = d_model + h - 1  # h - 1 slices one column too wide, the last clipped to d_model
    if h > 1 and any(
        s in message for s in (f"{d_model} is different from {wide}", f"({n},{wide})")
    ):
        return (
            f"Your concatenation has {wide} columns, not d_model = {d_model}: each head's "
            "slice is one column too wide. The head at index i owns columns "
            "i*d_k:(i+1)*d_k (a slice stops before its end)."
        )
    return ""


def swapped_kv_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """Review 07_kk: al.scaled_dot_product_attention(Q_i, V_i, K_i), K and V swapped."""
    Q, K, V = (split_heads(X @ W, h) for W in (W_q, W_k, W_v))  # (h, n, d_k) each
    heads, _ = scaled_dot_product_attention(Q, V, K)  # scores from V, values from K
    return [
        (
            merge_heads(heads) @ W_o,
            "K and V are swapped: you called al.scaled_dot_product_attention(Q_i, V_i, "
            "K_i), so the scores came from the values and the output from the keys. The "
            "order is (Q_i, K_i, V_i).",
        )
    ]


def stacked_hint(run, X, W_q, W_k, W_v, h: int) -> str:
    """Review 07_kk: np.stack(heads) @ W_o; ``run(W_o)`` is fn's output with that W_o.

    Stacked heads are (h, n, d_k), so W_o meets d_k columns: a W_o of d_k rows lets the
    function finish, and the (h, n, d_model) that comes back names the slip.
    """
    n, d_model = X.shape
    d_k = d_model // h
    if h < 2:
        return ""
    probe = np.random.default_rng(3).normal(size=(d_k, d_model))  # (d_k, d_model)
    out = run(probe)
    heads, _ = scaled_dot_product_attention(*(split_heads(X @ W, h) for W in (W_q, W_k, W_v)))
    if np.shape(out) != (h, n, d_model) or not np.allclose(out, heads @ probe):
        return ""
    return (
        f"Your heads are stacked, shape (h, n, d_k) = ({h}, {n}, {d_k}), as np.stack(heads) "
        "gives, so W_o met d_k columns. Concatenate along the last axis instead, "
        "np.concatenate(heads, axis=-1), shape (n, h*d_k), then @ W_o."
    )


def averaged_hint(out, X, W_q, W_k, W_v, h: int) -> str:
    """Name an output that is the heads' mean (or sum), shape (n, d_k), never concatenated."""
    if h < 2 or np.shape(out) != (X.shape[0], X.shape[-1] // h):
        return ""
    heads, _ = scaled_dot_product_attention(*(split_heads(X @ W, h) for W in (W_q, W_k, W_v)))
    for combined, how in ((heads.mean(axis=0), "averaged"), (heads.sum(axis=0), "summed")):
        if np.allclose(out, combined):
            return (
                f"you {how} the heads: your output is one (n, d_k) block. Glue them side by "
                "side instead, np.concatenate(heads, axis=-1), shape (n, d_model), then @ W_o."
            )
    return ""

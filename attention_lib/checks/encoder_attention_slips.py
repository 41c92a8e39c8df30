"""Chapter 11 checker: slips in attention with biases that cold review 11_t found without a
named hint (``encoder_attention.py`` adds them to its list of known mistakes)."""

from __future__ import annotations

import numpy as np

from ..core import softmax
from ..heads import merge_heads, split_heads

_K_Q_T = (
    "your scores are transposed: you computed K Q^T, so row i holds key i's scores; "
    "write Q @ np.swapaxes(K, -1, -2), one row per query."
)
_SUMMED = (
    "you summed the heads: glue them side by side into d_model numbers "
    "(np.swapaxes(heads, -2, -3), then reshape) and multiply by the whole W_o."
)
_BIAS_SLICE = (
    "every head got the same d_k numbers of each bias (b[:d_k]): add the whole bias "
    "before the cut, X @ W_q + b_q, so head i gets its own slice."
)


def slips(X, p, h) -> tuple:
    """(wrong output, hint) for K Q^T, heads summed, and b[:d_k] added to every head."""
    d_k = X.shape[-1] // h

    def attend(Q, K, V):  # (..., h, n, d_k) each
        return softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)) @ V

    Q, K, V = (
        split_heads(X @ W + b, h) for W, b in ((p.W_q, p.b_q), (p.W_k, p.b_k), (p.W_v, p.b_v))
    )
    k_q_t = softmax(K @ np.swapaxes(Q, -1, -2) / np.sqrt(d_k)) @ V
    summed = attend(Q, K, V).sum(axis=-3) @ p.W_o[:d_k]  # (..., n, d_k) @ (d_k, d_model)
    sliced = (
        split_heads(X @ W, h) + b[:d_k] for W, b in ((p.W_q, p.b_q), (p.W_k, p.b_k), (p.W_v, p.b_v))
    )
    return (
        (merge_heads(k_q_t) @ p.W_o + p.b_o, _K_Q_T),
        (summed + p.b_o, _SUMMED),
        (merge_heads(attend(*sliced)) @ p.W_o + p.b_o, _BIAS_SLICE),
    )

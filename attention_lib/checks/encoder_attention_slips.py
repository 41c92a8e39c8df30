"""Chapter 11 checker: slips in attention with biases that cold reviews 11_t and 11_x found
without a named hint (``encoder_attention.py`` adds them to its list of known mistakes)."""

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
_AVERAGED = (
    "you averaged the heads: glue them side by side into d_model numbers "
    "(np.swapaxes(heads, -2, -3), then reshape) and multiply by the whole W_o."
)
_SQRT_32 = (
    "you hard-coded sqrt(32), the model's d_k, but the checker's layers are smaller: "
    "use d_k = d_model / h from X and h."
)
_SQRT_384 = (
    "you divided by sqrt(384), the model's d_model; each head divides by sqrt(d_k) = "
    "sqrt(d_model / h), with d_model and h taken from X and h."
)
_BIAS_SLICE = (
    "every head got the same d_k numbers of each bias (b[:d_k]): add the whole bias "
    "before the cut, X @ W_q + b_q, so head i gets its own slice."
)
_W_Q_T = (
    "W_q is transposed: it is stored (d_in, d_out), so write X @ W_q without .T "
    "(PyTorch's nn.Linear stores (out, in))."
)
_QKV_T = (
    "W_q, W_k and W_v are transposed (X @ W.T): the layer stores W as (d_in, d_out): "
    "use X @ W (PyTorch's nn.Linear stores (out, in))."
)
_K_V = (
    "K and V are swapped: score with K = X @ W_k + b_k and blend V = X @ W_v + b_v, "
    "softmax(Q K^T / sqrt(d_k)) @ V."
)
_Q_FROM_W_K = "your Q was computed with W_k (a copied line?): Q = X @ W_q + b_q, K = X @ W_k + b_k."
_SQRT_H = (
    "you divided by sqrt(h), the number of heads; each head divides by sqrt(d_k) = "
    "sqrt(d_model / h), the width of its own queries and keys."
)

_TRANSPOSE = (
    " If you wrote K.T: on (..., h, n, d_k) it reverses all the axes, not only the last two; "
    "np.swapaxes(K, -1, -2) swaps just those."
)
_BIAS_AFTER_CUT = (
    " You added a bias after cutting into heads: it has d_model numbers, one per column "
    "of X @ W, so add it first, Q = X @ W_q + b_q, then cut."
)


def broadcast_hint(error: str, d_model: int) -> str:
    """The hint for a broadcast error: a (d_model,) bias added to (..., h, n, d_k) heads
    (review 11_ff), else K.T on (..., h, n, d_k)."""
    return _BIAS_AFTER_CUT if f"({d_model},)" in error else _TRANSPOSE


_GLUED_ON_TOKENS = (
    "W_o got rows of d_k = {d_k} numbers, not d_model = {d}: the heads were stacked "
    "along the token axis (np.concatenate(..., axis=-2)) or not glued at all. Glue them "
    "side by side: np.swapaxes(heads, -2, -3), then reshape to (..., n, d_model)."
)


def glue_hint(error: str, d_model: int, h: int) -> str | None:
    """The hint for ``heads @ W_o`` with (..., h * n, d_k) or (..., h, n, d_k) heads: the
    heads concatenated along the token axis (review 11_kk), else None."""
    d_k = d_model // h
    if "core dimension" in error and f"(size {d_model} is different from {d_k})" in error:
        return _GLUED_ON_TOKENS.format(d_k=d_k, d=d_model)
    return None


def slips(X, p, h) -> tuple:
    """(wrong output, hint) for K Q^T, heads summed or averaged, b[:d_k] added to every
    head, W_q (or W_q, W_k and W_v) transposed, K and V swapped, and the scale hard-coded
    as sqrt(32) or sqrt(384) (review 11_mm); Q computed with W_k and a sqrt(h) scale
    (review 11_nn)."""
    d_k = X.shape[-1] // h

    def attend(Q, K, V, scale=d_k):  # (..., h, n, d_k) each
        return softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(scale)) @ V

    Q, K, V = (
        split_heads(X @ W + b, h) for W, b in ((p.W_q, p.b_q), (p.W_k, p.b_k), (p.W_v, p.b_v))
    )
    k_q_t = softmax(K @ np.swapaxes(Q, -1, -2) / np.sqrt(d_k)) @ V
    summed = attend(Q, K, V).sum(axis=-3) @ p.W_o[:d_k]  # (..., n, d_k) @ (d_k, d_model)
    averaged = attend(Q, K, V).mean(axis=-3) @ p.W_o[:d_k]  # review 11_jj
    sliced = (
        split_heads(X @ W, h) + b[:d_k] for W, b in ((p.W_q, p.b_q), (p.W_k, p.b_k), (p.W_v, p.b_v))
    )
    Q_t = split_heads(X @ p.W_q.T + p.b_q, h)  # W_q used as PyTorch stores it, (out, in)
    K_t, V_t = (split_heads(X @ W.T + b, h) for W, b in ((p.W_k, p.b_k), (p.W_v, p.b_v)))
    Q_k = (split_heads(X @ p.W_k + b, h) for b in (p.b_k, p.b_q))  # the K line, copied
    return (
        (merge_heads(k_q_t) @ p.W_o + p.b_o, _K_Q_T),
        (merge_heads(attend(Q_t, K, V)) @ p.W_o + p.b_o, _W_Q_T),
        (merge_heads(attend(Q_t, K_t, V_t)) @ p.W_o + p.b_o, _QKV_T),  # review 11_ll
        (merge_heads(attend(Q, V, K)) @ p.W_o + p.b_o, _K_V),
        (summed + p.b_o, _SUMMED),
        (averaged + p.b_o, _AVERAGED),
        (merge_heads(attend(Q, K, V, scale=32)) @ p.W_o + p.b_o, _SQRT_32),  # review 11_jj
        (merge_heads(attend(Q, K, V, scale=384)) @ p.W_o + p.b_o, _SQRT_384),  # 11_mm
        (merge_heads(attend(*sliced)) @ p.W_o + p.b_o, _BIAS_SLICE),
        *((merge_heads(attend(Q, K, V)) @ p.W_o + p.b_o, _Q_FROM_W_K) for Q in Q_k),
        (merge_heads(attend(Q, K, V, scale=h)) @ p.W_o + p.b_o, _SQRT_H),  # 11_nn
    )

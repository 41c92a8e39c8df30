r"""Scaled dot-product attention and multi-head attention in NumPy, every input checked.

Row vectors (``X`` is (..., n, d_model), ``Q = X @ W_q``), leading batch axes ``...``
everywhere. Next to torch's F.sdpa, ``scaled_dot_product_attention`` keeps the order of Q, K,
V, the boolean mask and ``scale``, adds ``temperature``, has no ``dropout_p`` or ``is_causal``
(pass ``scale`` by name) and also returns the weights. ``nn.MultiheadAttention`` differs more::

                   attention_lib and F.sdpa   nn.MultiheadAttention
    boolean mask   True = may attend          True = NOT allowed (attn_mask and key_padding_mask)
    padding        inside the (n_q, n_k) mask key_padding_mask of shape (batch, n_k)
    layout         (..., n, d), any batch     (n, batch, d_model) unless batch_first=True
    weights        per head (F.sdpa: none)    averaged over the heads by default
"""

from __future__ import annotations

import numpy as np

from .fast import _EXP_SAFE as _EXP_SAFE
from .fast import attend_in_blocks, blocks_pay_off
from .validate import (
    as_float_array,
    check_axis,
    check_batch,
    check_mask,
    check_positive_int,
    checked_matmul,
    positive_real,
)


def softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    r"""Numerically stable softmax with a temperature.

    Parameters
    ----------
    x : array_like of shape (..., n), at least 1-D
        Logits (any finite real numbers). Integers are promoted to float64.
    axis : int, default -1
        The axis that is normalised. For attention this is the key axis, the last one.
    temperature : float, default 1.0
        ``T > 0``. Small ``T`` sharpens the distribution towards one-hot, large ``T``
        flattens it towards uniform.

    Returns
    -------
    ndarray of the same shape as ``x``
        Non-negative numbers that sum to 1 along ``axis``.

    Notes
    -----
    .. math:: \operatorname{softmax}(z)_i = \frac{e^{z_i / T}}{\sum_j e^{z_j / T}}

    Subtracting the maximum first changes nothing mathematically (the factor
    :math:`e^{-\max z / T}` cancels) but keeps every exponent :math:`\le 0`, so ``exp``
    never overflows, even for logits like ``1e300``.
    """
    x = as_float_array(x, "x", min_ndim=1)
    axis = check_axis(axis, x.ndim, x.shape)
    T = positive_real(temperature, "temperature")
    return _softmax_guarded(x, axis, T)


def _softmax(x: np.ndarray, axis: int, T: float) -> np.ndarray:
    # Subtract each row's max first: every exponent is then <= 0, so exp never
    # overflows, and the factor exp(-max / T) cancels above and below the line.
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted / T)
    # Add up in float32 at least: a float16 total overflows past 65,504 (70,000 equal keys).
    total = np.sum(e, axis=axis, keepdims=True, dtype=np.result_type(e.dtype, np.float32))
    return (e / total).astype(e.dtype, copy=False)


def _softmax_guarded(x: np.ndarray, axis: int, T: float) -> np.ndarray:
    """:func:`_softmax`, ordered so that no intermediate step overflows the answer away.

    With T > 1, dividing first only shrinks the logits, so it goes first. With T < 1,
    the shift goes first (as in :func:`_softmax`) and the division only pushes
    non-positive numbers further down; it runs in float64 so a float32 array accepts any
    T. An overflow to -inf that remains means a weight that really is 0.
    """
    with np.errstate(over="ignore"):
        if T == 1.0:
            return _softmax(x, axis, 1.0)
        if T > 1.0:
            return _softmax((x.astype(np.float64) / T).astype(x.dtype), axis, 1.0)
        return _softmax(x.astype(np.float64), axis, T).astype(x.dtype)


def attention_scores(Q, K) -> np.ndarray:
    r"""Raw similarity scores :math:`Q K^\top`; rows index queries, columns index keys.

    Parameters
    ----------
    Q : array_like of shape (..., n_q, d_k)
    K : array_like of shape (..., n_k, d_k)

    Returns
    -------
    scores : ndarray of shape (..., n_q, n_k)
        ``scores[..., i, j]`` is the dot product of query ``i`` with key ``j``.
    """
    Q, K = _checked_q_k(Q, K)
    return _scores(Q, K)


def _checked_q_k(Q, K) -> tuple[np.ndarray, np.ndarray]:
    Q = as_float_array(Q, "Q", min_ndim=2)
    K = as_float_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k: Q has shape {Q.shape}, K has shape {K.shape}")
    check_batch("Q", Q, "K", K)
    return Q, K


def _scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
    return checked_matmul(Q, np.swapaxes(K, -1, -2), "Q Kᵀ")


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None, temperature: float = 1.0):
    r"""Scaled dot-product attention: scores, scale, softmax, then a weighted sum of values.

    Parameters
    ----------
    Q : array_like of shape (..., n_q, d_k)
    K : array_like of shape (..., n_k, d_k)
    V : array_like of shape (..., n_k, d_v)
    mask : bool array_like broadcastable to (..., n_q, n_k), optional
        ``True`` where a query may attend to a key (PyTorch's boolean convention).
    scale : float > 0, optional
        Multiplies the scores. ``None`` means :math:`1/\sqrt{d_k}`.
    temperature : float, default 1.0
        Divides the scaled scores before softmax.

    Returns
    -------
    output : ndarray of shape (..., n_q, d_v)
        One context vector per query: a weighted average of the rows of ``V``.
    weights : ndarray of shape (..., n_q, n_k)
        The attention weights; each row sums to 1 and masked entries are exactly 0.

    Notes
    -----
    .. math::
        \text{weights} = \operatorname{softmax}\!\left(\frac{Q K^\top \cdot s}{T}\right),
        \qquad \text{output} = \text{weights}\, V, \qquad s = \frac{1}{\sqrt{d_k}}
    """
    Q, K = _checked_q_k(Q, K)
    V = as_float_array(V, "V", min_ndim=2)
    n_k, d_k = K.shape[-2:]
    if V.shape[-2] != n_k:
        raise ValueError(
            "K and V must have one row per key (the same n_k): "
            f"K has shape {K.shape}, V has shape {V.shape}"
        )
    scores_shape = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]) + (Q.shape[-2], n_k)
    check_batch("scores", scores_shape, "V", V)
    T = positive_real(temperature, "temperature")
    s = 1.0 / np.sqrt(d_k) if scale is None else positive_real(scale, "scale")
    if mask is not None:
        mask = check_mask(mask, scores_shape)
    return _attention(Q, K, V, mask, s, T)


def _attention(Q, K, V, mask, s: float, T: float, *, need_weights=True, out=None, n_threads=None):
    """:func:`_attend` on the scores, or, for large inputs, the same (to rounding) in blocks.

    The blocked route is :func:`attention_lib.fast.attend_in_blocks`; it keeps no weights
    when ``need_weights`` is false, and runs on ``n_threads`` (``None``: it decides).
    ``out``, if given, receives the output.
    """
    if blocks_pay_off(Q, K, V, s / T):
        keep = {"need_weights": need_weights, "out": out, "n_threads": n_threads}
        return attend_in_blocks(Q, K, V, mask, s / T, **keep)
    output, weights = _attend(_scores(Q, K), V, mask, s, T)
    if out is not None:
        out[...] = output
    return (output if out is None else out), weights


_blocks_pay_off = blocks_pay_off  # chapter 9 imports it from here, chapter 8 _EXP_SAFE


def _attend(scores: np.ndarray, V: np.ndarray, mask, s: float, T: float):
    """Scale, mask, softmax and blend on checked inputs (big ones: :func:`attend_in_blocks`)."""
    with np.errstate(over="ignore"):
        logits = scores * scores.dtype.type(s)
    if not np.all(np.isfinite(logits)):
        raise ValueError(f"scale = {s!r} makes the scaled scores overflow to infinity")
    if mask is not None:
        logits = np.where(mask, logits, -np.inf)  # exp(-inf) = 0: masked keys get no weight
    weights = _softmax_guarded(logits, -1, T)  # (..., n_q, n_k)
    output = checked_matmul(weights, V, "weights @ V")  # (..., n_q, d_v)
    per_output = output.shape[:-1] + weights.shape[-1:]
    if weights.shape != per_output:  # V has more batch dims than Q and K
        weights = np.broadcast_to(weights, per_output).copy()  # one matrix per output
    return output, weights


def causal_mask(n: int) -> np.ndarray:
    """Boolean ``(n, n)`` mask where query ``i`` may attend to keys ``0..i`` only.

    Parameters
    ----------
    n : int
        Sequence length, at least 1.

    Returns
    -------
    mask : ndarray of bool, shape (n, n)
        The lower triangle, diagonal included, is True.
    """
    n = check_positive_int(n, "n")
    return np.tril(np.ones((n, n), dtype=bool))


def positional_encoding(n: int, d_model: int) -> np.ndarray:
    r"""Sinusoidal positional encoding from *Attention Is All You Need*.

    Parameters
    ----------
    n : int
        Number of positions, at least 1.
    d_model : int
        Width of each encoding, at least 1. An odd width ends with a sine column.

    Returns
    -------
    PE : ndarray of shape (n, d_model)
        Row ``pos`` is added to the embedding of the token at position ``pos``.

    Notes
    -----
    .. math::
        PE_{pos,\,2i} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right), \qquad
        PE_{pos,\,2i+1} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)
    """
    n = check_positive_int(n, "n")
    d_model = check_positive_int(d_model, "d_model")
    pos = np.arange(n)[:, None]  # (n, 1)
    two_i = np.arange(0, d_model, 2)  # (ceil(d_model / 2),)
    angle = pos / 10000.0 ** (two_i / d_model)  # (n, ceil(d_model / 2))
    PE = np.empty((n, d_model))
    PE[:, 0::2] = np.sin(angle)
    PE[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return PE

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
    return e / np.sum(e, axis=axis, keepdims=True)


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


def _attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask, s: float, T: float):
    """:func:`_attend` on the scores, or, for large inputs, the same (to rounding) in blocks."""
    if _blocks_pay_off(Q, K, V, s / T):
        return _attend_in_blocks(Q, K, V, mask, s / T)
    return _attend(_scores(Q, K), V, mask, s, T)


def _attend(scores: np.ndarray, V: np.ndarray, mask, s: float, T: float):
    """Scale, mask, softmax and blend on checked inputs (big ones: :func:`_attend_in_blocks`)."""
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


# |logits| <= LIMIT lets the blocked route skip the max shift: e^600 and e^60 are far from
# overflow (e^709, e^88.7), and e^-600 and e^-60 far from zero.
_EXP_SAFE = {np.dtype(np.float64): 600.0, np.dtype(np.float32): 60.0}
_BLOCK = 2**18  # weights per block: 2 MiB in float64, so one block stays in a core's cache


def _blocks_pay_off(Q: np.ndarray, K: np.ndarray, V: np.ndarray, c: float) -> bool:
    r"""Whether :func:`_attend_in_blocks` applies: big heads, one dtype, no overflow possible.

    The bound is Cauchy-Schwarz, :math:`|c\, q \cdot k| \le c \lVert q \rVert \lVert k
    \rVert`: if it keeps every logit within ``_EXP_SAFE``, nothing can overflow, and no
    check of the big score matrix is needed. Anything else takes the checked route.
    """
    if Q.shape[-2] * K.shape[-2] < 2**16 or not Q.dtype == K.dtype == V.dtype:
        return False  # small heads: the per-block Python overhead would dominate
    if Q.shape[:-2] != np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2]):
        return False  # K or V with more batch dimensions than Q: weights get broadcast
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.sqrt(np.max(np.einsum("...i,...i->...", Q, Q)))  # longest query
        k = np.sqrt(np.max(np.einsum("...i,...i->...", K, K)))  # longest key
        return bool(c * q * k <= _EXP_SAFE[Q.dtype] and c * q < np.finfo(Q.dtype).max)


def _attend_in_blocks(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask, c: float):
    r"""The same attention as :func:`_attend`, a block of queries at a time, in place.

    Three ideas make it fast, none changes the result beyond rounding:

    * **Blocks that stay in cache.** A block of query rows needs only itself, ``K`` and
      ``V``. Its logits go straight into ``weights`` (``out=``); exp, normalise and blend
      run while it is in the CPU's cache, not once per step over the whole matrix.
    * **Softmax in place, in two passes.** Softmax does not change if every logit of a
      row moves by the same amount; subtracting the row's maximum only guards ``exp``
      against overflow. :func:`_blocks_pay_off` has proven that no logit is large, so
      ``exp`` runs directly; then each row is multiplied by its ``1 / sum``.
    * **Scale the small matrix.** ``(c Q) K^T`` equals ``c (Q K^T)`` but touches
      ``n_q d_k`` numbers instead of ``n_q n_k``.
    """
    *batch, n_q, _ = Q.shape
    n_k, d_v = K.shape[-2], V.shape[-1]
    weights = np.empty((*batch, n_q, n_k), Q.dtype)  # filled block by block, never copied
    output = np.empty((*batch, n_q, d_v), Q.dtype)  # (..., n_q, d_v)
    Q = Q * Q.dtype.type(c)  # (..., n_q, d_k): the scale and temperature, once
    K = np.broadcast_to(K, (*batch, n_k, K.shape[-1]))  # views: one K and V per head
    V = np.broadcast_to(V, (*batch, n_k, d_v))
    if mask is not None:
        mask = np.broadcast_to(mask, weights.shape)  # e.g. one mask shared by all heads
    rows = max(1, _BLOCK // n_k)
    for head in np.ndindex(*batch):
        Kt = K[head].T  # (d_k, n_k), a view
        for start in range(0, n_q, rows):
            part = (*head, slice(start, start + rows))
            w = weights[part]  # (rows, n_k): a view into the result
            np.matmul(Q[part], Kt, out=w)  # the logits c q . k
            np.exp(w, out=w)
            if mask is not None:
                w *= mask[part]  # masked keys get exactly 0
            w *= 1 / w.sum(axis=-1, keepdims=True)  # (rows, 1): rows now sum to 1
            np.matmul(w, V[head], out=output[part])  # (rows, d_v)
    if not np.all(np.isfinite(output)):
        raise ValueError(
            "weights @ V overflowed to infinity: the numbers are too large to multiply "
            f"(largest entries {weights.max():.3g} and {np.abs(V).max():.3g})"
        )
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

r"""Scaled dot-product attention and multi-head attention in plain NumPy.

The conventions follow PyTorch's ``scaled_dot_product_attention`` and
``nn.MultiheadAttention`` so that everything here transfers directly:

* **row vectors**: ``X`` has shape ``(n, d_model)`` and ``Q = X @ W_q``;
* **boolean masks**: ``True`` means "this query may attend to this key";
* **leading batch dimensions** (written ``...``) are allowed everywhere.

Every public function checks its inputs first (see :mod:`attention_lib.validate`), so a
mistake gives an error that names the shapes instead of a silently wrong number.
"""

from __future__ import annotations

import numpy as np

from .validate import (
    as_float_array,
    check_batch,
    check_mask,
    check_positive_int,
    check_scale,
    check_temperature,
)


def softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    r"""Numerically stable softmax with a temperature.

    Parameters
    ----------
    x : array_like of shape (...)
        Logits (any real numbers). Integers are promoted to float64.
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
    x = as_float_array(x, "x")
    T = check_temperature(temperature)
    if x.ndim == 0:
        raise ValueError("softmax needs at least one axis to normalise over, got a scalar")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for an array of shape {x.shape}")
    if x.shape[axis] == 0:
        raise ValueError(f"cannot normalise over axis {axis} of length 0 (shape {x.shape})")
    return _stable_softmax(x, axis, T)


def _softmax(x: np.ndarray, axis: int, T: float) -> np.ndarray:
    # Subtract each row's max first: every exponent is then <= 0, so exp never
    # overflows, and the factor exp(-max / T) cancels above and below the line.
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted / T)
    return e / np.sum(e, axis=axis, keepdims=True)


def _stable_softmax(x: np.ndarray, axis: int, T: float) -> np.ndarray:
    """:func:`_softmax` plus the float corner cases that would distract from it."""
    if x.dtype.type(T) == 0:  # a T too tiny for float32 would round to 0: use float64
        return _softmax(x.astype(np.float64), axis, T).astype(x.dtype)
    with np.errstate(over="ignore"):  # near 1.7e308, x - max may reach -inf: exp gives 0
        return _softmax(x, axis, T)


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
    Q = as_float_array(Q, "Q", min_ndim=2)
    K = as_float_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k: Q has shape {Q.shape}, K has shape {K.shape}")
    check_batch("Q", Q, "K", K)
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
    if not np.all(np.isfinite(scores)):
        raise ValueError(
            "Q Kᵀ overflowed to infinity: the entries of Q and K are too large to multiply "
            f"(largest |Q| = {np.abs(Q).max():.3g}, largest |K| = {np.abs(K).max():.3g})"
        )
    return scores


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None, temperature: float = 1.0):
    r"""Scaled dot-product attention: scores, scale, softmax, then a weighted sum of values.

    Parameters
    ----------
    Q : array_like of shape (..., n_q, d_k)
    K : array_like of shape (..., n_k, d_k)
    V : array_like of shape (..., n_k, d_v)
    mask : bool array_like broadcastable to (..., n_q, n_k), optional
        ``True`` where a query may attend to a key (PyTorch's boolean convention).
    scale : float, optional
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
    scores = attention_scores(Q, K)  # (..., n_q, n_k); checks Q and K
    V = as_float_array(V, "V", min_ndim=2)
    K_shape = np.shape(K)
    if V.shape[-2] != K_shape[-2]:
        raise ValueError(
            "K and V must have one row per key (the same n_k): "
            f"K has shape {K_shape}, V has shape {V.shape}"
        )
    check_batch("scores", scores, "V", V)
    T = check_temperature(temperature)
    d_k = K_shape[-1]
    s = 1.0 / np.sqrt(d_k) if scale is None else check_scale(scale)
    logits = scores * scores.dtype.type(s)
    if not np.all(np.isfinite(logits)):
        raise ValueError(f"scale = {s!r} makes the scaled scores overflow to infinity")
    if mask is not None:
        mask = check_mask(mask, logits.shape)
        logits = np.where(mask, logits, -np.inf)  # exp(-inf) = 0: masked keys get no weight
    weights = _stable_softmax(logits, -1, T)
    output = weights @ V  # (..., n_q, n_k) @ (..., n_k, d_v) -> (..., n_q, d_v)
    return output, weights


def causal_mask(n: int) -> np.ndarray:
    """Boolean ``(n, n)`` mask where query ``i`` may attend to keys ``0..i`` only.

    Returns
    -------
    mask : ndarray of bool, shape (n, n)
        The lower triangle, diagonal included, is True.
    """
    n = check_positive_int(n, "n")
    return np.tril(np.ones((n, n), dtype=bool))


def split_heads(X, h: int) -> np.ndarray:
    """Cut the last axis into ``h`` equal heads.

    Parameters
    ----------
    X : array_like of shape (..., n, h * d)
    h : int
        Number of heads; must divide the last dimension.

    Returns
    -------
    ndarray of shape (..., h, n, d)
        Head ``i`` holds columns ``i*d : (i+1)*d`` of ``X``.
    """
    X = as_float_array(X, "X", min_ndim=2)
    h = check_positive_int(h, "h")
    *batch, n, width = X.shape
    if width % h:
        raise ValueError(
            f"h = {h} heads must divide the model width, but X has shape {X.shape} "
            f"and {width} is not a multiple of {h}"
        )
    d = width // h
    X = X.reshape(*batch, n, h, d)  # (..., n, h, d)
    return np.swapaxes(X, -2, -3)  # (..., h, n, d)


def merge_heads(X) -> np.ndarray:
    """Glue heads back side by side: the inverse of :func:`split_heads`.

    Parameters
    ----------
    X : array_like of shape (..., h, n, d)

    Returns
    -------
    ndarray of shape (..., n, h * d)
    """
    X = as_float_array(X, "X", min_ndim=3)
    *batch, h, n, d = X.shape
    X = np.swapaxes(X, -2, -3)  # (..., n, h, d)
    return X.reshape(*batch, n, h * d)  # (..., n, h*d)


def multi_head_attention(X, W_q, W_k, W_v, W_o, h: int, mask=None):
    r"""Multi-head self-attention: ``h`` attention heads side by side, then a mixing matrix.

    Parameters
    ----------
    X : array_like of shape (..., n, d_model)
    W_q, W_k, W_v, W_o : array_like of shape (d_model, d_model)
    h : int
        Number of heads; each head works in ``d_k = d_model / h`` dimensions.
    mask : bool array_like broadcastable to (..., n, n), optional
        Shared by all heads; ``True`` = may attend.

    Returns
    -------
    output : ndarray of shape (..., n, d_model)
    weights : ndarray of shape (..., h, n, n)
        The attention weights of every head.

    Notes
    -----
    .. math::
        \text{head}_i = \operatorname{softmax}\!\left(
            \frac{Q_i K_i^\top}{\sqrt{d_k}}\right) V_i, \qquad
        \text{output} = [\text{head}_1, \dots, \text{head}_h]\, W_o
    """
    X = as_float_array(X, "X", min_ndim=2)
    d_model = X.shape[-1]
    h = check_positive_int(h, "h")
    if d_model % h:
        raise ValueError(f"h = {h} heads must divide d_model = {d_model} (X has shape {X.shape})")
    W = {}
    for name, value in [("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o)]:
        W[name] = as_float_array(value, name)
        if W[name].shape != (d_model, d_model):
            raise ValueError(
                f"{name} must have shape (d_model, d_model) = ({d_model}, {d_model}) to match "
                f"X of shape {X.shape}, but it has shape {W[name].shape}"
            )
    Q = split_heads(X @ W["W_q"], h)  # (..., h, n, d_k)
    K = split_heads(X @ W["W_k"], h)  # (..., h, n, d_k)
    V = split_heads(X @ W["W_v"], h)  # (..., h, n, d_k)
    if mask is not None:
        n = X.shape[-2]
        mask = check_mask(mask, X.shape[:-2] + (n, n))  # (..., n, n), checked as given
        mask = mask[..., None, :, :]  # (..., 1, n, n): the same mask for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)  # (..., h, n, d_k)
    return merge_heads(heads) @ W["W_o"], weights  # (..., n, d_model), (..., h, n, n)


def positional_encoding(n: int, d_model: int) -> np.ndarray:
    r"""Sinusoidal positional encoding from *Attention Is All You Need*.

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

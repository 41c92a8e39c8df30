"""Multi-head attention: split the model width into heads, attend in each, glue back.

Every reshape carries a trailing shape comment. The per-head work is the same scaled
dot-product attention as in :mod:`attention_lib.core`, run on all heads at once by
giving the heads their own batch axis.
"""

from __future__ import annotations

import numpy as np

from .core import _attention
from .parallel import matmuls, threads
from .validate import as_float_array, check_mask, check_positive_int


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
        Index ``i`` of the head axis holds columns ``i*d : (i+1)*d`` of ``X``
        (chapter 7 calls it head ``i + 1``).
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


def multi_head_attention(X, W_q, W_k, W_v, W_o, h: int, mask=None, *, need_weights=True):
    r"""Multi-head self-attention: ``h`` attention heads side by side, then a mixing matrix.

    Parameters
    ----------
    X : array_like of shape (..., n, d_model)
    W_q, W_k, W_v, W_o : array_like of shape (d_model, d_model)
    h : int
        Number of heads; each head works in ``d_k = d_model / h`` dimensions.
    mask : bool array_like broadcastable to (..., n, n), optional
        Shared by all heads; ``True`` = may attend.
    need_weights : bool, default True
        ``False`` returns the output alone, as PyTorch's ``need_weights=False`` does: for
        large inputs no ``(..., h, n, n)`` weights are kept, which saves their memory and
        the time to normalise them. The output is the same to rounding.

    Returns
    -------
    output : ndarray of shape (..., n, d_model)
    weights : ndarray of shape (..., h, n, n)
        The attention weights of every head. Only with ``need_weights=True``.

    Notes
    -----
    .. math::
        \text{head}_i = \operatorname{softmax}\!\left(
            \frac{Q_i K_i^\top}{\sqrt{d_k}}\right) V_i, \qquad
        \text{output} = [\text{head}_1, \dots, \text{head}_h]\, W_o
    """
    X = as_float_array(X, "X", min_ndim=2)
    *_, n, d_model = X.shape
    h = check_positive_int(h, "h")
    if not isinstance(need_weights, (bool, np.bool_)):
        raise TypeError(f"need_weights must be True or False, got {need_weights!r}")
    if d_model % h:
        raise ValueError(f"h = {h} heads must divide d_model = {d_model} (X has shape {X.shape})")
    W_q, W_k, W_v, W_o = (
        _square(W, name, d_model, X.shape)
        for W, name in [(W_q, "W_q"), (W_k, "W_k"), (W_v, "W_v"), (W_o, "W_o")]
    )
    if mask is not None:
        mask = check_mask(mask, X.shape[:-2] + (n, n), "(..., n, n) for X")  # as given
        mask = mask[..., None, :, :]  # (..., 1, n, n): the same mask for every head
    batch, d_k = X.shape[:-2], d_model // h
    # Large inputs run on several threads, the four projections included (attention_lib.parallel)
    with threads(int(np.prod(batch, dtype=int)) * h * n * n) as n_threads:
        QKV = [(X, W_q, "X @ W_q"), (X, W_k, "X @ W_k"), (X, W_v, "X @ W_v")]
        Q, K, V = (split_heads(P, h) for P in matmuls(QKV, n_threads))  # (..., h, n, d_k)
        merged = np.empty((*batch, n, d_model), np.result_type(Q, K, V))  # heads side by side
        heads = np.swapaxes(merged.reshape(*batch, n, h, d_k), -2, -3)  # (..., h, n, d_k) view
        keep = {"need_weights": need_weights, "out": heads, "n_threads": n_threads}
        _, weights = _attention(Q, K, V, mask, 1.0 / np.sqrt(d_k), 1.0, **keep)
        output = matmuls([(merged, W_o, "heads @ W_o")], n_threads)[0]  # (..., n, d_model)
    return (output, weights) if need_weights else output  # weights: (..., h, n, n)


def _square(W, name: str, d_model: int, X_shape: tuple) -> np.ndarray:
    W = as_float_array(W, name)
    if W.shape != (d_model, d_model):
        raise ValueError(
            f"{name} must have shape (d_model, d_model) = ({d_model}, {d_model}) to match "
            f"X of shape {X_shape}, but it has shape {W.shape}"
        )
    return W

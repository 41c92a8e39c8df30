r"""Gradients of attention, written out by hand in NumPy.

Training adjusts ``W_q``, ``W_k`` and ``W_v`` by following gradients backwards through
every step of attention. This module holds those backward steps, one function per step,
so a chapter can *measure* how much gradient gets through instead of only claiming it.

It starts with softmax, the step that decides whether learning is easy or hard: where
softmax saturates (one weight near 1, the rest near 0) its Jacobian is close to zero and
almost no gradient flows back to the scores (chapter 4). Chapter 10 adds the rest:

* :func:`softmax_backward` applies that Jacobian to a gradient without building it;
* :func:`attention_backward` is the backward pass of scaled dot-product attention,
  ``(dQ, dK, dV)`` from the upstream gradient ``dOut``;
* :func:`numerical_gradient` and :func:`relative_error` check any of them against
  finite differences.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .core import scaled_dot_product_attention
from .validate import as_float_array, positive_real


def softmax_jacobian(p) -> np.ndarray:
    r"""Jacobian of softmax, computed from its output: ``diag(p) - p pᵀ``.

    Parameters
    ----------
    p : array_like of shape (..., n)
        Softmax outputs (attention weights): each row along the last axis must be
        non-negative and sum to 1. Leading batch dimensions are allowed.

    Returns
    -------
    J : ndarray of shape (..., n, n)
        ``J[..., i, j]`` is :math:`\partial p_i / \partial z_j`, how much weight ``i``
        moves when logit ``j`` is nudged. ``J`` is symmetric and each of its rows (and
        columns) sums to 0.

    Raises
    ------
    ValueError
        If a row has a negative entry or does not sum to 1 (for example, raw scores
        were passed instead of the weights), or for the usual bad input: NaN or
        infinity, an empty array, a 0-d number.
    TypeError
        If ``p`` is not an array of real numbers.

    Notes
    -----
    With :math:`p = \operatorname{softmax}(z)`, differentiating
    :math:`p_i = e^{z_i} / \sum_k e^{z_k}` gives

    .. math::
        \frac{\partial p_i}{\partial z_j} = p_i\,(\delta_{ij} - p_j),
        \qquad J = \operatorname{diag}(p) - p\,p^\top .

    Every entry carries a factor :math:`p_i`, and the diagonal a factor
    :math:`1 - p_i`. A saturated row (one :math:`p_i \approx 1`, the others
    :math:`\approx 0`) therefore has :math:`J \approx 0`: softmax has gone flat, and a
    gradient :math:`g` arriving at the weights leaves as the tiny :math:`J g` at the
    logits. A uniform row over :math:`n` keys has :math:`J = (I - \tfrac{1}{n}
    \mathbf{1}\mathbf{1}^\top)/n`.

    Rows sum to 0 because adding the same number to every logit does not change
    softmax (shift invariance), so no direction of that kind can move the weights.
    """
    p = as_float_array(p, "p", min_ndim=1)
    _check_probability_rows(p)
    n = p.shape[-1]
    column = p[..., :, None]  # (..., n, 1)
    row = p[..., None, :]  # (..., 1, n)
    return column * np.eye(n, dtype=p.dtype) - column * row  # (..., n, n)


def softmax_backward(p, dp) -> np.ndarray:
    r"""Gradient at the logits of softmax, from its output ``p`` and the gradient ``dp``.

    Parameters
    ----------
    p : array_like of shape (..., n)
        Softmax outputs; each row (last axis) is non-negative and sums to 1.
    dp : array_like of shape (..., n)
        Gradient of the loss with respect to ``p``.

    Returns
    -------
    dz : ndarray of shape (..., n)
        Gradient of the loss with respect to the logits ``z``, row by row.

    Notes
    -----
    By the chain rule :math:`dz = J^\top dp` with :math:`J = \operatorname{diag}(p) - p
    p^\top` from :func:`softmax_jacobian`. ``J`` is symmetric, and multiplying it out
    gives an expression that never builds the :math:`n \times n` matrix:

    .. math::
        dz_j = \sum_i p_i(\delta_{ij} - p_j)\, dp_i
             = p_j \Big(dp_j - \sum_i p_i\, dp_i\Big),
        \qquad dz = p \odot \big(dp - \textstyle\sum_i p_i\, dp_i\big).

    Each row of ``dz`` sums to 0: softmax ignores a shift of all logits, so the
    gradient has no component along such a shift.
    """
    p = as_float_array(p, "p", min_ndim=1)
    _check_probability_rows(p)
    dp = as_float_array(dp, "dp", min_ndim=1)
    if dp.shape != p.shape:
        raise ValueError(f"dp must have the shape of p: p has shape {p.shape}, dp {dp.shape}")
    return _softmax_backward(p, dp)


def _softmax_backward(p: np.ndarray, dp: np.ndarray) -> np.ndarray:
    # One weighted sum per row, kept as (..., 1) so it lines up with every entry of dp.
    return p * (dp - np.sum(dp * p, axis=-1, keepdims=True))  # (..., n)


def attention_backward(Q, K, V, dOut, mask=None, scale=None, temperature: float = 1.0):
    r"""Backward pass of scaled dot-product attention: ``(dQ, dK, dV)`` from ``dOut``.

    Parameters
    ----------
    Q : array_like of shape (..., n_q, d_k)
    K : array_like of shape (..., n_k, d_k)
    V : array_like of shape (..., n_k, d_v)
    dOut : array_like of shape (..., n_q, d_v)
        Gradient of the loss with respect to the output of
        :func:`attention_lib.scaled_dot_product_attention` (same shape as the output).
    mask, scale, temperature
        As for :func:`attention_lib.scaled_dot_product_attention`; the forward pass is
        recomputed with them, so the inputs are checked the same way.

    Returns
    -------
    dQ, dK, dV : ndarray
        Gradients with the shapes of ``Q``, ``K`` and ``V``. If a batch dimension was
        broadcast in the forward pass, its gradient is summed back to the input's shape.

    Notes
    -----
    Forward, with :math:`s` the scale divided by the temperature:
    :math:`S = s\,Q K^\top`, :math:`A = \operatorname{softmax}(S)` row by row (masked
    logits are :math:`-\infty`), :math:`O = A V`. Backward, step by step in reverse:

    .. math::
        dV = A^\top dO, \qquad dA = dO\, V^\top, \qquad
        dS = A \odot \big(dA - \operatorname{rowsum}(dA \odot A)\big), \qquad
        dQ = s\, dS\, K, \qquad dK = s\, dS^\top Q .

    :math:`dS` is :func:`softmax_backward` on every row. Masked entries have
    :math:`A = 0`, so their :math:`dS` is exactly 0: no gradient reaches a key a query
    was not allowed to see.
    """
    out, A = scaled_dot_product_attention(Q, K, V, mask, scale, temperature)
    Q, K, V, dOut, s = _backward_inputs(Q, K, V, dOut, out, scale, temperature)
    dA = dOut @ np.swapaxes(V, -1, -2)  # dO V^T: (..., n_q, n_k)
    dS = _softmax_backward(A, dA)  # A * (dA - rowsum(dA * A)); masked: 0
    dQ = s * (dS @ K)  # (..., n_q, n_k) @ (..., n_k, d_k) -> (..., n_q, d_k)
    dK = s * (np.swapaxes(dS, -1, -2) @ Q)  # (..., n_k, n_q) @ (..., n_q, d_k)
    dV = np.swapaxes(A, -1, -2) @ dOut  # (..., n_k, n_q) @ (..., n_q, d_v)
    return _sum_to(dQ, Q.shape), _sum_to(dK, K.shape), _sum_to(dV, V.shape)


def _backward_inputs(Q, K, V, dOut, out, scale, temperature) -> tuple:
    """Q, K, V and dOut in the output's dtype, and s = scale / temperature, checked."""
    Q, K, V = (np.asarray(a, dtype=out.dtype) for a in (Q, K, V))
    dOut = _upstream_gradient(dOut, out.shape)  # must have the output's shape
    s = 1.0 / np.sqrt(K.shape[-1]) if scale is None else positive_real(scale, "scale")
    s = out.dtype.type(s / positive_real(temperature, "temperature"))
    return Q, K, V, dOut, s


def _upstream_gradient(dOut, shape: tuple) -> np.ndarray:
    dOut = as_float_array(dOut, "dOut", min_ndim=2)
    if dOut.shape != shape:
        raise ValueError(
            f"dOut must have the shape of the attention output, {shape} (..., n_q, d_v), "
            f"but it has shape {dOut.shape}"
        )
    return dOut


def _sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Undo broadcasting: sum ``grad`` over the axes that ``shape`` broadcast along."""
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))  # added leading axes
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def numerical_gradient(f: Callable, x, eps: float = 1e-6) -> np.ndarray:
    r"""Gradient of a scalar function by central finite differences, one entry at a time.

    Parameters
    ----------
    f : callable
        ``f(x) -> float`` for an array ``x`` of the shape given.
    x : array_like of shape (...)
        The point at which to differentiate; converted to float64, never modified.
    eps : float, default 1e-6
        The nudge. Central differences have an error of order ``eps**2``, and rounding
        adds about ``1e-16 / eps``, so 1e-6 suits float64.

    Returns
    -------
    grad : ndarray of the shape of ``x``

    Notes
    -----
    .. math:: \frac{\partial f}{\partial x_i} \approx
        \frac{f(x + \varepsilon e_i) - f(x - \varepsilon e_i)}{2 \varepsilon}

    It costs two calls of ``f`` per entry, so it is for checking, not for training.
    """
    x = as_float_array(x, "x").astype(np.float64)  # a copy: float64 in every case
    eps = positive_real(eps, "eps")
    grad = np.empty_like(x)
    for i in np.ndindex(x.shape):
        original = x[i]
        x[i] = original + eps
        above = float(f(x))
        x[i] = original - eps
        below = float(f(x))
        x[i] = original
        grad[i] = (above - below) / (2 * eps)
    return grad


def relative_error(a, b) -> float:
    r"""How far apart two arrays are, relative to their size: 0 when they are equal.

    Notes
    -----
    .. math:: \operatorname{err}(a, b) = \frac{\lVert a - b \rVert}{\lVert a \rVert +
        \lVert b \rVert}

    (0 for two zero arrays.) Unlike an absolute tolerance it does not depend on how large
    the gradients are: float64 gradients that agree give about 1e-9 or less, while a
    wrong formula gives 1e-2 or more.
    """
    a, b = as_float_array(a, "a"), as_float_array(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    total = np.linalg.norm(a) + np.linalg.norm(b)
    return 0.0 if total == 0 else float(np.linalg.norm(a - b) / total)


def _check_probability_rows(p: np.ndarray) -> None:
    """Raise a ValueError unless every row of ``p`` (last axis) is a distribution."""
    if np.any(p < 0):
        where = tuple(int(i) for i in np.argwhere(p < 0)[0])
        raise ValueError(
            f"p must hold softmax weights, which are never negative, but p[{_index(where)}]"
            f" = {p[where]:.4g} (p has shape {p.shape}); did you pass the scores instead?"
        )
    totals = p.sum(axis=-1)  # (...,)
    tolerance = np.sqrt(np.finfo(p.dtype).eps) * max(1.0, np.sqrt(p.shape[-1]))
    bad = np.abs(totals - 1.0) > tolerance
    if np.any(bad):
        if totals.ndim == 0:
            which, total = "p", totals
        else:
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            which, total = f"row p[{_index(where)}]", totals[where]
        raise ValueError(
            f"softmax weights sum to 1 along the last axis, but {which} sums to "
            f"{total:.6g} (p has shape {p.shape}); pass the output of softmax"
        )


def _index(where: tuple) -> str:
    return ", ".join(str(i) for i in where)

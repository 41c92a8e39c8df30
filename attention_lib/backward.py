r"""Gradients of attention, written out by hand in NumPy.

Training adjusts ``W_q``, ``W_k`` and ``W_v`` by following gradients backwards through
every step of attention. This module holds those backward steps, one function per step,
so a chapter can *measure* how much gradient gets through instead of only claiming it.

It starts with softmax, the step that decides whether learning is easy or hard: where
softmax saturates (one weight near 1, the rest near 0) its Jacobian is close to zero and
almost no gradient flows back to the scores.
"""

from __future__ import annotations

import numpy as np

from .validate import as_float_array


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

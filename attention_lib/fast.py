r"""The fast route of attention: blocks of query rows that stay in cache, on every core.

:func:`attention_lib.scaled_dot_product_attention` and
:func:`attention_lib.multi_head_attention` send large inputs here; small ones, such as
every example in the chapters, take the step-by-step route that chapter 6 shows. Both
routes give the same numbers to rounding (``tests/test_fast_paths.py`` holds them to
1e-12). Four ideas make this one fast:

* **Blocks that stay in cache.** A block of query rows needs only itself, ``K`` and ``V``.
  Its logits go straight into their place in ``weights`` (``out=``), and exp, normalise
  and blend run while the block is still in the core's cache, instead of one pass per
  step over the whole matrix.
* **Softmax in place, in two passes.** Softmax does not change if every logit of a row
  moves by the same amount; subtracting the row's maximum only guards ``exp`` against
  overflow. :func:`blocks_pay_off` has proven that no logit is large, so ``exp`` runs
  directly; then each row is multiplied by its ``1 / sum``.
* **Scale the small matrix.** ``(c Q) K^T`` equals ``c (Q K^T)`` but touches ``n_q d_k``
  numbers instead of ``n_q n_k``.
* **Every core.** The blocks do not depend on each other, so threads share them out
  (:mod:`attention_lib.parallel`).
"""

from __future__ import annotations

import numpy as np

from .parallel import share_out, threads

# |logits| <= LIMIT lets this route skip the max shift: e^600 and e^60 are far from
# overflow (e^709, e^88.7), and e^-600 and e^-60 far from zero.
_EXP_SAFE = {np.dtype(np.float64): 600.0, np.dtype(np.float32): 60.0}
_MIN_WEIGHTS = 2**16  # n_q x n_k of one head before blocks pay for their Python overhead
_BLOCK = 2**18  # weights per block: 2 MiB in float64, 256 rows of 1024 keys


def blocks_pay_off(Q: np.ndarray, K: np.ndarray, V: np.ndarray, c: float) -> bool:
    r"""Whether :func:`attend_in_blocks` applies: big heads, one dtype, no overflow possible.

    The bound is Cauchy-Schwarz, :math:`|c\, q \cdot k| \le c \lVert q \rVert \lVert k
    \rVert`: if it keeps every logit within ``_EXP_SAFE``, nothing can overflow, and no
    check of the big score matrix is needed. Anything else takes the checked route.
    """
    if Q.shape[-2] * K.shape[-2] < _MIN_WEIGHTS or not Q.dtype == K.dtype == V.dtype:
        return False  # small heads: the per-block Python overhead would dominate
    if Q.shape[:-2] != np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2]):
        return False  # K or V with more batch dimensions than Q: weights get broadcast
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.sqrt(np.max(np.einsum("...i,...i->...", Q, Q)))  # longest query
        k = np.sqrt(np.max(np.einsum("...i,...i->...", K, K)))  # longest key
        return bool(c * q * k <= _EXP_SAFE[Q.dtype] and c * q < np.finfo(Q.dtype).max)


def attend_in_blocks(Q, K, V, mask, c: float, *, need_weights=True, out=None, n_threads=None):
    """Attention with logits ``c Q K^T``, a block of query rows at a time, on every core.

    ``Q`` is (..., n_q, d_k) and sets the batch shape; ``K`` (..., n_k, d_k), ``V``
    (..., n_k, d_v) and ``mask`` broadcast to it. ``out``, if given, receives the output:
    any (..., n_q, d_v) array whose rows are contiguous, such as a view that puts each
    head's output in its columns of the merged heads. Returns ``(output, weights)``;
    ``weights`` is ``None`` when ``need_weights`` is false, and then no (n_q, n_k)
    matrix is kept: each thread reuses one block of scratch memory. ``n_threads`` comes
    from a caller's :func:`attention_lib.parallel.threads`; ``None`` means: decide here.
    """
    *batch, n_q, _ = Q.shape
    n_k, d_v = K.shape[-2], V.shape[-1]
    output = np.empty((*batch, n_q, d_v), Q.dtype) if out is None else out
    weights = np.empty((*batch, n_q, n_k), Q.dtype) if need_weights else None
    c = Q.dtype.type(c)  # the scale and temperature, applied to each block of Q
    K = np.broadcast_to(K, (*batch, n_k, K.shape[-1]))  # views: one K and V per head
    V = np.broadcast_to(V, (*batch, n_k, d_v))
    if mask is not None:
        mask = np.broadcast_to(mask, (*batch, n_q, n_k))  # e.g. one mask for all heads
    rows = max(1, _BLOCK // n_k)
    parts = [
        (*head, slice(start, start + rows))
        for head in np.ndindex(*batch)
        for start in range(0, n_q, rows)
    ]

    overflowed = []

    def attend(part, scratch):
        head, o = part[:-1], output[part]  # o: (rows, d_v), a view into the result
        w = weights[part] if need_weights else scratch[: o.shape[0]]  # (rows, n_k)
        np.matmul(Q[part] * c, K[head].T, out=w)  # the logits c q . k
        np.exp(w, out=w)
        if mask is not None:
            w *= mask[part]  # masked keys get exactly 0
        if need_weights:
            w *= 1 / w.sum(axis=-1, keepdims=True)  # (rows, 1): rows now sum to 1
            np.matmul(w, V[head], out=o)  # (rows, d_v)
        else:  # normalise the small output instead of the weights
            total = w.sum(axis=-1, keepdims=True)  # (rows, 1)
            np.matmul(w, V[head], out=o)
            o /= total
        if not np.isfinite(o).all():  # checked here, while the block is in cache
            overflowed.append(part)

    scratch = None if need_weights else (rows, n_k)
    if n_threads is None:
        with threads(np.prod(batch, dtype=int) * n_q * n_k) as n_threads:
            share_out(attend, parts, scratch, Q.dtype, n_threads)
    else:
        share_out(attend, parts, scratch, Q.dtype, n_threads)
    if overflowed:
        largest = "" if weights is None else f" (largest entries {weights.max():.3g} and "
        raise ValueError(
            "weights @ V overflowed to infinity: the numbers are too large to multiply"
            + (largest and f"{largest}{np.abs(V).max():.3g})")
        )
    return output, weights

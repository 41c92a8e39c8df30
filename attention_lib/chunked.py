r"""Attention computed piece by piece: one token, one query row, or one block at a time.

All four functions here give the same output as
:func:`attention_lib.scaled_dot_product_attention`; they differ in *how much* they
compute in one go, which is what chapter 9 times and measures:

* :func:`attention_loop`: plain Python, one query and one key at a time;
* :func:`attention_by_rows`: NumPy, one query row at a time;
* :func:`attention_matrix`: NumPy, all rows at once, with none of the library's checks;
* :func:`chunked_attention`: NumPy, one ``block x key_block`` tile of the score matrix at
  a time, with a running ("online") softmax, so its memory stays bounded however long
  the sequence is. This is the idea behind FlashAttention.

Two small measuring tools sit at the end: :func:`best_time` and :func:`peak_memory`.
"""

from __future__ import annotations

import math
import time
import tracemalloc

import numpy as np

from .validate import (
    as_float_array,
    check_batch,
    check_mask,
    check_positive_int,
    positive_real,
)


def _checked(Q, K, V, scale, *, batch: bool = True):
    """Validate Q, K, V and the scale as :func:`scaled_dot_product_attention` does."""
    Q = as_float_array(Q, "Q", min_ndim=2)
    K = as_float_array(K, "K", min_ndim=2)
    V = as_float_array(V, "V", min_ndim=2)
    if not batch and (Q.ndim, K.ndim, V.ndim) != (2, 2, 2):
        raise ValueError(
            "this teaching version takes one sequence, 2-D arrays only: Q has shape "
            f"{Q.shape}, K {K.shape}, V {V.shape}; use chunked_attention for batches"
        )
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k: Q has shape {Q.shape}, K has shape {K.shape}")
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(
            "K and V must have one row per key (the same n_k): "
            f"K has shape {K.shape}, V has shape {V.shape}"
        )
    check_batch("Q", Q, "K", K)
    check_batch("Q", Q, "V", V)
    check_batch("K", K, "V", V)
    s = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else positive_real(scale, "scale")
    dtype = np.result_type(Q, K, V)  # float32 stays float32, as in the matrix form
    return Q.astype(dtype, copy=False), K.astype(dtype, copy=False), V.astype(dtype, copy=False), s


def attention_loop(Q, K, V, scale=None) -> np.ndarray:
    r"""Scaled dot-product attention in plain Python: one query, one key, one number at a time.

    Parameters
    ----------
    Q : array_like of shape (n_q, d_k)
    K : array_like of shape (n_k, d_k)
    V : array_like of shape (n_k, d_v)
    scale : float > 0, optional
        ``None`` means :math:`1/\sqrt{d_k}`.

    Returns
    -------
    output : ndarray of shape (n_q, d_v)

    Notes
    -----
    Every multiplication and division is a separate Python operation: :math:`d_k` for
    each of the :math:`n_q n_k` scores, then a division by the row's sum and a
    multiplication for each of their :math:`d_v` value entries, so
    :math:`n_q n_k (d_k + 2 d_v)` in all (besides one scaling and one exponential per
    score). It is here to be timed.
    """
    Q, K, V, s = _checked(Q, K, V, scale, batch=False)  # s = 1 / sqrt(d_k)
    keys, values = K.tolist(), V.tolist()  # plain Python lists of numbers
    output = []
    for q in Q.tolist():  # one query ...
        logits = []
        for k in keys:  # ... against one key, one product at a time
            logits.append(s * sum(a * b for a, b in zip(q, k, strict=True)))
        top = max(logits)  # subtract the max so exp cannot overflow
        e = [math.exp(z - top) for z in logits]
        total = sum(e)
        row = [0.0] * len(values[0])  # d_v numbers
        for w, v in zip(e, values, strict=True):  # blend, one key at a time
            for c in range(len(row)):
                row[c] += w / total * v[c]
        output.append(row)
    return _finite(np.array(output, dtype=Q.dtype))


def attention_by_rows(Q, K, V, scale=None) -> np.ndarray:
    r"""Scaled dot-product attention one query row at a time, each row vectorised.

    Parameters
    ----------
    Q : array_like of shape (n_q, d_k)
    K : array_like of shape (n_k, d_k)
    V : array_like of shape (n_k, d_v)
    scale : float > 0, optional
        ``None`` means :math:`1/\sqrt{d_k}`.

    Returns
    -------
    output : ndarray of shape (n_q, d_v)

    Notes
    -----
    Row :math:`i` needs only :math:`q_i`, :math:`K` and :math:`V`:

    .. math:: \text{output}_i = \operatorname{softmax}\!\left(\frac{q_i K^\top}{\sqrt{d_k}}\right) V

    so the rows could be computed in any order, or all at once.
    """
    Q, K, V, s = _checked(Q, K, V, scale, batch=False)
    output = np.empty((Q.shape[0], V.shape[1]), dtype=Q.dtype)  # (n_q, d_v)
    with np.errstate(over="ignore", invalid="ignore"):  # _finite reports an overflow
        for i in range(Q.shape[0]):
            z = (K @ Q[i]) * s  # (n_k,): query i against every key at once
            p = np.exp(z - z.max())
            output[i] = (p / p.sum()) @ V  # (d_v,)
    return _finite(output)


def attention_matrix(Q, K, V) -> np.ndarray:
    """Plain NumPy attention for one sequence, the idea without the library's checks.

    No input checks, no mask, no blocks: the three lines of the formula, to be timed
    against the library. ``Q`` is ``(n_q, d_k)``, ``K`` ``(n_k, d_k)``, ``V`` ``(n_k, d_v)``.
    """
    z = Q @ K.T / np.sqrt(Q.shape[-1])  # (n_q, n_k): every score at once
    e = np.exp(z - z.max(axis=-1, keepdims=True))  # (n_q, n_k), no overflow
    return (e / e.sum(axis=-1, keepdims=True)) @ V  # (n_q, d_v)


def _finite(output: np.ndarray) -> np.ndarray:
    """Raise the matrix form's error instead of returning NaN from an overflow."""
    if not np.all(np.isfinite(output)):
        raise ValueError(
            "Q Kᵀ overflowed to infinity: the numbers are too large to multiply "
            "(use smaller inputs, or the scale argument)"
        )
    return output


def chunked_attention(
    Q, K, V, mask=None, scale=None, temperature: float = 1.0, *, block: int = 128, key_block=None
) -> np.ndarray:
    r"""Scaled dot-product attention that holds only a few tiles of the scores at a time.

    The same output as :func:`attention_lib.scaled_dot_product_attention` (to rounding),
    computed ``block`` queries by ``key_block`` keys at a time with a running softmax,
    so the memory it needs does not grow with :math:`n_q n_k`.

    Parameters
    ----------
    Q : array_like of shape (..., n_q, d_k)
    K : array_like of shape (..., n_k, d_k)
    V : array_like of shape (..., n_k, d_v)
    mask : bool array_like broadcastable to (..., n_q, n_k), optional
        ``True`` where a query may attend to a key. A full ``(n_q, n_k)`` mask is itself
        :math:`n_q n_k` bytes; a broadcastable one, such as ``(1, n_k)``, is not.
    scale : float > 0, optional
        Multiplies the scores. ``None`` means :math:`1/\sqrt{d_k}`.
    temperature : float, default 1.0
        Divides the scaled scores before softmax.
    block : int, default 128
        Queries per tile. A 128 x 128 tile (128 KiB in float64) stays in the processor's
        cache, and its matrix products are small enough to run on a single thread.
    key_block : int, optional
        Keys per tile; defaults to ``block``. With ``key_block >= n_k`` each block of
        queries sees all its keys at once: plain query chunking, no running softmax.

    Returns
    -------
    output : ndarray of shape (..., n_q, d_v)
        Only the output: the ``(..., n_q, n_k)`` weights are exactly what this function
        avoids storing. Use :func:`attention_lib.scaled_dot_product_attention` for them.

    Notes
    -----
    For each query it keeps a running maximum :math:`m`, a running sum :math:`\ell` of
    :math:`e^{z - m}` and a running output :math:`o`; when a key block raises the maximum,
    both sums are rescaled by :math:`\alpha = e^{m_{old} - m_{new}}`. After the last block,
    :math:`o / \ell` is exactly :math:`\operatorname{softmax}(z) V` (chapter 9 works one
    row through by hand). Memory: a few tiles plus :math:`O(\text{block} \cdot d_v)`
    accumulators, besides the inputs and the output.
    """
    Q, K, V, s = _checked(Q, K, V, scale)
    T = positive_real(temperature, "temperature")
    bq = check_positive_int(block, "block")
    bk = bq if key_block is None else check_positive_int(key_block, "key_block")
    n_q, n_k = Q.shape[-2], K.shape[-2]
    qk_batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    if mask is not None:
        mask = check_mask(mask, (*qk_batch, n_q, n_k))  # a broadcast view: no copy
    out_batch = np.broadcast_shapes(qk_batch, V.shape[:-2])
    output = np.empty((*out_batch, n_q, V.shape[-1]), dtype=Q.dtype)  # (..., n_q, d_v)
    # As in the matrix form: divide by T > 1 before the shift, by T < 1 after it (in
    # float64, so that small T cannot overflow).
    before, after = (T, 1.0) if T > 1 else (1.0, T)
    work = np.float64 if T < 1 else Q.dtype
    Kt = np.swapaxes(K, -1, -2)  # (..., d_k, n_k)
    with np.errstate(over="ignore", invalid="ignore"):
        for q0 in range(0, n_q, bq):
            rows = slice(q0, q0 + bq)
            m = np.full((*qk_batch, min(bq, n_q - q0)), -np.inf, dtype=work)  # (..., bq)
            ell = np.zeros_like(m)  # (..., bq)
            o = np.zeros((*out_batch, m.shape[-1], V.shape[-1]), dtype=work)  # (..., bq, d_v)
            for k0 in range(0, n_k, bk):
                cols = slice(k0, k0 + bk)
                z = _tile_logits(Q[..., rows, :], Kt[..., :, cols], s, before, work)
                if mask is not None:
                    z = np.where(mask[..., rows, cols], z, -np.inf)  # exp(-inf) = 0
                m_new = np.maximum(m, z.max(axis=-1))  # (..., bq): m_b
                # A row masked in every block so far has m_new = -inf; shift it by 0.
                shift = np.where(np.isfinite(m_new), m_new, 0.0)  # (..., bq)
                z -= shift[..., None]  # in place: one tile in memory, not three
                if after != 1.0:  # a temperature T < 1 divides after the shift
                    z /= after
                p = np.exp(z, out=z)  # (..., bq, bk): e^(z - m_b)
                alpha = np.exp((m - shift) / after)  # (..., bq): rescales the old sums
                ell = alpha * ell + p.sum(axis=-1)  # (..., bq): l_b
                o = alpha[..., None] * o + p @ V[..., cols, :]  # (..., bq, d_v): o_b
                m = m_new
                del z, p  # free this tile before the next is made: one tile at a time
            output[..., rows, :] = o / ell[..., None]
    return output


def _tile_logits(Q_tile, Kt_tile, s: float, before: float, work) -> np.ndarray:
    """One tile of the logits, ``Q Kᵀ s / before``, raising the matrix form's errors."""
    z = Q_tile @ Kt_tile  # (..., bq, bk)
    z *= z.dtype.type(s)  # in place: no second tile
    # NaN and ±inf show in the max or the min: no tile-sized array of booleans
    if z.size and not (np.isfinite(z.max()) and np.isfinite(z.min())):
        if not np.all(np.isfinite(Q_tile @ Kt_tile)):
            raise ValueError(
                "Q Kᵀ overflowed to infinity: the numbers are too large to multiply "
                f"(largest entries {np.abs(Q_tile).max():.3g} and {np.abs(Kt_tile).max():.3g})"
            )
        raise ValueError(f"scale = {s!r} makes the scaled scores overflow to infinity")
    if before != 1.0:
        z = (z.astype(np.float64) / before).astype(z.dtype)
    return z.astype(work, copy=False)


# --- Measuring -------------------------------------------------------------------------


def best_time(fn, *args, repeat: int = 5, budget: float = 0.5, **kwargs) -> float:
    """The fastest of up to ``repeat`` runs of ``fn(*args, **kwargs)``, in seconds.

    One untimed call comes first, so that what only the first call pays (fresh memory
    from the operating system, starting BLAS's threads) is not counted: callers need no
    warm-up of their own. The minimum is the run least disturbed by whatever else the
    computer was doing. Runs stop early once ``budget`` seconds have been spent; there
    is always one.
    """
    repeat = check_positive_int(repeat, "repeat")
    fn(*args, **kwargs)  # the warm-up, not timed
    times, spent = [], 0.0
    while len(times) < repeat and (not times or spent < budget):
        start = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
        spent += times[-1]
    return min(times)


def peak_memory(fn, *args, **kwargs) -> tuple:
    """Call ``fn(*args, **kwargs)``; return its result and the most memory it held at once.

    Returns
    -------
    result
        Whatever ``fn`` returned.
    peak : int
        Bytes, measured with :mod:`tracemalloc`, which counts NumPy's array buffers too.
        Only what the call allocates counts (the inputs already exist), the result
        included.
    """
    if tracemalloc.is_tracing():
        raise RuntimeError("peak_memory cannot run while tracemalloc is already tracing")
    tracemalloc.start()
    try:
        result = fn(*args, **kwargs)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

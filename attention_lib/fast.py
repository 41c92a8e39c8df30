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
* **Every core.** The blocks do not depend on each other, so threads share them out.
  NumPy lets go of Python's lock inside ``exp``, ``sum`` and the matrix products, so the
  threads really run at once. Meanwhile BLAS gets one thread (threadpoolctl, in
  :func:`threads`). Its own threads would fight ours for the cores: after each product
  they wait for the next one by spinning on a core for about 0.1 s, which doubled the
  time of the threaded blocks when they came right after a two-thread product. So
  :func:`attention_lib.multi_head_attention` runs its projections on these threads too
  (:func:`matmuls`), and BLAS's threads stay asleep for the whole call. Only as many
  threads run as BLAS was allowed, so ``threadpool_limits(1)`` (chapter 9's stopwatch)
  means one core.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings

import numpy as np

from .validate import check_product, checked_matmul

# |logits| <= LIMIT lets this route skip the max shift: e^600 and e^60 are far from
# overflow (e^709, e^88.7), and e^-600 and e^-60 far from zero.
_EXP_SAFE = {np.dtype(np.float64): 600.0, np.dtype(np.float32): 60.0}
_MIN_WEIGHTS = 2**16  # n_q x n_k of one head before blocks pay for their Python overhead
_BLOCK = 2**18  # weights per block: 2 MiB in float64, 256 rows of 1024 keys
_THREADED = 2**20  # weights in all (heads x n_q x n_k) before a second thread pays off
_ROWS = 256  # rows of X per block in matmuls


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
    from a caller's :func:`threads`; ``None`` means: decide here.
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
            _share_out(attend, parts, scratch, Q.dtype, n_threads)
    else:
        _share_out(attend, parts, scratch, Q.dtype, n_threads)
    if overflowed:
        largest = "" if weights is None else f" (largest entries {weights.max():.3g} and "
        raise ValueError(
            "weights @ V overflowed to infinity: the numbers are too large to multiply"
            + (largest and f"{largest}{np.abs(V).max():.3g})")
        )
    return output, weights


# --- Threads ---------------------------------------------------------------------------

_BUSY = threading.Lock()  # one threaded call at a time sets BLAS's thread count
_BLAS = []  # threadpoolctl's view of NumPy's BLAS, found on first use


def _blas():
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        with warnings.catch_warnings():  # its warnings concern OpenMP, not us
            warnings.simplefilter("ignore")
            _BLAS.append(ThreadpoolController().select(user_api="blas"))
    return _BLAS[0]


def workers() -> int:
    """How many threads the fast route uses: as many as BLAS may, at most one per core."""
    limits = [lib.num_threads for lib in _blas().lib_controllers]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min([*(t for t in limits if t), cores or 1]) if limits else 1)


@contextlib.contextmanager
def threads(weights: int):
    """How many threads a job with this many attention weights gets; BLAS gets one meanwhile.

    One thread for a small job, or while another call holds the threads (BLAS's thread
    count is one setting for the whole process, so only one call at a time may lower it).
    """
    n = workers() if weights >= _THREADED else 1
    if n == 1 or not _BUSY.acquire(blocking=False):
        yield 1
        return
    try:
        with _blas().limit(limits=1, user_api="blas"):
            yield n
    finally:
        _BUSY.release()


def matmuls(products: list, n_threads: int) -> list:
    """``[checked_matmul(a, b, what) for a, b, what in products]``, on ``n_threads``.

    Each ``a`` (..., m, k) is cut into blocks of rows, ``b`` is (k, p), and the blocks of
    all the products are shared out; each is checked for overflow as it is made. The
    first product that overflowed raises :func:`checked_matmul`'s error.
    """
    if n_threads == 1:
        return [checked_matmul(a, b, what) for a, b, what in products]
    flat = [(a.reshape(-1, a.shape[-1]), b) for a, b, _ in products]  # (..., m, k) -> (M, k)
    out = [np.empty((a.shape[0], b.shape[1]), np.result_type(a, b)) for a, b in flat]
    parts = [
        (i, slice(start, start + _ROWS))
        for i, (a, _) in enumerate(flat)
        for start in range(0, a.shape[0], _ROWS)
    ]
    overflowed = set()

    def product(part, scratch):
        i, rows = part
        np.matmul(flat[i][0][rows], flat[i][1], out=out[i][rows])
        if not np.isfinite(out[i][rows]).all():
            overflowed.add(i)

    _share_out(product, parts, None, None, n_threads)
    for i in sorted(overflowed):
        check_product(out[i], *products[i])  # raises, naming the product
    return [
        o.reshape(*a.shape[:-1], b.shape[1]) for o, (a, b, _) in zip(out, products, strict=True)
    ]


def _share_out(task, parts: list, scratch, dtype, n_threads: int) -> None:
    """Run ``task(part, scratch)`` for every part, on up to ``n_threads`` threads.

    Each thread takes the next part left until none is; ``scratch`` is the shape of one
    array each thread reuses (or ``None``). An error in any thread is raised here. The
    results are checked for overflow afterwards, so no thread warns about it.
    """
    taken, lock, errors, stop = iter(range(len(parts))), threading.Lock(), [], []

    def work():
        own = None if scratch is None else np.empty(scratch, dtype)
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # (per thread)
                while not stop:
                    with lock:
                        i = next(taken, None)
                    if i is None:
                        return
                    task(parts[i], own)
        except BaseException as err:  # handed to the caller's thread below
            errors.append(err)
            stop.append(True)

    helpers = [threading.Thread(target=work, daemon=True) for _ in parts[1:n_threads]]
    try:
        for thread in helpers:
            thread.start()
        work()
        for thread in helpers:
            thread.join()
    finally:
        stop.append(True)  # e.g. Ctrl+C while waiting: the other threads stop too
    if errors:
        raise errors[0]

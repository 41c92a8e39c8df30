"""Share a job's blocks out to the cores: the machinery of the fast route, not its math.

:mod:`attention_lib.fast` cuts attention into blocks of query rows, and
:func:`attention_lib.multi_head_attention` cuts its four projections into blocks of rows;
the blocks do not depend on each other. NumPy lets go of Python's lock inside ``exp``,
``sum`` and the matrix products, so threads that take the blocks in turn really run at
once, one per core.

Meanwhile BLAS gets one thread (threadpoolctl, in :func:`threads`). Its own threads would
fight ours for the cores: after each product they wait for the next one by spinning on a
core for about 0.1 s, which doubled the time of the threaded blocks when they came right
after a two-thread product. That is why the projections run on these threads too
(:func:`matmuls`): BLAS's threads stay asleep for the whole call. A caller's own
two-thread products less than 0.1 s before still wake them (then the call is up to 1.5
times slower); ``OPENBLAS_THREAD_TIMEOUT=4`` in the environment before Python starts
makes them sleep at once. Only as many threads run as BLAS was allowed, so
``threadpool_limits(1)`` (chapter 9's stopwatch) means one core.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings

import numpy as np

from .validate import check_product, checked_matmul

_THREADED = 2**20  # weights in all (heads x n_q x n_k) before a second thread pays off
_ROWS = 512  # rows of X per block in matmuls: (512, 512) @ (512, 512) runs near the peak

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
    """How many threads a large job gets: as many as BLAS may use, at most one per core."""
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

    share_out(product, parts, None, None, n_threads)
    for i in sorted(overflowed):
        check_product(out[i], *products[i])  # raises, naming the product
    return [
        o.reshape(*a.shape[:-1], b.shape[1]) for o, (a, b, _) in zip(out, products, strict=True)
    ]


def share_out(task, parts: list, scratch, dtype, n_threads: int) -> None:
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

"""Chapter 9's stopwatch: time several ways of computing attention over a range of sizes,
the RNN's cost per step (:func:`step_times`) and the matrix products' share of the plain
version (:func:`product_share`).

The machinery lives here so the chapter shows only what is timed and what it found.
BLAS gets one thread while the clock runs, so differences come from how the work is
handed to NumPy, not from extra cores.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from .chunked import attention_matrix, best_time
from .validate import check_positive_int


def stopwatch(ways: dict, sizes, *, d: int = 16, up_to: dict | None = None, repeat: int = 20):
    """Best time of each ``way(Q, K, V)`` on random ``(n, d)`` inputs, for each ``n``.

    Parameters
    ----------
    ways : dict of str -> callable
        Each takes ``(Q, K, V)``, all of shape ``(n, d)``.
    sizes : list of int
        The ``n`` to time. The largest runs first, so that no size waits for fresh memory
        from the operating system that a larger one already had.
    d : int
        ``d_k = d_v``.
    up_to : dict of str -> int, optional
        The largest ``n`` for a slow way (such as a Python loop).
    repeat : int
        Runs per point; the fastest counts (see :func:`attention_lib.chunked.best_time`).

    Returns
    -------
    dict of str -> dict of int -> float
        Seconds per call, ``times[way][n]``; a way is missing the sizes it skipped.
    """
    d = check_positive_int(d, "d")
    sizes = [check_positive_int(n, "each size") for n in sizes]
    up_to = up_to or {}
    unknown = set(up_to) - set(ways)
    if not ways or unknown or not all(callable(f) for f in ways.values()):
        raise ValueError(f"ways must map names to functions; up_to names unknown ways {unknown}")
    times = {name: {} for name in ways}
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1, user_api="blas"):
        for n in sorted(sizes, reverse=True):
            Q, K, V = rng.normal(size=(3, n, d))  # (n, d) each
            for name, attend in ways.items():
                if n <= up_to.get(name, n):
                    times[name][n] = best_time(attend, Q, K, V, repeat=repeat)
    return times


def step_times(rnn, widths, *, n: int = 1024, repeat: int = 20) -> dict:
    """Microseconds per step of ``rnn(X, W_x, W_h)`` over ``n`` steps, for each state width.

    ``rnn`` takes ``X`` of shape ``(n, width)`` and two ``(width, width)`` weight matrices
    (random, scaled by ``1 / sqrt(width)``); it is timed with :func:`stopwatch`.

    Returns
    -------
    dict of int -> float
        ``{width: microseconds per step}``.
    """
    if not callable(rnn):
        raise TypeError(f"rnn must be a function rnn(X, W_x, W_h), got {type(rnn).__name__}")
    n = check_positive_int(n, "n")
    rng = np.random.default_rng(0)
    out = {}
    for width in (check_positive_int(w, "each width") for w in widths):
        W_x, W_h = rng.normal(scale=width**-0.5, size=(2, width, width))
        ways = {"RNN": lambda Q, K, V, W_x=W_x, W_h=W_h: rnn(Q, W_x, W_h)}  # the rows of Q
        seconds = stopwatch(ways, [n], d=width, repeat=repeat)["RNN"][n]
        out[width] = seconds / n * 1e6
    return out


def product_share(n: int = 1024, d: int = 16, *, repeat: int = 20) -> float:
    """Share of :func:`attention_matrix`'s time spent in its two matrix products.

    Times, on one BLAS thread and random ``(n, d)`` inputs, the whole call, then ``Q @ K.T``
    and ``weights @ V`` alone; returns (time of the two products) / (time of the whole).
    """
    n, d = check_positive_int(n, "n"), check_positive_int(d, "d")
    Q, K, V = np.random.default_rng(0).normal(size=(3, n, d))
    z = Q @ K.T / np.sqrt(d)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    W = e / e.sum(axis=-1, keepdims=True)  # (n, n): the weights
    with threadpool_limits(limits=1, user_api="blas"):  # as in the stopwatch
        whole = best_time(attention_matrix, Q, K, V, repeat=repeat)
        scores = best_time(lambda: Q @ K.T, repeat=repeat)  # product 1
        blend = best_time(lambda: W @ V, repeat=repeat)  # product 2
    return (scores + blend) / whole

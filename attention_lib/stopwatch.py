"""Chapter 9's stopwatch: time several ways of computing attention over a range of sizes.

The machinery lives here so the chapter shows only what is timed and what it found.
BLAS gets one thread while the clock runs, so differences come from how the work is
handed to NumPy, not from extra cores.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from .chunked import best_time
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

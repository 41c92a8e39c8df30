"""Chapter 4 checker helper: row maxima that are right except for the divisor.

Review 04pp: ``softmax(raw_scores[512] / 511).max(axis=-1)`` is each row's largest weight,
only after the wrong division. It deserves "check your divisor", not "not each row's
largest weight". The divisor is found by bisection: a row's top weight only falls as the
divisor grows (a larger divisor flattens every row), so the mean of the row maxima pins it.
"""

from __future__ import annotations

import numpy as np

from ..core import softmax


def _mean_top(raw: np.ndarray, c: float) -> float:
    return float(softmax(raw / c).max(axis=-1).mean())


def fitted_divisor(value: np.ndarray, raw: np.ndarray) -> float | None:
    """The positive c with ``value`` = softmax(raw / c).max(axis=-1), or None if none fits."""
    low, high = -6.0, 9.0  # log10 of the divisors searched: 1e-6 to 1e9
    target = float(np.mean(value))
    if not _mean_top(raw, 10**high) < target < _mean_top(raw, 10**low):
        return None
    for _ in range(60):  # the mean top weight falls as c grows
        mid = (low + high) / 2
        low, high = (mid, high) if _mean_top(raw, 10**mid) > target else (low, mid)
    c = 10 ** ((low + high) / 2)
    tops = softmax(raw / c).max(axis=-1)  # (..., n_q)
    return c if np.allclose(value, tops, rtol=1e-6, atol=1e-9) else None


def divisor_hint(value: np.ndarray, raw: np.ndarray, divisor: float) -> str | None:
    """'Check your divisor', naming the one used, when only the divisor is wrong."""
    c = fitted_divisor(value, raw)
    if c is None or np.isclose(c, divisor, rtol=1e-6):
        return None
    said = f"{round(c)}" if abs(c - round(c)) < 1e-6 * c else f"about {c:.4g}"
    return (
        f"check your divisor: those are each row's largest weight after dividing the scores "
        f"by {said}; this exercise divides by d_k = {divisor:g}."
    )

"""Hints for a number checker's near-misses: an answer that is almost one number, a count gone
wrong. Kept apart from ``base.py`` so that :func:`base.check_number` stays short."""

from __future__ import annotations

import numpy as np


def not_a_number(answer, places: int) -> str:
    """The FAIL line for an answer that is not one number, and how to make it one."""
    line = f"expected one number, got {answer!r}"
    if isinstance(answer, str) and _parses(answer):  # my_answer = '0.37'
        return line + ": remove the quotes: give a number."
    if isinstance(answer, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(answer)
        except ValueError:  # a ragged list: no advice beyond "one number"
            return line + "."
        if arr.size == 1 and arr.dtype.kind in "iuf":  # X[d:d+1] @ W[:, 1]: shape (1,)
            return line + ": that holds one number; take it out with [0] or float(...)."
        if arr.dtype.kind == "b" and arr.ndim == 1 and places == 0:  # best == np.arange(n)
            return line + ": True/False per row. Count the True entries with .sum()."
    return line + "."


def _parses(text: str) -> bool:
    """Whether ``text`` reads as a number, e.g. '0.37' or ' 3 '."""
    try:
        return bool(np.isfinite(float(text)))
    except ValueError:
        return False


def count_hint(value: float, expected: float, places: int, said: str) -> str | None:
    """A hint for a wrong count (``places == 0``) that no listed mistake explains, or None.

    ``said`` is ``value`` as the learner wrote it. A negative count cannot be; a number
    within 1% of ``expected`` that ends in 00 looks rounded (5.4e8 for 536,870,912)."""
    if places != 0:
        return None
    if value < 0 <= expected:  # -3 rows
        return f"{said}: a count cannot be negative."
    if abs(value - expected) <= 0.01 * abs(expected) and value % 100 == 0 != expected % 100:
        return f"close: {said} looks rounded; give the exact whole number."
    return None

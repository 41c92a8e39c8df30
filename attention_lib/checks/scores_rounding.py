"""Chapter 3's scores checker: right scores rounded to a few decimals. Kept apart from
``scores.py``, which is near its size limit."""

from __future__ import annotations

import numpy as np

from .base import ATOL, Fail


def rounded(out: np.ndarray, expected: np.ndarray, case: str) -> None:
    """Fail, naming the rounding, on scores that are ``np.round(Q Kᵀ, k)`` for a small k."""
    if np.allclose(out, expected, atol=ATOL) or not np.isfinite(out).all():
        return
    for k in range(5):  # np.round(..., 0) to np.round(..., 4)
        if np.allclose(out, np.round(expected, k), atol=ATOL):
            to = "whole numbers" if k == 0 else f"{k} decimal{'s' * (k > 1)}"
            raise Fail(
                f"your scores are rounded to {to} (on {case}): they match Q Kᵀ only "
                "where the inputs have few decimals. Drop the np.round (or round(...)): "
                "return the full scores, and round only what you print."
            )

"""Chapter 9 merge checker: an output returned in a narrower float type (float16, float32),
whose rounding the verdict names rather than calling it only "values differ"."""

from __future__ import annotations

import contextvars

import numpy as np

from .base import ATOL, Fail

_DTYPE: contextvars.ContextVar[np.dtype | None] = contextvars.ContextVar("dtype", default=None)


def recording(fn):
    """``fn`` unchanged, except that the dtype of what it returns is remembered."""
    if not callable(fn):
        return fn  # None or a typo: the verdict says so

    def recorded(*args):
        out = fn(*args)
        try:
            _DTYPE.set(np.asarray(out).dtype)
        except Exception:  # noqa: BLE001 - a ragged answer: the verdict names it
            _DTYPE.set(None)
        return out

    return recorded


def narrow_float(out, expected, case: str) -> None:
    """Fail with the dtype named when a float16 or float32 answer misses by its rounding."""
    dtype = _DTYPE.get()
    if dtype is None or dtype.kind != "f" or dtype.itemsize >= 8:
        return
    if np.shape(out) != np.shape(expected) or np.allclose(out, expected, atol=ATOL):
        return
    eps = float(np.finfo(dtype).eps)  # float16: 0.00098
    if not np.allclose(out, expected, rtol=4 * eps, atol=4 * eps):
        return  # off by more than the rounding: some other mistake, in float16
    gap = np.abs(np.asarray(out, dtype=float) - expected).max()
    digits = np.finfo(dtype).precision  # float16: 3, float32: 6
    raise Fail(
        f"your output has dtype {dtype}, which keeps about {digits} significant digits, so "
        f"it is off by up to {gap:.2g} (on {case}). Return the float64 result: drop the "
        ".astype(...) and return o / ell[:, None] as it comes."
    )

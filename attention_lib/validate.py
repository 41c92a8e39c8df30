"""Input checks shared by every function in :mod:`attention_lib.core`.

Each check either returns a clean float array or raises an error that a learner can act
on. The messages always name the argument and its shape, because "shapes do not match"
on its own sends people hunting.
"""

from __future__ import annotations

import numbers

import numpy as np


def as_float_array(x, name: str, min_ndim: int = 0) -> np.ndarray:
    """Return ``x`` as a finite floating-point array.

    float32 and float64 are kept as they are; booleans and integers are promoted to
    float64, so ``softmax([1, 2, 3])`` works as a learner expects.

    Raises
    ------
    TypeError
        If ``x`` is not numeric (strings, objects, complex numbers).
    ValueError
        If ``x`` has fewer than ``min_ndim`` dimensions, or holds NaN or infinity.
    """
    try:
        arr = np.asarray(x)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of numbers: {err}") from None
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    elif arr.dtype.kind != "f":
        raise TypeError(
            f"{name} must be an array of real numbers, but it has dtype {arr.dtype} "
            f"(for example {_first_item(arr)!r})"
        )
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions, but it has shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinity (first at index {tuple(int(i) for i in bad)}, "
            f"shape {arr.shape}); attention needs finite numbers"
        )
    return arr


def _first_item(arr: np.ndarray):
    return arr.reshape(-1)[0] if arr.size else None


def check_temperature(temperature) -> float:
    """Return ``temperature`` as a float after checking that it is a positive number."""
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real):
        raise TypeError(f"temperature must be a positive number, got {temperature!r}")
    if not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(
            f"temperature must be a positive, finite number, got {temperature!r}; "
            "T -> 0 means one-hot and T -> infinity means uniform, but neither end is a number"
        )
    return float(temperature)


def check_positive_int(value, name: str) -> int:
    """Return ``value`` as an int after checking that it is a whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def check_mask(mask, shape: tuple[int, ...]) -> np.ndarray:
    """Check a boolean attention mask against the ``(..., n_q, n_k)`` logits shape.

    True means "may attend", as in PyTorch. Every query row must keep at least one key,
    otherwise softmax would divide by zero and hand back NaN.
    """
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(
            f"mask must be a boolean array (True = may attend), but it has dtype {mask.dtype}"
        )
    try:
        mask = np.broadcast_to(mask, shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} cannot be broadcast to the scores shape {shape}"
        ) from None
    empty = ~mask.any(axis=-1)
    if empty.any():
        row = tuple(int(i) for i in np.argwhere(empty)[0])
        raise ValueError(
            f"mask row {row} allows no key at all, so its attention weights are undefined; "
            "every query must be allowed to attend to at least one key"
        )
    return mask


def check_batch(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    """Check that the leading (batch) dimensions of two arrays broadcast together."""
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch dimensions of {name_a} {a.shape} and {name_b} {b.shape} "
            "do not broadcast together"
        ) from None


def check_scale(scale) -> float:
    """Return ``scale`` as a float after checking that it is a positive, finite number."""
    if isinstance(scale, bool) or not np.isscalar(scale) or not np.isreal(scale):
        raise TypeError(f"scale must be a positive number or None, got {scale!r}")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive, finite number or None, got {scale!r}")
    return float(scale)

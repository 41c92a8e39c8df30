"""Input checks shared by every function in :mod:`attention_lib.core`.

Each check either returns a clean value or raises an error that a learner can act on.
The messages always name the argument and its shape, because "shapes do not match" on
its own sends people hunting.
"""

from __future__ import annotations

import numbers
from decimal import Decimal

import numpy as np


def as_float_array(x, name: str, min_ndim: int = 0) -> np.ndarray:
    """Return ``x`` as a finite, non-empty floating-point array.

    float32 and float64 are kept as they are; integers are promoted to float64, so
    ``softmax([1, 2, 3])`` works as a learner expects.

    Raises
    ------
    TypeError
        If ``x`` is not real numbers: strings, objects, complex numbers, booleans (a
        boolean array is almost always a mask passed in the wrong place), or a NumPy
        masked array (its mask would be silently ignored).
    ValueError
        If ``x`` is ragged, has fewer than ``min_ndim`` dimensions, has a dimension of
        length 0, or holds NaN or infinity.
    """
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{name} is a NumPy masked array, whose mask would be ignored here; pass a "
            "plain array (and, for attention, a boolean mask= argument)"
        )
    try:
        arr = np.asarray(x)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of numbers: {err}") from None
    if arr.dtype.kind == "b":
        raise TypeError(
            f"{name} is a boolean array (shape {arr.shape}); it needs numbers. "
            "Did you mean to pass it as mask=?"
        )
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)
    elif arr.dtype.kind != "f":
        example = arr.reshape(-1)[0] if arr.size else None
        raise TypeError(
            f"{name} must be an array of real numbers, but it has dtype {arr.dtype} "
            f"(for example {example!r})"
        )
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions, but it has shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} is empty: it has shape {arr.shape}, with a dimension of 0")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinity (first at index {tuple(int(i) for i in bad)}, "
            f"shape {arr.shape}); attention needs finite numbers"
        )
    return arr


def positive_real(value, name: str) -> float:
    """Return ``value`` as a float after checking that it is a positive, finite number.

    Used for ``temperature`` and ``scale``. Python and NumPy numbers, fractions and
    decimals are accepted; booleans, complex numbers and strings are not.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, Decimal)):
        raise TypeError(f"{name} must be a positive number, got {value!r}")
    number = float(value)
    if not np.isfinite(number) or number <= 0:
        hint = ""
        if name == "temperature":
            hint = "; T -> 0 means one-hot and T -> infinity uniform, but neither is a number"
        raise ValueError(f"{name} must be a positive, finite number, got {value!r}{hint}")
    return number


def check_axis(axis, ndim: int, shape: tuple) -> int:
    """Return ``axis`` as an int after checking that ``shape`` has it."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be a whole number such as -1, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array of shape {shape}")
    return int(axis)


def check_positive_int(value, name: str) -> int:
    """Return ``value`` as an int after checking that it is a whole number >= 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def check_mask(mask, shape: tuple[int, ...], against: str = "the scores") -> np.ndarray:
    """Check a boolean attention mask against the ``(..., n_q, n_k)`` shape it must fit.

    True means "may attend", as in PyTorch. Every query row must keep at least one key,
    otherwise softmax would divide by zero and hand back NaN.
    """
    try:
        mask = np.asarray(mask)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"mask must be a rectangular array of booleans: {err}") from None
    if mask.dtype != np.bool_:
        raise TypeError(
            f"mask must be a boolean array (True = may attend), but it has dtype {mask.dtype}"
        )
    try:
        mask = np.broadcast_to(mask, shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} cannot be broadcast to {against}, shape {shape}"
        ) from None
    empty = ~mask.any(axis=-1)
    if empty.any():
        row = tuple(int(i) for i in np.argwhere(empty)[0])
        raise ValueError(
            f"mask row {row} allows no key at all, so its attention weights are undefined; "
            "every query must be allowed to attend to at least one key"
        )
    return mask


def check_batch(name_a: str, a, name_b: str, b) -> None:
    """Check that the leading (batch) dimensions of two arrays broadcast together.

    ``a`` and ``b`` are arrays or shape tuples, so that a result can be checked before it
    is computed.
    """
    shape_a = a if isinstance(a, tuple) else a.shape
    shape_b = b if isinstance(b, tuple) else b.shape
    try:
        np.broadcast_shapes(shape_a[:-2], shape_b[:-2])
    except ValueError:
        raise ValueError(
            f"the batch dimensions of {name_a} {shape_a} and {name_b} {shape_b} "
            "do not broadcast together"
        ) from None


def checked_matmul(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """``a @ b``, with a clear error instead of a silent infinity if it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        product = a @ b
    return check_product(product, a, b, what)


def check_product(product: np.ndarray, a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """Return ``product``, the ``a @ b`` computed elsewhere, if no number overflowed."""
    if not np.all(np.isfinite(product)):
        raise ValueError(
            f"{what} overflowed to infinity: the numbers are too large to multiply "
            f"(largest entries {np.abs(a).max():.3g} and {np.abs(b).max():.3g})"
        )
    return product

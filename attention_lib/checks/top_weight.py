"""Chapter 4 checker: each row's largest weight after dividing the raw scores by d_k."""

from __future__ import annotations

import numpy as np

from ..core import softmax
from .base import CheckResult
from .top_weight_divisor import divisor_hint

# --- Exercise: why not divide by d_k? -------------------------------------------------------


def _other_width(value, raw, divisor: float, others) -> tuple[int, int | None]:
    """``raw``'s width in ``others`` (d_k -> raw scores), and another width d with
    ``value`` = softmax(others[d] / d).max(axis=-1), or None."""
    same = {d: np.shape(z) == raw.shape for d, z in others.items()}
    own = next((d for d in others if same[d] and np.array_equal(others[d], raw)), 0)
    for d, z in others.items():
        top = softmax(np.asarray(z) / d).max(axis=-1) if same[d] and d != own == divisor else None
        if top is not None and np.allclose(value, top, rtol=1e-6, atol=1e-9):
            return own, int(d)
    return own, None


def check_mean_top_weight(answer, raw_scores, d_k: int = 512) -> CheckResult:
    """Check each row's largest weight in ``softmax(raw_scores[d_k] / d_k)``: the whole
    array of row maxima, so a wrong axis, a median or a subset of the rows cannot pass.

    ``raw_scores`` maps each width to its raw scores (keys on the last axis), as the
    chapter's dict does, so the hint can name another width; an array is the scores of
    width ``d_k`` alone.
    """
    others = raw_scores if isinstance(raw_scores, dict) else {}
    raw = np.asarray(raw_scores[d_k] if others else raw_scores, dtype=float)
    if raw.ndim < 1 or raw.shape[-1] < 2:
        raise ValueError(f"raw must have at least 2 keys on its last axis, got shape {raw.shape}")
    divisor = float(d_k)
    if not np.isfinite(divisor) or divisor <= 0:
        raise ValueError(f"divisor must be a positive number, got {divisor}")
    weights = softmax(raw / divisor)
    expected = weights.max(axis=-1)
    result = _top_weight_result(answer, raw, divisor, weights, expected, others)
    print(result.line)
    return result


def _top_weight_result(answer, raw, divisor, weights, expected, others) -> CheckResult:
    name, shape = "mean_top_weight", expected.shape
    if answer is None:
        return CheckResult(name, "TODO", "replace None with your array, then run again.")
    try:
        if isinstance(answer, str | bytes):
            raise TypeError
        value = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return CheckResult(name, "FAIL", f"expected an array of numbers, got {answer!r}.")
    if value.shape != shape:
        if value.ndim == 0:
            hint = (
                "that is one number (a mean or a median?): keep each row's largest weight, "
                f"an array of shape {shape}; the solution averages it."
            )
        elif value.shape == (*shape, 1) and np.allclose(value[..., 0], expected):
            hint = f"drop keepdims=True: shape {shape}, one entry per query."
        elif value.size == expected.size and np.allclose(
            value.reshape(shape), expected, rtol=1e-6, atol=1e-9
        ):
            hint = f"values right; keep the {shape} layout: one entry per query, no reshape."
        elif value.shape == weights.shape:
            hint = (
                f"these are all the weights; take each row's largest, .max(axis=-1): shape {shape}."
            )
        elif raw.ndim > 2 and value.shape == weights.shape[1:]:
            hint = (
                ".max(axis=0) takes the largest over the sentences (the batch axis); "
                f"take each row's largest, .max(axis=-1): shape {shape}."
            )
        elif value.shape == shape[:-1] and np.allclose(value, expected.mean(axis=-1)):
            hint = (
                f"that averages each sentence's row maxima: keep one entry per query, "
                f"shape {shape}; the solution averages it."
            )
        elif raw.ndim > 2 and value.shape == shape[1:]:
            hint = f"that covers the first sentence only: keep every row, shape {shape}."
        elif value.ndim > 1 and value.shape == shape[::-1]:
            hint = (
                f"expected shape {shape}, got {value.shape}: your array is transposed. Take "
                ".max(axis=-1) of the weights and return it as it comes, without .T."
            )
        else:
            hint = f"expected shape {shape} (one number per row), got {value.shape}."
        return CheckResult(name, "FAIL", hint)
    if np.asarray(answer).dtype.kind in "iu" and not value.any():
        return CheckResult(
            name,
            "FAIL",
            "your array is integer: the weights were truncated to 0. Keep the floats "
            "softmax returns (no int cast).",
        )
    if np.allclose(value, expected, rtol=1e-6, atol=1e-9):
        return CheckResult(name, "PASS", f"the mean of the row maxima is {expected.mean():.3f}.")
    places = next((k for k in range(1, 7) if np.allclose(value, expected.round(k))), None)
    if places is not None:  # tested before the slips below: a rounded answer is right
        return CheckResult(name, "FAIL", f"values right to {places} decimals: don't round.")
    half = np.asarray(expected, dtype=np.float16).astype(float)
    if np.asarray(answer).dtype == np.float16 or np.array_equal(value, half):
        if np.allclose(value, half, rtol=1e-3, atol=1e-4):  # float16 keeps ~3 digits
            return CheckResult(
                name, "FAIL", "right values in float16: compute in float64 (no float16 cast)."
            )
    if _row_sums(value, raw, divisor, weights):
        return CheckResult(
            name,
            "FAIL",
            "that is each row's sum (always 1: a row's weights add up to 1). Take each "
            "row's largest weight, .max(axis=-1).",
        )
    exp = np.exp(raw / divisor - (raw / divisor).max(axis=-2, keepdims=True))
    z = raw / divisor
    unnormalised = "your weights do not sum to 1 along each row: "
    mistakes = [
        (
            lambda: softmax(raw / divisor**2).max(axis=-1),
            f"those are the weights after dividing by {divisor:g}² = {divisor**2:g}: "
            f"divide the scores by {divisor:g} once.",
        ),
        (
            lambda: weights.max(axis=-2),
            "wrong axis: .max(axis=-2) takes each key's largest weight over the queries "
            "(a column). A row's weights run along the last axis: .max(axis=-1).",
        ),
        (
            lambda: (exp / exp.sum(axis=-2, keepdims=True)).max(axis=-1),
            "wrong axis: that softmax makes each column sum to 1. Attention normalises "
            "each row, over the keys on the last axis (al.softmax does).",
        ),
        (
            lambda: np.exp(z).max(axis=-1),
            unnormalised + "you took np.exp without dividing by each row's sum. "
            "al.softmax does both.",
        ),
        (
            lambda: np.ones_like(expected),
            unnormalised + "every top is exactly 1, as np.exp(z - z.max(axis=-1, "
            "keepdims=True)) gives. Divide by each row's sum too (al.softmax does).",
        )
        if not np.allclose(softmax(raw * divisor).max(axis=-1), 1)
        else (  # multiplying by the divisor also gives all ones here: name both
            lambda: np.ones_like(expected),
            f"every top is exactly 1: either you multiplied the scores by {divisor:g} instead "
            f"of dividing, or {unnormalised}np.exp(z - z.max(axis=-1, keepdims=True)) "
            "without dividing by each row's sum.",
        ),
        (
            lambda: (np.exp(z) / np.exp(z).sum(axis=0, keepdims=True)).max(axis=-1),
            unnormalised + "that softmax normalises over the first (batch) axis. "
            "Normalise over the keys, the last axis (al.softmax does).",
        ),
        (
            lambda: (np.exp(z) / np.exp(z).sum()).max(axis=-1),
            unnormalised + "that divides by the sum over the whole array. "
            "Normalise each row, over the last axis (al.softmax does).",
        ),
        (
            lambda: softmax(raw).max(axis=-1),
            f"those are the undivided raw scores' weights: divide the scores by {divisor:g} "
            "before softmax.",
        ),
        (
            lambda: softmax(raw / np.sqrt(divisor)).max(axis=-1),
            f"those are the weights after dividing by √{divisor:g}; this exercise divides by "
            f"{divisor:g}.",
        ),
        (
            lambda: (raw / divisor).max(axis=-1),
            "those are the largest scores, not weights: apply softmax before .max(axis=-1).",
        ),
        (
            lambda: weights.argmax(axis=-1),
            "those are indices, not weights: .argmax says which key wins; .max(axis=-1) "
            "gives its weight.",
        ),
        (
            lambda: softmax(raw * divisor).max(axis=-1),
            f"you multiplied the scores by {divisor:g} instead of dividing: divide them by "
            f"{divisor:g}, then apply softmax.",
        ),
        (
            lambda: weights.mean(axis=-1),
            f"that is the mean weight of a row, always 1/n = 1/{raw.shape[-1]}: take each row's "
            "largest, .max(axis=-1).",
        ),
        (
            lambda: weights.min(axis=-1),
            "those are each row's smallest weight (.min): take the largest, .max(axis=-1).",
        ),
        (
            lambda: (softmax(raw) / divisor).max(axis=-1),
            f"you divided after softmax: divide the scores by {divisor:g} first, then apply "
            "softmax.",
        ),
    ]
    for wrong, hint in mistakes:
        if np.allclose(value, wrong(), rtol=1e-6, atol=1e-9):
            return CheckResult(name, "FAIL", hint)
    slip = _wrong_divisor_or_array(value, raw, divisor, others)
    if slip is not None:
        return CheckResult(name, "FAIL", slip)
    if value.size > 1 and np.all(value == value.flat[0]):  # a typed-in number, copied
        return CheckResult(
            name,
            "FAIL",
            f"every row has the same value, {value.flat[0]:g}: compute each row's maximum "
            "(divide the raw scores, apply softmax, then .max(axis=-1)).",
        )
    own, width = _other_width(value, raw, divisor, others)
    near = divisor_hint(value, raw, divisor) if width is None else None  # review 04pp
    if near is not None:
        return CheckResult(name, "FAIL", near)
    hint = (
        "not each row's largest weight: divide the raw scores, apply softmax, then take "
        ".max(axis=-1)."
        if width is None
        else f"those are the row maxima of softmax(raw_scores[{width}] / {width}): this "
        f"exercise divides raw_scores[{own}] by {divisor:g}."
    )
    return CheckResult(name, "FAIL", hint)


def _row_sums(value, raw, divisor: float, weights) -> bool:
    """Review 04vv: ``.sum(axis=-1)`` in place of ``.max(axis=-1)``. Its rounding shows (a
    float sum of a row's weights is 1 only to about 1e-16), so unlike np.exp(z - z.max()),
    whose top is exactly 1, some entries differ from 1."""
    if np.all(value == 1) or not np.allclose(value, weights.sum(axis=-1), rtol=1e-6, atol=1e-9):
        return False
    return not np.array_equal(value, softmax(raw * divisor).max(axis=-1))  # not multiplied


def _wrong_divisor_or_array(value, raw, divisor: float, others) -> str | None:
    """Review 04jj: another width's divisor (8 = √64 above all) or another width's scores."""
    own = next((d for d, z in others.items() if np.array_equal(np.asarray(z), raw)), None)
    n = raw.shape[-1]  # keys per row: 16 is n here, even where 16 is also a width
    roots = {8.0: "8 = √64, a d_k = 64 head's √d_k", float(n): f"{n} = n, the number of keys"}
    for d in others:
        roots.setdefault(float(np.sqrt(d)), f"{np.sqrt(d):g} = √{d}")
        roots.setdefault(float(d), f"{d}, another width")
    for c, said in roots.items():
        if c in (divisor, np.sqrt(divisor), divisor**2) or c <= 0:
            continue
        if np.allclose(value, softmax(raw / c).max(axis=-1), rtol=1e-6, atol=1e-9):
            return f"you divided by {said}; this exercise divides by d_k = {divisor:g}."
    for d, z in others.items():
        z = np.asarray(z, dtype=float)
        if d == own or z.shape != raw.shape:
            continue
        if np.allclose(value, softmax(z / divisor).max(axis=-1), rtol=1e-6, atol=1e-9):
            return (
                f"those come from raw_scores[{d}] divided by {divisor:g}: use the d_k = "
                f"{own} scores, raw_scores[{own}] / {divisor:g}."
            )
    return None

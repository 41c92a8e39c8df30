"""Chapter 4 checker: predict the variance of a dot product of random vectors."""

from __future__ import annotations

import numbers

import numpy as np

from ..core import softmax
from ..validate import check_positive_int
from .base import CheckResult, check_number

# --- Exercise: predict the variance of a dot product --------------------------------------


def check_dot_variance(answer, d_k: int = 64, sigma: float = 1.0) -> CheckResult:
    r"""Check a predicted :math:`\operatorname{Var}(q \cdot k)` for random vectors.

    The components of ``q`` and ``k`` are independent, with mean 0 and standard deviation
    ``sigma``. Each product :math:`q_m k_m` has variance :math:`\sigma^2 \cdot \sigma^2`,
    and ``d_k`` of them add up: the variance of ``q · k`` is :math:`\sigma^4 d_k`.
    """
    d_k = check_positive_int(d_k, "d_k")
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be a positive number, got {sigma}")
    var = sigma**2  # variance of one component
    expected = var**2 * d_k
    std = f"σ²·√{d_k}" if sigma != 1.0 else f"√{d_k}"
    mistakes = [
        (
            var * np.sqrt(d_k),
            f"{var * np.sqrt(d_k):g} = {std} is the standard deviation of q · k; the "
            "variance is its square.",
        ),
        (
            var**2,
            f"{var**2:g} is the variance of one product q_m k_m, or of the score after "
            f"dividing by √d_k. Before scaling, {d_k} independent products add up, and so "
            "do their variances.",
        ),
        (
            var**2 * d_k**2,
            f"{var**2 * d_k**2:g} grows like d_k²: variances of independent terms add, so "
            f"{d_k} products give {d_k} times the variance of one, not {d_k}² times.",
        ),
        (
            0.0,
            "0 is the mean of q · k (positive and negative products cancel on average); "
            "the variance measures how far the scores spread around it.",
        ),
        (
            var**2 / d_k,
            f"{var**2 / d_k:g} would be the variance after dividing the score by d_k. The "
            "raw score is not divided by anything.",
        ),
        (
            var * d_k,
            f"{var * d_k:g} = σ²·d_k: each product q_m k_m has variance σ²·σ² = σ⁴ "
            f"= {var**2:g}, not σ² (both of its factors vary).",
        ),
        (
            float(d_k),
            f"{d_k} is the answer for components of variance 1; here each component has "
            f"variance σ² = {var:g}, so each product has σ⁴ = {var**2:g}.",
        ),
        (
            np.sqrt(d_k),
            f"{np.sqrt(d_k):g} = √{d_k} is the spread (standard deviation) of q · k for "
            f"components of variance 1. Two steps are missing: the variance is the spread "
            f"squared, and with σ = {sigma:g} each product has variance σ⁴ = {var**2:g}, "
            "not 1.",
        ),
        (
            sigma * d_k,
            f"{sigma * d_k:g} = σ·d_k: σ = {sigma:g} is a standard deviation, so each "
            f"component has variance σ² = {var:g} and each product σ²·σ² = {var**2:g}.",
        ),
        (
            var**2 * np.sqrt(d_k),
            f"{var**2 * np.sqrt(d_k):g} = σ⁴·√{d_k}: the spread of a sum grows like √d_k, but "
            f"its variance grows like d_k, since the {d_k} products' variances add.",
        ),
        (
            2 * var * d_k,
            f"{2 * var * d_k:g} = 2·σ²·d_k: adding the variances of q_m and k_m is the rule for "
            f"a sum q_m + k_m. For a product the variances multiply: σ²·σ² = {var**2:g}.",
        ),
        (
            2 * expected,
            f"{2 * expected:,g} is twice the answer: each of the {d_k} products has variance "
            f"σ⁴ = {var**2:g} and counts once; with mean 0 nothing else adds.",
        ),
        (
            sigma**3 * d_k,
            f"{sigma**3 * d_k:,g} = σ³·d_k: that mixes the variance of one factor with the "
            f"spread of the other. Both q_m and k_m have variance σ² = {var:g}, so each "
            f"product has σ²·σ² = {var**2:g}.",
        ),
        (
            2 * sigma * d_k,
            f"{2 * sigma * d_k:g} = 2·σ·d_k: spreads do not add, and a product is not a sum. "
            f"Work with variances: each product q_m k_m has variance σ²·σ² = {var**2:g}.",
        ),
        (
            1.0,
            "1 is the variance of a scaled score when the components have variance 1. Here "
            f"the score is not scaled, and each of its {d_k} products has variance "
            f"σ⁴ = {var**2:g}.",
        ),
        (
            var * d_k**2,
            f"{var * d_k**2:,g} = (σ·d_k)² = σ²·d_k²: the variance grows like d_k, not d_k², "
            f"because the {d_k} products' variances add; and each product has variance "
            f"σ⁴ = {var**2:g}.",
        ),
        (
            sigma * np.sqrt(d_k),
            f"{sigma * np.sqrt(d_k):g} = σ·√{d_k} looks like a spread, not a variance, with σ "
            f"counted once per product. Each product q_m k_m has variance σ²·σ² = {var**2:g}, "
            f"and the variances of the {d_k} products add.",
        ),
        (
            var,
            f"{var:g} = σ² is the variance of one component q_m. A product q_m k_m has "
            f"σ²·σ² = {var**2:g}, and the score adds up {d_k} such products.",
        ),
    ]
    mistakes += [
        (
            var**2 * (d_k + off),
            f"{var**2 * (d_k + off):,g} = σ⁴·({d_k} {sign} 1): count the products again. A "
            f"score has one product q_m k_m per component, so exactly {d_k} of them.",
        )
        for off, sign in ((-1, "−"), (1, "+"))
    ]
    # With sigma = 1 some of these coincide with the answer; never call the answer a mistake.
    mistakes = [(wrong, hint) for wrong, hint in mistakes if not np.isclose(wrong, expected)]
    if sigma != 1.0:  # with sigma = 1 the formulas that coincide say the same: the first wins
        mistakes = _merge_coinciding(mistakes)
    hints = dict(mistakes=tuple(mistakes), fallback=_near_hint(answer, expected))
    return check_number("dot_variance", answer, expected, places=2, **hints)


def _merge_coinciding(mistakes: list[tuple]) -> tuple:
    """One entry per wrong value: two formulas that give the same number both get named."""
    merged: dict[float, list[str]] = {}
    for wrong, hint in mistakes:
        key = next((k for k in merged if np.isclose(k, wrong)), wrong)
        merged.setdefault(key, []).append(hint)
    return tuple(
        (wrong, hints[0] if len(hints) == 1 else " Or ".join(hints))
        for wrong, hints in merged.items()
    )


def _near_hint(answer, expected: float) -> str | None:
    """A hint for a negative answer, or for one within 2% of ``expected`` that still is
    not it; else None."""
    if isinstance(answer, bool | np.bool_) or not isinstance(answer, numbers.Real):
        return None
    value = float(answer)
    if value < 0:
        return "{value}: a variance cannot be negative, it is an average of squares."
    if not np.isfinite(value) or abs(value - expected) > 0.02 * abs(expected):
        return None
    return (
        "{value} is close, but not the exact expected value: work it out with the two "
        "variance rules and check the arithmetic (a simulated or rounded estimate lands "
        "this close too)."
    )


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
                f"an array of shape {shape}; the cell below averages it."
            )
        elif value.shape == (*shape, 1) and np.allclose(value[..., 0], expected):
            hint = f"drop keepdims=True: shape {shape}, one entry per query."
        elif value.size == expected.size and np.allclose(
            value.reshape(shape), expected, rtol=1e-6, atol=1e-9
        ):
            hint = f"values right; keep the {shape} layout: one entry per query, no reshape."
        elif raw.ndim > 2 and value.shape == shape[1:]:
            hint = f"that covers the first sentence only: keep every row, shape {shape}."
        else:
            hint = f"expected shape {shape} (one number per row), got {value.shape}."
        return CheckResult(name, "FAIL", hint)
    if np.allclose(value, expected, rtol=1e-6, atol=1e-9):
        return CheckResult(
            name, "PASS", f"right: the mean of the row maxima is {expected.mean():.3f}."
        )
    places = next((k for k in range(1, 7) if np.allclose(value, expected.round(k))), None)
    if places is not None:  # tested before the slips below: a rounded answer is right
        return CheckResult(name, "FAIL", f"values right to {places} decimals: don't round.")
    exp = np.exp(raw / divisor - (raw / divisor).max(axis=-2, keepdims=True))
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
            lambda: (softmax(raw) / divisor).max(axis=-1),
            f"you divided after softmax: divide the scores by {divisor:g} first, then apply "
            "softmax.",
        ),
    ]
    for wrong, hint in mistakes:
        if np.allclose(value, wrong(), rtol=1e-6, atol=1e-9):
            return CheckResult(name, "FAIL", hint)
    own, width = _other_width(value, raw, divisor, others)
    hint = (
        "not each row's largest weight: divide the raw scores, apply softmax, then take "
        ".max(axis=-1)."
        if width is None
        else f"those are the row maxima of softmax(raw_scores[{width}] / {width}): this "
        f"exercise divides raw_scores[{own}] by {divisor:g}."
    )
    return CheckResult(name, "FAIL", hint)

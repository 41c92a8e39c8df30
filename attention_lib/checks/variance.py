"""Chapter 4 checker: predict the variance of a dot product of random vectors."""

from __future__ import annotations

import contextlib
import io
import numbers

import numpy as np

from ..validate import check_positive_int
from .base import CheckResult, _number, check_number
from .top_weight import check_mean_top_weight  # noqa: F401 (its old home)

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
            f"{_number(var**2 * d_k**2)} grows like d_k²: variances of independent terms add, so "
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
            f"{_number(2 * expected)} is twice the answer: each of the {d_k} products has variance "
            f"σ⁴ = {var**2:g} and counts once; with mean 0 nothing else adds.",
        ),
        (
            sigma**3 * d_k,
            f"{_number(sigma**3 * d_k)} = σ³·d_k: that mixes the variance of one factor with the "
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
            f"{_number(var * d_k**2)} = (σ·d_k)² = σ²·d_k²: the variance grows like d_k, not d_k², "
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
            f"{_number(var**2 * (d_k + off))} = σ⁴·({d_k} {sign} 1): count the products again. A "
            f"score has one product q_m k_m per component, so exactly {d_k} of them.",
        )
        for off, sign in ((-1, "−"), (1, "+"))
    ]
    # With sigma = 1 some of these coincide with the answer; never call the answer a mistake.
    mistakes = [(wrong, hint) for wrong, hint in mistakes if not np.isclose(wrong, expected)]
    if sigma != 1.0:  # with sigma = 1 the formulas that coincide say the same: the first wins
        mistakes = _merge_coinciding(mistakes)
    hints = dict(mistakes=tuple(mistakes), fallback=_near_hint(answer, expected))
    with contextlib.redirect_stdout(io.StringIO()):  # its line is printed below
        result = check_number("dot_variance", answer, expected, places=2, **hints)
    if result.passed and float(answer) == expected:  # "3888 is right.", the number once
        result.message = f"{_number(float(answer))} is right."
    elif result.passed:  # review 04uu: 3888.004 read "3888 is right (3,888)"; now each once
        result.message = f"{answer!s} is right; the exact value is {_number(expected)}."
    print(result.line)
    return result


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

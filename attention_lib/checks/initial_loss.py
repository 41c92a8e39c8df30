"""Chapter 10 checker: the loss of a model that gives every noun the same probability."""

from __future__ import annotations

import numbers

import numpy as np

from ..validate import check_positive_int
from .base import CheckResult, check_number

# --- Exercise: predict the loss before training ---------------------------------------------


def check_initial_loss(answer, n_nouns: int = 8) -> CheckResult:
    """Check a predicted cross-entropy loss of a model that gives every noun 1/n_nouns."""
    n = check_positive_int(n_nouns, "n_nouns")
    mistakes = (
        (1 / n, f"1/{n} is the probability of the right noun; the loss is -log of it."),
        (-np.log(n), f"{-np.log(n):.2f} is log(1/{n}); the loss has a minus sign: -log(1/{n})."),
        (np.log2(n), f"{np.log2(n):g} is log base 2 (bits); cross-entropy uses np.log (nats)."),
        (
            np.log10(n),
            f"{np.log10(n):.2f} is log base 10; cross-entropy uses the natural log, np.log.",
        ),
        (1 - 1 / n, f"{1 - 1 / n:.3f} is the share of wrong answers, not the loss."),
        (float(n), f"{n} is the number of nouns; the loss is -log(1/{n}) = log({n})."),
        (0.0, "0 would be a perfect model, sure of the right noun every time."),
    )
    if n != 8:  # the chapter's own 8 nouns: the likeliest slip, so it comes first
        mistakes = (
            (
                np.log(8),
                f"{np.log(8):.2f} is log 8, the loss of the chapter's model with 8 nouns; "
                f"with {n} nouns the right one gets 1/{n}: -log(1/{n}).",
            ),
            *mistakes,
        )
    if n % 10 == 0 and n > 10:  # the exercise's hint: log 20 = log 2 + log 10
        rest = n // 10
        mistakes += (
            (np.log(10), f"you used only log 10: {n} = {rest} x 10, so add log {rest}."),
            (np.log(rest), f"you used only log {rest}: {n} = {rest} x 10, so add log 10."),
        )
    exact = float(np.log(n))
    if isinstance(answer, numbers.Real) and np.isfinite(answer) and not isinstance(answer, bool):
        # 3.004 is 3.00, as log 20 is; 2.99 (0.69 + 2.30) and 3.01 both fail alike, with
        # the "two decimals" hint below
        if round(float(answer), 2) == round(exact, 2):
            result = CheckResult("initial_loss", "PASS", f"{answer:g} is right ({exact:.4f}).")
            print(result.line)
            return result
    for places in (1,):  # cut off after one decimal (2.9 for 2.9957)
        cut = np.floor(exact * 10**places) / 10**places
        if abs(cut - exact) > 0.005:  # only where cutting gives another number
            hint = (  # no answer given away: one wrong guess must not reveal it
                f"{cut:.{places}f} is a little short: rounding each term before adding, or "
                f"cutting off after {places} decimal{'s' if places > 1 else ''}, loses it. "
                "Recompute with more digits and round at the end, not each term."
            )
            mistakes = ((cut, hint), *mistakes)
    close = (  # near, but not right to two decimals (3.1 for 3.00): no answer given away
        "{value} is too {side}, but close: recompute with more digits, then round to two "
        "decimals at the end."
    )
    near = isinstance(answer, numbers.Real) and abs(float(answer) - exact) <= 0.15
    return check_number(
        "initial_loss",
        answer,
        exact,
        places=2,
        mistakes=mistakes,
        show=4,
        fallback=close if near else None,
    )

r"""Chapter 12's checker for the loss of a batch of next words (cross-entropy).

Split from :mod:`.decoder`, which re-exports it, to keep each module short.
"""

from __future__ import annotations

import numpy as np

from ..core import softmax
from ..decoder import cross_entropy
from .base import (
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    Todo,
    call,
    difference,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)

# --- Exercise: cross-entropy of a batch of next words -----------------------------------------


def check_cross_entropy(fn) -> CheckResult:
    r"""Check ``fn(logits, Y)`` returns the mean of :math:`-\log p_{target}` (``Y`` one-hot)."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(13)
        for m, vocab, size in [(4, 6, 2.0), (3, 5, 1.0), (5, 7, 3.0)]:
            logits = np.round(rng.normal(scale=size, size=(m, vocab)), 2)  # shown exactly
            targets = rng.integers(0, vocab, m)
            case = f"{m} positions, a vocabulary of {vocab}"
            out = _scalar(cases, case, logits, targets)
            known_mistakes(out, *_ce_mistakes(logits, targets))
            want = cross_entropy(logits, targets)
            if not np.isclose(out, want):  # as many digits as tell them apart; the inputs
                raise Fail(
                    f"{difference(np.asarray(out, float), np.asarray(want))} on "
                    f"logits = np.array({logits.tolist()}), Y = np.eye({vocab})"
                    f"[{targets.tolist()}]."
                )
        big = np.array([[1000.0, 0.0, -1000.0], [0.0, 999.0, 1000.0]])
        case = "logits as large as 1000"
        out = _scalar(cases, case, big, np.array([0, 1]))
        if not np.isfinite(out):
            raise Fail(f"got {out} for logits as large as 1000: " + _nan_hint(fn))
        same(out, cross_entropy(big, np.array([0, 1])), case)
        far = np.array([[1000.0, 0.0, -1000.0], [0.0, 1.0, 2.0]])  # target 2: 2000 below
        case = "a target whose logit is 2000 below the top"
        out, want = _scalar(cases, case, far, np.array([2, 2])), cross_entropy(far, [2, 2])
        if not np.isfinite(out) or out < want - 1:
            _row_max_check(cases.fn)
        if np.isinf(out):
            raise Fail(
                f"got {float(out)} where the loss is {want:.4g} (on {case}): the target's "
                "probability underflows to 0, and -log(0) is infinite. Compute log-softmax "
                "directly, z - max - log(sum(exp(z - max))), and pick the target's entry."
            )
        if not np.isfinite(out) or out < want - 1:
            raise Fail(
                f"got {float(out):.4g} where the loss is {want:.4g} (on {case}): the target's "
                "probability underflows to 0, so log(p) is -inf, and adding a small eps or "
                "clipping p caps the loss at -log(eps). Compute log-softmax directly: "
                "z - max - log(sum(exp(z - max)))."
            )
        same(out, want, case)

    return verdict("cross_entropy", fn, run)


def _nan_hint(fn) -> str:
    """Tell an overflow (no max shift) from an underflow (log of a probability that is 0)."""
    # Logits near 1000 that lie close together: after the max shift nothing underflows, so a
    # function that subtracts the max is finite here, and one that does not still overflows.
    close = np.array([[1000.0, 999.0, 998.0], [998.0, 1000.0, 999.0]])
    try:
        out = call(fn, "logits near 1000, close together", close, np.eye(3)[[0, 2]])
        shifted = out.shape == () and bool(np.isfinite(out))
    except (Fail, Todo):
        shifted = False
    if shifted:
        return (
            "a probability underflowed to 0, and Y * log(0) = 0 * (-inf) = nan. Compute the "
            "log-probabilities directly, z - max - log(sum(exp(z - max))), or pick out the "
            "target's log-probability by its index."
        )
    return (
        "exp(1000) overflows. Subtract each row's maximum first, or compute log-softmax as "
        "z - max - log(sum(exp(z - max)))."
    )


def _row_max_check(fn) -> None:
    """Fail with a hint if ``fn`` subtracts one maximum of the whole array, not each row's."""
    # Two rows whose maxima are 1000 apart, each target its row's top word: with every row
    # shifted by its own maximum nothing underflows; with one shared maximum the lower row
    # underflows to exp(-1000) = 0 throughout, and its log-sum-exp is log(0).
    apart = np.array([[0.0, 1.0, 2.0], [1000.0, 1001.0, 1002.0]])
    want = cross_entropy(apart, [2, 2])
    try:
        out = call(fn, "rows whose maxima are 1000 apart", apart, np.eye(3)[[2, 2]])
        wrong = out.shape == () and not np.isclose(out, want)
    except (Fail, Todo):
        wrong = True
    if wrong:
        raise Fail(
            "a row whose logits all lie far below the largest logit of the whole array "
            "comes out wrong: you subtracted one maximum for the whole array. Subtract each "
            "row's own maximum, logits.max(axis=-1, keepdims=True)."
        )


def _scalar(cases: Cases, case: str, logits, targets) -> np.ndarray:
    Y = np.eye(logits.shape[-1])[targets]  # (m, vocab): one 1 per row, at the next word
    try:
        out = cases.run(case, logits, Y)
    except Fail as fail:  # e.g. log_p[np.arange(m), Y]: Y taken for the target ids
        if "raised IndexError" not in str(fail):
            raise
        raise Fail(
            f"{str(fail).replace(BROADCAST_HINT, '')} Y is one-hot, shape (m, vocab), not "
            "the target ids: pick the right word's log-probability with (Y * log_p).sum(-1)."
        ) from None
    if out.shape == targets.shape:
        raise Fail(
            f"returned one loss per position, shape {out.shape} (on {case}): the loss of the "
            "batch is their mean, one number."
        )
    if out.shape == logits.shape:
        raise Fail(
            f"returned shape {out.shape}, one number per word (on {case}): keep only the "
            "target's -log p in each row (Y picks it out), then average over the rows."
        )
    expect_shape(out, (), case, " The loss is one number: the mean over the positions.")
    return out


def _shifted_lse(logits) -> np.ndarray:
    """Each row's log(sum(exp(z - max))), without the max added back."""
    z = logits - logits.max(axis=-1, keepdims=True)
    return np.log(np.exp(z).sum(axis=-1))


def _ce_mistakes(logits, targets) -> list[tuple]:
    rows = np.arange(len(targets))
    p = softmax(logits)
    likeliest = -np.log(p.max(axis=-1)).mean()  # the top word's -log p, not the target's
    right = -np.log(p[rows, targets]).mean()
    top = [] if np.isclose(likeliest, right) else [(likeliest, _LIKELIEST)]
    return [
        *top,
        (
            np.log(p[rows, targets]).mean(),
            "the sign is flipped: the loss is -log p, a positive number.",
        ),
        (
            -np.log(p[rows, targets]).sum(),
            "you summed over the positions; take the mean, so the loss does not grow with "
            "the batch.",
        ),
        (
            -logits[rows, targets].mean(),
            "you used the raw logit of the target; turn the logits into probabilities with "
            "softmax first (or subtract log(sum(exp(logits)))).",
        ),
        (
            -(logits[rows, targets] - np.log(np.exp(logits).sum())).mean(),
            "your softmax divided by the sum over the whole array, so each row's "
            "probabilities add up to less than 1: sum each row alone, axis=-1, "
            "keepdims=True.",
        ),
        (
            -np.log(softmax(logits, axis=0)[rows, targets]).mean(),
            "softmax ran down the columns (axis=0): each position's row is its own "
            "distribution over the vocabulary, so normalise along the last axis.",
        ),
        (
            -(logits[rows, targets] - _shifted_lse(logits)).mean(),
            "you took the right word's raw logit but the log-sum-exp of the shifted row, "
            "so the row's maximum is missing: log p = z_right - max - "
            "log(sum(exp(z - max))).",
        ),
        (
            -np.log2(p[rows, targets]).mean(),
            "you used log base 2 (bits); cross-entropy here uses np.log (nats).",
        ),
        (-np.log(p).mean(), _EVERY_WORD),
        (-np.log(p).sum(axis=-1).mean(), _EVERY_WORD),
        (
            -np.log(p[rows, targets]).mean() / logits.shape[-1],
            "you averaged Y * log p over every entry, the vocabulary too, so the loss is "
            "vocab times too small: sum each row (only the right word's entry is not 0), "
            "then average over the positions.",
        ),
        (
            -p[rows, targets].mean(),
            "you returned -p, a negative number, but a loss is positive: take the log, "
            "the mean of -log p.",
        ),
        (
            (1 - p[rows, targets]).mean(),
            "you averaged 1 - p; the loss is the mean of -log p.",
        ),
    ]


_EVERY_WORD = (
    "you averaged -log p over every word of the vocabulary, not just the right one: "
    "multiply log p by Y (or index it by the target) to keep the word that came next."
)
_LIKELIEST = (
    "you took -log p of the likeliest word instead of the target: Y marks the word that "
    "really came next, so pick its log-probability, (Y * log_p).sum(axis=-1)."
)

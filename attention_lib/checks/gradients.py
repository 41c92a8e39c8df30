r"""Chapter 10 checker: a gradient by finite differences, written by the learner.

The learner nudges one entry of ``Q`` at a time and measures how the loss
:math:`L(Q) = \sum O \odot dO` moves. The usual slips each get their own hint: a
one-sided difference, the wrong divisor, an entry not put back, all entries nudged at
once or across the batch, an answer blind to ``Q``, a step of their own, a loss of their own
that forgets the scale :math:`1/\sqrt{d_k}` or takes the mean instead of the sum.
Calling ``attention_backward``, which the exercise rules out, is named as such, and so
is an exact gradient written by hand.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..backward import attention_backward
from ..core import scaled_dot_product_attention
from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned
    ATOL,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    unseen_cases,
    verdict,
)
from .names import calls_library


def _loss(Q, K, V, dOut, scale=None) -> float:
    """L(Q) = sum(O * dOut): its gradient at the output is exactly dOut."""
    out, _ = scaled_dot_product_attention(Q, K, V, scale=scale)
    return float(np.sum(out * dOut))


def differences(Q, K, V, dOut, eps: float, *, way: str = "central", back: bool = True, scale=None):
    """dL/dQ entry by entry: central differences, or one of the usual slips.

    ``way`` is "central", "forward" (L(x + eps) - L(x)) / eps or "backward";
    ``back=False`` leaves each entry at x - eps instead of putting it back;
    ``scale=1.0`` is a loss whose scores forgot to divide by sqrt(d_k).
    """
    Q = np.array(Q, dtype=float)  # a copy, nudged in place
    grad = np.empty_like(Q)
    for i in np.ndindex(Q.shape):
        centre = _loss(Q, K, V, dOut, scale)
        original = Q[i]
        Q[i] = original + eps
        above = _loss(Q, K, V, dOut, scale)
        Q[i] = original - eps
        below = _loss(Q, K, V, dOut, scale)
        if back:
            Q[i] = original
        grad[i] = {
            "central": (above - below) / (2 * eps),
            "forward": (above - centre) / eps,
            "backward": (centre - below) / eps,
        }[way]
    return grad


def _cases() -> list[tuple]:
    """The checker's three fixed cases: (description, (Q, K, V, dOut, eps))."""
    rng = np.random.default_rng(12)
    Q, K, V = rng.normal(size=(2, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2))
    first = ("Q (2, 4), K (3, 4), V (3, 2), eps = 1e-3", (Q, K, V, rng.normal(size=(2, 2)), 1e-3))
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    coarse = (
        "a coarse step, eps = 0.1, with Q (3, 2), K (4, 2), V (4, 3)",
        (Q, K, V, rng.normal(size=(3, 3)), 0.1),
    )
    Q, K, V = (rng.normal(size=s) for s in ((2, 2, 3), (2, 3, 3), (2, 3, 2)))
    batch = (
        "a batch: Q (2, 2, 3), K (2, 3, 3), V (2, 3, 2), eps = 1e-3",
        (Q, K, V, rng.normal(size=(2, 2, 2)), 1e-3),
    )
    return [first, coarse, batch]


@cache
def _coarse_errors() -> tuple[float, float]:
    """Largest gaps to the exact dQ of a one-sided and a central difference at eps = 0.1."""
    Q, K, V, dOut, eps = _cases()[1][1]
    exact = attention_backward(Q, K, V, dOut)[0]
    return tuple(
        float(np.abs(differences(Q, K, V, dOut, eps, way=way) - exact).max())
        for way in ("forward", "central")
    )


def _mistakes(Q, K, V, dOut, eps: float) -> list[tuple]:
    """The usual wrong finite differences for these inputs, each with its hint."""
    right = differences(Q, K, V, dOut, eps)
    together = (_loss(Q + eps, K, V, dOut) - _loss(Q - eps, K, V, dOut)) / (2 * eps)
    one, central = _coarse_errors()
    one_sided = (
        "a one-sided difference: its error shrinks only like eps, a central one's like "
        f"eps². At the coarse step eps = 0.1, yours is off by up to {one:.2f} and a central "
        f"one by {central:.3f}. Use both sides: (L(x + eps) - L(x - eps)) / (2 * eps)."
    )
    forward = differences(Q, K, V, dOut, eps, way="forward")
    return [
        (
            2 * right,
            "your numbers are twice the gradient: x + eps and x - eps are 2 eps apart, so "
            "divide their difference by 2 * eps, not by eps.",
        ),
        (
            right / 2,
            "your numbers are half the gradient: divide the difference of L(x + eps) and "
            "L(x - eps) by 2 * eps, once.",
        ),
        (
            right / dOut.size,
            f"your numbers are {dOut.size} times too small, one for each entry of dOut: "
            "your loss is the mean of O * dOut. The loss is the sum, np.sum(out * dOut).",
        ),
        (-right, "the sign is flipped: (L(x + eps) - L(x - eps)) / (2 * eps)."),
        (forward, f"you computed (L(x + eps) - L(x)) / eps, {one_sided}"),
        (
            differences(Q, K, V, dOut, eps, way="backward"),
            f"you computed (L(x) - L(x - eps)) / eps, {one_sided}",
        ),
        (
            forward / 2,
            "you compared L(x + eps) with L(x), not with L(x - eps): use both sides, "
            "(L(x + eps) - L(x - eps)) / (2 * eps).",
        ),
        (
            differences(Q, K, V, dOut, eps, back=False),
            "you did not put each entry back: the later entries were nudged from a Q that "
            "had already moved. Save the entry first and write it back after L(x - eps).",
        ),
        (
            np.full_like(right, together),
            "every entry is the same number: you nudged all of Q at once. Nudge one entry "
            "at a time and leave the others as they are.",
        ),
        (
            differences(Q, K, V, np.ones_like(dOut), eps),
            "your loss ignores dOut: it is L = sum(O * dOut), not sum(O).",
        ),
        (
            differences(Q, K, V, dOut, eps, scale=1.0),
            "your loss leaves out the scale: the scores are Q Kᵀ / sqrt(d_k), not Q Kᵀ. "
            "Divide by np.sqrt(K.shape[-1]), or let al.scaled_dot_product_attention do it.",
        ),
    ]


def _same_again(fn, out: np.ndarray, q: float = 1.0, e: float = 1.0) -> bool:
    """Does ``fn`` give exactly ``out`` again on the first case, Q times q, eps times e?"""
    Q, *arrays, eps = _cases()[0][1]
    try:
        again = fn(*(np.array(a, dtype=float) for a in (q * Q, *arrays)), e * eps)
        return np.array_equal(np.asarray(again, dtype=float), out)
    except Exception:  # the first run already showed it works on these inputs
        return False


def _run(cases: Cases, case: str, *args) -> np.ndarray:
    """``cases.run``, with a hint for a Q left changed that fits this exercise."""
    try:
        return cases.run(case, *args)
    except Fail as fail:
        if "changed its input array in place" not in str(fail):
            raise
        raise Fail(
            f"Q is not as it was after your function ran (on {case}): after nudging an "
            "entry, write its saved original value back (adding eps back can leave a "
            "rounding error), or nudge a copy of Q."
        ) from None


def check_numerical_gradient(fn) -> CheckResult:
    r"""Check ``fn(Q, K, V, dOut, eps)`` returns dL/dQ by central differences.

    :math:`L(Q) = \sum O \odot dO`, with :math:`O` the attention output without a mask;
    entry :math:`i` is :math:`(L(Q + \varepsilon e_i) - L(Q - \varepsilon e_i)) / 2\varepsilon`.
    """

    def run(cases: Cases) -> None:
        (case, inputs), (coarse, coarse_inputs), (batch, batch_inputs) = _cases()
        if calls_library(cases.fn, "numerical_gradient"):
            raise Fail(
                "your function calls the library's numerical_gradient, which the "
                "exercise rules out: nudge each entry of Q yourself."
            )
        out = _run(cases, case, *inputs)
        expect_shape(out, inputs[0].shape, case, " One number per entry of Q: the shape of Q.")
        last = _LAST.get()
        if last and last[0] is out and last[1] in "iu":
            raise Fail(
                f"your array has an integer dtype (on {case}): each difference quotient was "
                "cut to a whole number when stored. Make it with np.zeros_like(Q), in floats."
            )
        if not out.any():  # e.g. a copy of Q nudged, the original evaluated
            raise Fail(
                f"your gradient is all zeros (on {case}): the loss never changed; "
                "do you evaluate the nudged Q?"
            )
        eps = inputs[-1]
        if out.any() and np.allclose(out / eps**2, differences(*inputs), atol=ATOL):
            raise Fail(
                "your numbers are eps² times the gradient: (a - b) / 2 * eps divides by 2, "
                "then multiplies by eps. Divide by (2 * eps), in brackets."
            )
        known_mistakes(out, *_mistakes(*inputs))
        wrong = not np.allclose(out, differences(*inputs), atol=ATOL)
        if wrong and _same_again(cases.fn, out, q=2.0):  # e.g. a hard-coded array
            raise Fail(
                f"your numbers stay the same when Q changes (on {case}): they do not "
                "depend on Q. Measure each entry from the loss at Q + eps and Q - eps."
            )
        if wrong and _same_again(cases.fn, out, e=10.0):
            raise Fail(
                f"your numbers stay the same when eps changes (on {case}): your function "
                "uses a step of its own. Use the eps you are given."
            )
        same(out, differences(*inputs), case)

        Q, K, V, dOut, _ = coarse_inputs
        out = _run(cases, coarse, *coarse_inputs)
        expect_shape(out, Q.shape, coarse, " One number per entry of Q: the shape of Q.")
        known_mistakes(out, *_mistakes(*coarse_inputs))
        exact = attention_backward(Q, K, V, dOut)[0]
        if calls_library(cases.fn, "attention_backward") and np.allclose(out, exact, atol=ATOL):
            raise Fail(
                "at eps = 0.1 your numbers are the exact gradient: your function calls "
                "attention_backward, which the exercise rules out. Nudge Q yourself and "
                "measure how the loss moves."
            )
        if np.abs(out - exact).max() < 1e-13:  # no difference quotient is this close
            raise Fail(
                "at eps = 0.1 your numbers are the exact gradient, to the last digit: "
                "the exercise asks you to measure it by nudging each entry of Q."
            )
        if np.allclose(out, exact, atol=ATOL):
            raise Fail(
                "at eps = 0.1 your numbers are the exact gradient, not a difference with "
                "that step: use the eps you were given, not a step of your own."
            )
        same(out, differences(*coarse_inputs), coarse)

        try:
            out = _run(cases, batch, *batch_inputs)
        except Fail as fail:
            if "your function raised" not in str(fail):
                raise
            raise Fail(
                f"{fail} To visit every entry of Q, whatever its shape, loop over "
                "np.ndindex(Q.shape)."
            ) from None
        Q = batch_inputs[0]
        expect_shape(out, Q.shape, batch, " Visit every entry: np.ndindex(Q.shape).")
        right = differences(*batch_inputs)
        known_mistakes(
            out,
            (
                np.broadcast_to(right.sum(axis=0), Q.shape),
                "you nudged Q[..., i, j], the same entry of every sentence of the batch at "
                "once, so each number is the sum of the batch's gradients. Nudge one entry "
                "of one sentence at a time: loop over np.ndindex(Q.shape).",
            ),
            (
                np.broadcast_to(right.sum(axis=-1, keepdims=True), Q.shape),
                "each number is the sum over a row of Q: with a batch, Q[i, j] is a whole "
                f"row of {Q.shape[-1]} entries, so two loops nudge a row at once. Visit "
                "every single entry, whatever the shape: for i in np.ndindex(Q.shape).",
            ),
            *_mistakes(*batch_inputs),
        )
        if np.allclose(out, out[..., :1]) and not np.allclose(right, right[..., :1]):
            raise Fail(
                f"each row of your answer is one number repeated (on {batch}): with a "
                f"batch, Q[i, j] is a whole row of {Q.shape[-1]} entries, so a loop over "
                "Q.shape[0] and Q.shape[1] nudges a row at once. Visit every entry: "
                "for i in np.ndindex(Q.shape)."
            )
        same(out, right, batch)

    return verdict("numerical_gradient", fn, run)


@unseen_cases("numerical_gradient")
def _unseen(rng):
    found = []
    for batch, eps in (((), 1e-3), ((int(rng.integers(2, 4)),), float(rng.choice([0.05, 0.1])))):
        n_q, n_k, d_k, d_v = (int(rng.integers(2, 6)) for _ in range(4))
        Q, K = rng.normal(size=(*batch, n_q, d_k)), rng.normal(size=(*batch, n_k, d_k))
        V, dOut = rng.normal(size=(*batch, n_k, d_v)), rng.normal(size=(*batch, n_q, d_v))
        inputs = (Q, K, V, dOut, eps)
        found.append((f"Q {Q.shape}, K {K.shape}, eps = {eps:g}", inputs, differences(*inputs)))
    return found

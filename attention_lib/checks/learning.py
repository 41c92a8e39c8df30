r"""Chapter 10 checkers: softmax backward; re-exports the first loss and ``check_grad_V``."""

from __future__ import annotations

import numpy as np

from ..backward import softmax_backward, softmax_jacobian
from ..core import softmax
from .base import (
    ATOL,
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    call,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .grad_v import check_grad_V as check_grad_V
from .initial_loss import check_initial_loss as check_initial_loss
from .names import calls_library, reaches
from .softmax_hints import _AXES, _AXIS_1, _ONE_D, _ONE_ROW, _RULED_OUT

_LIBRARY = {"softmax_backward": softmax_backward, "softmax_jacobian": softmax_jacobian}


def check_softmax_backward(fn) -> CheckResult:
    r"""Check ``fn(p, dp)`` returns :math:`p \odot (dp - \sum_i p_i dp_i)`, row by row."""

    def run(cases: Cases) -> None:
        p = softmax(np.array([1.0, 2.0, 0.5]))
        dp = np.array([0.3, -1.0, 0.5])
        case = "one row p = softmax([1, 2, 0.5])"
        try:
            out = cases.run(case, p, dp)
        except Fail as fail:  # a crash on one row: axis=1, or a loop over rows (p[i] a number)
            axis = next((h for a, h in _AXES.items() if f"axis {a} is out" in str(fail)), "")
            hint = axis or (_ONE_D if _right_on(cases.fn, p[None], dp[None]) else "")
            if not hint:
                raise
            raise Fail(f"{str(fail).replace(BROADCAST_HINT, '')} {hint}") from None
        for name, why in _RULED_OUT.items():  # called by name, or reached at run time
            if calls_library(cases.fn, name) or reaches(cases.fn, [_LIBRARY[name]], p, dp):
                raise Fail(f"your function calls {name}, which the exercise rules out: {why}")
        if out.shape == (3, 3):
            raise Fail(
                "returned a 3 x 3 matrix: that is the Jacobian itself. Apply it to dp, "
                "which gives one number per score, and multiply J dp out."
            )
        expect_shape(out, p.shape, case, " One gradient per logit: the shape of p.")
        wrong = not np.allclose(out, softmax_backward(p, dp), atol=ATOL)
        if wrong and _right_on(cases.fn, p[None], dp[None]):  # e.g. a loop over p[i]
            raise Fail(f"wrong on {case}. {_ONE_D}")
        known_mistakes(out, *_row_mistakes(p, dp))
        same(out, softmax_backward(p, dp), case)

        rng = np.random.default_rng(10)
        p2, dp2 = softmax(rng.normal(size=(2, 3)) * 2), rng.normal(size=(2, 3))
        case = "2 rows of 3 weights"
        out = _run_rows(cases, case, p2, dp2)
        expect_shape(out, p2.shape, case, " One gradient per weight: the shape of p.")
        known_mistakes(
            out,
            (
                p2 * (dp2 - (dp2 * p2).sum(axis=0, keepdims=True)),
                "you summed p * dp down the columns (axis=0), as if the matrix were "
                "transposed: every row is its own softmax, so sum along the last axis.",
            ),
            (
                p2 * (dp2 - (dp2 * p2).sum()),
                "you used one sum for the whole array: each row is its own softmax and "
                "needs its own sum, along the last axis.",
            ),
            *_row_mistakes(p2, dp2),
        )
        _one_row_only(cases.fn, out, p2, dp2, case)
        same(out, softmax_backward(p2, dp2), case)

        p3, dp3 = softmax(rng.normal(size=(3, 3))), rng.normal(size=(3, 3))
        case = "3 rows of 3 weights"
        out = _run_rows(cases, case, p3, dp3)
        expect_shape(out, p3.shape, case)
        known_mistakes(
            out,
            (
                p3 * (dp3 - (dp3 * p3).sum(axis=-1)),
                "the row sums are subtracted from the wrong entries: without "
                "keepdims=True a (3,) vector lines up with the columns, not the rows.",
            ),
        )
        _one_row_only(cases.fn, out, p3, dp3, case)
        same(out, softmax_backward(p3, dp3), case)

        p4, dp4 = softmax(rng.normal(size=(2, 2, 4))), rng.normal(size=(2, 2, 4))
        case = "a batch of shape (2, 2, 4)"
        out = _run_rows(cases, case, p4, dp4)
        expect_shape(out, p4.shape, case, " Work along the last axis only.")
        known_mistakes(out, (p4 * (dp4 - (dp4 * p4).sum(axis=1, keepdims=True)), _AXIS_1))
        _one_row_only(cases.fn, out, p4, dp4, case)
        same(out, softmax_backward(p4, dp4), case)

    return verdict("softmax_backward", fn, run)


def _right_on(fn, p: np.ndarray, dp: np.ndarray) -> bool:
    """Does ``fn`` give the right answer on ``p`` (a batch), without crashing?"""
    try:
        return bool(np.allclose(call(fn, "a batch", p, dp), softmax_backward(p, dp), atol=ATOL))
    except Exception:  # Fail, Todo or a bug of the learner's
        return False


def _right_row_by_row(fn, p: np.ndarray, dp: np.ndarray) -> bool:
    """Does ``fn`` give the right answer when it is called on one row at a time?"""
    try:
        for i in np.ndindex(p.shape[:-1]):
            row = call(fn, "one row", p[i], dp[i])
            if not np.allclose(row, softmax_backward(p[i], dp[i]), atol=ATOL):
                return False
    except Exception:  # Fail, Todo or a bug of the learner's: not right row by row
        return False
    return True


def _run_rows(cases: Cases, case: str, p: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """``cases.run`` on several rows; a crash of a one-row answer gets its own hint."""
    try:
        return cases.run(case, p, dp)
    except Fail as fail:
        message = str(fail)
        # (2, 3) against (2,) is a row sum without keepdims=True: the generic hint fits.
        shapes = [str(s).replace(" ", "") for s in (p.shape, p.shape[:-1])]
        keepdims = all(s in message.replace(" ", "") for s in shapes)
        if "your function raised" not in message or keepdims:
            raise
        if not _right_row_by_row(cases.fn, p, dp):
            raise
        message = message.replace(BROADCAST_HINT, "")
        raise Fail(f"{message} {_ONE_ROW}") from None


def _one_row_only(fn, out: np.ndarray, p: np.ndarray, dp: np.ndarray, case: str) -> None:
    """Fail with the one-row hint if ``out`` is wrong but each row alone comes out right."""
    right = np.allclose(out, softmax_backward(p, dp), atol=ATOL)
    if not right and _right_row_by_row(fn, p, dp):
        raise Fail(f"your function gives wrong values on {case}. {_ONE_ROW}")


def _row_mistakes(p: np.ndarray, dp: np.ndarray) -> list[tuple]:
    """The usual wrong softmax backward passes, each with its hint."""
    weighted = np.sum(p * dp, axis=-1, keepdims=True)  # (..., 1)
    return [
        (
            p * dp,
            "you returned p * dp, the derivative of exp alone. Each weight also depends on "
            "every other score through the sum below the line: J has off-diagonal "
            "entries -p_i p_j, and they count too.",
        ),
        (
            p * (1 - p) * dp,
            "you used only the diagonal of the Jacobian, p_i (1 - p_i). The off-diagonal "
            "entries -p_i p_j count too: write out row j of J dp.",
        ),
        (
            p * (dp - dp.sum(axis=-1, keepdims=True)),
            "you subtracted the plain sum of dp; weight it by p: sum(p * dp).",
        ),
        (
            p * (dp - np.mean(p * dp, axis=-1, keepdims=True)),
            "you took the mean of p * dp, not its sum: sum(p * dp) is already an average of "
            "dp, weighted by p (p sums to 1).",
        ),
        (
            p * (dp - dp.mean(axis=-1, keepdims=True)),
            "you subtracted the plain mean of dp; softmax averages with its own weights: "
            "sum(p * dp).",
        ),
        (
            p * dp - weighted,
            "the subtracted sum lacks its factor p_j: every entry of row j of J dp carries "
            "p_j, the sum too: p * (dp - sum(p * dp)).",
        ),
        (
            dp - weighted,
            "you forgot to multiply by p: every entry of row j of J has the factor p_j.",
        ),
        (
            p * (dp + weighted),
            "the weighted sum has the wrong sign: raising one score lowers every other "
            "weight, so it is subtracted: p * (dp - sum(p * dp)).",
        ),
        (
            -p * (dp - weighted),
            "the sign is flipped: J = diag(p) - p pᵀ, so raising a score raises its own weight.",
        ),
        (dp, "you returned dp unchanged: softmax is not the identity, apply its Jacobian."),
        (  # review 10_ss: softmax applied to p, which is already the softmax output
            softmax(p) * (dp - np.sum(softmax(p) * dp, axis=-1, keepdims=True)),
            "you applied softmax to p again: p is already the softmax output (a row of A). "
            "Use p as it is: p * (dp - sum(p * dp)).",
        ),
    ]

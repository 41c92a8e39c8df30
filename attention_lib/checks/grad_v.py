r"""Chapter 10 checker: the gradient of the values, :math:`dV = A^\top dO`."""

from __future__ import annotations

import itertools

import numpy as np

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
from .score_gradients import same_or_factor

_LEADING_AXES = (
    " The exercise allows any number of leading axes: A.T reverses them all and np.transpose("
    "A, (0, 2, 1)) names exactly three. Swap only the last two: np.swapaxes(A, -1, -2)."
)


def _run_product(cases: Cases, case: str, A: np.ndarray, dOut: np.ndarray) -> np.ndarray:
    """``cases.run``; a crash gets the hint about transposing the last two axes only."""
    try:
        return cases.run(case, A, dOut)
    except Fail as fail:
        if "your function raised" not in str(fail) or A.ndim == 2 and "axes" not in str(fail):
            raise
        # The generic keepdims hint of base.call does not apply to a matrix product.
        message = str(fail).replace(BROADCAST_HINT, "")
        raise Fail(message + _LEADING_AXES) from None


def _summed_over_batch(out: np.ndarray, right: np.ndarray, case: str) -> None:
    """Fail if ``out`` is the right ``dV`` added up over some of its batch axes."""
    for n in range(1, right.ndim - 1):
        for axes in itertools.combinations(range(right.ndim - 2), n):
            total = right.sum(axis=axes, keepdims=True)
            for summed in (total, total.squeeze(axis=axes), np.broadcast_to(total, right.shape)):
                if out.shape == summed.shape and np.allclose(out, summed, atol=ATOL):
                    raise Fail(
                        f"you added up the sentences' gradients (on {case}). Keep one "
                        "gradient per sentence: don't sum over the batch (dW adds them up "
                        "later)."
                    )


_NO_SCALE = (
    "The scale 1/sqrt(d_k) acts on the scores, before softmax, and A already carries it: "
    "O = A V has no scale, nor has dV."
)


def _which_root(fn) -> str:
    """The hint for dV divided by sqrt(3) on the square case, where every size is 3.

    A probe with n_q = 5, n_k = 4 and d_v = 9 tells the sizes apart (review 10_ss: the
    number of keys, A.shape[-1], taken for d_k was named sqrt(d_v)).
    """
    rng = np.random.default_rng(12)
    A, dOut = softmax(rng.normal(size=(5, 4))), rng.normal(size=(5, 9))
    right = A.T @ dOut  # (4, 9)
    sizes = {
        "sqrt(n_k), the square root of A.shape[-1], the number of keys (not d_k)": 2.0,
        "sqrt(d_v), the square root of dOut.shape[-1]": 3.0,
        "sqrt(n_q), the square root of the number of queries": np.sqrt(5),
    }
    try:
        out = call(fn, "a probe: A of shape (5, 4) and dOut of shape (5, 9)", A, dOut)
    except Exception:  # Fail, Todo or a bug of the learner's: no probe result
        out = None
    for name, root in sizes.items():
        if out is not None and out.shape == right.shape and np.allclose(out, right / root):
            return f"you divided by {name}. {_NO_SCALE}"
    return f"you divided by sqrt(3), the square root of a size (all are 3 here). {_NO_SCALE}"


def check_grad_V(fn) -> CheckResult:
    r"""Check ``fn(A, dOut)`` returns :math:`dV = A^\top dO`, with batch dimensions."""

    returned = []  # the type of the learner's last return value

    def recorded(A, dOut):
        out = fn(A, dOut)
        returned[:] = [type(out)]
        return out

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(11)
        A, dOut = softmax(rng.normal(size=(3, 3))), rng.normal(size=(3, 3))
        case = "A of shape (3, 3) and dOut of shape (3, 3)"
        out = _run_product(cases, case, A, dOut)
        if returned == [tuple] and out.shape != (3, 3):
            raise Fail(
                f"you returned a tuple (on {case}): return dV itself, one array, not "
                "(dV,). Look for a comma after return."
            )
        expect_shape(out, (3, 3), case, " dV has the shape of V: one row per key, (n_k, d_v).")
        if np.allclose(out, A.T @ dOut / np.sqrt(3), atol=ATOL):  # which size's root?
            raise Fail(_which_root(recorded))
        known_mistakes(
            out,
            (
                A @ dOut,
                "you computed A @ dOut. Row j of dV belongs to key j, which was used by "
                "every query in column j of A: which factor needs a transpose?",
            ),
            (
                dOut @ A.T,
                "you computed dOut @ A.T: the order is reversed. A is left of V in O = A V.",
            ),
            ((A.T @ dOut).T, "you returned the transpose of dV: one row per key, (n_k, d_v)."),
            (
                dOut @ A,
                "you computed dOut @ A. It has the shape of V here only because every size "
                "is 3: with n_k keys and d_v values, which product of A and dOut has shape "
                "(n_k, d_v)?",
            ),
            (A * dOut, "you multiplied A and dOut entry by entry: dV is a matrix product."),
            (A.T @ dOut / 3, "you divided by n_q = 3: add the queries' gradients, do not average."),
            (-(A.T @ dOut), "the sign is flipped: dV has no minus. The step W - lr * dW adds it."),
            (
                dOut,
                "you returned dOut unchanged: dV has one row per key, and each key's row "
                "collects the gradients of the queries that used it, weighted by A.",
            ),
        )
        same_or_factor(out, A.T @ dOut, case, "dV = Aᵀ dO")

        A2, dOut2 = softmax(rng.normal(size=(2, 4))), rng.normal(size=(2, 3))
        case = "A of shape (2, 4) (2 queries, 4 keys) and dOut of shape (2, 3)"
        out = _run_product(cases, case, A2, dOut2)
        if out.shape == (3, 4):
            raise Fail(f"returned shape (3, 4), the transpose of dV (on {case}): (n_k, d_v).")
        expect_shape(out, (4, 3), case, " dV has the shape of V: one row per key, (n_k, d_v).")
        same_or_factor(out, A2.T @ dOut2, case, "dV = Aᵀ dO")

        A3, dOut3 = softmax(rng.normal(size=(2, 2, 5))), rng.normal(size=(2, 2, 3))
        case = "a batch: A of shape (2, 2, 5) and dOut of shape (2, 2, 3)"
        out = _run_product(cases, case, A3, dOut3)
        _summed_over_batch(out, np.swapaxes(A3, -1, -2) @ dOut3, case)
        expect_shape(out, (2, 5, 3), case, " Transpose only the last two axes of A.")
        same(out, np.swapaxes(A3, -1, -2) @ dOut3, case)

        # Two batch axes: np.transpose(A, (0, 2, 1)) passes the case above, not this one.
        A4, dOut4 = softmax(rng.normal(size=(2, 3, 2, 4))), rng.normal(size=(2, 3, 2, 3))
        case = "two batch axes: A of shape (2, 3, 2, 4) and dOut of shape (2, 3, 2, 3)"
        out = _run_product(cases, case, A4, dOut4)
        _summed_over_batch(out, np.swapaxes(A4, -1, -2) @ dOut4, case)
        expect_shape(out, (2, 3, 4, 3), case, _LEADING_AXES)
        same(out, np.swapaxes(A4, -1, -2) @ dOut4, case)

    return verdict("grad_V", recorded, run)

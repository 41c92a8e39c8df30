"""Chapter 5 checker: the entropy of a row of attention weights, in nats."""

from __future__ import annotations

import contextlib
import io

import numpy as np

from .base import ATOL, Cases, CheckResult, Fail, expect_shape, known_mistakes, same, verdict
from .softmax import _explain_errors
from .softmax_hints import _FLOAT16
from .softmax_slips import PERPLEXITY, clipped_before_log, ignores_p


def check_entropy(fn) -> CheckResult:
    """Check ``fn(weights)``: entropy in nats of each row along the last axis."""

    def run(cases: Cases) -> None:
        uniform = np.full(8, 1 / 8)
        case = "a uniform row over 8 keys"
        out = cases.run(case, uniform)
        hint = " Sum over the last axis so one row gives one number."
        if out.size == 1:  # keepdims=True, np.atleast_2d, or a list of one number
            hint = (
                " One row should give a plain number, not a list or array of one: "
                "reduce the row's own axis without keeping it (keepdims=True) or adding "
                "one (np.atleast_2d, a list), and return the result as it is."
            )
        if np.allclose(out, -uniform * np.log(uniform), atol=ATOL):  # no sum, or a row loop
            hint = " You returned -p log p per entry, not their sum: sum over axis=-1."
            if _sums_each_row(cases.fn, uniform):  # a loop over rows, right on a matrix
                hint = f"{hint} {_ROWS}"
        expect_shape(out, (), case, hint)
        known_mistakes(
            out,
            (
                -np.log(8),
                "got -2.079 for a uniform row: your sign is flipped: entropy is "
                "minus the sum of p log p, which is never negative.",
            ),
            (
                np.log2(8),
                "got 3.0 for a uniform row over 8 keys: that is log base 2 "
                "(bits). Use the natural log, np.log, for nats.",
            ),
            (
                np.log10(8),
                "got 0.903 for a uniform row over 8 keys: that is log base 10. "
                "Use the natural log, np.log, for nats.",
            ),
            (
                np.log(8) / 8,
                "got 0.26 = log(8) / 8 for a uniform row over 8 keys: you took the "
                "mean over the keys. Entropy is the sum of -p log p (np.sum, not np.mean).",
            ),
            (
                8 * np.log(8),
                "got 16.6 = 8 log 8 for a uniform row over 8 keys: you summed -log p "
                "without weighting each term by p. Sum -p log p instead.",
            ),
            (
                1.0,
                "got 1.0 for a uniform row over 8 keys: you divided by log n. The "
                "exercise asks for the entropy in nats, not as a fraction of its maximum.",
            ),
            PERPLEXITY,
        )
        gap = np.log(8) - float(np.squeeze(out))
        if abs(gap) > ATOL:  # wrong on the uniform row: a constant, or a slip in the sum
            ignores_p(cases.fn, out, uniform)
        if ATOL < gap < 0.05:  # log(p + eps) with a large eps
            raise Fail(
                f"got {float(np.squeeze(out)):.6f} for a uniform row over 8 keys, {gap:.1g} "
                f"below log 8 = {np.log(8):.6f}: an eps inside the log, log(p + eps), shifts "
                "every term. An eps of 1e-7 or less stays within this checker's tolerance; "
                "this one does not. Use a smaller eps, or the exact np.where(p > 0, p, 1.0)."
            )
        if gap and out == float(np.float16(np.log(8))):  # log 8 rounded to float16
            raise Fail(f"got {float(out):.4g} for a uniform row, log 8 in float16: {_FLOAT16}")
        same(out, np.log(8), case)

        one_hot = np.array([0.0, 0.0, 1.0, 0.0])
        case = "a one-hot row"
        out = cases.run(case, one_hot)
        if not np.all(np.isfinite(out)):
            raise Fail(
                "a one-hot row gave nan: 0 * log(0) is 0 * -inf. Never take log(0): "
                "take the log of np.where(p > 0, p, 1.0), since log(1) = 0 adds nothing."
            )
        try:
            same(out, 0.0, case)
        except Fail as fail:
            soft = np.exp(one_hot) / np.exp(one_hot).sum()  # softmax(p): no zeros to skip
            transformed = float(-np.sum(soft * np.log(soft)))
            if np.allclose(out, transformed, atol=ATOL):  # softmax(p), then the entropy
                raise Fail(
                    f"{fail} A one-hot row has entropy 0; yours is the entropy of softmax(p): "
                    "did you transform p before the sum? Use the weights p as they are."
                ) from None
            raise Fail(f"{fail} A one-hot row has entropy 0: is your answer using p?") from None

        for row in ([0.0, 0.5, 0.5], [1e-4, 1 - 1e-4]):
            case = f"the row {row}"
            out = cases.run(case, np.array(row))
            expected = -sum(p * np.log(p) for p in row if p > 0)
            if 0 in row and np.allclose(out, 0.0, atol=ATOL):
                raise Fail(
                    f"got 0 for the row {row}, not {expected:.4f}. If you replaced nan by "
                    "0 (np.nan_to_num, say), that hid the nan from its 0 * log(0). Take the "
                    "log of np.where(p > 0, p, 1.0) instead."
                )
            clipped_before_log(out, row)  # np.clip(p, 1e-3, 1) inside the log
            same(out, expected, case)

        rows = np.array([[0.7, 0.2, 0.1], [1 / 3, 1 / 3, 1 / 3]])
        case = "a 2 x 3 matrix of rows"
        out = cases.run(case, rows)
        expect_shape(out, (2,), case, " Reduce over the last axis only (axis=-1).")
        expected = -np.sum(rows * np.log(rows), axis=-1)
        same(out, expected, case)
        raw = _raw_output(cases, rows)  # right values: but is it an array? (as check_softmax)
        if isinstance(raw, list | tuple):
            kind = type(raw).__name__
            raise Fail(f"your function returned a {kind}: return a NumPy array (np.asarray).")

        batch = np.stack([rows, rows[::-1]])  # (2, 2, 3): two batches of two rows
        case = "a 2 x 2 x 3 array"
        out = cases.run(case, batch)
        hint = " Reduce over the last axis only (axis=-1)."
        if out.shape == (2,):  # a loop over rows met 2 x 3 blocks and summed each whole
            hint = f" Each 2 x 3 block gave one number.{hint} {_ROWS}"
        expect_shape(out, (2, 2), case, hint)
        same(out, np.stack([expected, expected[::-1]]), case)

    return verdict(
        "entropy",
        fn,
        _explain_errors(
            run,
            {
                "raised AxisError": _ENTROPY_AXIS,
                "truth value of an array": _ENTROPY_STACK,
                "not iterable (on a uniform row": _ENTROPY_ONE_ROW,  # for x in row, on a number
                "but 2 were indexed (on a uniform row": _ENTROPY_ONE_ROW,  # p[i, :]
                "tuple index out of range (on a uniform row": _ENTROPY_ONE_ROW,  # p.shape[1]
            },
        ),
    )


_ENTROPY_AXIS = (
    "A single row has only axis 0, so axis=1 does not exist: reduce over axis=-1, the "
    "last axis, which works for one row and for a stack of rows alike."
)
_ENTROPY_STACK = (
    "Your code handles one row, but in a stack of rows it met a whole row where it "
    "expected one number: my_entropy must also take 2-D and 3-D arrays. Work on the "
    "whole array with NumPy, no Python loop, and sum over axis=-1."
)


def _raw_output(cases: Cases, p: np.ndarray):
    """The learner's output on ``p`` again, untouched (None if it raises): a quiet probe."""
    with contextlib.suppress(Exception), np.errstate(all="ignore"):
        with contextlib.redirect_stdout(io.StringIO()):
            return cases.fn(p.copy())


def _sums_each_row(fn, row) -> bool:
    """Whether ``fn`` gives one number per row of a matrix: a loop over rows, not a lost sum."""
    try:  # a quiet probe: no warnings or prints of the learner's on the page
        with np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
            return np.shape(fn(np.stack([row, row]))) == (2,)
    except Exception:  # the learner's code may fail on a matrix: no loop to name then
        return False


_ROWS = (  # a Python loop over rows, written for a matrix
    "A loop over rows (for row in p) visits numbers in one row and matrices in a 3-D "
    "array: work on the whole array, no loop."
)
_ENTROPY_ONE_ROW = (
    "The first case is one row, p of shape (8,), and a loop over its rows (for row in p) "
    "meets numbers, not rows. my_entropy must take one row, a matrix or a 3-D array: work "
    "on the whole array with NumPy, no Python loop, and sum over axis=-1."
)

"""Chapter 5 checker helpers: a softmax divided by the whole array's total; entropy slips."""

from __future__ import annotations

import contextlib
import io

import numpy as np

from .base import ATOL, Fail, fmt

PERPLEXITY = (  # np.exp of the right entropy: the perplexity, 8 for a uniform row over 8 keys
    8.0,
    "got 8.0 for a uniform row over 8 keys: that is the perplexity exp(H), not the "
    "entropy H. Return minus the sum of p log p itself, without np.exp.",
)


def rows_not_one(out: np.ndarray, case: str) -> Fail:
    """The failure for a softmax whose rows miss 1: named if the whole array sums to 1."""
    rows = fmt(out.sum(axis=-1))
    if np.isclose(out.sum(), 1.0, atol=ATOL):  # e / e.sum(): one total for every row
        return Fail(
            f"rows of {case} sum to {rows}, not 1, but the whole array sums to 1: you "
            "divided by the sum of the whole array. Add axis=axis, keepdims=True to np.sum."
        )
    return Fail(
        f"rows of {case} sum to {rows}, not 1: normalise along the axis you were given, "
        "with keepdims=True."
    )


def clipped_before_log(out, row: list[float]) -> None:
    """Name np.clip(p, eps, 1) or np.maximum(p, eps) in the log: a small weight's term shrank."""
    if len(row) != 2 or not 0 < row[0] < 1e-3 or np.size(out) != 1:
        return  # only the two-weight row with a tiny first weight tells a clip apart
    small = -row[0] * np.log(row[0])  # the small weight's own term, -p log p
    expected = small - row[1] * np.log(row[1])
    got = float(np.squeeze(out))
    if expected - small < got < expected - ATOL:
        raise Fail(
            f"got {got:.5f} for the row {row}, not {expected:.5f}: the small weight's "
            "term -p log p shrank, as when p is clipped before the log (np.clip or "
            "np.maximum). Clip nothing: take the log of np.where(p > 0, p, 1.0)."
        )


def ignores_p(fn, out, row: np.ndarray) -> None:
    """Name an answer that is the same for any p (a hard-coded 2.035, say), before the eps hint."""
    try:  # a quiet probe on a one-hot row, whose entropy is 0
        with np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
            again = np.asarray(fn(np.eye(len(row))[0]), dtype=float)
    except Exception:  # the learner's code may fail there: the other checks speak then
        return
    if again.shape == np.shape(out) and np.allclose(again, out, atol=ATOL):
        raise Fail(
            f"got {float(np.squeeze(out)):.4g} for a uniform row over 8 keys and the same "
            "for a one-hot row: your answer does not change with p. Compute minus the sum "
            "of p log p from the p you are given."
        )

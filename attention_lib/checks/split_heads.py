"""Chapter 7 checker: split the model width into heads, ``fn(X, h)``."""

from __future__ import annotations

import contextlib
import io
import itertools

import numpy as np

from ..heads import split_heads
from .base import (
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .multi_head import _differ, _run_explained
from .names import calls_library

# --- Exercise: split the model width into heads --------------------------------------------


def check_split_heads(fn) -> CheckResult:
    """Check ``fn(X, h)``: ``(n, h * d_k) -> (h, n, d_k)``, like :func:`split_heads`."""

    banned = fn is split_heads or calls_library(fn, "split_heads")

    raw = {}  # what fn returned last, before the checker turns it into an array

    def recorded(*args):
        raw["out"] = fn(*args)
        return raw["out"]

    def run(cases: Cases) -> None:
        cases.fn = recorded
        if banned:
            raise Fail(
                "your function calls al.split_heads, which this exercise rules out: "
                "reshape X to (n, h, d_k) with NumPy, then move the head axis to the front."
            )
        # Every entry is different, so a head that holds the wrong numbers shows; the
        # quarters (0.25, 0.5, ...) show an answer that rounds or casts to int.
        for n, d_model, h in [(4, 6, 2), (3, 8, 4), (4, 6, 1), (2, 6, 6)]:
            X = np.arange(1.0, n * d_model + 1).reshape(n, d_model) / 4
            d_k = d_model // h
            case = f"X of shape ({n}, {d_model}) with h={h}"
            try:
                out = _run_explained(cases, case, X, h)
            except Fail as fail:
                hint = _past_end_hint(fn, h, d_model)
                message = str(fail).replace(BROADCAST_HINT, "") if hint else str(fail)
                raise Fail(f"{message} {hint or _rows_hint(fn, h)}".rstrip()) from None
            if isinstance(raw["out"], (list, tuple)):
                raise Fail(
                    f"your function returned a {type(raw['out']).__name__} of {len(raw['out'])} "
                    f"blocks (on {case}): return one array of shape (h, n, d_k). np.split "
                    "gives a list; np.stack turns it into one array, or reshape and swap axes."
                )
            _split_shape_mistakes(out, split_heads(X, h), case)
            expect_shape(out, (h, n, d_k), case, " It should be (h, n, d_k).")
            known_mistakes(
                out,
                *_differ(
                    split_heads(X, h),
                    (
                        X.reshape(h, n, d_k),
                        f"the shape is right but the heads mix tokens (on {case}): reshaping "
                        "straight to (h, n, d_k) fills out[0] with the numbers of the first "
                        "rows, whatever token they belong to. Reshape to (n, h, d_k) first, "
                        "then swap the first two axes.",
                    ),
                    (
                        X.T.reshape(h, n, d_k),
                        f"the shape is right but X was transposed first (on {case}): "
                        "X.T.reshape(h, n, d_k) reads X column by column, so each head mixes "
                        "the features of different tokens. Do not transpose: reshape X to "
                        "(n, h, d_k), then swap the first two axes.",
                    ),
                    (
                        np.trunc(split_heads(X, h)),
                        f"the right places, but the numbers lost their fractions (on {case}): "
                        "0.25 came back as 0. Keep X's float dtype: no astype(int), no "
                        "np.zeros(..., dtype=int) to fill.",
                    ),
                    (
                        split_heads(X, h)[::-1],
                        f"the heads came out in reverse order (on {case}): out[0] must be the "
                        "first block, X[:, :d_k], and out[h - 1] the last. Count the heads "
                        "from the left.",
                    ),
                    (
                        np.moveaxis(X.reshape(n, d_k, h), -1, 0),
                        f"out[0] got columns 0, {h}, {2 * h}, ... (on {case}): every h-th "
                        "column, interleaved. Each head owns one block of neighbouring "
                        "columns, out[i] = X[:, i*d_k:(i+1)*d_k]: reshape to (n, h, d_k), "
                        "not (n, d_k, h).",
                    ),
                ),
            )
            same(out, split_heads(X, h), case)

    return verdict("split_heads", fn, run)


def _rows_hint(fn, h: int) -> str:
    """Name blocks of rows (tokens) taken for blocks of columns: rerun on a square X."""
    d_model = 2 * h
    X = np.arange(1.0, d_model * d_model + 1).reshape(d_model, d_model)
    try:
        out = np.asarray(fn(X.copy(), h))
    except (Exception, SystemExit):  # even sys.exit() must not end the notebook
        return ""
    rows = X.reshape(h, d_model // h, d_model)  # out[i] = X[i*d_k:(i+1)*d_k], rows
    if out.shape == rows.shape and np.allclose(out, rows):
        return (
            "Your heads are blocks of rows, X[i*d_k:(i+1)*d_k], which are tokens. Each "
            "head takes a block of columns for every token: X[:, i*d_k:(i+1)*d_k]."
        )
    return ""


def _column_slices(fn, h: int, d_model: int) -> list[slice]:
    """The column slices with whole-number ends that ``fn`` takes from a (3, d_model) X."""
    slices = []

    class Recorder(np.ndarray):  # X, noting every column slice taken from it
        def __getitem__(self, key):
            if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], slice):
                slices.append(key[1])
            return np.asarray(np.ndarray.__getitem__(self, key))

    X = np.arange(1.0, 3 * d_model + 1).reshape(3, d_model).view(Recorder)
    try:
        with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
            fn(X, h)
    except (Exception, SystemExit):  # even sys.exit() must not end the notebook
        pass
    return [s for s in slices if all(isinstance(x, int | np.integer) for x in (s.start, s.stop))]


def _past_end_hint(fn, h: int, case_width: int) -> str:
    """Name a column slice that stops past X's last column (an off-by-one, or a d_k typed
    in): NumPy clips it, so the last block comes back narrower and the blocks no longer
    stack. ``case_width`` is the d_model of the case that failed."""
    d_model = 3 * h
    whole = _column_slices(fn, h, d_model)
    past = [s.stop for s in whole if s.stop > d_model]
    widths = {s.stop - s.start for s in whole}
    # a width that stays put when X widens was typed in as a number
    wider = {s.stop - s.start for s in _column_slices(fn, h, 5 * h)}
    fixed = (
        " Is d_k a fixed number in your code? Take it from the input: d_k = X.shape[-1] // h."
        if len(widths) == 1 and wider == widths
        else ""
    )
    if fixed and not past and widths == {d_model // h}:
        # review 07_pp: d_k = 3 typed in fits the probe's 3h columns; the wider one shows it
        width = widths.pop()
        return (
            f"Your d_k is fixed at {width}: your slices stay {width} columns wide whatever X's "
            f"width, but here d_k = {case_width} // {h} = {case_width // h}. Compute it from "
            "the input's width and h: d_k = X.shape[-1] // h."
        )
    if not past and len(widths) == 1 and widths != {d_model // h}:
        width = widths.pop()
        return (
            f"Your slices are {width} columns wide, but on an X of {d_model} columns with "
            f"h = {h}, d_k = {d_model // h}: each head owns columns i*d_k:(i+1)*d_k (a slice "
            f"stops before its end).{fixed}"
        )
    if not past:
        return ""
    return (
        f"Your last slice runs past the end: with d_model = {d_model} it stops at column "
        f"{max(past)}, so NumPy returns a narrower last block. Head i owns columns "
        f"i*d_k:(i+1)*d_k, and the last head's slice stops at d_model.{fixed}"
    )


def _split_shape_mistakes(out: np.ndarray, right: np.ndarray, case: str) -> None:
    h, n, d_k = right.shape
    d_model = h * d_k
    if out.shape == (h, n, d_k):
        return
    if out.shape == (n, h, d_k):
        raise Fail(
            f"returned shape (n, h, d_k) = {out.shape} (on {case}): the reshape is right, "
            "but the heads axis must come first. Swap the first two axes, e.g. "
            "np.swapaxes(Xr, 0, 1)."
        )
    if h > 1 and n % h == 0 and out.shape == (h, n // h, d_model):
        raise Fail(
            f"returned shape {out.shape} (on {case}): you cut the rows, the tokens, into "
            f"h groups. Every head sees all {n} tokens and a slice of the columns: split "
            "the last axis."
        )
    if out.shape == (h, d_k, n):
        raise Fail(
            f"returned shape (h, d_k, n) = {out.shape} (on {case}): each head came out "
            "transposed. Its rows must stay tokens: (h, n, d_k)."
        )
    for axes in itertools.permutations(range(3)):  # the right numbers, axes in another order
        moved = right.transpose(axes)
        if axes != (0, 1, 2) and out.shape == moved.shape and np.array_equal(out, moved):
            got = ", ".join(("h", "n", "d_k")[a] for a in axes)
            raise Fail(
                f"returned shape ({got}) = {out.shape} (on {case}): the right numbers, with "
                "the axes in another order. The heads come first, then the tokens, then each "
                "head's d_k columns: reshape to (n, h, d_k), then swap axes 0 and 1 only."
            )
    if h > 1 and out.shape == (h - 1, n, d_k):
        for missing, rest in (("first", right[1:]), ("last", right[:-1])):
            if np.allclose(out, rest):
                loop = "range(1, h) skips it" if missing == "first" else "does it run to h"
                raise Fail(
                    f"returned {h - 1} of the {h} heads (on {case}): the {missing} head is "
                    f"missing. Check the loop: {loop}? Use range(h)."
                )
    if out.ndim == 3 and out.shape[:2] == (h, n):  # the heads d_k wide, with d_k typed in
        raise Fail(
            f"your heads are {out.shape[2]} columns wide, but here d_k = d_model // h = "
            f"{d_model} // {h} = {d_k} (on {case}). Is d_k a fixed number in your code? "
            "Take it from the input: d_k = X.shape[-1] // h."
        )
    if out.ndim == 3 and out.shape[0] != h and out.shape[1] == n:
        raise Fail(
            f"returned {out.shape[0]} heads for h={h} (shape {out.shape}, on {case}): use "
            "the h argument, with d_k = d_model // h."
        )

"""Chapter 1 checker: cosine similarity (the encoding's checkers are in ``positions.py``)."""

from __future__ import annotations

import re

import numpy as np

from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned (before becoming floats)
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .names import calls_library

# --- Exercise: cosine similarity ---------------------------------------------------------


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The reference, along the last axis: a·b / (|a| |b|)."""
    return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def check_cosine_similarity(fn) -> CheckResult:
    """Check ``fn(a, b)``: the cosine similarity of vectors along the last axis."""

    def run(cases: Cases) -> None:
        fn_itself = "cosine_similarity" in getattr(cases.fn, "__name__", "") and getattr(
            cases.fn, "__module__", "__main__"
        ) not in ("__main__", None)  # check_cosine_similarity(toy.cosine_similarity)
        if fn_itself or calls_library(cases.fn, "cosine_similarity"):  # by any name
            raise Fail(
                "your function is or calls a ready-made cosine_similarity, which this exercise "
                "rules out: write it with np.sum and np.linalg.norm."
            )
        a, b = np.array([1.0, 2.0, 2.0]), np.array([0.0, 3.0, 4.0])  # lengths 3 and 5
        case = "a = [1, 2, 2], b = [0, 3, 4]"
        out = _run(cases, case, a, b)
        if out.size == 1:  # keepdims=True, [...] or np.atleast_2d: all add an axis
            hint = (
                " Two vectors give one number: return it as it is, not inside a list or an "
                f"array of shape {out.shape}. Something added an axis: keepdims=True, "
                "[...], or a vector made into a one-row table (np.atleast_2d, reshape)."
            )
        elif out.shape == a.shape:
            hint = (
                f" Two vectors give one number, not one per entry (shape {out.shape}): sum "
                "a * b over the last axis. A loop over zip(a, b) walks a vector's numbers, "
                "not rows."
            )
        else:
            hint = " Two vectors give one number."
        expect_shape(out, (), case, hint)
        dot, na, nb = a @ b, 3.0, 5.0
        known_mistakes(
            out,
            (dot, f"got {dot:g}, the plain dot product: divide it by both lengths, |a| |b|."),
            (
                dot / a.size / (na * nb),
                f"got {out:.4g}, the cosine divided by d = {a.size}: did you take np.mean "
                "where the dot product needs np.sum?",
            ),
            (
                dot / (na**2 * nb**2),
                f"got {out:.4g}: you divided by the squared lengths. np.linalg.norm is "
                "already the length (the square root of the sum of squares).",
            ),
            *(
                (
                    dot / n**2,
                    f"you divided by |{v}|² ({v} · {v}): divide by |a| |b|, one length each.",
                )
                for v, n in (("a", na), ("b", nb))
            ),
            (dot / na, "you divided by the length of a only: divide by |a| and by |b|."),
            (dot / nb, "you divided by the length of b only: divide by |a| and by |b|."),
            (dot / (na + nb), "you divided by |a| + |b|: divide by their product, |a| |b|."),
            (
                np.arccos(dot / (na * nb)),
                "you returned the angle (np.arccos); return its cosine, a·b / (|a| |b|).",
            ),
            (
                1 - dot / (na * nb),
                "you returned 1 - cosine (the cosine distance); return the cosine itself.",
            ),
        )
        if _LAST.get()[1] in "iu" and not np.isclose(out, _cosine(a, b)):
            raise Fail(
                f"your function returned an integer ({out:g}, on {case}): int(...) or "
                ".astype(int) cuts a cosine, which lies between -1 and 1, to -1, 0 or 1; "
                "return the float itself."
            )
        try:
            same(out, _cosine(a, b), case)
        except Fail:
            _constant(out, _probe(cases, a, -3 * a))  # a fixed number: say so, not "rounding"
            raise
        first = out

        case = "a = [1, 2, 2] and b = -3 a, pointing the opposite way"
        out = _run(cases, case, a, -3 * a)
        expect_shape(out, (), case)
        _constant(first, out)  # right on the first case by luck: 14 / 15 typed in
        known_mistakes(out, (1.0, "opposite vectors must give -1: keep the sign of a·b."))
        same(out, -1.0, case)

        rng = np.random.default_rng(1)
        A, B = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)) * [[1.0], [2.0], [0.5]]
        case = "two 3 x 4 tables (row i of a against row i of b)"
        out = _run(cases, case, A, B)
        _batch_shape(out, (3,), case)
        whole = np.sum(A * B, axis=-1) / (np.linalg.norm(A) * np.linalg.norm(B))
        known_mistakes(
            out,
            (
                whole,
                "you divided by one length for each whole table (a norm or a sum of squares "
                "with no axis); divide by one length per row, over axis=-1.",
            ),
            (
                np.sum(A * B) / (np.linalg.norm(A, axis=-1) * np.linalg.norm(B, axis=-1)),
                "you summed over all entries (np.sum with no axis): sum each row, axis=-1.",
            ),
        )
        same(out, _cosine(A, B), case)

        case = "a 2 x 3 x 4 batch of tables"
        A3, B3 = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
        out = _run(cases, case, A3, B3)
        _batch_shape(out, (2, 3), case)
        same(out, _cosine(A3, B3), case)

        case = "one vector a of length 4 against a 5 x 4 table b"
        v, T = rng.normal(size=4), rng.normal(size=(5, 4))
        out = _run(cases, case, v, T)
        _batch_shape(out, (5,), case)
        same(out, _cosine(v, T), case)

    return verdict("cosine", fn, run)


def _probe(cases: Cases, a: np.ndarray, b: np.ndarray):
    """The learner's answer on one more pair, or None if their function fails on it."""
    try:
        return cases.run("a = [1, 2, 2] and b = -3 a", a, b)
    except Fail:
        return None


def _constant(first, second) -> None:
    """Fail if two pairs with different cosines (14/15 and -1) gave one same number."""
    if second is not None and np.shape(first) == np.shape(second) == ():
        if np.isclose(float(first), float(second)):
            raise Fail(
                f"your function gives the same value ({float(first):.4g}) for different "
                "inputs (b = [0, 3, 4], then b = -3 a, whose cosine is -1): compute it from "
                "a and b, not as a fixed number."
            )


_AXIS_1_HINT = (
    " axis=1 is the last axis of a table but not of {case}, where it runs over the rows "
    "of each table: use axis=-1, the last axis, whatever the number of leading axes."
)


def _without(shape: tuple, axis: int) -> str:
    """``shape`` without ``axis``, as NumPy prints it in a broadcasting error: "(2,4)"."""
    return "(" + ",".join(str(k) for i, k in enumerate(shape) if i != axis) + ")"


def _run(cases: Cases, case: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Run one case; an error from a usual slip (axis=1, einsum, a @ b) gets a hint."""
    try:
        return cases.run(case, a, b)
    except Fail as fail:
        text = str(fail)
        if "for array of dimension 0" in text:  # an axis of one number: a loop over zip(a, b)
            text += (
                " A single number has no axis: a loop over zip(a, b) gives single numbers, "
                "not rows, when a is a vector. np.sum(a * b, axis=-1) needs no loop."
            )
        elif "AxisError" in text or "out of bounds for array of dimension" in text:
            used = re.search(r"axis (-?\d+) is out of bounds", text)  # the learner's axis
            axis = f"axis={used.group(1)}" if used else "that axis"
            text += (
                f" A single vector has only one axis (axis 0), so {axis} does not exist "
                "for it; axis=-1, the last axis, works for vectors and tables alike."
            )
        elif "einstein sum" in text:  # np.einsum("ij,ij->i", ...) given a single vector
            text = text.replace(BROADCAST_HINT, "") + (
                " Your np.einsum subscripts fit one number of axes only (a vector has "
                "one, a table two); '...i,...i->...' fits both, as does "
                "np.sum(a * b, axis=-1)."
            )
        elif a.ndim > 2 and "could not be broadcast" in text and _without(a.shape, 1) in text:
            text = text.replace(BROADCAST_HINT, "") + _AXIS_1_HINT.format(case=case)
        elif "could not be broadcast" in text and f"({a.shape[-1]},)" in text:
            text = text.replace(BROADCAST_HINT, "") + (
                f" A length or sum over axis=0 gives one number per column, shape "
                f"({a.shape[-1]},); axis=-1 gives one per row, which is what the dot "
                "products need."
            )
        elif "converted to Python scalars" in text:  # float(...) or .item() on many numbers
            text += (
                " float(...) makes one Python number, but tables give one number per "
                "row: return the NumPy array itself."
            )
        elif "for @: 'numpy.float" in text:  # x @ y in a loop over zip(a, b)
            text += (
                " A loop over zip(a, b) gives single numbers, not rows, when a is a vector, "
                "and @ needs arrays: np.sum(a * b, axis=-1) works for vectors and tables "
                "alike, with no loop."
            )
        elif "matmul" in text or "not aligned" in text:  # not a broadcasting error
            text += (
                " a @ b and np.dot multiply matrices; for one dot product per row use "
                "np.sum(a * b, axis=-1)."
            )
        raise Fail(text) from None


def _batch_shape(out: np.ndarray, shape: tuple, case: str, width: int = 4) -> None:
    """Expect one number per pair of rows; name the usual way of getting another shape."""
    n = shape[-1]
    if out.shape == shape[:-1] + (n, n) and out.shape != shape:
        hint = (
            " You compared every row of a with every row of b (a @ b.T); compare row i "
            "with row i only, summing a * b over the last axis."
        )
    elif out.shape == (width,):
        hint = (
            " That is one number per column, as a sum down the rows gives (axis=0, or a "
            "loop over zip(a, b), which walks the rows); sum over the last axis (axis=-1) "
            "for one number per pair of rows."
        )
    elif len(shape) > 1 and out.shape == shape[:-1] + (width,):  # axis=1 on a batch
        hint = _AXIS_1_HINT.format(case=case)
    elif out.shape == shape + (1,):
        hint = " Drop keepdims=True: one number per pair of rows."
    elif out.shape == ():
        hint = " You returned one number for all rows: sum over the last axis only (axis=-1)."
    else:
        hint = " Sum over the last axis (axis=-1): one number per pair of rows."
    expect_shape(out, shape, case, hint)

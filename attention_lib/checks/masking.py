"""Chapter 8 checkers: a causal mask and counting its entries (the masked softmax is in
``masked_softmax.py``, a batch's combined mask in ``batch_mask.py``)."""

from __future__ import annotations

import numbers

import numpy as np

from ..core import causal_mask
from .base import (
    Cases,
    CheckResult,
    Fail,
    check_number,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .names import calls_library

# --- Exercise: build the causal mask --------------------------------------------------------


def check_causal_mask(fn) -> CheckResult:
    """Check ``fn(n)``: a boolean ``(n, n)`` mask, True where key ``j <= i`` (query ``i``).

    Calling ``al.causal_mask`` (under any name, or passing it in) fails: the exercise asks
    for NumPy only.
    """
    banned = uses_library(fn, "causal_mask")
    dtypes: list = []  # the dtype of each answer, before the checker turns it into floats

    def recorded(*args, **kwargs):
        out = fn(*args, **kwargs)
        dtypes.append(None if out is None else np.asarray(out).dtype)
        return out

    def run(cases: Cases) -> None:
        if banned:
            raise Fail(
                "your function calls al.causal_mask, which this exercise rules out: build "
                "the triangle with NumPy (compare np.arange(n) with itself, or np.tril)."
            )
        for n in (4, 1, 8):
            case = f"n = {n}"
            out = cases.run(case, n)
            _fixed_size(fn, out, n, case)
            expect_shape(out, (n, n), case, " A mask has one row per query, one column per key.")
            expected = causal_mask(n)
            known_mistakes(out, *_causal_mistakes(n))
            if dtypes[-1] != np.bool_:
                if np.array_equal(out, expected):
                    raise Fail(
                        f"the pattern is right but the dtype is {dtypes[-1]} (on {case}): the "
                        "library wants a boolean mask, True = may attend. Use dtype=bool "
                        "(np.tri returns floats; np.tril(np.ones((n, n), dtype=bool)) does not)."
                    )
                raise Fail(
                    f"returned dtype {dtypes[-1]} (on {case}): a mask must be boolean, "
                    "True where query i may attend to key j."
                )
            same(out, expected, case)

    checked = recorded if callable(fn) else fn  # a non-function is reported by the verdict
    return verdict("causal_mask", checked, run)


def _fixed_size(fn, out: np.ndarray, n: int, case: str, mask: str = "(n, n)") -> None:
    """Fail with a hint when the answer, ``fn(n)``, ends in the same square whatever ``n`` is."""
    square = out.ndim >= 2 and out.shape[-1] == out.shape[-2]
    if not square or out.shape[-2:] == (n, n):
        return
    try:
        other = np.shape(fn(n + 1))
    except Exception:  # noqa: BLE001 - a probe only chooses the hint; the case fails anyway
        return
    if other == out.shape:
        raise Fail(
            f"returned shape {out.shape} for n = {n} and for n = {n + 1} too (on {case}): "
            f"use n, not a fixed size, so the mask is {mask}."
        )


def uses_library(fn, name: str) -> bool:
    """Whether ``fn`` is the library's function ``name``, passed in, or calls it."""
    if not callable(fn):
        return False
    module = getattr(fn, "__module__", None)
    if getattr(fn, "__name__", "") == name and module not in ("__main__", None):
        return True
    return calls_library(fn, name)


# True = blocked is nn.MultiheadAttention's convention, so say which side each library is on.
_BLOCKED_HINT = (
    "True marks the blocked keys, the future above the diagonal (what np.triu(ones, k=1) "
    "gives): in this library, as in PyTorch's F.scaled_dot_product_attention, True means "
    "'may attend' (nn.MultiheadAttention's attn_mask is the opposite). Flip it, or use "
    "np.tril(ones, k=0): the lower triangle with the diagonal."
)


def _causal_mistakes(n: int) -> list[tuple]:
    lower = causal_mask(n)
    ones = np.ones((n, n), dtype=bool)
    mistakes = [
        (~lower, _BLOCKED_HINT),  # also np.triu(ones, k=1)
        (
            np.triu(ones),
            "that is np.triu(ones, k=0), the upper triangle with the diagonal: query i "
            "sees keys i to n - 1, the future. Use the lower one, np.tril(ones, k=0): "
            "query i sees keys 0 to i.",
        ),
        (
            np.tril(ones, k=-1),
            "that drops the diagonal (j < i, or np.tril(ones, k=-1)): a token must be allowed "
            "to attend to itself, and the first one has no key at all. Use j <= i, or k=0.",
        ),
        (
            np.tril(ones, k=1),
            "that is np.tril(ones, k=1), one diagonal too many: query i also sees key "
            "i + 1, the next word. Use k=0, where the diagonal is the last True entry.",
        ),
        (ones, "every entry is True: that is no mask at all."),
    ]
    # For n = 1 several of these coincide with the right answer: keep only wrong ones.
    return [(wrong, hint) for wrong, hint in mistakes if not np.array_equal(wrong, lower)]


# --- Exercise: how many entries of a causal mask are True? ----------------------------------


def check_causal_count(answer, n: int = 8) -> CheckResult:
    """Check a predicted number of True entries in ``causal_mask(n)``: ``n (n + 1) / 2``."""
    expected = int(causal_mask(n).sum())
    fraction = expected / (n * n)  # 36 / 64: the share of True entries, not their number
    if isinstance(answer, numbers.Real) and not isinstance(answer, (bool, np.bool_)):
        if n > 1 and abs(float(answer) - fraction) < 5e-3:
            result = CheckResult(
                "causal_count",
                "FAIL",
                f"{float(answer):g} is the share of the {n * n} entries that are True: that is "
                "the fraction, give the count (how many entries are True).",
            )
            print(result.line)
            return result
    mistakes = (
        (
            n * (n - 1),
            f"{n * (n - 1)} is n (n - 1) = {n} x {n - 1}: every entry off the diagonal. The "
            "causal mask keeps only those below it, plus the diagonal: row i allows i + 1 keys.",
        ),
        (  # n (n - 1) / 2: the True entries below the diagonal, or all the False ones
            expected - n,
            f"{expected - n} leaves out the diagonal (or counts the False entries, the "
            f"blocked keys): each of the {n} tokens may attend to itself too.",
        ),
        (n * n, f"that is every entry of the {n} x {n} mask: the causal mask hides the future."),
        (
            n * n / 2,
            f"half of {n * n} splits the diagonal in two; the whole diagonal is True: "
            f"{n * n - expected} False above it, the rest True.",
        ),
        (n, "that is the diagonal alone; each row allows itself and every key before it."),
        (
            (n + 1) * (n + 2) / 2,
            f"{(n + 1) * (n + 2) // 2} is 1 + 2 + ... + {n + 1}, one row too many: rows run "
            f"from 0 to {n - 1} and row i allows i + 1 keys, so the last row allows {n}.",
        ),
        (
            n * (n + 1),
            f"{n * (n + 1)} is twice the count: n (n + 1) needs dividing by 2 (1 + 2 + ... + {n}).",
        ),
    )
    return check_number("causal_count", answer, expected, places=0, mistakes=mistakes)

"""Chapter 8 checker: a batch's combined causal and padding mask, ``fn(lengths, n)``.

Its unseen cases (for grading) are registered here, beside the checker.
"""

from __future__ import annotations

import numpy as np

from ..core import causal_mask
from .base import (
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    known_mistakes,
    same,
    unseen_cases,
    verdict,
)
from .masking import _causal_mistakes, _fixed_size, uses_library

# --- Exercise: the combined causal + padding mask of a batch -------------------------------


def _real_tokens(lengths, n: int, left: bool = False) -> np.ndarray:
    """(b, n) bool: the real positions, the first ``lengths[s]`` or, with ``left``, the last."""
    ell = np.asarray(lengths).astype(np.int64)[:, None]  # (b, 1)
    positions = np.arange(n)  # (n,)
    return positions >= n - ell if left else positions < ell


def _batch_mask(lengths, n: int) -> np.ndarray:
    """The reference: (b, 1, n, n), key j allowed when j <= i and j is real (pads at the end).

    No row is empty: each pad's row keeps the real words before it.
    """
    both = causal_mask(n) & _real_tokens(lengths, n)[:, None, :]  # (b, n_q, n_k)
    return both[:, None]  # (b, 1, n_q, n_k)


_BATCH_CASES = (([3, 1], 4), ([2, 4, 3], 4), ([1, 5, 3], 5))


def check_batch_mask(fn) -> CheckResult:
    """Check ``fn(lengths, n)``: a bool ``(b, 1, n, n)`` causal-and-padding mask of a batch
    padded at the end. Calling ``al.padding_mask`` (under any name) fails: the exercise rules
    it out."""
    banned = uses_library(fn, "padding_mask")
    dtypes: list = []  # each answer's dtype, before the checker turns it into floats

    def as_given(lengths, n):
        # The checker hands arrays over as floats; lengths are counts, so give back ints.
        out = fn(np.asarray(lengths).astype(np.int64), int(n))
        dtypes.append(None if out is None else np.asarray(out).dtype)
        return out

    def run(cases: Cases) -> None:
        if banned:
            raise Fail(
                "your function calls al.padding_mask, which this exercise rules out: mark "
                "the real positions yourself, comparing np.arange(n) with lengths[:, None]."
            )
        for lengths, n in _BATCH_CASES:
            case = f"lengths {lengths}, n = {n}"
            out = _run(cases, case, np.array(lengths), n)
            probe = np.array(lengths)
            _fixed_size(lambda m, ell=probe: fn(ell, m), out, n, case, "(b, 1, n, n)")
            _batch_shape(out, len(lengths), n, case)
            expected = _batch_mask(lengths, n)
            _lengths_slip(fn, out, np.array(lengths), n, case)
            known_mistakes(out, *_batch_mistakes(lengths, n, case))
            if dtypes[-1] != np.bool_:
                fix = "the pattern is right but" if np.array_equal(out, expected) else "and"
                raise Fail(
                    f"returned dtype {dtypes[-1]} (on {case}), {fix} a mask must be boolean, "
                    "True = may attend (compare with < and combine with &)."
                )
            same(out, expected, case)

    checked = as_given if callable(fn) else fn  # a non-function is reported by the verdict
    return verdict("batch_mask", checked, run)


def _run(cases: Cases, case: str, *args) -> np.ndarray:
    """``cases.run``, with the two errors this exercise invites named in its own words."""
    try:
        return cases.run(case, *args)
    except Fail as fail:
        message = str(fail)
        if "could not be broadcast" in message:  # np.arange(n) < lengths: (n,) against (b,)
            raise Fail(
                message.replace(BROADCAST_HINT, "") + " Positions run along one axis and "
                "sentences along another: give lengths its own axis, lengths[:, None] of "
                "shape (b, 1), so that comparing it with np.arange(n) gives a (b, n) table."
            ) from None
        if "bitwise_or" in message or "bitwise_and" in message:  # a float array in & or |
            raise Fail(
                f"{message} | and & need booleans on both sides: mark the real positions "
                "with a comparison (<), which gives booleans, not floats."
            ) from None
        raise


def _batch_shape(out: np.ndarray, b: int, n: int, case: str) -> None:
    """The shape, with a hint for the usual wrong placements of the axes."""
    hints = {
        (b, n, n): "there is no head axis: add it second, mask[:, None], so that the "
        "sentence axis stays first and the heads broadcast.",
        (1, b, n, n): "the new axis went in front (mask[None]): against (b, h, n, n) scores "
        "the sentence axis would then line up with the heads. Use mask[:, None].",
        (b, 1, 1, n): "that is the padding part alone, one row of keys per sentence: "
        "combine it with the (n, n) causal mask using &, so each query gets its own row.",
        (b, 1, n, 1): "the padding part stands on the query axis, one entry per row: the "
        "pads are keys, so their axis is the last one, real[:, None, :].",
        (n, n): "that is the causal part alone: combine it with each sentence's padding "
        "(b, 1, n) using &, then add the head axis.",
    }
    if out.ndim == 4 and out.shape[1:] == (1, n, n):  # the sentence count is off
        hints[out.shape] = (
            f"lengths has {b} sentences but your mask has {out.shape[0]}: take the sentences "
            "from the lengths argument, not from fixed values."
        )
    if out.shape != (b, 1, n, n):
        hint = hints.get(out.shape, "one mask per sentence, a head axis of 1, queries, keys.")
        raise Fail(f"returned shape {out.shape}, expected {(b, 1, n, n)} (on {case}): {hint}")


def _kept(out, n: int):
    """The real keys per sentence of ``out`` if it is causal & right padding, else None."""
    out = np.asarray(out)
    if out.shape[1:] != (1, n, n):
        return None
    kept = out[:, 0, -1].sum(axis=-1).astype(np.int64)  # the last row sees every real key
    return kept if np.array_equal(out, _batch_mask(kept, n)) else None


def _lengths_slip(fn, out, lengths, n: int, case: str) -> None:
    """Name a padding part built from the wrong lengths: lengths - 1, max(lengths), fixed."""
    kept = _kept(out, n)
    if kept is None or np.array_equal(kept, lengths):
        return
    if np.array_equal(kept, np.maximum(lengths - 1, 0)):
        raise Fail(
            f"each sentence keeps lengths[s] - 1 real keys (on {case}), so its last real word "
            "is blocked. Its real positions are 0 to lengths[s] - 1: j < lengths[s]."
        )
    if lengths.max() < n and np.all(kept == lengths.max()):
        raise Fail(
            f"every sentence keeps max(lengths) = {lengths.max()} real keys (on {case}): "
            "each sentence has its own length, so compare np.arange(n) with lengths[:, None]."
        )
    wide = max(16, 2 * n)  # wider than a hard-coded length is likely to be
    try:
        kept_wide = _kept(fn(lengths.copy(), wide), wide)
        flipped = _kept(fn(lengths[::-1].copy(), wide), wide)
    except Exception:  # noqa: BLE001 - a probe only chooses the hint; the case fails anyway
        return
    fixed = kept_wide is not None and flipped is not None and (kept_wide < wide).any()
    if fixed and np.array_equal(kept_wide, flipped):
        raise Fail(
            f"your mask keeps {kept_wide.tolist()} real keys at n = {wide} whatever lengths "
            f"is (on {case}): the lengths look fixed in your code. Use the lengths argument, "
            "np.arange(n) < lengths[:, None]."
        )


def _batch_mistakes(lengths, n: int, case: str) -> list[tuple]:
    real = _real_tokens(lengths, n)  # (b, n)
    causal = causal_mask(n)
    expected = _batch_mask(lengths, n)
    shape = expected.shape
    eye = np.eye(n, dtype=bool)
    cores = [  # (b, 1, n, n) each
        (  # with right padding this equals blocking the pads as queries only
            (causal & real[:, :, None] & real[:, None, :])[:, None],
            f"you blocked the pads as queries (on {case}): the pads' own rows "
            "lose the real words. A padding mask hides a pad only as a key, on the last axis, "
            "real[:, None, :]; a pad's row keeps the real words before it.",
        ),
        (
            (causal & real[:, :, None])[:, None],
            f"you blocked the pads as queries, not as keys (on {case}): real words still "
            "attend to the pads before them. A pad is hidden as a key, so its axis is the "
            "last one: real[:, None, :].",
        ),
        (
            np.broadcast_to(real[:, None, None, :], shape),
            f"every real word's row is the same (on {case}): the causal part is "
            "missing, so words still see the future. Combine with the causal mask using &.",
        ),
        (
            np.broadcast_to(causal, shape),
            f"no key is blocked as padding (on {case}): that is the causal mask alone. It "
            "already hides the pads from the real words, but the pads' own rows still see the "
            "pads before them. Combine it with each sentence's real tokens using &.",
        ),
        (
            (causal & _real_tokens(lengths, n, left=True)[:, None, :])[:, None],
            f"the padding is on the wrong side (on {case}): here the pads come at the end, so "
            "the real tokens are the first lengths[s] positions, j < lengths[s].",
        ),
        (
            (causal & (np.arange(n) <= np.asarray(lengths)[:, None])[:, None, :])[:, None],
            f"one position off: j <= lengths[s] lets in the first pad; use < (on {case}).",
        ),
        (
            (causal | real[:, None, :])[:, None],
            f"a pair is allowed if either mask allows it (on {case}): | lets real words see "
            "the future and every word see the pads before it. Combine with &: allowed only "
            "if both allow it.",
        ),
    ]
    for wrong, hint in _causal_mistakes(n):  # the causal part wrong, the padding right
        hint = f"the padding is right but the causal part is not (on {case}): {hint}"
        cores.append(((wrong & real[:, None, :])[:, None], hint))
    mistakes = [
        (
            ~expected,
            f"True marks the blocked pairs (on {case}): in this library True means "
            "'may attend'. Flip the mask.",
        ),
        (
            expected | eye,
            f"entry (i, i) is True for each pad i (on {case}): you added the diagonal "
            "(| np.eye). With the pads at the end no row is empty, since each pad's row keeps "
            "the real words before it. Causal & padding is the whole mask.",
        ),
        *cores,
        (
            np.swapaxes(expected, -1, -2),
            f"your mask is transposed (on {case}): the last two axes are (query, key), so "
            "entry (i, j) says whether query i may see key j. Put the padding on the key "
            "axis, real[:, None, :], and use al.causal_mask(n) as it is.",
        ),
    ]
    mistakes += [
        (wrong | eye, f"{hint} (You also added the diagonal, which is not needed.)")
        for wrong, hint in cores
    ]  # the same, with the diagonal added
    hf_rows = (causal & real[:, None, :]) | ~real[:, :, None]  # each pad's row: every key
    hint = "each pad's row sees every key (as Hugging Face unmasks a pad's row): here a pad's "
    mistakes.append((hf_rows[:, None], f"{hint}row is causal & padding too (on {case})."))
    # Where a mistake happens to give the right answer here, it is no mistake.
    return [(wrong, hint) for wrong, hint in mistakes if not np.array_equal(wrong, expected)]


@unseen_cases("batch_mask")
def _unseen_batch_mask(rng):
    found = []
    for _ in range(2):
        n = int(rng.integers(3, 9))
        lengths = rng.integers(1, n + 1, size=int(rng.integers(2, 5)))
        lengths[0] = n  # one full sentence, as in a real batch
        found.append(
            (f"lengths {lengths.tolist()}, n = {n}", (lengths, n), _batch_mask(lengths, n))
        )
    return found

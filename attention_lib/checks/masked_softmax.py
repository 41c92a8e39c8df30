"""Chapter 8 checker: softmax with a mask, ``fn(scores, mask)``."""

from __future__ import annotations

import numpy as np

from ..core import causal_mask, scaled_dot_product_attention, softmax
from ..masks import padding_mask
from .base import (
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    fmt,
    known_mistakes,
    same,
    verdict,
)
from .masked_softmax_axes import (
    _keepdims_mistakes,
    _lost_keepdims,
    _rescaled_mistakes,
    _why_large,
)


def _expected_weights(scores, mask) -> np.ndarray:
    """The library's masked weights for ``scores`` (no solution here): with the identity as
    keys, ``Q Kᵀ`` is ``scores`` itself, and attention's weights (scale 1) are the answer."""
    scores = np.asarray(scores, dtype=float)
    rows = np.atleast_2d(scores)  # (..., n_q, n_k)
    keys = np.broadcast_to(np.eye(rows.shape[-1]), (*rows.shape[:-2], *rows.shape[-1:] * 2))
    mask = np.broadcast_to(mask, scores.shape).reshape(rows.shape)
    _, weights = scaled_dot_product_attention(rows, keys, keys, mask=mask, scale=1.0)
    return weights.reshape(scores.shape)


def check_masked_softmax(fn) -> CheckResult:
    """Check ``fn(scores, mask)``: weights over the keys, masked keys exactly 0."""

    def run(cases: Cases) -> None:
        row = np.array([0.1, 0.3, 0.2, 0.9, 0.1, 0.4, 0.1, 0.6])
        allowed = np.array([True] * 6 + [False] * 2)
        _check_case(cases, "one row, the last 2 keys masked", row, allowed)

        rng = np.random.default_rng(8)
        scores = np.round(rng.normal(size=(4, 4)), 1)
        _check_case(cases, "4 x 4 scores with a lower-triangle mask", scores, causal_mask(4))

        batch = np.round(rng.normal(size=(2, 3, 5)), 1)
        case = "a batch (2, 3, 5) with a mask (2, 1, 5)"
        _check_case(cases, case, batch, padding_mask([5, 3], 5))

        big = np.array([[2.0, 1000.0, 1.0], [-1000.0, 3.0, 0.0]])
        first_two = np.array([[True, True, False]] * 2)
        _check_case(cases, "a masked key with score 1000", big, np.abs(big) < 1000)

        # Large allowed scores: exp overflows or underflows unless each row's max is subtracted.
        huge = np.array([[1000.0, 1001.0, 5.0], [-1000.0, -999.0, 0.0]])
        _check_case(cases, "allowed scores near 1000 and -1000", huge, first_two)

        # 1600 apart: shifting by the minimum or the mean leaves exp(800), which overflows.
        wide = np.array([[-1600.0, 0.0, 3.0], [1.0, -1500.0, 2.0]])
        _check_case(cases, "allowed scores 1600 apart", wide, first_two)

        # Allowed scores far below 0: a finite fill (-1e4) beats them, only -inf cannot.
        low = np.array([[-20000.0, -20001.0, 0.0]])
        _check_case(cases, "allowed scores near -20000, the masked one 0", low, first_two[:1])

        # One allowed score at the lowest float: every finite fill (-1e9, finfo.min) loses or
        # ties. One, not two: a logsumexp written as mx + log(sum) is right in maths, but at
        # 1.8e308 adding log 2 changes nothing, and its rows would sum to 2.
        lowest = np.array([[np.finfo(float).min, 0.0, 0.0]])
        only_first = np.array([[True, False, False]])
        _check_case(
            cases, "one allowed score at the lowest float, the masked ones 0", lowest, only_first
        )

    return verdict("masked_softmax", fn, run)


def _check_case(cases: Cases, case: str, scores: np.ndarray, mask: np.ndarray) -> None:
    try:
        out = cases.run(case, scores, mask)
    except Fail as fail:  # the two crashes this exercise invites: name the fix
        if "boolean index did not match" in str(fail):  # l[~mask] = -inf, a (b, 1, n_k) mask
            raise Fail(
                f"{fail} A boolean index needs the full shape of the scores, but this mask "
                "only broadcasts to it; np.where(mask, scores, -np.inf) broadcasts."
            ) from None
        if "attention needs finite numbers" in str(fail):  # al.softmax on the -inf fills
            raise Fail(
                f"{fail} Write your own softmax here: al.softmax refuses -inf on purpose. "
                "Subtract each row's maximum, exponentiate and divide by the row's sum."
            ) from None
        if "in place" in str(fail):  # the same for an indexed write: use np.where
            hint = "So does scores[~mask] = -np.inf: np.where(mask, scores, -np.inf), a new array."
            raise Fail(f"{fail} {hint}") from None
        if "AxisError" in str(fail):  # e.g. e.sum(axis=-2) on the one-row case
            raise Fail(
                f"{fail} A single row has one axis, and it is the keys: softmax runs over "
                "the keys of each query, axis=-1, which every shape has."
            ) from None
        raise
    full = np.broadcast_to(mask, scores.shape)
    expect_shape(out, scores.shape, case, " Return one weight per score.")
    expected = _expected_weights(scores, mask)
    if not np.allclose(out, expected) and _ignores_input(cases.fn, scores, mask, out):
        if np.isnan(out).all():  # nan for any scores: a nan fill, np.where(mask, scores, np.nan)
            raise Fail(
                f"every weight is nan on {case}: np.nan poisons the max and the sum; "
                "fill with -np.inf, whose exponential is exactly 0."
            )
        raise Fail(
            f"your output does not depend on the input (on {case}): other scores gave "
            "the same weights. Compute the weights from scores and mask, not a fixed array."
        )
    given = np.broadcast_to(scores, full.shape)
    if np.array_equal(out[full], given[full]) and not np.allclose(out.sum(axis=-1), 1.0):
        raise Fail(  # np.where(mask, scores, fill) returned as it is: no exp, no division
            f"you returned the masked scores (on {case}): the allowed entries are the "
            "scores themselves. Apply a softmax to them: subtract each row's maximum, "
            "exponentiate, and divide by the row's sum."
        )
    if not np.all(np.isfinite(out)):
        allowed = np.where(full, scores, np.nan)  # every row keeps a key
        spread = (np.nanmax(allowed, axis=-1) - np.nanmin(allowed, axis=-1)).max()
        if spread > 709:  # shifted by the minimum or the mean: exp(> 709) is inf
            why = (
                f"a row's allowed scores lie {spread:g} apart, so any other shift (the "
                "minimum, the mean) leaves an exponent above 709, and exp overflows to inf."
            )
        elif np.nanmax(np.abs(allowed)) > np.finfo(np.float32).max:  # cast to float32: -inf
            why = (
                f"an allowed score of {np.nanmin(allowed):g} is beyond float32's range, so a "
                "cast to float32 (or float16) makes it -inf and leaves its row no finite key: "
                "0 / 0. Keep the scores' own dtype (float64 here)."
            )
        elif np.nanmax(np.abs(allowed)) >= 1000:  # the allowed scores themselves are large
            why = _why_large(cases.fn)
        elif np.abs(scores).max() >= 1000:
            why = _why_masked_1000(cases.fn)
        else:
            why = "a row whose allowed keys all get exp(...) = 0 divides 0 by 0."
        raise Fail(
            f"got nan or inf on {case}. Mask first, np.where(mask, scores, -np.inf), then "
            "subtract the row's maximum over the allowed keys, so every exponent is <= 0 "
            f"and one is exactly 0: {why}"
        )
    empty = np.all(out == 0.0, axis=-1)  # a row of zeros: nan turned into 0 (nan_to_num)
    top = np.argmax(np.broadcast_to(scores, full.shape), axis=-1)[..., None]
    if np.any(empty & ~np.take_along_axis(full, top, axis=-1)[..., 0]):
        if _masked_score_overflows(cases.fn):  # no shift: exp(1000) on the masked key
            raise Fail(
                f"a row's weights are all 0 on {case}: exp(1000) = inf on the masked key, "
                "and inf * 0 = nan (turned into 0): fill with -inf before exp, and shift "
                "by the allowed max."
            )
        if np.nanmax(np.abs(np.where(full, scores, np.nan))) >= 1000:  # -inf fill, no shift
            raise Fail(f"a row's weights are all 0 on {case}: {_why_large(cases.fn)}")
        raise Fail(
            f"a row's weights are all 0 on {case}: the shift used a masked score (the raw "
            "row's maximum), so every allowed exp(...) underflowed to 0. The 0 / 0 gave "
            "nan, and np.nan_to_num (or a step like it) hid it as 0s. Take the maximum "
            "over the allowed keys only: np.where(mask, scores, -np.inf).max(axis=-1, "
            "keepdims=True)."
        )
    columns = out.sum(axis=-2) if out.ndim >= 2 else None
    if columns is not None and np.allclose(columns, 1.0) and not np.allclose(out.sum(-1), 1.0):
        raise Fail(
            f"each column sums to 1, not each row (on {case}): you normalised over the "
            "queries (axis=0 or axis=-2). Softmax runs over the keys of one query: sum "
            "over axis=-1."
        )
    # Before the known mistakes: here a fill of 0 and of -1e4 give the same weights.
    top_allowed = np.nanmax(np.where(full, scores, np.nan))
    if np.any(out[~full] != 0.0) and top_allowed < -1000:
        masked = np.broadcast_to(scores, full.shape)[~full].max()
        raise Fail(
            f"the exercise asks for -np.inf as the fill. A finite fill (-1e4, -1e9, even "
            "np.finfo(float).min) differs only on extreme rows, such as this one (on "
            f"{case}): the allowed scores are about {top_allowed:.2g}, the masked score is "
            f"{masked:g}, and masked keys get weight {fmt(out[~full])}."
        )
    known_mistakes(
        out,
        *_softmax_mistakes(scores, mask, full, case),
        *_rescaled_mistakes(out, scores, full, case),
    )
    if np.any(out[~full] != 0.0):
        raise Fail(
            f"masked keys get weight {fmt(out[~full])} on {case}: a masked weight must be "
            "exactly 0. Set masked scores to -np.inf before softmax (exp(-inf) = 0)."
        )
    sums = out.sum(axis=-1)
    if not np.allclose(sums, 1.0):
        slip = BROADCAST_HINT if _lost_keepdims(out, scores, full) else ""
        raise Fail(
            f"rows sum to {fmt(sums)} on {case}, not 1: each query's weights over its "
            f"allowed keys must add up to 1.{slip}"
        )
    same(out, expected, case)


def _ignores_input(fn, scores, mask, out) -> bool:
    """Whether ``fn`` gives ``out`` again for other scores whose weights differ."""
    other = np.asarray(scores, dtype=float)[..., ::-1] + np.arange(scores.shape[-1])
    if np.allclose(_expected_weights(other, mask), _expected_weights(scores, mask)):
        return False
    try:
        with np.errstate(all="ignore"):
            again = np.asarray(fn(other, mask), dtype=float)
    except Exception:  # noqa: BLE001 - a probe only chooses the hint; the case already failed
        return False
    return again.shape == np.shape(out) and np.array_equal(again, out, equal_nan=True)


def _masked_score_overflows(fn) -> bool | None:
    """Whether a masked score goes through exp (None when the probe fails): with a masked
    720, a shift by the raw maximum still works (exp(-720) > 0), but exp(720) * 0 is nan."""
    try:
        with np.errstate(all="ignore"):
            probe = fn(np.array([[0.0, 0.0, 720.0]]), np.array([[True, True, False]]))
            probe = np.asarray(probe, dtype=float)
    except Exception:  # noqa: BLE001 - a probe only chooses the hint; the case already failed
        return None
    return bool(not np.all(np.isfinite(probe)) or np.all(probe == 0.0))


def _why_masked_1000(fn) -> str:
    """Why a masked score of 1000 gave nan: as the row's maximum, or inside exp."""
    overflowed = _masked_score_overflows(fn)
    inside_exp = (
        "the masked 1000 itself went through exp before the mask zeroed it: exp(998) is inf, "
        "and inf * 0 is nan. Multiplying by the mask comes too late; use np.where, on the "
        "scores or on the exponentials."
    )
    as_max = (
        "you took the softmax before masking (or shifted by the raw row's maximum), so "
        "the shift used a masked score, the 1000: every allowed exp(score - 1000) "
        "underflows to 0, and 0 / 0 is nan. Take the maximum over the allowed keys only."
    )
    if overflowed is None:  # say both
        return f"{as_max} Or {inside_exp}"
    return inside_exp if overflowed else as_max


def _softmax_mistakes(scores, mask, full, case: str) -> list[tuple]:
    plain = softmax(scores)
    mistakes = [
        (
            plain * full,
            f"rows sum to less than 1 (on {case}): you zeroed the masked weights after "
            "softmax, so the allowed ones were never renormalised. Mask the scores "
            "before softmax (set them to -np.inf), and the rest sums to 1 by itself.",
        ),
        (
            softmax(np.where(full, scores, 0.0)),
            f"masked keys still get weight (on {case}): you replaced their scores by 0, "
            "but exp(0) = 1. Use -np.inf, whose exponential is exactly 0.",
        ),
        (
            plain,
            f"the mask was ignored (on {case}): the weights are a plain softmax. Set the "
            "scores where mask is False to -np.inf before softmax.",
        ),
    ]
    mistakes += _keepdims_mistakes(scores, full, case)
    if (~full).any(axis=-1).all():  # inverting leaves every row a key: a finite answer
        mistakes.append(
            (
                _expected_weights(scores, ~full),
                f"you blocked the allowed keys and kept the masked ones (on {case}): in "
                "this library True means 'may attend' (as in F.scaled_dot_product_attention). Use "
                "np.where(mask, scores, -np.inf).",
            )
        )
    if full.ndim == 2 and full.shape[0] == full.shape[1]:
        mistakes.append(
            (
                _expected_weights(scores, full.T),
                f"you used the mask transposed (on {case}): rows are queries and columns "
                "keys, in the scores and in the mask alike.",
            )
        )
    return mistakes

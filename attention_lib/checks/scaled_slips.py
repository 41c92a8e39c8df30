"""Chapter 4 checker helpers: slips that leave every scaled score a little or evenly off,
and np.einsum subscripts that fit one number of axes only."""

from __future__ import annotations

import numpy as np

from .base import ATOL, Fail
from .scaled_divisor import divisor_said

# Review 04uu (item 3): einsum("qd,kd->qk") on a batch raised numpy's "no '...' ellipsis"
# error and got the generic keepdims hint, which does not apply; "bqd,bkd->bqk" raised on 2-D.
EINSUM_AXES = (
    "Your np.einsum subscripts name a fixed number of axes, so they fit inputs with that "
    "many dimensions only. Write '...' for whatever comes before the last two axes: "
    "np.einsum('...qd,...kd->...qk', Q, K) fits 2-D inputs, batches and heads alike."
)


def off_everywhere(
    out: np.ndarray,
    expected: np.ndarray,
    root: float | None = None,
    n_q: int | None = None,
    n_k: int | None = None,
) -> None:
    """Name rounding, float16, NaN from a root of the scores, or a divisor off everywhere.

    ``root`` is the right divisor, √d_k: given it, a whole-number divisor typed in is named,
    and any other divisor is named too (``n_q`` and ``n_k`` let it say Q.size or K.size).
    """
    if out.shape == expected.shape and not np.allclose(out, expected, atol=ATOL):
        places = next((k for k in range(7) if np.allclose(out, expected.round(k))), None)
        if places is not None:  # a rounded answer: the right values, rounded
            said = f"to {places} decimals" if places else "rounded to whole numbers"
            raise Fail(f"values right {said}: don't round.")
    if out.shape == expected.shape and not np.allclose(out, expected, atol=ATOL):
        if np.array_equal(out, np.trunc(expected)):  # review 04jj: an int cast, named
            raise Fail(
                "every score is a whole number, cut toward 0: an int cast (.astype(int) or "
                "int()) dropped the decimals. Keep the floats the division gives."
            )
        if np.array_equal(out, np.floor(expected)):
            raise Fail("every score is rounded down: // is floor division. Divide with /.")
    if np.isnan(out).any() and np.array_equal(np.isnan(out), expected < 0):
        raise Fail("NaN exactly where Q Kᵀ < 0: a square root of the scores? Use np.sqrt(d_k).")
    if np.allclose(out, expected, 5e-3, 5e-3) and np.array_equal(out, out.astype(np.float16)):
        raise Fail("every entry is off by about 1e-3: are you using float16? Keep float64.")
    ratio = out / expected
    if not np.isclose(ratio.flat[0], 1) and np.ptp(ratio) < 1e-6 * abs(ratio.flat[0]):
        said = f"every entry is off by the same factor {ratio.flat[0]:.4g}"
        typed = root / ratio.flat[0] if root else 0.0  # the divisor used, if one
        if round(typed) >= 1 and abs(typed - round(typed)) < 1e-6:
            raise Fail(f"{said}: you divided by {round(typed)}; here √d_k = {root:g}.")
        if root:  # review 04ss: say what the learner divided by
            raise Fail(f"{said}: check the divisor. {divisor_said(root, ratio.flat[0], n_q, n_k)}")
        raise Fail(f"{said}: check the divisor.")

"""Chapter 1 checkers on positions: the sinusoidal encoding and two predictions about it."""

from __future__ import annotations

import numbers

import numpy as np

from ..core import positional_encoding
from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned (before becoming floats)
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    check_number,
    expect_shape,
    fmt,
    known_mistakes,
    same,
    verdict,
)
from .names import calls_library
from .pe_mistakes import _PE_MISTAKES, _WIDTH_SLIPS, _encoding

# --- Exercise: the sinusoidal positional encoding ----------------------------------------


def _run(cases: Cases, case: str, n: int, d: int) -> np.ndarray:
    """Run one case; an angle built over all d_model columns gets its own hint."""
    try:
        return cases.run(case, n, d)
    except Fail as fail:
        message = str(fail)
        if f"from shape ({n},{d}) into shape ({n},{d // 2})" not in message:
            raise
        raise Fail(
            f"{message.replace(BROADCAST_HINT, '')} Your angle has one column per dimension, "
            f"(n, d_model) = ({n}, {d}); it needs one per pair, (n, d_model/2) = ({n}, {d // 2}): "
            "build the exponent from np.arange(0, d_model, 2)."
        ) from None


def check_positional_encoding(fn) -> CheckResult:
    """Check ``fn(n, d_model)`` (``d_model`` even) against :func:`positional_encoding`."""

    def run(cases: Cases) -> None:
        if calls_library(cases.fn, "positional_encoding"):
            raise Fail(
                "your function calls the library's positional_encoding, which this "
                "exercise rules out: build the angles with np.arange, then np.sin and np.cos."
            )
        for n, d in ((8, 4), (50, 16), (1, 2), (10, 6)):
            case = f"n = {n}, d_model = {d}"
            out = _run(cases, case, n, d)
            hint = (
                " One row per position: you returned the transpose." if out.shape == (d, n) else ""
            )
            if hint and n % 2 == 0 and np.allclose(out, positional_encoding(d, n)):
                hint = (
                    " Your function takes (d_model, n), so it built d_model positions of"
                    " width n: put n first, def my_positional_encoding(n, d_model)."
                )
            expect_shape(
                out, (n, d), case, hint or " One row per position, one column per dimension."
            )
            if _LAST.get()[1] in "iu":  # np.zeros(..., dtype=int) cuts sin and cos to integers
                raise Fail(
                    f"your array has an integer dtype, so every sine and cosine was cut to -1, "
                    f"0 or 1 (on {case}): make it float, as np.zeros((n, d_model)) is by default."
                )
            reference = positional_encoding(n, d)
            for exponent, hint in _WIDTH_SLIPS:  # pos / 10000^(2i / exponent(d))
                wrong = _encoding(n, d, base=10000.0 ** (d / exponent(d)))
                if not np.allclose(wrong, reference):  # at d_model = 4 the first slip is right
                    known_mistakes(out, (wrong, hint.format(d=d, case=case)))
            if (n, d) == (8, 4):  # every mistake gives different numbers here
                mistakes = [(_encoding(n, d, **change), hint) for change, hint in _PE_MISTAKES]
                known_mistakes(out, *mistakes)
                moving = np.abs(out[:, 1::2]).max() > 1e-6  # the odd (cosine) columns
                if np.allclose(out[0], 0.0) and moving and np.abs(out).max() <= 1 + 1e-9:
                    raise Fail(  # a sine in every column: row 0 all 0, yet not an empty array
                        f"no cosines: the odd columns (1, 3, ...) hold cos, so position 0 is "
                        f"[0, 1, 0, 1] (cos 0 = 1), got {fmt(out[0])}: use np.cos there."
                    )
                if not np.allclose(out[0], [0.0, 1.0, 0.0, 1.0]):
                    raise Fail(
                        f"position 0 should be [0, 1, 0, 1] (sin 0 = 0, cos 0 = 1), got "
                        f"{fmt(out[0])}."
                    )
            same(out, reference, case)

    return verdict("positional-encoding", fn, run)


# --- Exercises: numbers predicted by hand ----------------------------------------------


def _rounded(answer, expected: float, mistakes: tuple, one_decimal: str = "") -> tuple:
    """Add rounding hints: one for the value rounded at the first decimal (1.4 = 1.40 in
    Python): ``one_decimal`` if given, else a hint that never prints ``expected`` (1.4 is
    also what some wrong methods give); one for a value with more decimals that would pass
    once rounded to two."""
    if not isinstance(answer, numbers.Real) or isinstance(answer, bool):
        return mistakes
    value = float(answer)
    if abs(value - round(expected, 1)) < 1e-6:
        hint = one_decimal or f"close: to two decimals it is not {value:.2f}."
    elif value == np.floor(expected * 100) / 100 != round(expected, 2):  # 1.38 for 1.388
        hint = "close: round, don't truncate (the third decimal decides the second)."
    elif round(value, 2) != value and abs(round(value, 2) - expected) <= 0.005 + 1e-12:
        hint = "close: round your value to two decimals."
    else:
        return mistakes
    return ((value, hint), *mistakes)


def check_pe_length(answer) -> CheckResult:
    """Check a predicted length |PE[pos]| for ``d_model = 4`` (the same at every position)."""
    expected = float(np.linalg.norm(positional_encoding(8, 4)[0]))  # the same at every pos
    negative = isinstance(answer, numbers.Real) and not isinstance(answer, bool) and answer < 0
    sign = "a length is never negative: it is the root of a sum of squares."  # -1.41
    return check_number(
        "pe-length",
        answer,
        expected,
        fallback=sign if negative else None,
        mistakes=_rounded(
            answer,
            expected,
            (
                (
                    2.0,
                    "2 is the squared length (1 for each sin-cos pair), or √d_model: take "
                    "the square root of the squared length.",
                ),
                (
                    1.0,
                    "one (sin, cos) pair has length 1, but d_model = 4 holds two pairs: add "
                    "the squares of all four entries, then take the square root.",
                ),
                (
                    4.0,
                    "4 is the length at d_model = 32 (√(32/2)), or the number of "
                    "entries: the toy's d_model = 4 holds two pairs, so add the squares of its "
                    "four entries and take the square root.",
                ),
                *(
                    (
                        np.sqrt(width / 2),  # the rule sqrt(d_model / 2) at another width
                        f"that is √({width}/2), the length at d_model = {width}; d_model "
                        "here is 4: add the squares of its four entries, then take the "
                        "square root.",
                    )
                    for width in (16, 64, 128, 256, 512, 768, 1024)  # 2.83 ... 16 ... 22.6
                ),
                (
                    expected / 2,  # 1/sqrt(2) = sqrt(2/4), from np.mean or dividing by d_model
                    "that is 1/√2, the root of the mean square (2 / 4): a length adds the "
                    "squares of all four entries without dividing by their number.",
                ),
            ),
            one_decimal="close: give two decimals.",  # 1.4: no answer given away
        ),
    )


def check_pe_offset(answer) -> CheckResult:
    """Check a predicted dot product ``PE[pos] · PE[pos + 20]`` for ``d_model = 4``."""
    PE = positional_encoding(30, 4)  # (30, 4)
    expected = float(PE[0] @ PE[20])  # the same for every pos
    fast, slow = np.cos(20.0), np.cos(20.0 / 100.0)  # the two pairs turn by 20 and 0.2
    pair = (
        (
            fast,
            f"{fast:.2f} is the fast pair alone (cos 20): d_model = 4 has a second, "
            "slow pair, which turns by 20 / 100 and adds its own cosine.",
        ),
        (
            slow,
            "that is the slow pair alone (cos 0.2): add the fast pair, which turns by "
            "a whole 20 radians.",
        ),
        (
            np.sqrt(2.0),  # before the slow-speed slip (1.408): 1.41 is nearer sqrt(2)
            "1.41 is √2, the length of one row (the previous exercise), not the dot product "
            "of two rows; if your cosines gave 1.41, you used a slower speed for the slow "
            "pair; its speed is 1 / 100.",
        ),
        (
            np.cos(20.0) + np.cos(20.0 / 10000.0),
            "the slow pair turns at 1 / 100: you gave it a slower speed, so it hardly "
            "turns in 20 steps. Its speed is 1 / 10000^(2i / d_model) with i = 1 and "
            "d_model = 4.",
        ),
        *(
            (
                np.cos(20.0 * factor) + np.cos(0.2 * factor),
                f"you {verb} each turn: from pos to pos + 20, a pair turns by its speed times "
                f"20, so by 20 and 0.2 radians, not {20 * factor:g} and {0.2 * factor:g}.",
            )
            for factor, verb in ((2.0, "doubled"), (0.5, "halved"))
        ),
        (
            0.0,
            "0 would make the two stamps perpendicular, and they are not: each pair adds "
            "the cosine of its turn over the 20 steps, and neither turn is a right angle.",
        ),
        (
            2.0,
            "2 is PE[pos] · PE[pos], the same position twice: 20 steps on, each pair "
            "has turned by b radians and contributes cos b.",
        ),
        (
            np.cos(np.radians(20.0)) + np.cos(np.radians(0.2)),
            "those are cosines in degrees: the angles are in radians (np.cos takes radians).",
        ),
        (
            np.cos(20.0 * 2 * np.pi) + np.cos(0.2 * 2 * np.pi),
            "you multiplied by 2π, as if 20 and 0.2 were turns: they are already angles "
            "in radians.",
        ),
        (
            np.sin(20.0) + np.sin(0.2),
            "you added sines: a pair turned by angle b "
            "contributes cos b to the dot product (sin a sin(a+b) + cos a cos(a+b) = cos b).",
        ),
        (
            2 * fast,
            "the two pairs do not turn at the same speed: the second turns 100 "
            "times more slowly (10000^(2/4) = 100).",
        ),
        (
            expected / 2,
            "that is the cosine of the two whole rows (each is sqrt(2) long), but the "
            "dot product is not divided by their lengths: add the two pairs' cosines.",
        ),
        (
            fast + np.cos(20.0 / 10.0),
            "the slow pair turns at 1 / 100, not 1 / 10: the exponent is 2i / d_model "
            "(you used i / d_model), so its speed is 1 / 10000^(2/4).",
        ),
        (
            1.0 + slow,
            "cos 20 is not 1: 20 radians is not a whole number of turns (a turn is "
            "2π ≈ 6.28 radians).",
        ),
        (
            2 * slow,
            "both pairs turned by 0.2, but the fast pair (i = 0, speed 1) turns by the "
            "whole 20 radians.",
        ),
        (
            -expected,
            "the sign is off: 20 steps on, each pair contributes the cosine of its turn, "
            "and here both cosines are positive.",
        ),
        *(
            (
                np.cos(steps) + np.cos(steps / 100.0),
                f"that is {steps:.0f} steps, not 20: from pos to pos + 20 each pair turns "
                "by 20 times its speed.",
            )
            for steps in (21.0, 19.0)  # an off-by-one count of the steps
        ),
        (
            float(positional_encoding(21, 32)[0] @ positional_encoding(21, 32)[20]),
            "that is the d_model = 32 value (16 pairs): the exercise asks for d_model = 4, "
            "two pairs.",
        ),
        (
            fast * slow,
            "you multiplied the two cosines: each pair adds its own cosine to the dot "
            "product, so add them.",
        ),
    )
    return check_number("pe-offset", answer, expected, mistakes=_rounded(answer, expected, pair))

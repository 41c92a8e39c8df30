"""Chapter 1: the sinusoidal encoding with the usual mistakes, for the checker in
``positions.py``."""

from __future__ import annotations

import numpy as np


def _encoding(
    n: int,
    d: int,
    *,
    base=10000.0,
    rate="2i",
    swap=False,
    start=0,
    halves=False,
    degrees=False,
    per_length=False,
    turns=False,
):
    """The sinusoidal encoding, or one of the usual mistakes, for an even ``d``.

    ``rate`` is the exponent: "2i" (right: i counts pairs), "2i+2" (pairs counted from 1),
    "2i+1" (odd tops, from ``np.arange(1, d, 2)``), "i" (half of it), "4i" (twice it: 2j/d
    with j = 0, 2, 4, ... already the column index),
    "int" (``2 * i // d``, 0 for every pair), "2i no /d" (no division by d),
    "col" (each column's own index j, j/d) or "2col"
    (2j/d, the formula's 2i with the column index j in place of the pair index); or a slip of
    operator precedence: "pow/d" (dividing pos by ``10000 ** (2 * i) / d``), "pos/pow/d"
    (``pos / 10000 ** (2 * i) / d``) or "1/pow2" (speed ``1 / 10000 ** 2 * i / d``).
    ``degrees`` converts the angle with ``np.radians``, as if it were in degrees;
    ``per_length`` divides the positions by ``n``; ``turns`` multiplies the angle by 2π.
    """
    pos = np.arange(start, start + n)[:, None] / (n if per_length else 1)  # (n, 1)
    i = np.arange(d // 2)  # (d/2,): one index per (sin, cos) pair
    unit = np.radians if degrees else (lambda angle: angle)  # degrees: a needless conversion
    unit = (lambda angle: 2 * np.pi * angle) if turns else unit  # the angle read as turns
    slips = {  # the speed of pair i when ** binds tighter than the learner meant
        "pow/d": d / base ** (2 * i),  # pos / (10000 ** (2 * i) / d)
        "pos/pow/d": 1 / (base ** (2 * i) * d),  # pos / 10000 ** (2 * i) / d
        "1/pow2": 1 / base**2 * i / d,  # 1 / 10000 ** 2 * i / d
    }
    if rate in ("col", "2col"):
        j = np.arange(d)  # (d,): the column index, where the pair index i = j // 2 belongs
        angle = unit(pos / base ** ((2 if rate == "2col" else 1) * j / d))  # (n, d)
        sines, cosines = np.sin(angle[:, 0::2]), np.cos(angle[:, 1::2])  # (n, d/2) each
    else:
        if rate in slips:
            angle = pos * slips[rate]  # (n, d/2)
        else:
            tops = {"2i": 2 * i, "i": i, "4i": 4 * i, "2i+1": 2 * i + 1, "2i+2": 2 * (i + 1)}
            if rate == "int":
                exponent = 2 * i // d
            elif rate == "2i no /d":  # the division by d left out
                exponent = 2 * i
            else:
                exponent = tops[rate] / d
            angle = pos / base**exponent  # (n, d/2)
        sines, cosines = np.sin(unit(angle)), np.cos(unit(angle))
    if swap:
        sines, cosines = cosines, sines
    if halves:
        return np.concatenate([sines, cosines], axis=1)  # (n, d)
    PE = np.empty((n, d))
    PE[:, 0::2], PE[:, 1::2] = sines, cosines
    return PE


_PE_MISTAKES = (
    (
        {"swap": True},
        "sin and cos are swapped: even columns (0, 2, ...) take the sine and odd columns "
        "the cosine, so position 0 is [0, 1, 0, 1, ...].",
    ),
    (
        {"rate": "i"},
        "the wavelengths grow too slowly: you used 10000^(i/d_model). The exponent is "
        "2i/d_model, where i counts the (sin, cos) pairs.",
    ),
    (
        {"rate": "4i"},
        "the wavelengths grow too fast: you used 10000^(4i/d_model), twice the exponent. "
        "If your i already runs 0, 2, 4, ... (np.arange(0, d_model, 2)), it is 2i: "
        "divide it by d_model without doubling it again.",
    ),
    (
        {"rate": "col"},
        "the cosine columns have the wrong frequency: columns 2i and 2i+1 share one "
        "angle, pos / 10000^(2i/d_model). You used each column's own index in the exponent.",
    ),
    (
        {"rate": "2col"},
        "the exponent uses the pair index i = j // 2, not the column index j: columns 2i "
        "and 2i+1 share one angle, pos / 10000^(2i/d_model).",
    ),
    (
        {"rate": "int"},
        "every pair turns at one speed: your exponent is 0. Integer division is one way to "
        "get there (2 * i // d_model is 0); the exponent is the fraction 2i / d_model.",
    ),
    (
        {"rate": "2i no /d"},  # (i alone, no /d, is the "4i" slip at d_model = 4)
        "your slow columns never turn: the exponent is 2i/d_model, a fraction between 0 and "
        "1. Without the division by d_model, 10000^(2i) is so large that every pair but the "
        "first stands still.",
    ),
    (
        {"rate": "2i+2"},
        "column 0 turns at speed 1 (10000^0): i starts at 0, so count the pairs 0, 1, "
        "..., d_model/2 - 1.",
    ),
    (
        {"halves": True},
        "you put all the sines first and all the cosines after them: a valid layout used "
        "elsewhere (a fixed reordering of columns), but this exercise follows the paper's "
        "interleaving, sine in column 2i and cosine in column 2i+1.",
    ),
    (
        {"rate": "2i+1"},
        "your exponents are odd (1/d_model, 3/d_model, ...), as np.arange(1, d_model, 2) "
        "gives: 2i runs 0, 2, 4, ..., so build it from np.arange(0, d_model, 2).",
    ),
    ({"start": 1}, "positions count from 0: the first row is position 0, [0, 1, 0, 1, ...]."),
    (
        {"per_length": True},
        "you divided the positions by n, the sentence's length, so a position's stamp would "
        "change with the sentence it sits in: use pos itself, 0, 1, 2, ...",
    ),
    (
        {"turns": True},
        "you multiplied the angle by 2π, as if pos / 10000^(2i/d_model) counted turns: it is "
        "already an angle in radians, which np.sin and np.cos take.",
    ),
    *(
        (
            {"rate": slip},
            f"{code} is not what you meant: Python raises to a power before it multiplies "
            "or divides, so the exponent needs brackets: pos / 10000 ** (2 * i / d_model).",
        )
        for slip, code in (
            ("pow/d", "10000 ** (2 * i) / d_model"),
            ("pos/pow/d", "pos / 10000 ** (2 * i) / d_model"),
            ("1/pow2", "1 / 10000 ** 2 * i / d_model"),
        )
    ),
    (
        {"degrees": True},
        "the angles are already in radians, which np.sin and np.cos expect: drop the "
        "conversion (np.radians or np.deg2rad).",
    ),
    *(
        ({"base": b}, f"the base is 10000, not {name}: angle = pos / 10000^(2i/d_model).")
        for b, name in ((1000.0, "1000"), (100000.0, "100000"), (np.e, "e"))
    ),
    (
        {"base": 1e-4},  # pos / (1/10000)^(2i/d) = pos * 10000^(2i/d)
        "you multiplied pos by 10000^(2i/d_model): divide by it, so that later columns "
        "turn more slowly.",
    ),
)


_WIDTH_SLIPS = (
    (
        lambda d: 4,
        "the exponent divides by 4 whatever d_model is (on {case}): use the argument, "
        "2i / d_model.",
    ),
    (lambda d: d - 1, "the exponent is 2i / d_model, not 2i / (d_model - 1) (on {case})."),
)

"""The slips behind a wrong hand-computed projection element (chapter 2's first exercise):
misreadings of the page, and one hint for an answer that several slips give."""

from __future__ import annotations

import numbers

import numpy as np

ROUNDED = "the answer rounded to one decimal"

# The chapter's exercise, from attention_lib.toy (which checks may not import; a test keeps
# these equal): element 1 of x_delicious W_q, and the toy's rows and matrices for the hints.
_TOKENS = ("I", "ate", "the", "cake", "and", "it", "was", "delicious")
_X = (
    (0, 1, 0, 0),
    (0.3, 0, 1, 0),
    (0, 0, 0, 0.5),
    (1, 0, 0, 0),
    (0, 0, 0.2, 0.3),
    (0, 0.2, 0, 1),
    (0, 0, 0.6, 0.2),
    (0.7, 0, 0.3, 0),
)
_W_Q = ((1.6, 0.4, 0, 0.9), (0, 1.2, 0.4, 0), (0.8, 0.3, 0.5, 0), (1.8, 0, 0, 0.3))
_W_K = ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0.2, 0, 0, 1))
_W_V = ((1, 0, 1, 0), (1, 0, 0, 1), (0, 1, 0, 0), (0, 0, 1, 0))


def _toy_case() -> dict:
    """The arguments of the chapter's exercise, so that its cell passes the answer alone."""
    X = np.array(_X, dtype=float)
    return {
        "x": X[_TOKENS.index("delicious")],
        "W": np.array(_W_Q, dtype=float),
        "column": 1,
        "x_name": "x_delicious",
        "W_name": "W_q",
        "others": {"W_k": np.array(_W_K, dtype=float), "W_v": np.array(_W_V, dtype=float)},
        "rows": dict(zip(_TOKENS, X, strict=True)),
    }


def shared_numbers(answer, slips: list, pair: str) -> tuple:
    """The (number, hint) pairs, where an answer that several slips give names them all."""
    mistakes = tuple((wrong, hint) for wrong, hint, _ in slips)
    if not isinstance(answer, numbers.Real) or isinstance(answer, (bool, np.bool_)):
        return mistakes
    close = [name for wrong, _, name in slips if abs(float(answer) - wrong) <= 0.005 + 1e-12]
    names = [name for name in close if name is not None]
    names = list(dict.fromkeys(names))  # each slip once, in order
    if len(names) < 2:
        return mistakes
    if names[0] == ROUNDED:  # "Give 2 decimals" first: rounding is the likeliest slip
        slip = "; or ".join(names[1:3])
        hint = (
            f"give 2 decimals: this is the answer rounded to one decimal. If it is your full "
            f"result, it is {slip}. {pair}."
        )
        return ((float(answer), hint), *mistakes)
    slip = "; or ".join(names[:3])
    hint = f"{len(names[:3])} slips give this number: {slip}. {pair}."
    return ((float(answer), hint), *mistakes)


def misread(x: np.ndarray, W: np.ndarray, j: int, x_name: str, W_name: str, shown: str):
    """Wrong numbers from reading the page rather than multiplying, each with its hint."""
    col, pair = W[:, j], f"Pair every entry of {x_name} with the same row of column {j}"
    found = []
    if j < x.size:  # "element j" taken as the token's own entry j (times W[j, j])
        hint = (
            f"that uses position {j} only: {x_name} holds {x[j]:g} there ({x[j]:g} × "
            f"{col[j]:g} = {x[j] * col[j]:g}), but its other entries count too. {pair}, "
            f"({shown}), and add all {x.size} products."
        )
        name = f"position {j} of {x_name} alone ({x[j]:g} × {col[j]:g})"
        found.append((x[j], hint, name))
        if x[j] * col[j] == 0:  # a nonzero product is already named as "only the product"
            found.append((0.0, hint, name))
    found += [
        (
            col[f],
            f"that is {W_name}[{f}, {j}] read off alone, without {x_name}. Multiply each "
            f"entry of column {j} by the entry of {x_name} in the same row (row {f} gets "
            f"{x[f]:g}), then add.",
            f"{W_name}[{f}, {j}] read off alone",
        )
        for f in range(col.size)
    ]
    found += [
        (
            x[f],
            f"that is entry {f} of {x_name} read off alone, without {W_name}. {pair}, "
            f"({shown}): entry {f} goes with {col[f]:g}. Multiply each pair, then add.",
            f"entry {f} of {x_name} read off alone",
        )
        for f in range(min(x.size, col.size))
        if f != j
    ]
    for step in (1, -1):  # every entry of x paired with the next (or previous) row
        bad = [(f, f + step) for f in range(x.size) if 0 <= f + step < col.size]
        hit = [(f, g) for f, g in bad if x[f] * col[g] != 0]
        if hit:
            f, g = hit[0]
            found.append(
                (
                    sum(x[f] * col[g] for f, g in bad),
                    f"pairing entries one row apart gives this, e.g. {x[f]:g} × {col[g]:g} "
                    f"takes position {f} of {x_name} and row {g} of column {j}. {pair}: "
                    f"{x[f]:g} goes with {col[f]:g}. If your pairs were right, recheck the "
                    "addition.",
                    f"entries paired one row apart ({x[f]:g} × {col[g]:g})",
                )
            )
    return found

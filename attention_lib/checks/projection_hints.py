"""More hints for chapter 2's hand-worked exercises: arithmetic slips in one projected
element, and answers to the self-match count that are not the count of ``S = Q Qᵀ``."""

from __future__ import annotations

import numbers

import numpy as np

from .base import CheckResult


def arithmetic_slips(x: np.ndarray, col: np.ndarray, j: int, x_name: str, W_name: str) -> list:
    """(number, hint, name) for a dot product whose products were multiplied instead of
    added (0.7 × 0.4 × 0.3), and for the entries of ``x`` added up without the column."""
    nonzero = np.flatnonzero(x * col)
    pairs = " and ".join(f"{x[f]:g} × {col[f]:g}" for f in nonzero)
    values = [float(np.prod((x * col)[nonzero]))] if nonzero.size > 1 else []
    for f in nonzero:  # one product times a factor of another: 0.7 × 0.4 × 0.3
        values += [x[f] * col[f] * v for g in nonzero if g != f for v in (x[g], col[g])]
    hint = f"you multiplied where you should add: work out each product ({pairs}), then add them."
    found = [(float(v), hint, "the products multiplied, not added") for v in dict.fromkeys(values)]
    hint = (
        f"you added {x_name}'s entries without multiplying by the column: multiply each by "
        f"the entry in the same row of column {j} of {W_name}, then add."
    )
    found.append((float(x.sum()), hint, f"{x_name}'s entries added up without {W_name}"))
    return found


def not_one_count(answer, S: np.ndarray, n: int) -> CheckResult | None:
    """A FAIL for a count above the number of words, for a list (of word indices, of each
    row's best match, of words) rather than a count, or for an ``S`` that is not symmetric
    (``S_shared`` overwritten, say with ``Q @ K.T``): the count would be another design's."""
    if answer is None or isinstance(answer, (bool, np.bool_)):
        return None
    idx = answer.tolist() if isinstance(answer, np.ndarray) else answer  # word indices?
    idx = list(idx) if isinstance(idx, (list, tuple)) else []
    indices = idx[1:] and all(type(i) is int and -1 < i < n for i in idx)
    if isinstance(answer, numbers.Real) and np.isfinite(answer) and answer > n:
        hint = f"there are only {n} words, so at most {n} can match themselves best."
    elif indices and idx == S.argmax(axis=-1).tolist():  # best = S.argmax(-1) itself
        hint = (
            f"that is each row's best match; compare it with np.arange({n}) and count the "
            "matches with .sum()."
        )
    elif indices:  # [0, 3, 5]
        hint = f"{answer!r} is the list of words; give how many, e.g. len(...)."
    elif idx and len(idx) < n and all(isinstance(i, str) for i in idx):  # ['I', 'cake', 'it']
        hint = f"expected one number, got {answer!r}: count them with len(...)."
    elif not np.allclose(S, S.T):
        hint = (
            "S_shared should be Q @ Q.T (symmetric), but the S you passed is not: was it "
            "overwritten, with Q @ K.T say? Run S_shared = al.attention_scores(Q, Q) again."
        )
    else:
        return None
    result = CheckResult("self-matches", "FAIL", hint)
    print(result.line)
    return result


def count_causes(S: np.ndarray, others: dict | None, tokens, own_of) -> tuple:
    """(count, hint) for a count that fits another design of the experiment (``others``,
    counted by ``own_of``), or the rows that pick the most picked other word."""
    designs: dict[int, list[str]] = {}
    for name, M in (others or {}).items():
        designs.setdefault(own_of(np.asarray(M, dtype=float)), []).append(repr(name))
    why = {
        count: f"the design{'s' if len(names) > 1 else ''} {' and '.join(names)} of the experiment"
        for count, names in designs.items()
    }
    n = S.shape[0]
    best, rows = S.argmax(axis=-1), np.arange(n)
    col = int(np.bincount(best[best != rows], minlength=n).argmax())  # the most picked word
    pickers = np.flatnonzero((best == col) & (rows != col))  # ate, the, and, was pick 'it'
    picked = {}
    if pickers.size > 1:
        if tokens is not None:  # words, not numbers: 'the 4 rows that pick 'it''
            what = f"pick {tokens[col]!r}"
        else:
            named = ", ".join(map(str, pickers[:-1])) + f" and {pickers[-1]}"
            what = f"pick word {col} (rows {named}, counting from 0)"
        picked[int(pickers.size)] = f"the {pickers.size} rows that {what} instead of themselves"
    count_them = (
        "Count the rows of S = Q Qᵀ whose largest score sits on the diagonal: "
        "S.argmax(-1) equals the row index."
    )
    hints = []
    for count in dict.fromkeys([*why, *picked]):
        if count in why and count in picked:
            start = f"{count} fits {why[count]}, or you counted {picked[count]}."
        elif count in why:
            start = f"{count} fits {why[count]}, or a miscount."
        else:
            start = f"did you count {picked[count]}?"
        hints.append((count, f"{start} {count_them}"))
    return tuple(hints)

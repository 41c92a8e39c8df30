"""Chapter 2 checkers: one element of a projection by hand, and the shared-matrix count
(the third, one score from scratch, is in ``one_score.py``)."""

from __future__ import annotations

import math

import numpy as np

from .base import CheckResult, check_number
from .projection_hints import arithmetic_slips, count_causes, not_one_count
from .projection_slips import ROUNDED, _toy_case, misread, shared_numbers

# --- Exercise: one element of a projection, by hand --------------------------------------


def check_projection_element(
    answer,
    x=None,
    W=None,
    column: int | None = None,
    *,
    x_name: str = "x",
    W_name: str = "W",
    others: dict | None = None,
    rows: dict | None = None,
) -> CheckResult:
    r"""Check a hand-computed ``(x W)[column]``: the dot product of ``x`` with a column of W.

    Parameters
    ----------
    answer : float or None
        The learner's number; ``None`` means "not answered yet". Given alone, it is
        checked against the chapter's exercise: element 1 of ``x_delicious W_q``.
    x : array_like of shape (d_model,)
        The token's row of ``X``.
    W : array_like of shape (d_model, d)
        The projection the element comes from, e.g. ``toy.W_q``.
    column : int
        Which element of the projected vector, i.e. which column of ``W``.
    x_name, W_name : str
        Names used in the hints, e.g. ``"x_delicious"`` and ``"W_q"``.
    others : dict of str to ndarray of shape (d_model, d), optional
        Matrices a learner might pick up by mistake, e.g. ``{"W_k": toy.W_k}``.
    rows : dict of str to ndarray of shape (d_model,), optional
        The other tokens' rows of ``X`` by name, e.g. ``dict(zip(toy.TOKENS, toy.X))``:
        an element of another token's projection (a worked example's) is named as such.

    Notes
    -----
    .. math:: (x W)_j = \sum_{f=0}^{d_{model}-1} x_f \, W_{f j}

    The expected value comes from the arrays passed in, so it follows the toy numbers.
    The hints recognise: the answer rounded to one decimal (or cut short, when the exact
    answer has more than 2 decimals), a row of ``W`` instead of a column, one product
    alone, the column added up without ``x``, position ``column`` of ``x`` alone, one entry
    of the column read off, entries paired one row out of step, another column, another
    matrix from ``others`` and another token's element from ``rows``.
    """
    if x is None and W is None and column is None and others is None and rows is None:
        return check_projection_element(answer, **_toy_case())
    if x is None or W is None or column is None:
        raise TypeError("give x, W and column together, or the answer alone (the exercise's)")
    x, W = np.asarray(x, dtype=float), np.asarray(W, dtype=float)
    j = column
    col = W[:, j]
    terms = x * col  # (d_model,): the dot product, term by term
    shown = ", ".join(f"{v:g}" for v in col)
    expected = float(terms.sum())
    # Each slip is (its number, its full hint, a short name used when slips share a number).
    slips = [
        (
            x @ W[j],
            f"that is {x_name} · (row {j} of {W_name}). Element {j} uses column {j}, "
            f"({shown}), the entry at position {j} of every row: multiply it entry by "
            f"entry with {x_name} and add all {x.size} products.",
            f"{x_name} · (row {j} of {W_name})",
        ),
        (
            col.sum(),
            f"you added up column {j} of {W_name} without {x_name}: multiply each entry by "
            f"the matching entry of {x_name} first.",
            f"column {j} of {W_name} added up without {x_name}",
        ),
    ]
    slips += [
        (
            terms[f],
            f"that is only the product {x[f]:g} × {col[f]:g}: add the products of all "
            f"{x.size} entries of {x_name} with column {j} of {W_name}.",
            f"only the product {x[f]:g} × {col[f]:g}",
        )
        for f in np.flatnonzero(terms)
    ]
    # Another matrix before misreadings: when both give the number, it is named first.
    by_value: dict[float, list[str]] = {}  # matrices that give the same number: "W_k or W_v"
    for name, M in (others or {}).items():
        by_value.setdefault(round(float(x @ np.asarray(M, dtype=float)[:, j]), 6), []).append(name)
    slips += [
        (
            value,
            f"you used {' or '.join(names)}; this element comes from {W_name}.",
            f"{' or '.join(names)} used instead of {W_name}",
        )
        for value, names in by_value.items()
    ]
    slips += misread(x, W, j, x_name, W_name, shown)
    slips += [
        (
            x @ W[:, k],
            f"that is element {k}, from column {k} of {W_name}; the question asks for "
            f"element {j}, from column {j} (counting from 0).",
            f"element {k} (column {k} of {W_name})",
        )
        for k in range(W.shape[1])
        if k != j
    ]
    if round(expected, 1) != round(expected, 2):  # 1.4 for 1.36: rounding, not arithmetic
        hint = "close: that is the answer rounded to one decimal. Give 2 decimals."
        slips.insert(0, (round(expected, 1), hint, ROUNDED))
    if expected != 0:  # -0.37 for 0.37, then 37 for 0.37
        why = f"{x_name} and column {j} of {W_name} have no negative entries"
        why = why if min(x.min(), col.min()) >= 0 else "recheck the sign of each product"
        slips.append((-expected, f"the sign is wrong: {why}.", "the sign flipped"))
        hint = (
            "that looks like a percent: the element is a plain number, a fraction, not a percent."
        )
        slips.append((100 * expected, hint, None))
    exact = round(expected, 10)  # 0.36999999999999994 is 0.37 by hand: float noise, no slip
    cut = math.trunc(round(exact * 100, 6)) / 100  # 0.3675 cut to 0.36, not rounded to 0.37
    if cut != round(exact, 2):
        hint = f"close: round, do not truncate: {exact:g} rounds to {round(exact, 2):.2f}."
        slips.insert(0, (cut, hint, f"{exact:g} cut to {cut:.2f}, not rounded"))
    slips += arithmetic_slips(x, col, j, x_name, W_name)  # before a neighbour's: 0.084, not 0.08
    for token, other in (rows or {}).items():  # a worked example's number, or a neighbour's
        other = np.asarray(other, dtype=float)
        if not np.array_equal(other, x):
            slips += [
                (
                    value,
                    f"is that element {k} of the row of {token!r} through {W_name}, another "
                    f"token's number? This one starts from {x_name} and column {j}.",
                    None,  # a coincidence too likely to name next to a real slip
                )
                for k, value in enumerate(other @ W)
                # a round guess (0.5, 0.1) is no evidence of a neighbour: only 2-decimal numbers
                if round(value, 1) != round(value, 2)
            ]
    pair = (
        f"Pair each entry of {x_name} with the entry in the same row of column {j} of "
        f"{W_name}, ({shown}), multiply each pair and add all {x.size} products"
    )
    fallback = f"{{value}} is too {{side}}. {pair}: is one factor taken from another row or column?"
    whole = _whole_row(answer, x @ W, j, x_name, W_name)
    if whole is not None:
        return whole
    return check_number(
        "projection-element",
        answer,
        expected,
        places=2,
        mistakes=shared_numbers(answer, slips, pair),
        fallback=fallback,
    )


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def _whole_row(answer, row: np.ndarray, j: int, x_name: str, W_name: str) -> CheckResult | None:
    """A FAIL when ``answer`` is the whole projected row ``x W`` rather than its element j."""
    try:
        whole = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return None
    if whole.shape != row.shape or row.size < 2 or not np.allclose(whole, row, atol=0.005):
        return None
    what = {"W_q": "query", "W_k": "key", "W_v": "value"}.get(W_name, "vector")
    nth = _ORDINALS[j] if j < len(_ORDINALS) else f"entry {j} counting from 0"
    hint = f"that is the whole {what}, {x_name} {W_name}; element {j} is its {nth} entry"
    result = CheckResult("projection-element", "FAIL", f"{hint} (from 0): give that one number.")
    print(result.line)
    return result


# --- Exercise: with one shared matrix, how many words match themselves best? -------------


def check_self_matches(
    answer, S, *, others: dict | None = None, tokens: list[str] | None = None
) -> CheckResult:
    """Check a count: the rows of the shared-matrix scores ``S = Q Qᵀ`` whose best key is
    the query's own word (the largest score of row ``i`` sits at column ``i``).

    Parameters
    ----------
    answer : int or None
        The learner's count; ``None`` means "not answered yet".
    S : array_like of shape (n, n)
        Scores of queries against queries, e.g. ``al.attention_scores(Q, Q)``.
    others : dict of str to array_like of shape (n, n), optional
        Score matrices of other designs by name (the chapter's experiment): a count
        that fits one of them, and not ``S``, is named as that design's, or a miscount.
        So is the number of rows whose best match is the most picked other word.
    tokens : list of str, optional
        The words of the rows, so that a hint can name them ("it") rather than number them.
    """
    S = np.asarray(S, dtype=float)
    n, own = S.shape[0], _count_own(S)
    early = not_one_count(answer, S, n)
    if early is not None:
        return early
    mistakes = (
        (
            n,
            "not every word: a score with yourself is |q|², but another query that is "
            "longer and points nearly the same way scores more (q_i · q_j = "
            "|q_i| |q_j| cos θ). Look at the argmax of each row of S.",
        ),
        (
            n - own,
            "that counts the words whose best match is another word; the question asks "
            "for those whose best match is themselves.",
        ),
    )
    # A count can come from another design or from a slip on S: the hint names both.
    mistakes += count_causes(S, others, tokens, _count_own)
    # The longest query must pick itself; the hint does not name it (the solution does).
    mistakes += (
        (
            1,
            "1 counts only the word the law guarantees, the one with the longest query; shorter "
            "queries can match themselves best too. Count the rows whose largest score sits "
            "on the diagonal: S.argmax(-1) equals the row index.",
        ),
    )
    mistakes = tuple((wrong, hint) for wrong, hint in mistakes if wrong != own)
    fallback = (
        "{value} is too {side}: a row counts when its largest score sits on the diagonal. "
        "Count the rows where S.argmax(-1) equals the row index rather than judging "
        "by eye."
    )
    return check_number("self-matches", answer, own, places=0, mistakes=mistakes, fallback=fallback)


def _count_own(S: np.ndarray) -> int:  # rows of S whose largest score is on the diagonal
    return int(np.sum(S.argmax(axis=-1) == np.arange(S.shape[0])))

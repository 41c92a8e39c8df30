"""Chapter 2 checkers: one element of a projection by hand, and the shared-matrix count."""

from __future__ import annotations

import numpy as np

from .base import CheckResult, check_number

# --- Exercise: one element of a projection, by hand --------------------------------------


def check_projection_element(
    answer,
    x,
    W,
    column: int,
    *,
    x_name: str = "x",
    W_name: str = "W",
    others: dict | None = None,
) -> CheckResult:
    r"""Check a hand-computed ``(x W)[column]``: the dot product of ``x`` with a column of W.

    Parameters
    ----------
    answer : float or None
        The learner's number; ``None`` means "not answered yet".
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

    Notes
    -----
    .. math:: (x W)_j = \sum_{f=1}^{d_{model}} x_f \, W_{f j}

    The expected value comes from the arrays passed in, so it follows the toy numbers.
    The hints recognise: the answer rounded to one decimal, a row of ``W`` instead of a
    column, one product alone, the column added up without ``x``, another column, and
    another matrix from ``others``.
    """
    x, W = np.asarray(x, dtype=float), np.asarray(W, dtype=float)
    j = column
    col = W[:, j]
    terms = x * col  # (d_model,): the dot product, term by term
    shown = ", ".join(f"{v:g}" for v in col)
    row = x @ W[j]
    alone = [f for f in np.flatnonzero(terms) if np.isclose(terms[f], row, atol=0.005)]
    also = f" (or only the product {x[alone[0]]:g} × {col[alone[0]]:g})" if alone else ""
    mistakes = [
        (
            row,
            f"that is {x_name} · (row {j} of {W_name}){also}. Element {j} uses column {j}, "
            f"({shown}), the entry at position {j} of every row: multiply it entry by "
            f"entry with {x_name} and add all {x.size} products.",
        ),
        (
            col.sum(),
            f"you added up column {j} of {W_name} without {x_name}: multiply each entry by "
            f"the matching entry of {x_name} first.",
        ),
    ]
    mistakes += [
        (
            terms[f],
            f"that is only the product {x[f]:g} × {col[f]:g}: add the products of all "
            f"{x.size} entries of {x_name} with column {j} of {W_name}.",
        )
        for f in np.flatnonzero(terms)
    ]
    expected = float(terms.sum())
    mistakes += [
        (
            x @ W[:, k],
            f"that is element {k}, from column {k} of {W_name}; the question asks for "
            f"element {j}, from column {j} (counting from 0).",
        )
        for k in range(W.shape[1])
        if k != j
    ]
    if round(expected, 1) != round(expected, 2):  # 1.4 for 1.36: rounding, not arithmetic
        mistakes.insert(
            0,
            (
                round(expected, 1),
                "close: that is the answer rounded to one decimal. Give 2 decimals.",
            ),
        )
    # Other matrices that give the same wrong number are named together: "W_k or W_v".
    by_value: dict[float, list[str]] = {}
    for name, M in (others or {}).items():
        by_value.setdefault(round(float(x @ np.asarray(M, dtype=float)[:, j]), 6), []).append(name)
    mistakes += [
        (value, f"you used {' or '.join(names)}; this element comes from {W_name}.")
        for value, names in by_value.items()
    ]
    return check_number("projection-element", answer, expected, places=2, mistakes=tuple(mistakes))


# --- Exercise: with one shared matrix, how many words match themselves best? -------------


def check_self_matches(answer, S) -> CheckResult:
    """Check a count: the rows of the shared-matrix scores ``S = Q Qᵀ`` whose best key is
    the query's own word (the largest score of row ``i`` sits at column ``i``).

    Parameters
    ----------
    answer : int or None
        The learner's count; ``None`` means "not answered yet".
    S : array_like of shape (n, n)
        Scores of queries against queries, e.g. ``al.attention_scores(Q, Q)``.
    """
    S = np.asarray(S, dtype=float)
    n = S.shape[0]
    own = int(np.sum(S.argmax(axis=-1) == np.arange(n)))  # rows whose best column is i
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
    mistakes = tuple((wrong, hint) for wrong, hint in mistakes if wrong != own)
    return check_number("self-matches", answer, own, places=0, mistakes=mistakes)

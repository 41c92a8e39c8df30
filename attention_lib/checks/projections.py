"""Chapter 2 checkers: a projection ``X @ W`` written by hand, and one element of it."""

from __future__ import annotations

import numpy as np

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

# --- Exercise: project token vectors with a weight matrix --------------------------------


def check_project(fn) -> CheckResult:
    """Check ``fn(X, W)``: token rows ``X`` (n, d_model) times ``W`` (d_model, d) -> (n, d).

    The first case is square, so that the usual slips (``W @ X``, a transposed ``W`` or
    ``X``, ``X * W``) still run and can be named; later cases change ``n`` and ``d``.
    """
    rng = np.random.default_rng(2)

    def matrix(*shape):  # one decimal, like the toy model, and no zeros
        return np.round(rng.uniform(0.1, 1.0, size=shape), 1) * rng.choice([-1, 1], size=shape)

    def run(cases: Cases) -> None:
        X, W = matrix(4, 4), matrix(4, 4)
        case = "4 tokens with a 4 x 4 W"
        out = cases.run(case, X, W)
        expect_shape(out, (4, 4), case)
        known_mistakes(
            out,
            (
                W @ X,
                "you computed W @ X. Order matters: each token is a row of X, and a row "
                "vector multiplies a matrix from the left, so write X @ W.",
            ),
            (
                X * W,
                "X * W multiplies entry by entry. A projection needs the matrix product: "
                "element (i, j) is the dot product of row i of X with column j of W (X @ W).",
            ),
            (
                X @ W.T,
                "you used W transposed: element (i, j) must pair row i of X with column j "
                "of W, not with row j of W.",
            ),
            (
                X.T @ W,
                "you transposed X: its rows are the tokens, and each row is multiplied by W "
                "as it is (X @ W).",
            ),
            (
                (X @ W).T,
                "you transposed the result: keep one row per token, as X has (X @ W).",
            ),
        )
        same(out, X @ W, case)

        X, W = matrix(8, 4), matrix(4, 4)
        _project_case(cases, "8 tokens with a 4 x 4 W (more tokens than features)", X, W)

        X, W = matrix(1, 4), matrix(4, 4)
        _project_case(cases, "one token, X of shape (1, 4)", X, W)

        X, W = matrix(8, 4), matrix(4, 2)
        _project_case(cases, "8 tokens with a narrower W of shape (4, 2)", X, W)

        X, W = matrix(3, 6), matrix(6, 5)
        _project_case(cases, "X of shape (3, 6) with W of shape (6, 5)", X, W)

    return verdict("project", fn, run)


def _project_case(cases: Cases, case: str, X: np.ndarray, W: np.ndarray) -> None:
    n, d = X.shape[0], W.shape[1]
    out = cases.run(case, X, W)
    if out.shape == (n, X.shape[1]) and d != X.shape[1]:
        raise Fail(
            f"returned shape {out.shape}, expected {(n, d)} (on {case}): the product has one "
            "column per column of W, not per column of X."
        )
    expect_shape(
        out,
        (n, d),
        case,
        f" [{n} × {X.shape[1]}] · [{W.shape[0]} × {d}] gives [{n} × {d}]: one row per "
        "token, one column per column of W.",
    )
    same(out, X @ W, case)


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
    The hints recognise: a row of ``W`` instead of a column, one product alone, the
    column added up without ``x``, and another matrix from ``others``.
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
    # Other matrices that give the same wrong number are named together: "W_k or W_v".
    by_value: dict[float, list[str]] = {}
    for name, M in (others or {}).items():
        by_value.setdefault(round(float(x @ np.asarray(M, dtype=float)[:, j]), 6), []).append(name)
    mistakes += [
        (value, f"you used {' or '.join(names)}; this element comes from {W_name}.")
        for value, names in by_value.items()
    ]
    return check_number(
        "projection-element", answer, float(terms.sum()), places=2, mistakes=tuple(mistakes)
    )

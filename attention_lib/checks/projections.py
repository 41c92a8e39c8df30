"""Chapter 2 checkers: one element of a projection by hand, and the shared-matrix count."""

from __future__ import annotations

import numpy as np

from .base import (
    Cases,
    CheckResult,
    Fail,
    call,
    check_number,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)

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
    rows: dict | None = None,
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
    rows : dict of str to ndarray of shape (d_model,), optional
        The other tokens' rows of ``X`` by name, e.g. ``dict(zip(toy.TOKENS, toy.X))``:
        an element of another token's projection (a worked example's) is named as such.

    Notes
    -----
    .. math:: (x W)_j = \sum_{f=0}^{d_{model}-1} x_f \, W_{f j}

    The expected value comes from the arrays passed in, so it follows the toy numbers.
    The hints recognise: the answer rounded to one decimal, a row of ``W`` instead of a
    column, one product alone, the column added up without ``x``, another column,
    another matrix from ``others`` and another token's element from ``rows``.
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
    for token, other in (rows or {}).items():  # a worked example's number, or a neighbour's
        other = np.asarray(other, dtype=float)
        if not np.array_equal(other, x):
            mistakes += [
                (
                    value,
                    f"that is element {k} of the row of {token!r} through {W_name}, another "
                    f"token's number; this one starts from {x_name} and column {j}.",
                )
                for k, value in enumerate(other @ W)
            ]
    fallback = (
        f"{{value}} is too {{side}}. Pair each entry of {x_name} with the entry in the same "
        f"row of column {j} of {W_name}, ({shown}), multiply each pair and add all "
        f"{x.size} products: is one factor taken from another row or column?"
    )
    return check_number(
        "projection-element",
        answer,
        expected,
        places=2,
        mistakes=tuple(mistakes),
        fallback=fallback,
    )


# --- Exercise: with one shared matrix, how many words match themselves best? -------------


def check_self_matches(answer, S, *, others: dict | None = None) -> CheckResult:
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
        that fits one of them, and not ``S``, is named as that design's.
    """
    S = np.asarray(S, dtype=float)
    n, own = S.shape[0], _count_own(S)
    by_count: dict[int, list[str]] = {}
    for name, M in (others or {}).items():
        by_count.setdefault(_count_own(np.asarray(M, dtype=float)), []).append(repr(name))
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
    mistakes += tuple(
        (
            count,
            f"{count} is the count for the design{'s' if len(names) > 1 else ''} "
            f"{' and '.join(names)} of the experiment; this question asks about one shared "
            "matrix, S = Q Qᵀ.",
        )
        for count, names in by_count.items()
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


# --- Exercise: one score from scratch ------------------------------------------------------


def _score(X, W_q, W_k, i: int, j: int) -> float:
    """The reference: the query of token i (row i of X through W_q) dot the key of token j."""
    return float((X[i] @ W_q) @ (X[j] @ W_k))


def check_one_score(fn) -> CheckResult:
    """Check ``fn(X, W_q, W_k, i, j)``: the score of token ``i``'s query with token ``j``'s key."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(3)
        for n, d, d_k, i, j in ((5, 3, 2, 1, 3), (4, 4, 4, 2, 0), (6, 3, 5, 4, 4)):
            X, W_q, W_k = rng.normal(size=(n, d)), *rng.normal(size=(2, d, d_k))
            case = f"X {X.shape}, W_q and W_k {W_q.shape}, i = {i}, j = {j}"
            try:
                out = cases.run(case, X, W_q, W_k, i, j)
            except Fail as fail:  # a shape error: say which slip, not what NumPy saw
                if "matmul" not in str(fail) and "aligned" not in str(fail):
                    raise
                slip = _shape_slip(fn)
                raise Fail(
                    f"the shapes do not fit (on {case}). {slip[0].upper()}{slip[1:]}"
                ) from None
            expect_shape(out, (), case, " One score is one number: q_i · k_j.")
            mistakes = [
                (_score(X, W_q, W_k, i, j) / np.sqrt(d_k), _SCALED),
                (_score(X, W_q, W_k, i, j) * np.sqrt(d_k), _SCALED),
                (_score(X, W_q, W_q, i, j), "you used W_q for the key too: k_j = x_j W_k."),
                (_score(X, W_k, W_k, i, j), "you used W_k for the query too: q_i = x_i W_q."),
                (float(X[i] @ X[j]), _UNPROJECTED),
            ]
            if i != j:  # (x_j W_q) · (x_i W_k): the query and the key of the wrong tokens
                mistakes.insert(0, (_score(X, W_q, W_k, j, i), _SWAPPED))
            if d == d_k:  # only square matrices allow these slips without a shape error
                mistakes.append((_score(X, W_q.T, W_k.T, i, j), _TRANSPOSED))
                mistakes.append((float(X[i] @ W_q @ W_k @ X[j]), _NO_KEY))
            known_mistakes(out, *mistakes)
            if not np.isclose(out, _score(X, W_q, W_k, i, j), atol=1e-6):
                _ignored_arguments(fn, out, (X, W_q, W_k, i, j), case)
            same(out, _score(X, W_q, W_k, i, j), case)

    return verdict("one-score", fn, run)


def _shape_slip(fn) -> str:
    """Which slip raised a shape error? Run ``fn`` where every matrix is square and see."""
    rng = np.random.default_rng(5)
    X, W_q, W_k = rng.normal(size=(4, 3)), *rng.normal(size=(2, 3, 3))
    try:
        out = call(fn, "a square case", X, W_q, W_k, 1, 2)
    except Exception:  # noqa: BLE001 - the diagnosis is a bonus; the plain hint stays
        return _ROW_FIRST
    if np.shape(out) == () and np.isclose(out, _score(X, W_q.T, W_k.T, 1, 2)):
        return _TRANSPOSED
    if np.shape(out) == () and np.isclose(out, X[1] @ W_q @ W_k @ X[2]):
        return _NO_KEY
    return _ROW_FIRST


def _ignored_arguments(fn, out, args, case: str) -> None:
    """Fail if a new X, W_q, W_k, i or j leaves the answer where it was: notebook globals."""
    rng, n = np.random.default_rng(11), len(args[0])
    unused = []
    for k, name in enumerate(("X", "W_q", "W_k", "i", "j")):
        changed = list(args)
        changed[k] = (args[k] + 1) % n if k > 2 else args[k] + rng.normal(size=args[k].shape)
        try:
            again = call(fn, case, *changed)
        except Exception:  # noqa: BLE001 - it reacted to the change: the argument is used
            continue
        if np.shape(again) == np.shape(out) and np.allclose(again, out, atol=1e-9):
            unused.append(name)
    if unused:
        names = ", ".join(unused[:-1]) + " and " * (len(unused) > 1) + unused[-1]
        raise Fail(
            f"your function ignores its argument{'s' * (len(unused) > 1)} {names}: new "
            f"values leave its answer at {float(out):.4g} (on {case}). "
            + (_GLOBALS if {"X", "W_q", "W_k"} & set(unused) else _BOTH_TOKENS)
        )


_SWAPPED = (
    "that is the score of query j with key i (or W_q and W_k swapped): the query comes from "
    "token i through W_q, the key from token j through W_k, and the two orders differ."
)
_UNPROJECTED = "that is x_i · x_j, before any projection: send x_i through W_q, x_j through W_k."
_TRANSPOSED = (
    "you multiplied by the transposes (W_q @ x_i): x_i W_q dots x_i with each column of W_q."
)
_GLOBALS = "Work from the arguments, not from notebook variables such as Q, K or toy.W_q."
_BOTH_TOKENS = "The query comes from token i and the key from token j: use both."
_ROW_FIRST = (
    "x_i has d_model entries and W_q has shape (d_model, d_k), so the query is "
    "q_i = X[i] @ W_q, the row first (W_q @ X[i] fits only when d_k = d_model); likewise "
    "k_j = X[j] @ W_k, and the score is q_i @ k_j."
)
_NO_KEY = (
    "q_i = x_i W_q and k_j = x_j W_k (the row first) are both d_k long, and the score dots "
    "them: (X[i] @ W_q) @ (X[j] @ W_k). The key is x_j W_k; x_i W_q W_k x_j never forms it."
)
_SCALED = (
    "you scaled the score by sqrt(d_k), which is chapter 4's step. Here the score is the "
    "raw dot product q_i · k_j."
)

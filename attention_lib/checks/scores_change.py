"""Chapter 3 checker: which scores a change of one row of W_q can move."""

from __future__ import annotations

import numpy as np

from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned (before becoming floats)
    Cases,
    CheckResult,
    Fail,
    Todo,
    call,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .names import uses_name
from .scores import _run

_TOY_TOKENS = 8  # the toy sentence's length, a size a mask may have been typed with

# --- Exercise: which scores can change when one row of W_q changes? ----------------------


def check_scores_that_change(fn) -> CheckResult:
    """Check ``fn(X, feature)``: a bool (n, n) mask of the scores ``X W_q (X W_k)ᵀ`` that
    move when row ``feature`` of ``W_q`` is edited (and ``W_k`` is not).

    Row ``f`` of ``W_q`` enters the query of token ``i`` with weight ``X[i, f]``, and no key
    uses ``W_q``; so every score in row ``i`` can change exactly when ``X[i, f] != 0``
    (one stays put only if the nudge is at right angles to that key). Every case, the
    unseen ones of grading too, gives each token at least one non-zero feature: an
    all-zero token has key 0 whatever ``W_k`` is, so its column could never move and
    "whole rows" would not be the answer.
    """

    def run(cases: Cases) -> None:
        X = np.array(  # (8, 4), with the zeros of the toy sentence
            [[0, 1, 0, 0], [0.3, 0, 1, 0], [0, 0, 0, 0.5], [1, 0, 0, 0]]
            + [[0, 0, 0.2, 0.3], [0, 0.2, 0, 1], [0, 0, 0.6, 0.2], [0.7, 0, 0.3, 0]]
        )
        _check_mask(cases, "8 tokens like the toy sentence, row 3 of W_q", X, 3)
        _check_mask(cases, "8 tokens like the toy sentence, row 1 of W_q", X, 1)
        # A trace of a feature: 0.01 brings row 0 of W_q into the query just as well. It
        # comes before the negative case, so a threshold is told about the threshold.
        X = np.array([[0.01, 1.0, 0.0], [0.0, 0.5, 0.0], [0.8, 0.0, 0.3], [0.0, 0.0, 1.0]])
        _check_mask(cases, "X of shape (4, 3), feature 0, one token with only 0.01", X, 0)
        # One negative entry: a token with -2 of a feature uses that row of W_q too. The
        # last token's features sum to 0: a nudge of (1, 1, 1) to a row of W_q = W_k = I
        # leaves its column alone, though another nudge moves it.
        X = np.array([[0.0, 1.0, 0.5], [-2.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
        _check_mask(cases, "X of shape (4, 3), feature 0", X, 0)
        _check_mask(cases, "X of shape (4, 3), feature 2", X, 2)
        X = np.array([[1.0, 0.0], [0.5, 0.0], [2.0, 0.0]])
        _check_mask(cases, "X of shape (3, 2), a feature no token has", X, 1)

    return verdict("scores-that-change", fn, run)


def _check_mask(cases: Cases, case: str, X: np.ndarray, f: int) -> None:
    n = X.shape[0]
    has = X[:, f] != 0  # (n,): tokens whose query uses row f of W_q
    expected = np.repeat(has[:, None], n, axis=1)  # (n, n): whole rows
    hint = (
        f"Work from the arguments: here X has shape {X.shape}, so weights or sizes taken "
        "from the toy (4 features, 8 tokens) do not fit; build what you need from X and "
        "feature."
    )
    out = _run(cases, case, X, f, hint=hint)
    last = _LAST.get()
    kind = last[1] if last is not None and last[0] is out else "b"
    _token_row(out, X, f, case)
    if out.shape == (n,):
        raise Fail(
            f"returned shape {out.shape}, expected {(n, n)} (on {case}): one True/False "
            "per score, so a whole row of True for each query that changes."
        )
    # A mask sized for another X: square, or with a side of the toy's 8 tokens (say
    # np.repeat(..., 8, axis=1)) when this X has another number of tokens.
    toy_sized = n != _TOY_TOKENS and _TOY_TOKENS in out.shape
    if out.ndim == 2 and out.shape != (n, n) and (out.shape[0] == out.shape[1] or toy_sized):
        raise Fail(f"returned shape {out.shape}, expected {(n, n)} (on {case}). {hint}")
    expect_shape(out, (n, n), case, " One True/False per score: a row per query, a column per key.")
    if kind != "b":
        raise Fail(
            f"returned numbers (dtype kind {kind!r}), expected a boolean array (on {case}): "
            "True where score (i, j) can change, False where it cannot. A comparison such "
            "as X[:, feature] != 0 gives booleans; so does .astype(bool)."
        )
    row_f = np.zeros((n, n), dtype=bool)
    if f < n:
        row_f[f] = True
    d = X.shape[1]
    # Off by one feature: the rows of the tokens that have feature f - 1 or f + 1, also
    # wrapped round modulo d (f + 1 on the last feature gives feature 0).
    off_by_one = [
        (
            np.repeat((X[:, g] != 0)[:, None], n, axis=1).astype(float),
            f"those are the rows of the tokens with feature {g}, not {f}: off by one? "
            "`feature` is already the column of X to test, counted from 0 as NumPy "
            "does: X[:, feature].",
        )
        for g in dict.fromkeys(g % d for g in (f - 1, f + 1))
        if g != f
    ]
    mistakes = (
        (
            expected.T.astype(float),
            "those are columns. A column of the scores belongs to a key, and keys come from "
            "W_k, which did not change; the query of token i, row i, uses W_q.",
        ),
        (
            (expected | expected.T).astype(float),
            "rows and columns: the rows are right, but no key uses W_q, so the columns of "
            "the other tokens stay as they were.",
        ),
        (
            (expected & expected.T).astype(float),
            "only where both words have the feature? The keys come from W_k, which did not "
            "change, but a changed query can move any way, so every score in its row can "
            "change. If an experiment of yours left some alone (say with W_q = W_k = I), "
            "its nudge was at right angles to those keys.",
        ),
        (
            (expected & np.eye(n, dtype=bool)).astype(float),
            "only the diagonal: a changed query can move any way, so every score in its "
            "row can change, not only its score with itself.",
        ),
        (
            np.zeros((n, n), dtype=bool),
            "no score at all? X stays as it is, and so do W_k and the keys; but row f of W_q "
            "enters the query of every token with X[i, f] != 0. Those queries change, so "
            "every score in their rows can change.",
        ),
        (
            np.ones((n, n), dtype=bool),
            "every score? Row f of W_q enters the query of token i with weight X[i, f]; a "
            "token that has none of feature f keeps its query and its row.",
        ),
        (
            (~expected).astype(float),
            "the other way round: the rows that change are those of tokens that HAVE the "
            "feature (X[i, f] != 0).",
        ),
        (
            np.repeat((X[:, f] > 0)[:, None], n, axis=1).astype(float),
            "a negative feature counts too: with X[i, f] = -2, row f of W_q enters the query "
            "of token i with weight -2, so that row moves as well. Test X[:, f] != 0.",
        ),
        (
            row_f.astype(float),
            "that is the row of token number f. `feature` numbers a column of X (a "
            "feature), not a token: look for the tokens with X[i, feature] != 0.",
        ),
    )
    _ignores_feature(cases, case, X, f, out != 0)
    # A mistake that gives the right mask on this case (say, no token has the feature)
    # is no mistake here.
    known_mistakes(
        out.astype(float),
        *[(w.astype(float), why) for w, why in mistakes if not np.array_equal(w, expected)],
        *[(w, why) for w, why in off_by_one if not np.array_equal(w, expected)],
    )
    mask = out != 0
    whole_rows = (mask == mask[:, :1]).all()
    if whole_rows and (mask <= expected).all() and mask.sum() < expected.sum():
        missed = int(np.flatnonzero(expected[:, 0] & ~mask[:, 0])[0])
        raise Fail(
            f"whole rows, but too few (on {case}): token {missed} has X[{missed}, {f}] = "
            f"{X[missed, f]:g}. Any non-zero feature counts, however small: it brings row "
            f"{f} of W_q into that token's query. Test X[:, feature] != 0."
        )
    if (mask <= expected).all() and (mask != expected).any() and not whole_rows:
        i, j = (int(k) for k in np.argwhere(expected & ~mask)[0])
        raise Fail(
            f"score ({i}, {j}) can change too (on {case}): the query of token {i} uses row "
            f"{f} of W_q, and a changed query can move any way, so every score in its row "
            f"can change. If an experiment left it alone, its nudge was at right angles to "
            f"key {j}."
        )
    if not np.array_equal(mask, expected) and any(uses_name(cases.fn, w) for w in ("W_q", "W_k")):
        raise Fail(
            f"your function reads W_q or W_k, and its mask is wrong (on {case}). The answer "
            "needs no weights: row f of W_q enters the query of token i with weight "
            "X[i, f], whatever W_q holds. Work from the arguments: test X[:, feature]."
        )
    if not np.array_equal(mask, expected):
        _fixed_mask(cases, case, X, f, mask)
    same(out, expected, case)


def _token_row(out: np.ndarray, X: np.ndarray, f: int, case: str) -> None:
    """Fail, naming X[f], on a mask built from token f's row of X instead of column f."""
    n, d = X.shape
    if f >= n or (X[f] != 0).all() or not X[f].any():  # all or none: nothing tells
        return
    row, column = X[f] != 0, X[:, f] != 0  # (d,) token f's features; (n,) feature f's tokens
    for m in dict.fromkeys((n, d)):
        for build in (lambda v: v, lambda v, m=m: np.repeat(v[:, None], m, axis=1)):
            right = build(column)
            for mask in (build(row), build(row).T):
                if mask.shape != out.shape or not np.array_equal(out != 0, mask):
                    continue
                if mask.shape == right.shape and np.array_equal(mask, right):
                    continue  # here row f and column f agree: no mistake to name
                raise Fail(
                    f"your mask comes from X[{f}], a row of X: the {d} features of "
                    f"token {f} (on {case}). A feature is a column, one entry per "
                    "token: test X[:, feature] != 0, then repeat it along each row."
                )


def _fixed_mask(cases: Cases, case: str, X: np.ndarray, f: int, mask: np.ndarray) -> None:
    """Fail if the mask stays put when X or feature changes the answer (a typed-in mask)."""
    n, d = X.shape
    probes = {
        "X": [(Y, f) for Y in (X[::-1], np.roll(X, 1, axis=0))],
        "feature": [(X, g) for g in range(d)],
    }
    ignored = []
    for name, tries in probes.items():
        tries = [(Y, g) for Y, g in tries if not np.array_equal(Y[:, g] != 0, X[:, f] != 0)]
        if not tries:
            continue
        try:
            again = [call(cases.fn, case, Y, g) for Y, g in tries]
        except (Fail, Todo):
            return
        if all(a.shape == mask.shape and np.array_equal(a != 0, mask) for a in again):
            ignored.append(name)
    if ignored:
        them = "them" if len(ignored) == 2 else "X and feature"
        raise Fail(
            f"your mask does not change with {' or '.join(ignored)} (on {case}): compute it "
            f"from {them}, not from a mask or a number typed in."
        )


def _ignores_feature(cases: Cases, case: str, X: np.ndarray, f: int, mask: np.ndarray) -> None:
    """Fail, naming ``feature``, on a mask that follows X but is the same for every feature
    (say, the rows of tokens with any non-zero feature). A mask that ignores X as well
    (all True, typed in) is left to the hints after this one."""
    if np.array_equal(mask, np.repeat((X[:, f] != 0)[:, None], len(X), axis=1)):
        return
    others = [g for g in range(X.shape[1]) if not np.array_equal(X[:, g] != 0, X[:, f] != 0)]
    Y = np.where(X[:, [f]] != 0, X, 0.0)  # tokens without feature f: all zeros
    try:
        again = [call(cases.fn, case, X, g) != 0 for g in others]
        follows_X = not np.array_equal(call(cases.fn, case, Y, f) != 0, mask)
    except (Fail, Todo):
        return
    if not others or not follows_X or not all(np.array_equal(a, mask) for a in again):
        return
    anything = np.repeat((X != 0).any(axis=1)[:, None], len(X), axis=1)
    why = (
        "it marks every token with any non-zero feature."
        if np.array_equal(mask, anything)
        else "a feature number typed in?"
    )
    raise Fail(
        f"your mask does not change with feature (on {case}): {why} Only row `feature` "
        "of W_q changed, and it enters the query of token i with weight X[i, feature]. "
        "Test that one column: X[:, feature] != 0."
    )

"""Chapter 2 checker: one score from scratch, ``fn(X, W_q, W_k, i, j)``."""

from __future__ import annotations

import contextlib
import io

import numpy as np

from .base import (
    _LAST,
    Cases,
    CheckResult,
    Fail,
    Todo,
    call,
    expect_shape,
    fmt,
    known_mistakes,
    same,
    verdict,
)
from .names import calls_library

# --- Exercise: one score from scratch ------------------------------------------------------


def _score(X, W_q, W_k, i: int, j: int) -> float:
    """The reference: the query of token i (row i of X through W_q) dot the key of token j."""
    return float((X[i] @ W_q) @ (X[j] @ W_k))


def _cosine(q, k) -> float:
    """Chapter 1's cosine similarity of q and k: their dot product over both lengths."""
    return float(q @ k / (np.linalg.norm(q) * np.linalg.norm(k)))


def check_one_score(fn) -> CheckResult:
    """Check ``fn(X, W_q, W_k, i, j)``: the score of token ``i``'s query with token ``j``'s key."""

    def run(cases: Cases) -> None:
        if calls_library(cases.fn, "attention_scores"):  # al.attention_scores, by any name
            raise Fail(_LIBRARY)
        rng = np.random.default_rng(3)
        for n, d, d_k, i, j in ((5, 3, 2, 1, 3), (4, 4, 4, 2, 0), (6, 3, 5, 4, 4)):
            X, W_q, W_k = rng.normal(size=(n, d)), *rng.normal(size=(2, d, d_k))
            case = f"X {X.shape}, W_q and W_k {W_q.shape}, i = {i}, j = {j}"
            try:
                out = _run_quietly(cases, case, X, W_q, W_k, i, j)
            except Fail as fail:  # a shape error: say which slip, not what NumPy saw
                if "IndexError" in str(fail):  # K[:, j], or W_q[i]: not the token's row
                    hint = _W_BY_TOKEN if _shape_slip(fn) is _W_BY_TOKEN else _ROWS
                    raise Fail(f"{str(fail).rstrip('.')}. {hint}") from None
                if "matmul" not in str(fail) and "aligned" not in str(fail):
                    raise
                _no_key_row(fn, case)  # (X[i] @ W_q) @ W_k: a vector where the sizes fit
                _own_weights(fn)  # toy.W_q fits only the toy's d_model: name that first
                slip = _shape_slip(fn)
                raise Fail(f"the shapes do not fit (on {case}): {slip}") from None
            last = _LAST.get()
            if last is not None and last[0] is out and last[1] not in "iuf":  # "1.8", True
                raise Fail(f"your function returned {_KINDS.get(last[1], 'no number')}: {_NUMBER}")
            if out.shape == (d_k,) and np.allclose(out, (X[i] @ W_q) * (X[j] @ W_k)):
                raise Fail(f"your function returned {d_k} products (on {case}): {_NO_SUM}")
            if out.shape == (d,) and np.allclose(out, X[i] @ W_q @ W_k.T):  # x_j left out
                raise Fail(f"your function returned a vector (on {case}): {_NO_XJ}")
            if out.shape != () and _returned_list(fn, X, W_q, W_k, i, j):
                raise Fail(f"your function returned a list (on {case}): {_NOT_A_LIST}")
            expect_shape(out, (), case, _ONE_BY_ONE if out.shape in ((1,), (1, 1)) else _ONE_NUMBER)
            mistakes = [
                (_score(X, W_q, W_k, i, j) / np.sqrt(d_k), _SCALED),
                (_score(X, W_q, W_k, i, j) * np.sqrt(d_k), _SCALED),
                (_score(X, W_q, W_q, i, j), "you used W_q for the key too: k_j = x_j W_k."),
                (_score(X, W_k, W_k, i, j), "you used W_k for the query too: q_i = x_i W_q."),
                (float(X[i] @ X[j]), _UNPROJECTED),
                (float((X[i] @ W_q) @ (X[i] @ W_q)), _QUERY_WITH_ITSELF),
                (_cosine(X[i] @ W_q, X[j] @ W_k), _COSINE),
            ]
            if i != j:  # (x_j W_q) · (x_i W_k): the query and the key of the wrong tokens
                mistakes.insert(0, (_score(X, W_q, W_k, j, i), _SWAPPED))
            if d == d_k:  # only square matrices allow these slips without a shape error
                mistakes.append((_score(X, W_q.T, W_k.T, i, j), _TRANSPOSED))
                mistakes.append((float(X[i] @ W_q @ W_k @ X[j]), _NO_KEY))
            known_mistakes(out, *mistakes, *_slips(X, W_q, W_k, i, j))
            if not np.isclose(out, _score(X, W_q, W_k, i, j), atol=1e-6):
                _ignored_arguments(fn, out, (X, W_q, W_k, i, j), case)
            same(out, _score(X, W_q, W_k, i, j), case)

    return verdict("one-score", fn, run)


def _slips(X, W_q, W_k, i: int, j: int) -> list:
    """Common slips on a right score: rounded, off by one, scaled, softmax-ed, abs, halved."""
    ref, q, K = _score(X, W_q, W_k, i, j), X[i] @ W_q, X @ W_k
    k = K[j]
    weights = np.exp(q @ K.T - (q @ K.T).max())
    slips = [(round(ref, places), _ROUNDED) for places in range(4)]
    off = [(i - 1, j - 1, _OFF_BY_ONE), (i - 1, j, _OFF_BY_ONE), (i, j - 1, _OFF_BY_ONE)]
    off += [(i, j + 1, _KEY_ONE_ON)] * (j + 1 < len(X))  # the key only, one token on
    slips += [(_score(X, W_q, W_k, a, b), hint) for a, b, hint in off]
    slips += [(ref / np.sqrt(X.shape[1]), _D_MODEL), (float(weights[j] / weights.sum()), _SOFTMAX)]
    slips += [(abs(ref), _ABS), (ref / 2, _HALF), (float(q.sum() * k.sum()), _OUTER)]
    slips += [(float(np.linalg.norm(q) * np.linalg.norm(k)), _NORMS)]
    return [(wrong, hint) for wrong, hint in slips if not np.isclose(wrong, ref, atol=1e-6)]


def _run_quietly(cases: Cases, case: str, *args):
    """Run one case with the learner's prints caught: a None after a print is a lost return."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            return cases.run(case, *args)
    except Todo:
        if printed.getvalue():
            raise Fail(_PRINTED) from None
        raise


def _returned_list(fn, *args) -> bool:
    """Did ``fn`` hand back a Python list or tuple? ``call`` makes every answer an array."""
    try:
        with np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
            out = fn(*(np.copy(a) if isinstance(a, np.ndarray) else a for a in args))
    except Exception:  # noqa: BLE001 - it ran once already; the shape hint stays
        return False
    return isinstance(out, list | tuple)


def _no_key_row(fn, case: str) -> None:
    """Fail if, where every matrix is square, ``fn`` returns x_i W_q W_k: x_j is missing."""
    rng = np.random.default_rng(7)
    X, W_q, W_k = rng.normal(size=(5, 4)), *rng.normal(size=(2, 4, 4))
    try:
        out = call(fn, "X (5, 4), W_q and W_k (4, 4), i = 1, j = 3", X, W_q, W_k, 1, 3)
    except Exception:  # noqa: BLE001 - another shape slip: the next diagnoses name it
        return
    if np.shape(out) == (4,) and np.allclose(out, X[1] @ W_q @ W_k):
        raise Fail(f"the shapes do not fit (on {case}): {_NO_XJ}")


def _own_weights(fn) -> None:
    """Fail if, where the toy's matrices fit (d_model = d_k = 4), ``fn`` ignores W_q or W_k."""
    rng = np.random.default_rng(7)
    args = (rng.normal(size=(5, 4)), *rng.normal(size=(2, 4, 4)), 1, 3)
    case = "X (5, 4), W_q and W_k (4, 4), i = 1, j = 3"
    try:
        out = call(fn, case, *args)
    except Exception:  # noqa: BLE001 - a shape slip of its own: the next diagnosis names it
        return
    _ignored_arguments(fn, out, args, case)


def _shape_slip(fn) -> str:
    """Which slip raised a shape error? Run ``fn`` where every matrix is square and see."""
    rng = np.random.default_rng(5)
    # X square too, so that the columns X[:, i] fit W_q as well as the rows X[i] do.
    X, W_q, W_k = rng.normal(size=(3, 3, 3))
    try:
        out = call(fn, "a square case", X, W_q, W_k, 1, 2)
    except Exception:  # noqa: BLE001 - the diagnosis is a bonus; the plain hint stays
        return _ROW_FIRST
    slips = {  # the first that matches names the slip
        _COLUMNS: _score(X.T, W_q, W_k, 1, 2),
        _TRANSPOSED: _score(X, W_q.T, W_k.T, 1, 2),
        _NO_KEY: X[1] @ W_q @ W_k @ X[2],
        _K_NOT_TRANSPOSED: ((X @ W_q) @ (X @ W_k))[1, 2],
        _W_BY_TOKEN: W_q[1] @ W_k[2],  # the weights indexed by token, X left out
    }
    found = (s for s, wrong in slips.items() if np.shape(out) == () and np.isclose(out, wrong))
    return next(found, _ROW_FIRST)


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
    if len(unused) == len(args):  # a typed number, or Q[2] @ K[3]: nothing moves it
        raise Fail(
            f"your function returns {fmt(out)} whatever it is given (on {case}). {_CONSTANT}"
        )
    if unused:
        names = ", ".join(unused[:-1]) + " and " * (len(unused) > 1) + unused[-1]
        advice = {"W_k": _NO_KEY_PROJECTION, "W_q": _NO_QUERY_PROJECTION}.get(" ".join(unused))
        advice = advice or (_GLOBALS if {"X", "W_q", "W_k"} & set(unused) else _BOTH_TOKENS)
        raise Fail(
            f"your function ignores its argument{'s' * (len(unused) > 1)} {names}: new "
            f"values leave its answer at {fmt(out)} (on {case}). {advice}"
        )


_LIBRARY = (
    "your function calls al.attention_scores, which this exercise rules out: build q_i and "
    "k_j with @ and dot them."
)
_KINDS = {"U": "text", "S": "text", "b": "True/False", "O": "an object"}
_NUMBER = "return a number, the dot product q_i @ k_j itself."
_PRINTED = (
    "your function returned None: did you print instead of return? print shows the score; "
    "return hands it back: end with return q_i @ k_j."
)
_ONE_NUMBER = " One score is one number: q_i · k_j."
_NO_SUM = "one number: add the products (@, not *), q_i @ k_j."
_NOT_A_LIST = "return a number, not a list: the dot product q_i @ k_j itself."
_ONE_BY_ONE = (
    " One score is one number: use the rows X[i] and X[j], not X[i:i+1], or end with .item()."
)
_SWAPPED = (
    "that is the score of query j with key i (or W_q and W_k swapped): the query comes from "
    "token i through W_q, the key from token j through W_k, and the two orders differ."
)
_UNPROJECTED = "that is x_i · x_j, before any projection: send x_i through W_q, x_j through W_k."
_TRANSPOSED = (
    "you used the transposes: W_q @ X[i], like X[i] @ W_q.T, dots x_i with each row of W_q. "
    "The query q_i = X[i] @ W_q dots x_i with each column of W_q; likewise k_j = X[j] @ W_k."
)
_COLUMNS = (
    "X[:, i] is column i of X, one feature of every token. Token i is row i, X[i], so "
    "q_i = X[i] @ W_q and k_j = X[j] @ W_k."
)
_GLOBALS = (
    "Work from the arguments, not from notebook variables such as Q, K or toy.W_q: use the "
    "W_q and W_k you were given."
)
_CONSTANT = "Compute the score from X, W_q, W_k, i and j: q_i = X[i] @ W_q, k_j = X[j] @ W_k."
_ROWS = (
    "A token's vector is a row: x_i is X[i], and the key of token j is row j of K = X @ W_k, "
    "K[j] (not the column K[:, j], which holds one entry of every token)."
)
_NO_XJ = (
    "your key is missing x_j. The key is k_j = X[j] @ W_k, and the score is q_i @ k_j = "
    "(X[i] @ W_q) @ (X[j] @ W_k)."
)
_NO_KEY_PROJECTION = (
    "The key must be x_j W_k: send X[j] through W_k before the dot product, k_j = X[j] @ W_k."
)
_NO_QUERY_PROJECTION = (
    "The query must be x_i W_q: send X[i] through W_q before the dot product, q_i = X[i] @ W_q."
)
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
_K_NOT_TRANSPOSED = (
    "Q @ K needs K transposed: Q @ K.T holds every score (row i, column j), or dot the two "
    "rows, (X[i] @ W_q) @ (X[j] @ W_k)."
)
_COSINE = (
    "you divided by the lengths of q_i and k_j: that is chapter 1's cosine similarity. The "
    "score is the raw dot product q_i @ k_j, so a longer query or key scores higher."
)
_SCALED = (
    "you scaled the score by sqrt(d_k), which is chapter 4's step. Here the score is the "
    "raw dot product q_i · k_j."
)
_ROUNDED = "your score is rounded: return the full dot product q_i @ k_j; round only to print."
_OFF_BY_ONE = (
    "that is the score of a token one off (i - 1 or j - 1): NumPy counts from 0, so token i "
    "is X[i] and token j is X[j]."
)
_KEY_ONE_ON = "that is the key of token j + 1: NumPy counts from 0, so k_j = X[j] @ W_k."
_QUERY_WITH_ITSELF = "that is q_i · q_i, the query with itself: the key is k_j = X[j] @ W_k."
_W_BY_TOKEN = (  # W_q[i] @ W_k[j]: raises IndexError once i or j passes d_model
    "You indexed the weights by token: W_q[i] is the rule of feature i, not token i. Take "
    "the token's row of X first: q_i = X[i] @ W_q, k_j = X[j] @ W_k."
)
_D_MODEL = (
    "you divided by sqrt(d_model): chapter 4 scales by sqrt(d_k), and this exercise not at "
    "all. Return the raw dot product q_i @ k_j."
)
_SOFTMAX = (
    "that is the softmax weight of key j in row i: the score comes before softmax, the raw "
    "dot product q_i @ k_j."
)
_ABS = "your score lost its sign: a score can be negative, so return q_i @ k_j without abs."
_HALF = "your score is half the dot product: return q_i @ k_j itself, with no factor."
_OUTER = (
    "that is the sum of every product q_a k_b (an outer product): the dot product pairs "
    "entry a of q_i with entry a of k_j only, q_i @ k_j."
)
_NORMS = (
    "that is |q_i| |k_j|, the product of the lengths: the dot product also counts the angle, "
    "so return q_i @ k_j."
)

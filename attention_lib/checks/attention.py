"""Chapter 6 checker: scaled dot-product attention in four steps, ``fn(Q, K, V)``."""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, scaled_dot_product_attention, softmax
from .base import (
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    same,
    verdict,
)
from .blending import _close, _mistakes, _run_shapes
from .names import calls_library, uses_name

# --- Exercise: scaled dot-product attention in four steps -------------------------------


def check_attention(fn) -> CheckResult:
    """Check ``fn(Q, K, V)``: the output (not the weights) of scaled dot-product attention.

    A tuple fails: ``(output, weights)``, as :func:`attention_lib.scaled_dot_product_attention`
    returns them, is told to return the output alone; ``(weights, output)`` is named as the
    wrong order. Calling any of the library's
    attention functions (``al.scaled_dot_product_attention``, ``al.chunked_attention``, ...,
    under any name) fails: the exercise rules them out.
    """
    swapped = []  # set when fn returned (weights, output)
    banned = None
    if callable(fn):
        own = getattr(fn, "__name__", "")  # the library's own function, passed in directly
        banned = own if own in _LIBRARY and getattr(fn, "__module__", "") != "__main__" else None
        banned = banned or next((name for name in _LIBRARY if calls_library(fn, name)), None)

    def run(cases: Cases) -> None:
        if banned:  # a library attention function, an alias, or a helper that calls it
            raise Fail(
                f"your function calls al.{banned}, which this exercise rules out: write "
                "the four steps yourself (scores, scale, softmax, blend)."
            )
        rng = np.random.default_rng(7)
        # d_k = n_k = 3, so even Q @ K (no transpose) runs and its mistake can be named;
        # d_k != 4, so dividing by d_k and by 2 √d_k give different numbers; n_q = 5 and
        # d_v = 2 differ from d_k and from the fixed numbers (√4 = 2), so each hint is sure.
        Q, K, V = rng.normal(size=(5, 3)), rng.normal(size=(3, 3)), rng.normal(size=(3, 2))
        case = "5 queries, 3 keys, d_k = 3, d_v = 2"
        out = _run(cases, case, Q, K, V, hint=_PRODUCTS)
        _attention_case(out, Q, K, V, case, swapped=swapped)

        Q, K, V = rng.normal(size=(2, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
        case = "2 queries, 5 keys, d_k = 3, d_v = 4"
        out = _run(cases, case, Q, K, V, hint=_PRODUCTS)
        _attention_case(out, Q, K, V, case, swapped=swapped)

        # Scores up to about 2000: np.exp overflows unless each row's max comes off (ch. 5).
        Q, K, V = (
            60 * rng.normal(size=(2, 3)),
            60 * rng.normal(size=(4, 3)),
            rng.normal(size=(4, 2)),
        )
        case = "large scores (up to about 2000)"
        with np.errstate(over="ignore", invalid="ignore"):
            out = _run(cases, case, Q, K, V, hint=_PRODUCTS)
        if not np.all(np.isfinite(np.asarray(out, dtype=float))):
            raise Fail(
                f"on {case}, your output holds nan or inf: np.exp overflows past about 709. "
                "Subtract each row's max before np.exp, as chapter 5 did, or use al.softmax."
            )
        with np.errstate(over="ignore", invalid="ignore"):  # the hints' own exponentials
            _attention_case(out, Q, K, V, case, swapped=swapped)

        # b, n_q, n_k, d_k, d_v = 2, 3, 5, 6, 7: a slip that reads the wrong axis is named
        Q, K, V = (rng.normal(size=s) for s in ((2, 3, 6), (2, 5, 6), (2, 5, 7)))
        case = "a batch of 2 (Q (2, 3, 6), K (2, 5, 6), V (2, 5, 7))"
        swap = (
            " With a batch, K.T reverses all three axes: transpose only the last two, "
            "with np.swapaxes(K, -1, -2)."
        )
        if uses_name(fn, "dot"):  # np.dot pairs every matrix of one batch with every other
            swap = " np.dot does not treat the first axis as a batch; use @ (np.matmul)."
        out = _run(cases, case, Q, K, V, hint=swap)
        _attention_case(out, Q, K, V, case, swap, swapped=swapped)

    def output_only(Q, K, V):
        expected, weights = scaled_dot_product_attention(Q, K, V)  # before fn sees Q, K, V
        out = fn(Q, K, V)
        swapped.clear()
        # A pair, as attention_lib returns: judged on its first item, then failed with a hint.
        if isinstance(out, tuple) and len(out) == 2:
            first, second = (np.asarray(o) for o in out)
            swapped.append(
                "swapped" if _close(first, weights) and _close(second, expected) else "pair"
            )
            return out[0]
        return out

    return verdict("attention", output_only if callable(fn) else fn, run)


# The library's functions that return attention's output: each would do the exercise.
_LIBRARY = (
    "scaled_dot_product_attention",
    "chunked_attention",
    "attention_loop",
    "attention_by_rows",
    "attention_matrix",
    "multi_head_attention",
    "self_attention",
)
_PRODUCTS = (
    " Check the shapes of the two products: Q Kᵀ is (n_q, d_k) @ (d_k, n_k), so transpose "
    "K, not Q; then weights @ V is (n_q, n_k) @ (n_k, d_v), with neither transposed."
)
_FIXED = ((2.0, "2"), (4.0, "4"), (np.sqrt(8), "√8"), (8.0, "8"))  # √4, the toy's d_k, n


def _run(cases: Cases, case: str, Q, K, V, *, hint: str) -> np.ndarray:
    """:func:`_run_shapes`, naming ``Q * K`` and ``weights * V`` from their broadcast errors."""
    try:
        return _run_shapes(cases, case, Q, K, V, hint=hint)
    except Fail as fail:
        message = str(fail)
        q, k, v = (_shape(a.shape) for a in (Q, K, V))
        w = _shape(Q.shape[:-1] + K.shape[-2:-1])  # the weights, (..., n_q, n_k)
        if BROADCAST_HINT in message and (f"{q} {k}" in message or f"{k} {q}" in message):
            raise Fail(message.replace(BROADCAST_HINT, _PAIRED)) from None
        if BROADCAST_HINT in message and (f"{w} {v}" in message or f"{v} {w}" in message):
            raise Fail(message.replace(BROADCAST_HINT, _ELEMENTWISE)) from None
        if "raised ValueError" in message and _blends_transposed(cases.fn, Q, V):
            raise Fail(message.replace(hint, _WEIGHTS_T)) from None
        raise


def _blends_transposed(fn, Q, V) -> bool:
    """Whether ``fn`` blends with weights.T @ V: tried where n_q = n_k, so that it runs."""
    rng = np.random.default_rng(3)
    d_k, d_v = Q.shape[-1], V.shape[-1]
    Q, K, V = (rng.normal(size=(3, d)) for d in (d_k, d_k, d_v))
    expected, weights = scaled_dot_product_attention(Q, K, V)
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fn(Q, K, V), dtype=float)
    except (Exception, SystemExit):  # the probe only names a mistake; it never raises
        return False
    return _close(out, weights.T @ V) and not _close(out, expected)


def _shape(shape: tuple) -> str:
    """A shape as NumPy's broadcast error prints it: ``(5,3)``."""
    return f"({','.join(map(str, shape))})"


_PAIRED = " You paired query i only with key i (Q * K): Q @ K.T pairs every query with every key."
_ELEMENTWISE = " You multiplied the weights by V element by element: use @ to blend, not *."
_WEIGHTS_T = (
    " You transposed the weights: blend with weights @ V, (n_q, n_k) @ (n_k, d_v), "
    "not weights.T @ V."
)


def _attention_case(out, Q, K, V, case: str, shape_hint: str = "", *, swapped=()) -> None:
    """Name the typical mistakes, then compare shape and values with the reference."""
    if "pair" in swapped:
        raise Fail(
            "you returned a pair (output, weights), as al.scaled_dot_product_attention "
            "does; the exercise asks for the output alone: return weights @ V."
        )
    if "swapped" in swapped:
        raise Fail(
            "you returned (weights, output): the order is (output, weights), as "
            "al.scaled_dot_product_attention returns them. Swap them, or return the "
            "output alone."
        )
    expected, weights = scaled_dot_product_attention(Q, K, V)
    n_q, d_k, d_v = Q.shape[-2], Q.shape[-1], V.shape[-1]
    S = attention_scores(Q, K)  # (..., n_q, n_k)
    mistakes = [
        (
            weights,
            "you returned the attention weights (one column per key). Multiply "
            "them by V to blend the values: weights @ V.",
        ),
        (softmax(S) @ V, "you forgot the scale: divide the scores by √d_k before softmax."),
        (
            softmax(S / d_k) @ V,
            f"you divided by d_k = {d_k}; divide by its square root, √d_k = {np.sqrt(d_k):g}.",
        ),
        (softmax(S * np.sqrt(d_k)) @ V, "you multiplied the scores by √d_k; divide by it."),
        (
            softmax(S) / np.sqrt(d_k) @ V,
            "you scaled after the softmax: divide the scores by √d_k first, then take the "
            "softmax. Dividing the weights leaves rows that no longer sum to 1.",
        ),
        (
            softmax(S / np.sqrt(d_v)) @ V,
            f"you divided by √d_v = √{d_v}: the scale uses the "
            "width of the queries and keys, d_k = Q.shape[-1], not that of V.",
        ),
        *(
            (
                softmax(S / np.sqrt(m)) @ V,
                f"you divided by √{m}, the number of {what}: take d_k from the last axis, "
                "Q.shape[-1].",
            )
            for m, what in ((n_q, "queries"), (K.shape[-2], "keys"))
        ),
        (
            softmax(S / np.sqrt(d_k), axis=-2) @ V,
            "you took the softmax over the wrong axis (down each column). "
            + (
                "A batch adds an axis in front, so axis=1 now runs down the columns: "
                "count from the end, axis=-1."
                if Q.ndim == 3
                else "Each query's row of weights must sum to 1: axis=-1."
            ),
        ),
        *(
            (
                e / e.sum(axis=over, keepdims=True) @ V,
                "your weights sum to 1 over the whole matrix, not along each row: sum the "
                "exponentials over the keys only, .sum(axis=-1, keepdims=True).",
            )
            for e in [np.exp(S / np.sqrt(d_k) - S.max())]
            for over in ((-2, -1), None)
        ),
        *(
            (
                e @ V,
                "you took the exponentials but forgot to normalise: divide each row by its "
                "sum, .sum(axis=-1, keepdims=True), or use al.softmax.",
            )
            for z in [S / np.sqrt(d_k)]
            for e in (np.exp(z), np.exp(z - z.max(axis=-1, keepdims=True)))
        ),
        (
            (S / np.sqrt(d_k)) @ V,
            "you skipped the softmax: the scaled scores are not "
            "weights yet (they do not sum to 1).",
        ),
        *(
            (
                softmax(z @ V),
                "you took the softmax after the blend, softmax(scores @ V): softmax "
                "turns the scaled scores into weights, then weights @ V blends the values."
                + ("" if scaled else " Divide the scores by √d_k before the softmax too."),
            )
            for z, scaled in ((S / np.sqrt(d_k), True), (S, False))
        ),
        (
            np.swapaxes(expected, -1, -2),
            "your output is transposed, (d_v, n_q): blend as weights @ V, "
            "not V.T @ weights.T, so each query gets a row.",
        ),
    ]
    if K.shape[-2] == K.shape[-1]:  # only then does Q @ K run at all
        mistakes.append(
            (
                softmax(Q @ K / np.sqrt(d_k)) @ V,
                "you forgot to transpose K: the scores are "
                "Q @ K.T, one dot product per query and key.",
            )
        )
    mistakes += [  # after the named sizes: a fixed number that matches one is told as that
        (
            softmax(S / c) @ V,
            f"you divided by {label}, a fixed number: the scale depends on the inputs. "
            f"Use √d_k with d_k = Q.shape[-1] (here {d_k}).",
        )
        for c, label in _FIXED
    ]
    if Q.ndim == 3:
        mistakes.append(
            (
                softmax(S / np.sqrt(len(Q))) @ V,
                f"you divided by √{len(Q)}, the batch size: "
                "take d_k from the last axis, Q.shape[-1].",
            )
        )
    _mistakes(out, expected, *mistakes)
    expect_shape(
        out,
        expected.shape,
        case,
        " The output has one row per query and one column per value dimension "
        f"(n_q, d_v).{shape_hint}",
    )
    same(out, expected, case)

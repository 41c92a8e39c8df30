"""Chapter 6 checker: the blend ``weights @ V`` written out as a loop over the keys."""

from __future__ import annotations

import dis
import sys
from collections import Counter

import numpy as np

from ..core import softmax
from .base import _LAST, ATOL, Cases, CheckResult, Fail, expect_shape, same, verdict
from .blending import _mistakes, _run_shapes
from .names import _codes, uses_name

# The one-line answers the exercise rules out: the loop is the point.
_PRODUCTS = ("matmul", "dot", "einsum", "tensordot", "inner", "vdot")
_BLOCK = (
    " Each key adds a block of shape (n_q, d_v): its column of weights, shape (n_q, 1), "
    "times its card, shape (1, d_v). Start from zeros of shape (n_q, d_v)."
)

_INTEGER = "start from float zeros, np.zeros(shape), and keep each term a float."

_ELEMENTWISE = (
    " weights * V multiplies the two arrays entry by entry, which runs only when they "
    "share a shape. The blend sums over the keys: for each key j, add "
    "weights[..., :, j, None] * V[..., None, j, :]."
)

_ONE_D = (
    "weights[:, j] * V[j] multiplies two 1-D arrays entry by entry. Each key "
    "adds a block, one row per query: turn its weights into a column first, "
    "weights[..., :, j, None]."
)

_PAST_KEYS = (
    " Your loop ran past the last key: V.shape[-1] is d_v, not the number of keys. "
    "Loop over range(V.shape[-2])."
)

_CARD_AXIS = (
    " Your column of weights has shape (b, n_q, 1), but V[..., j, :] has shape (b, d_v): "
    "the card needs an axis for the queries too. Write V[..., None, j, :], shape "
    "(b, 1, d_v)."
)


def check_blend(fn) -> CheckResult:
    """Check ``fn(weights, V)``: ``weights @ V`` as a loop over the keys, without ``@``.

    Key ``j`` adds its card ``V[..., j, :]`` to every output row, times that row's weight
    on it, ``weights[..., :, j]``. Code that uses ``@``, ``np.matmul``, ``np.dot``,
    ``np.einsum``, ``np.tensordot`` or ``np.inner`` fails: that is the one-line answer.
    The first case has d_v != n_k, so the element-wise ``weights * V`` fails by name.
    """
    product = _product(fn)

    def run(cases: Cases) -> None:
        if product:
            raise Fail(
                f"your function uses {product}, the one-line answer. Write out the sum it "
                "does: start from zeros and, for each key j, add the card of j times its "
                "column of weights."
            )
        rng = np.random.default_rng(6)
        W = softmax(rng.normal(size=(3, 3)))  # 3 queries x 3 keys: a row for a column runs
        V = rng.normal(size=(3, 4))  # 3 keys x d_v = 4: weights * V cannot run
        case = "3 queries, 3 keys, d_v = 4"
        try:
            out = _run_shapes(cases, case, W, V, hint="", broadcast=_BLOCK)
        except Fail as fail:  # out += a float term, into integer zeros
            message = str(fail)
            if "Cannot cast ufunc" in message:
                raise Fail(f"{fail} Your running total holds integers: {_INTEGER}") from None
            if "(3,3) (3,4)" in message:  # weights * V, the two whole arrays
                raise Fail(message.replace(_BLOCK, _ELEMENTWISE)) from None
            if "(3,) (4,)" in message:  # weights[:, j] * V[j], both 1-D
                raise Fail(message.replace(_BLOCK, " " + _ONE_D)) from None
            if "IndexError" in message and "size 3" in message:  # range(V.shape[-1])
                raise Fail(message + _PAST_KEYS) from None
            raise
        expected = W @ V
        last = _LAST.get()
        if last and last[0] is out and last[1] in "iu" and not _close(out, expected):
            raise Fail(
                "you added the cards into an integer total, so every blended value was cut "
                f"to a whole number (on {case}): {_INTEGER}"
            )
        _mistakes(
            out,
            expected,
            (
                np.broadcast_to(V.sum(axis=-2), expected.shape),
                "you added the cards without their weights: each key's card is scaled by "
                "its column of weights, weights[..., :, j, None] * V[..., None, j, :].",
            ),
            (
                W.T @ V,
                "you took row j of the weights, what query j attends to. The weights on "
                "key j are column j: weights[..., :, j].",
            ),
            (
                np.outer(W[:, -1], V[-1]),
                "only the last key's term is left: add each term to the running total "
                "(out = out + ...) rather than replace it.",
            ),
            (expected + 1, "you started from ones; start the total from zeros."),
            (expected.T, "you returned the output transposed: one row per query, (n_q, d_v)."),
            (
                W * V.sum(axis=-1),
                "you summed over the value dimension d_v; the sum runs over the keys.",
            ),
            (
                W.sum(axis=0)[:, None] * V,
                "you summed over the queries; the sum runs over the keys.",
            ),
            (expected / 3, "you divided by n_k = 3, but the weights already sum to 1."),
            (expected / 2, "you divided by sqrt(d_v) = 2: the blend has no scale."),
            (
                softmax(W) @ V,
                "you applied softmax again: the weights already sum to 1 in each row.",
            ),
            (W, "you returned the weights themselves; blend the values with them."),
        )
        _partial(out, W, V)
        expect_shape(out, (3, 4), case)
        same(out, expected, case)

        W = softmax(rng.normal(size=(2, 4)))  # 2 queries x 4 keys
        V = rng.normal(size=(4, 3))  # 4 keys x d_v = 3
        case = "2 queries, 4 keys, d_v = 3"
        out = _run_shapes(cases, case, W, V, hint="", broadcast=_BLOCK)
        _partial(out, W, V)
        hint = " You returned it transposed." if out.shape == (3, 2) else ""
        expect_shape(
            out,
            (2, 3),
            case,
            " The output has one row per query (n_q = 2) and one column per value "
            f"dimension (d_v = 3).{hint}",
        )
        same(out, W @ V, case)

        case = "one-hot weights"
        one_hot = np.eye(4)[[3, 0]]  # query 0 takes only key 3, query 1 only key 0
        out = cases.run(case, one_hot, V)
        expect_shape(out, (2, 3), case)
        if not np.allclose(out, V[[3, 0]], atol=ATOL):
            raise Fail(
                "with a one-hot row the output must copy one row of V exactly (weight 1 "
                "on that key, 0 elsewhere), but it did not."
            )

        W = softmax(rng.normal(size=(2, 3, 4)))  # a batch of 2, each 3 queries x 4 keys
        V = rng.normal(size=(2, 4, 3))
        case = "a batch of 2 (weights (2, 3, 4), V (2, 4, 3))"
        batch = (
            " With a batch in front, weights[:, j] and V[j] index the wrong axes: count "
            "from the end, weights[..., :, j, None] * V[..., None, j, :]."
        )
        if uses_name(fn, "T"):  # .T reverses every axis of a batch, not the last two
            batch = (
                " With a batch, .T reverses all three axes: weights.T is (n_k, n_q, b), so "
                "weights.T[j] is not the column of key j. Count from the end: "
                "weights[..., :, j, None] * V[..., None, j, :]."
            )
        try:
            out = _run_shapes(cases, case, W, V, hint=batch, broadcast=batch)
        except Fail as fail:  # a column (..., n_q, 1) met a card (..., d_v): no row axis
            if "(2,3,1) (2,3)" not in str(fail):
                raise
            raise Fail(str(fail).replace(batch, _CARD_AXIS)) from None
        _partial(out, W, V)
        expect_shape(out, (2, 3, 3), case, batch)
        same(out, W @ V, case)
        if not _loops(fn):
            raise Fail(
                "your blend is right, but no for or while loop appears in your function's "
                "code: the exercise asks for one pass per key, each adding the card of key "
                "j times its column of weights."
            )
        W = softmax(rng.normal(size=(4, 7)))  # 4 queries x 7 keys, d_v = 2: loops differ
        passes = _passes(fn, W, rng.normal(size=(7, 2)))
        if passes is not None and passes < 7:
            what = "value dimension d_v" if passes < 4 else "query"
            raise Fail(
                f"your blend is right, but your loop runs once per {what}, not once per key "
                "(tried with 4 queries, 7 keys, d_v = 2). Loop over the keys, for j in "
                "range(V.shape[-2]), each pass adding the card of j times its column of weights."
            )

    return verdict("blend", fn, run)


def _passes(fn, W, V) -> int | None:
    """How many times the busiest line of ``fn``'s own code runs on ``(W, V)``: a loop
    over the keys runs its body once per key. None without Python code, or on an error."""
    codes = set(_codes(fn))
    if not codes:
        return None
    hits = Counter()

    def line(frame, event, arg):
        if event == "line":
            hits[frame.f_code, frame.f_lineno] += 1
        return line

    old = sys.gettrace()
    sys.settrace(lambda frame, event, arg: line if frame.f_code in codes else None)
    try:
        fn(W, V)
    except Exception:  # the checks above ran it already; nothing to add here
        return None
    finally:
        sys.settrace(old)
    return max(hits.values(), default=0)


def _partial(out, W, V) -> None:
    """Name a loop that missed keys: the first k keys only, or all but the first k."""
    n_k = V.shape[-2]
    square = n_k - 1 not in W.shape[-2:] + V.shape[-1:]  # len() or d_v cannot stand in
    loop = "Loop over every key, range(V.shape[-2])."
    for k in range(1, n_k):
        if _close(out, W[..., :, :k] @ V[..., :k, :]):
            if square and k == n_k - 1:
                raise Fail(
                    f"you left out the last key, key {k}: range(n) already stops at n - 1, "
                    f"so range(n - 1) is one short. {loop}"
                )
            raise Fail(
                f"you added only the first {k} of the {n_k} keys: loop over every key, "
                "range(V.shape[-2]) (len() counts the queries, or the matrices of a batch)."
            )
        if k < n_k - 1 and _close(out, W[..., :, k:] @ V[..., k:, :]):
            skipped = "key 0" if k == 1 else f"keys 0 to {k - 1}"
            raise Fail(
                f"you skipped {skipped}: Python counts from 0, so range(1, n) misses the "
                f"first key. {loop}"
            )


def _close(a, b) -> bool:
    return np.shape(a) == np.shape(b) and bool(np.allclose(a, b, atol=ATOL))


def _product(fn) -> str | None:
    """The matrix product ``fn``'s own code uses, as the learner wrote it, or None."""
    for code in _codes(fn):
        for ins in dis.get_instructions(code):
            if ins.opname in ("BINARY_MATRIX_MULTIPLY", "INPLACE_MATRIX_MULTIPLY") or (
                ins.opname == "BINARY_OP" and ins.argrepr in ("@", "@=")
            ):
                return "@"
    return next((f"np.{name}" for name in _PRODUCTS if uses_name(fn, name)), None)


def _loops(fn) -> bool:
    """Whether ``fn``'s own code (or code nested in it) holds a for or while loop. A
    callable without Python code (the grader's stand-in for the learner's function, whose
    code stays in its sandbox) reads as ``True``: the grader reads the loop, and the
    product, from the answer's source instead (exercise 6.2's "code" metadata)."""
    codes = list(_codes(fn))
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    return not codes or any(  # a loop is a jump back to an earlier instruction
        ins.opcode in jumps and isinstance(ins.argval, int) and ins.argval <= ins.offset
        for code in codes
        for ins in dis.get_instructions(code)
    )

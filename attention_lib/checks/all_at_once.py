"""Chapter 9 checkers: attention one query row at a time, and what the n x n matrix costs."""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, scaled_dot_product_attention, softmax
from .base import (
    ATOL,
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    check_number,
    expect_shape,
    same,
    verdict,
)

# --- Exercise: attention, one query row at a time ----------------------------------------


def check_attention_rows(fn) -> CheckResult:
    """Check ``fn(Q, K, V)``: scaled dot-product attention, returned as ``(n_q, d_v)``.

    The exercise asks for one query row at a time; the checker judges the output (it
    cannot see the loop). ``fn`` may also return ``(output, weights)``.
    """

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(9)
        Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
        _row_case(cases, "3 queries, 5 keys, d_k = 4, d_v = 2", Q, K, V)

        Q, K, V = rng.normal(size=(1, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 4))
        _row_case(cases, "1 query, 6 keys, d_k = 3, d_v = 4", Q, K, V)

        Q, K, V = rng.normal(size=(6, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
        _row_case(cases, "6 queries, 4 keys, d_k = 2, d_v = 3", Q, K, V)

        # Scores of about +-1000: exp overflows unless each row's maximum is subtracted.
        Q = np.array([[40.0, 0.0], [-40.0, 10.0]]) * 25
        K, V = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
        case = "scores of about ±1000"
        out = _run(cases, case, Q, K, V)
        if not np.all(np.isfinite(out)):
            raise Fail(
                f"got nan or inf on {case}: exp of a large score overflows. Subtract "
                "each row's maximum before exp; the weights do not change."
            )
        _row_case(cases, case, Q, K, V, out=out)

        # Row maxima of about +707 and -636: one shift for the whole matrix leaves row 2 at 0/0.
        Q, K, V = np.array([[1000.0, 0.0], [-900.0, -1000.0]]), np.eye(2), rng.normal(size=(2, 3))
        case = "rows whose largest scores are far apart (+707 and -636)"
        out = _run(cases, case, Q, K, V)
        if not np.all(np.isfinite(out)):
            raise Fail(
                f"got nan or inf on {case}: with one shift for the whole matrix, every "
                "exponential of the second row underflows to 0, and 0 / 0 is nan. Shift each "
                "row by its own maximum."
            )
        _row_case(cases, case, Q, K, V, out=out)

    return verdict("attention_rows", _output_only(fn), run)


def _output_only(fn):
    if not callable(fn):
        return fn

    def output_only(Q, K, V):
        out = fn(Q, K, V)
        return out[0] if isinstance(out, tuple) and len(out) == 2 else out

    return output_only


def _run(cases: Cases, case: str, Q, K, V) -> np.ndarray:
    try:
        return cases.run(case, Q, K, V)
    except Fail as fail:
        message = str(fail).replace(BROADCAST_HINT, "")  # not the keepdims question
        if "in place" in message:
            raise  # its own hint says it all
        raise Fail(
            f"{message} Row i needs Q[i] (shape (d_k,)), all of K and all of V: the "
            "scores of row i are K @ Q[i], one per key."
        ) from None


def _row_case(cases: Cases, case: str, Q, K, V, out=None) -> None:
    """Run one case and name the typical mistakes of a row-by-row loop."""
    with np.errstate(all="ignore"):  # some mistakes overflow on purpose
        _judge_rows(cases, case, Q, K, V, out)


def _judge_rows(cases: Cases, case: str, Q, K, V, out) -> None:
    if out is None:
        out = _run(cases, case, Q, K, V)
    expected, weights = scaled_dot_product_attention(Q, K, V)
    n_q, d_k = Q.shape
    S = attention_scores(Q, K)  # (n_q, n_k)
    s = 1 / np.sqrt(d_k)
    if out.shape == expected.shape[1:] and n_q == 1:
        raise Fail(
            f"returned shape {out.shape} for one query (on {case}): keep the query axis, "
            f"so the output is (n_q, d_v) = {expected.shape} even when n_q = 1."
        )
    e = np.exp(S * s - (S * s).max(axis=-1, keepdims=True))  # each row shifted by its max
    g = np.exp(S * s - (S * s).max())  # one shift for the whole matrix
    mistakes = [
        (weights, "you returned the weights (one column per key): blend the values, p @ V."),
        (softmax(S) @ V, "you forgot the scale: divide each row's scores by √d_k first."),
        (
            softmax(S / d_k) @ V,
            f"you divided by d_k = {d_k}; divide by its square root, √d_k = {np.sqrt(d_k):.3g}.",
        ),
        (
            softmax(S / np.sqrt(V.shape[-1])) @ V,
            "you divided by √d_v (V's width); the scale is √d_k, the length of the "
            "vectors in each dot product, Q.shape[-1].",
        ),
        (
            softmax(S / np.sqrt(K.shape[0])) @ V,
            "you divided by √n_k (the number of keys); the scale is √d_k, the length of "
            "the vectors in each dot product, Q.shape[-1].",
        ),
        (
            g / g.sum() @ V,
            "you normalised over the whole matrix (one total for all rows), so each row's "
            "weights add up to less than 1. Normalise each query's row on its own.",
        ),
        (
            softmax(S * s, axis=0) @ V,
            "you normalised each column (over the queries). Softmax runs along a row: "
            "over the keys of one query.",
        ),
        ((S * s) @ V, "you skipped the softmax: the scaled scores are not weights yet."),
        (e @ V, "your weights do not add up to 1: divide the exponentials by their sum."),
        (
            np.exp(S * s) @ V,
            "your weights do not add up to 1: divide the exponentials by their sum.",
        ),
    ]
    for j, name in ((0, "first"), (n_q - 1, "last")):
        mistakes.append(
            (
                np.broadcast_to(expected[j], expected.shape),
                f"every row of your output is the {name} query's row: in step i, use "
                "Q[i] and write the result to row i.",
            )
        )
    if K.shape[0] >= n_q:
        wrong = softmax(attention_scores(K[:n_q], K) * s) @ V
        mistakes.append((wrong, "you used K[i] as the query of row i; it is Q[i]."))
    for wrong, hint in mistakes:
        if np.shape(wrong) == expected.shape and np.allclose(wrong, expected, atol=ATOL):
            continue  # on this case the "mistake" gives the right answer
        if out.shape == np.shape(wrong) and np.allclose(out, wrong, atol=ATOL):
            raise Fail(f"{hint} (on {case})")
    expect_shape(out, expected.shape, case, " One row per query, one column per value: (n_q, d_v).")
    if (
        n_q > 1
        and np.all(out[-1] == 0)
        and np.any(expected[-1] != 0)
        and np.allclose(out[:-1], expected[:-1], atol=ATOL)
    ):
        raise Fail(
            f"the last row is zero, the others are right: check your range, which must "
            f"visit every query, i = 0 to n_q - 1 (on {case})."
        )
    same(out, expected, case)


# --- Exercise: how many bytes are one layer's score matrices? ------------------------------


def check_score_memory(answer, *, n: int = 4096, h: int = 16, itemsize: int = 2) -> CheckResult:
    """Check the bytes of one layer's ``h`` score matrices, ``n x n`` numbers of ``itemsize``."""
    expected = h * n * n * itemsize
    kind = {2: "bf16", 4: "float32", 8: "float64"}.get(itemsize, f"{itemsize}-byte")
    double = {2: "float32", 4: "float64"}.get(itemsize)  # twice the bytes of each number
    twice = "that is twice the answer. Did you count the weights too? The question asks for "
    twice += "the scores alone."
    if double:
        twice += f" Or {2 * itemsize} bytes a number? That is {double}; {kind} takes {itemsize}."
    mistakes = (
        (2 * expected, twice),
        (n * n * itemsize, f"that is one head's matrix; the layer has h = {h} of them."),
        (h * n * n, f"that counts the numbers, not the bytes: each {kind} takes {itemsize}."),
        (h * n * n * 8, f"that is float64 (8 bytes a number); {kind} takes {itemsize}."),
        (h * n * n * 4, f"that is float32 (4 bytes a number); {kind} takes {itemsize}."),
        (h * n * itemsize, f"that is one row per head; each matrix has n × n = {n * n:,} numbers."),
        (expected / 2**20, "that is in MiB (2**20 bytes); give the answer in bytes."),
        (expected / 2**10, "that is in KiB (2**10 bytes); give the answer in bytes."),
        (expected * 8, f"that counts bits: a {kind} number takes {itemsize} bytes."),
        (round(expected / 1e6), "that is in MB (10**6 bytes); give the answer in bytes."),
        (round(expected / 1e3), "that is in kB (10**3 bytes); give the answer in bytes."),
    )
    mistakes = tuple((w, hint) for w, hint in mistakes if w != expected)  # e.g. itemsize 8
    return check_number("score_memory", answer, expected, places=0, mistakes=mistakes)


# --- Exercise: merge two blocks of an online softmax ---------------------------------------


def block_state(z, V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block's ``(m, ℓ, o)`` from its logits ``z`` (n_q, n_b) and values ``V`` (n_b, d_v)."""
    m = z.max(axis=-1)  # (n_q,)
    p = np.exp(z - m[:, None])  # (n_q, n_b)
    return m, p.sum(axis=-1), p @ V


def check_merge(fn) -> CheckResult:
    """Check ``fn(m_a, ell_a, o_a, m_b, ell_b, o_b)``: the output over both blocks' keys.

    Each block's state is ``m`` (n_q,), ``ℓ`` (n_q,) and ``o`` (n_q, d_v), measured from
    the block's own maximum; the answer is ``softmax(z) V`` over all the keys, (n_q, d_v).
    """

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(11)
        z = np.array([[0.1, 0.9, 2.0, -1.0]])  # one query; block b holds the larger logit
        _merge_case(cases, "one query, 2 + 2 keys, the maximum in block b", z, rng, 2)
        z = np.array([[3.0, 0.5, 1.0, -2.0, 0.0]])
        _merge_case(cases, "one query, 2 + 3 keys, the maximum in block a", z, rng, 2)
        z = np.round(rng.normal(scale=2.0, size=(4, 6)), 1)  # n_q = 4, d_v = 3
        _merge_case(cases, "4 queries, 3 + 3 keys", z, rng, 3)
        z = np.array([[1000.0, 999.0, -1000.0, -999.0], [-1000.0, 0.0, 1000.0, 998.0]])
        _merge_case(cases, "logits near ±1000", z, rng, 2)
        z = np.array([[1000.0, 999.0, 998.0, 990.0], [-1000.0, -1001.0, -999.0, -1003.0]])
        _merge_case(cases, "one query's logits near +1000, the other's near -1000", z, rng, 2)

    return verdict("merge", fn, run)


def _merge_case(cases: Cases, case: str, z: np.ndarray, rng, split: int) -> None:
    V = np.round(rng.normal(size=(z.shape[-1], 3)), 1)  # d_v = 3
    (m_a, l_a, o_a), (m_b, l_b, o_b) = (
        block_state(z[:, :split], V[:split]),
        block_state(z[:, split:], V[split:]),
    )
    try:
        out = cases.run(case, m_a, l_a, o_a, m_b, l_b, o_b)
    except Fail as fail:
        if "broadcast" not in str(fail):
            raise
        raise Fail(
            f"{str(fail).split(' A sum over')[0]} A factor of shape (n_q,) meets o of shape "
            "(n_q, d_v): give it a column axis, a[:, None] * o_a, one factor per query row."
        ) from None
    expected = softmax(z) @ V  # (n_q, d_v): all the keys at once
    m = np.max([m_a, m_b])  # one maximum for every query: a mistake
    with np.errstate(all="ignore"):
        a, b = np.exp(m_a - m)[:, None], np.exp(m_b - m)[:, None]
        scalar = (a * o_a + b * o_b) / (a * l_a[:, None] + b * l_b[:, None])
    if not np.allclose(scalar, expected, atol=ATOL) and np.allclose(
        out, scalar, atol=ATOL, equal_nan=True
    ):
        raise Fail(
            f"you took one maximum for all the queries (np.max without an axis?), so a query "
            f"whose logits are far below it underflows to 0 / 0 (on {case}). Each query needs "
            "its own: np.maximum(m_a, m_b)."
        )
    if not np.all(np.isfinite(out)):
        raise Fail(
            f"got nan or inf on {case}: e^1000 overflows. Never take e^m of a block's "
            "maximum on its own; rescale by e^(m_a - m) and e^(m_b - m), which are at most 1."
        )
    with np.errstate(all="ignore"):  # some mistakes overflow on purpose
        _judge_merge(out, expected, case, m_a, l_a, o_a, m_b, l_b, o_b)


def _judge_merge(out, expected, case: str, m_a, l_a, o_a, m_b, l_b, o_b) -> None:
    m = np.maximum(m_a, m_b)
    a, b = np.exp(m_a - m)[:, None], np.exp(m_b - m)[:, None]
    l_a, l_b = l_a[:, None], l_b[:, None]
    mistakes = [
        (
            (o_a + o_b) / (l_a + l_b),
            "you added the two blocks' sums as they are, but each was measured from its own "
            "maximum. Take m = max(m_a, m_b) and multiply each block's ℓ and o by "
            "e^(m_block - m) before adding.",
        ),
        (
            (o_a + o_b) / (a * l_a + b * l_b),
            "you rescaled ℓ but not o: the running output was measured from the old "
            "maximum too, so it needs the same factor e^(m_block - m).",
        ),
        (
            (a * o_a + b * o_b) / (l_a + l_b),
            "you rescaled o but not ℓ: the sum below the fraction needs the same factor "
            "e^(m_block - m).",
        ),
        (
            (o_a / a + o_b / b) / (l_a / a + l_b / b),
            "the factor is upside down: a block measured from a smaller maximum is "
            "multiplied by e^(m_block - m), which is at most 1, not by e^(m - m_block).",
        ),
        (
            (o_a / l_a + o_b / l_b) / 2,
            "you averaged the two blocks' outputs, so both count the same. Each counts in "
            "proportion to its share of the sum, e^(m_block - m) ℓ_block: merge the sums "
            "first, divide once at the end.",
        ),
        (a * o_a + b * o_b, "you returned o; the output is o / ℓ, divided once at the end."),
    ]
    for wrong, hint in mistakes:
        if np.allclose(wrong, expected, atol=ATOL):
            continue  # on this case the "mistake" gives the right answer
        if out.shape == wrong.shape and np.allclose(out, wrong, atol=ATOL):
            raise Fail(f"{hint} (on {case})")
    expect_shape(out, expected.shape, case, " One output row per query: (n_q, d_v).")
    same(out, expected, case)

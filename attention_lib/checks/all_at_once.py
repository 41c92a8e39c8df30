"""Chapter 9 checkers: attention one query row at a time, and what the n x n matrix costs
(merging online-softmax blocks is in ``merge.py``)."""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, scaled_dot_product_attention, softmax
from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned (before becoming floats)
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
from .rows_mistakes import _constant_scale, _product_hint, _unnormalised
from .score_memory_slips import numbers_hint, typed_slip

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
            raise Fail(_overflow_hint(cases.fn, case, Q, K, V, out))
        _row_case(cases, case, Q, K, V, out=out)

        # Row maxima of about +707 and -636: one shift for the whole matrix leaves row 2 at 0/0.
        Q, K, V = np.array([[1000.0, 0.0], [-900.0, -1000.0]]), np.eye(2), rng.normal(size=(2, 3))
        case = "rows whose largest scores are far apart (+707 and -636)"
        out = _run(cases, case, Q, K, V)
        if not np.all(np.isfinite(out)):
            raise Fail(
                f"got nan or inf on {case}: the second row was shifted down by more than its "
                "own largest score (-636), so each of its exponentials underflows to 0 and "
                "0 / 0 is nan. Shift each row by its own maximum, z.max() (not one shift for "
                "the whole matrix, not the largest |z|)."
            )
        _row_case(cases, case, Q, K, V, out=out)

    return verdict("attention_rows", _output_only(fn), run)


def _overflow_hint(fn, case: str, Q, K, V, out) -> str:
    """Why the scores of about +-1000 gave nan or inf: a shift by the row minimum, or none."""
    z = attention_scores(Q, K) / np.sqrt(Q.shape[-1])  # (n_q, n_k)
    with np.errstate(all="ignore"):
        e = np.exp(z - z.min(axis=-1, keepdims=True))  # every exponent >= 0
        by_min = e / e.sum(axis=-1, keepdims=True) @ V
    # Scores 0 and -1000 tell the two apart: unshifted they are fine, shifted by -1000 not.
    probe_Q, probe_K = np.array([[-1000 * np.sqrt(2), 0.0]]), np.array([[0.0, 0], [1, 0]])
    try:
        with np.errstate(all="ignore"):
            probe = np.asarray(fn(probe_Q, probe_K, np.eye(2)), dtype=float)
    except Exception:  # noqa: BLE001 - any failure: fall back to the general hint
        probe = np.zeros(1)
    if (
        out.shape == by_min.shape
        and np.allclose(out, by_min, atol=ATOL, equal_nan=True)
        and not np.all(np.isfinite(probe))
    ):
        return (
            f"got nan or inf on {case}: you subtracted each row's minimum, which leaves its "
            "largest score far above 0, so exp overflows. Subtract each row's maximum, "
            "z.max(): every exponent is then at most 0, and the weights do not change."
        )
    return (
        f"got nan or inf on {case}: exp of a large score overflows. Subtract "
        "each row's maximum before exp; the weights do not change."
    )


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
        d_k, d_v = Q.shape[-1], V.shape[-1]
        if f"from shape ({d_v},) into shape ({d_k},)" in message:  # np.zeros_like(Q)
            raise Fail(
                f"{message} Your output array has d_k = {d_k} columns, like Q; it needs "
                f"d_v = V.shape[1] = {d_v}: np.zeros((Q.shape[0], V.shape[1]))."
            ) from None
        raise Fail(f"{message} {_product_hint(cases.fn)}") from None


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
    if out.shape == expected.shape[1:] and n_q > 1 and np.allclose(out, expected[-1], atol=ATOL):
        raise Fail(
            f"you returned only the last query's row, shape {out.shape} (on {case}): you "
            "replaced the whole output at each step. Write row i instead: output[i] = ..."
        )
    if out.shape == expected.shape[1:] and n_q == 1:
        raise Fail(
            f"returned shape {out.shape} for one query (on {case}): keep the query axis, "
            f"so the output is (n_q, d_v) = {expected.shape} even when n_q = 1."
        )
    e = np.exp(S * s - (S * s).max(axis=-1, keepdims=True))  # each row shifted by its max
    g = np.exp(S * s - (S * s).max())  # one shift for the whole matrix
    why = "the scale is √d_k, the length of the vectors in each dot product, Q.shape[-1]."
    scales = (  # (factor on the raw scores, hint): scales that are not 1/√d_k
        (1.0, "you forgot the scale: divide each row's scores by √d_k first."),
        (np.sqrt(d_k), "you multiplied by √d_k; divide by it instead."),
        (1 / d_k, f"you divided by d_k = {d_k}; divide by its square root, √d_k = {d_k**0.5:.3g}."),
        (1 / np.sqrt(V.shape[-1]), f"you divided by √d_v (V's width); {why}"),
        (1 / np.sqrt(K.shape[0]), f"you divided by √n_k (the number of keys); {why}"),
        (1 / np.sqrt(n_q), f"you divided by √n_q (the number of queries); {why}"),
    )
    mistakes = [
        (weights, "you returned the weights (one column per key): blend the values, p @ V."),
        *((softmax(S * t) @ V, hint, t) for t, hint in scales),
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
            K.shape[0] * expected,
            "you divided the exponentials by their mean, so each row's weights add up to "
            "n_k, the number of keys: divide by their sum.",
        ),
        (
            softmax(S) @ V * s,
            "you scaled after the softmax: divide the scores by √d_k before it, not the "
            "weights or the output.",
        ),
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
    for wrong, hint, *factor in mistakes:
        if np.shape(wrong) == expected.shape and np.allclose(wrong, expected, atol=ATOL):
            continue  # on this case the "mistake" gives the right answer
        if out.shape == np.shape(wrong) and np.allclose(out, wrong, atol=ATOL):
            if factor and factor[0] != 1.0 and _constant_scale(cases.fn, factor[0]):
                hint = (
                    f"your scale does not follow d_k: you divided the scores by "
                    f"{1 / factor[0]:.3g} whatever the inputs. It is √d_k, with d_k = "
                    "Q.shape[-1], so it changes with the inputs."
                )
            raise Fail(f"{hint} (on {case})")
    expect_shape(out, expected.shape, case, " One row per query, one column per value: (n_q, d_v).")
    last = _LAST.get()
    if last and last[0] is out and last[1] in "iu" and not np.allclose(out, expected, atol=ATOL):
        raise Fail(
            f"your output array holds integers, so each blended value was cut to a whole "
            f"number (on {case}): make it float, as np.zeros((n_q, d_v)) is by default."
        )
    if np.all(out == 0) and np.any(expected != 0):
        raise Fail(f"your output is all zeros (on {case}): write each step's row into it.")
    for j, name in ((-1, "last"), (0, "first")):
        others = np.delete(np.arange(n_q), j)
        if (
            n_q > 1
            and np.all(out[j] == 0)
            and np.any(expected[j] != 0)
            and np.allclose(out[others], expected[others], atol=ATOL)
        ):
            raise Fail(
                f"the {name} row is zero, the others are right: check your range, which "
                f"must visit every query, i = 0 to n_q - 1 (on {case})."
            )
    _unnormalised(out, expected, case)
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
        (
            3 * expected,
            "that is three n × n arrays per head, the plain version's peak (scores, "
            "exponentials and weights); the question asks for the score matrices alone.",
        ),
        (n * n * itemsize, f"that is one head's matrix; the layer has h = {h} of them."),
        (12 * n * n * itemsize, f"that is 12 heads; this model has {h}."),  # BERT, GPT-2
        (12 * expected, "that is 12 layers; the question asks for one layer."),  # GPT-2 small
        (n * n, f"that is one head's numbers: times h = {h} heads, times {itemsize} bytes each."),
        (h * n * (n - 1) * itemsize, "that skips the diagonal: each query scores its own key too."),
        (h * (n - 1) ** 2 * itemsize, f"that uses n = {n - 1}: check n = {n} (off by one)."),
        (h * n * n, numbers_hint(kind, itemsize, h)),  # or h / 2 heads, or a causal half
        (h * n * (n + 1) // 2 * itemsize, "the n × n scores are stored in full even with a mask."),
        (h * n * n * 8, f"that is float64 (8 bytes a number); {kind} takes {itemsize}."),
        (h * n * n * 4, f"that is float32 (4 bytes a number); {kind} takes {itemsize}."),
        (h * n * itemsize, f"that is one row per head; each matrix has n × n = {n * n:,} numbers."),
        (
            h * n * 64 * itemsize,
            "that is n × 64 per head, the size of Q at a typical d_k of 64, not the n × n scores.",
        ),
        (expected / 2**30, "that looks like GiB (2**30 bytes); give the answer in bytes."),
        (expected / 2**20, "that is in MiB (2**20 bytes); give the answer in bytes."),
        (expected / 2**10, "that is in KiB (2**10 bytes); give the answer in bytes."),
        (expected * 8, f"that counts bits: a {kind} number takes {itemsize} bytes."),
        (expected / 1e9, "that looks like decimal GB (10**9 bytes); give the answer in bytes."),
        (expected / 1e6, "that looks like decimal MB (10**6 bytes); give the answer in bytes."),
        (expected / 1e3, "that is in kB (10**3 bytes); give the answer in bytes."),
    )
    mistakes = tuple((w, hint) for w, hint in mistakes if w != expected)  # e.g. itemsize 8
    slip = typed_slip(answer, n, h, itemsize)  # quotes, commas, ^ for a power
    if slip:
        result = CheckResult("score_memory", "FAIL", slip)
        print(result.line)
        return result
    fraction = answer if isinstance(answer, float | np.floating) else None
    if fraction is not None and not fraction.is_integer():
        # 0.5 (GiB) is told its unit, not only "a whole number"
        hint = next((h for w, h in mistakes if abs(fraction - w) < 5e-3), None)
        if hint or abs(fraction - round(fraction)) >= 1e-6:  # not float noise
            # the number as typed: 536870912.4, not 5.36871e+08
            hint = hint or f"this is a count: a whole number, not {float(fraction)!r}."
            result = CheckResult("score_memory", "FAIL", hint)
            print(result.line)
            return result
    return check_number("score_memory", answer, expected, places=0, mistakes=mistakes)

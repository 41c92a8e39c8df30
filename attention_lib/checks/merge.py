"""Chapter 9 checker: merge two blocks of an online softmax, and the state a block keeps."""

from __future__ import annotations

import numpy as np

from ..core import softmax
from .base import _LAST, ATOL, Cases, CheckResult, Fail, expect_shape, same, verdict
from .merge_dtype import narrow_float, recording
from .merge_shares import divided_early

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
        z = np.vstack([z, [1000.0, 999.0, 998.0, 997.0]])  # maxima only 2 apart
        _merge_case(cases, "logits near ±1000", z, rng, 2)
        z = np.array([[1000.0, 999.0, 998.0, 990.0], [-1000.0, -1001.0, -999.0, -1003.0]])
        _merge_case(cases, "one query's logits near +1000, the other's near -1000", z, rng, 2)

    return verdict("merge", recording(fn), run)  # the dtype kept for narrow_float


def _merge_case(cases: Cases, case: str, z: np.ndarray, rng, split: int) -> None:
    V = np.round(rng.normal(size=(z.shape[-1], 3)), 1)  # d_v = 3
    m_a, l_a, o_a = block_state(z[:, :split], V[:split])
    m_b, l_b, o_b = block_state(z[:, split:], V[split:])
    try:
        out = cases.run(case, m_a, l_a, o_a, m_b, l_b, o_b)
    except Fail as fail:
        for cause, hint in _RAISED:
            if cause in str(fail):
                raise Fail(f"{fail} {hint}") from None
        if "broadcast" not in str(fail):
            raise
        numpy_said = str(fail).split(" raised ", 1)[-1].split(" (on ")[0].strip()
        raise Fail(f"{_missing_column(cases.fn)} (on {case}). NumPy said: {numpy_said}.") from None
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
    with np.errstate(all="ignore"):
        low = _merged(np.minimum(m_a, m_b), m_a, l_a, o_a, m_b, l_b, o_b)
    if (
        np.isfinite(low).any()
        and not np.allclose(low, expected, atol=ATOL)
        and np.allclose(out, low, atol=ATOL, equal_nan=True)
    ):
        raise Fail(
            f"you measured from the smaller maximum (np.minimum?), so a factor e^(m_block - m) "
            f"can be e^2000 and overflow (on {case}). The common maximum is the larger one: "
            "np.maximum(m_a, m_b), and then every factor is at most 1."
        )
    with np.errstate(all="ignore"):
        mean = _merged((m_a + m_b) / 2, m_a, l_a, o_a, m_b, l_b, o_b)
    if (
        not np.all(np.isfinite(out))
        and np.allclose(out, mean, atol=ATOL, equal_nan=True)
        and _probe(cases.fn)[0]  # right there, as the mean is; one block's max is not
    ):
        raise Fail(
            f"you measured from the mean of the two maxima, (m_a + m_b) / 2, so the block "
            f"with the larger maximum gets a factor above 1, which overflows (on {case}). "
            "The merged maximum must be the larger one, np.maximum(m_a, m_b)."
        )
    with np.errstate(all="ignore"):
        summed = _merged(m_a + m_b, m_a, l_a, o_a, m_b, l_b, o_b)
    if not np.all(np.isfinite(out)) and np.allclose(out, summed, atol=ATOL, equal_nan=True):
        raise Fail(
            f"you measured from m = m_a + m_b, which is not a maximum, so e^(m_a - m) = "
            f"e^(-m_b) underflows or overflows once the maxima are large (on {case}). "
            "Take the larger of the two, np.maximum(m_a, m_b): then one factor is 1 and "
            "the other at most 1."
        )
    if not np.all(np.isfinite(out)):
        raise Fail(_overflow_hint(case, out, m_a, l_a, o_a, m_b, l_b, o_b))
    with np.errstate(all="ignore"):  # some mistakes overflow on purpose
        _judge_merge(cases.fn, out, expected, case, m_a, l_a, o_a, m_b, l_b, o_b)


_RAISED = (  # what NumPy or Python says, and the slip that usually causes it
    (
        "only integer scalar arrays",
        "If you wrote np.max(m_a, m_b): its second argument is an axis, not a second array. "
        "The larger of each pair is np.maximum(m_a, m_b).",
    ),
    (
        "truth value of an array",
        "If you wrote max(m_a, m_b) or an if: Python's max compares whole arrays, which "
        "fails for more than one query. The larger of each pair is np.maximum(m_a, m_b).",
    ),
    (
        "returned tuple",
        "If you returned (o, ell): the output is their quotient, return o / ell[:, None].",
    ),
)


def _overflow_hint(case: str, out, m_a, l_a, o_a, m_b, l_b, o_b) -> str:
    """Why the merge gave nan or inf: measured from one block's maximum, or e^m on its own."""
    common = (
        "Measure both blocks from m = np.maximum(m_a, m_b): multiply by e^(m_a - m) and "
        "e^(m_b - m), each at most 1."
    )
    for mine, other in (("b", "a"), ("a", "b")):
        with np.errstate(all="ignore"):  # right in exact arithmetic, overflows in floats
            m_one = m_b if mine == "b" else m_a
            wrong = _merged(m_one, m_a, l_a, o_a, m_b, l_b, o_b)
        if out.shape == wrong.shape and np.allclose(out, wrong, atol=ATOL, equal_nan=True):
            return (
                f"got nan or inf on {case}: you measured both blocks from block {mine}'s "
                f"maximum, so the factor e^(m_{other} - m_{mine}) overflows when m_{other} is "
                f"the larger. {common}"
            )
    return f"got nan or inf on {case}: e^1000 overflows. {common}"


def _judge_merge(fn, out, expected, case: str, m_a, l_a, o_a, m_b, l_b, o_b) -> None:
    m = np.maximum(m_a, m_b)
    a, b = np.exp(m_a - m)[:, None], np.exp(m_b - m)[:, None]
    l_a, l_b = l_a[:, None], l_b[:, None]
    mistakes = [
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
            "the factor is upside down, or each block got the other's: a block measured "
            "from a smaller maximum is multiplied by e^(m_block - m), which is at most 1, "
            "not by e^(m - m_block).",
        ),
        (
            (o_a / l_a + o_b / l_b) / 2,
            "you averaged the two blocks' outputs, so both count the same. Each counts in "
            "proportion to its share of the sum, e^(m_block - m) ℓ_block: merge the sums "
            "first, divide once at the end.",
        ),
        (
            (a * o_a / l_a + b * o_b / l_b) / (a + b),  # a softmax of the m's, ℓ ignored
            "you weighted the blocks by a softmax of their m's: each block counts in proportion "
            "to e^(m_block - m) ℓ_block, not e^(m_block - m) alone.",
        ),
        *divided_early(a, b, l_a, o_a, l_b, o_b),
        (a * o_a + b * o_b, "you returned o; the output is o / ℓ, divided once at the end."),
    ]
    smaller = np.where((m_a < m_b)[:, None], o_a / l_a, o_b / l_b)  # as factors m_block - m give
    if out.shape == smaller.shape and np.allclose(out, smaller, atol=ATOL) and _probe(fn)[1]:
        raise Fail(  # on one query this is one block alone: the probe tells them apart
            "you multiplied by m_block - m itself, which is 0 for the block holding the maximum:"
            f" the factor is its exp, np.exp(m_a - m) (on {case})."
        )
    alone = "your output ignores one block: rescale both and add, then divide once."
    larger = np.where((m_a >= m_b)[:, None], o_a / l_a, o_b / l_b)  # the larger max's block
    mistakes += [(o_a / l_a, alone), (o_b / l_b, alone), (larger, alone)]
    for name, ell in (("a", l_a), ("b", l_b)):  # one block's ℓ below the merged o
        hint = (
            f"you divided by block {name}'s ℓ alone, so your weights do not sum to 1: "
            "divide by the merged ℓ, e^(m_a - m) ℓ_a + e^(m_b - m) ℓ_b."
        )
        merged_o, factor = a * o_a + b * o_b, a if name == "a" else b
        mistakes += [(merged_o / ell, hint), (merged_o / (factor * ell), hint)]
    for wrong, hint in mistakes:
        if np.allclose(wrong, expected, atol=ATOL):
            continue  # on this case the "mistake" gives the right answer
        if out.shape == wrong.shape and np.allclose(out, wrong, atol=ATOL):
            raise Fail(f"{hint} (on {case})")
    unscaled = (o_a + o_b) / (l_a + l_b)
    if out.shape == unscaled.shape and np.allclose(out, unscaled, atol=ATOL):
        if not np.allclose(unscaled, expected, atol=ATOL):
            raise Fail(_unscaled_hint(fn, case, expected, m_a, l_a[:, 0], o_a, m_b, l_b[:, 0], o_b))
    expect_shape(out, expected.shape, case, " One output row per query: (n_q, d_v).")
    last = _LAST.get()  # the answer as returned, with its dtype kind
    if last and last[0] is out and last[1] in "iu" and not np.allclose(out, expected, atol=ATOL):
        raise Fail(
            f"your output holds integers (.astype(int)?), so each value was cut to a whole "
            f"number (on {case}): return the floats o / ell[:, None]."
        )
    narrow_float(out, expected, case)  # float16 or float32: named, not "values differ"
    same(out, expected, case)


def _unscaled_hint(fn, case: str, expected, m_a, l_a, o_a, m_b, l_b, o_b) -> str:
    """The sums were added unscaled here: not at all, or only the block holding the maximum.

    Rescaling only one block is right whenever that block holds the smaller maximum, so
    the same ``fn`` is run again with the blocks swapped: right there means one block.
    """
    fix = (
        "Take m = np.maximum(m_a, m_b) and multiply each block's ℓ and o by "
        "e^(m_block - m) before adding."
    )
    try:
        with np.errstate(all="ignore"):
            args = m_b, l_b, o_b.copy(), m_a, l_a, o_a.copy()  # block b first, then a
            swapped = np.asarray(fn(*args), dtype=float)
    except Exception:  # noqa: BLE001 - any failure: the general hint
        swapped = None
    shaped = swapped is not None and swapped.shape == expected.shape
    one = shaped and np.allclose(swapped, expected, atol=ATOL)
    if not one:
        return (
            "you added the two blocks' sums as they are, but each was measured from its own "
            f"maximum (on {case}). {fix}"
        )
    hint = (
        "you rescaled only one block; either maximum can be the larger, so both blocks "
        "need the factor e^(m_block - m), with m = np.maximum(m_a, m_b)."
    )
    for big, other, holds in (("a", "b", m_a >= m_b), ("b", "a", m_b >= m_a)):
        if np.all(holds):  # the block with the larger maximum: its factor is 1
            here = f"Here block {big} holds it, and block {other}'s ℓ and o went in unscaled"
            return f"{hint} {here} (on {case})."
    return f"{hint} (on {case})"


def _probe(fn) -> tuple[bool, bool]:
    """Run ``fn`` where the maxima are 1000 apart, either block the larger (e^500 is finite):
    is it right, and did each query get only its smaller maximum's block (exp forgotten)?"""
    z = np.array([[1000.0, 999.0, 0.0, 1.0], [0.0, 1.0, 1000.0, 998.0]])
    V = np.array([[1.0, 0.0], [0.5, 2.0], [-1.0, 1.0], [0.0, -2.0]])
    (m_a, l_a, o_a), (m_b, l_b, o_b) = block_state(z[:, :2], V[:2]), block_state(z[:, 2:], V[2:])
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fn(m_a, l_a, o_a, m_b, l_b, o_b), dtype=float)
    except Exception:  # noqa: BLE001 - any failure: neither
        return False, False
    smaller = np.vstack([o_b[0] / l_b[0], o_a[1] / l_a[1]])  # row 0's larger max is in a
    ok = [out.shape == (2, 2) and np.allclose(out, x, atol=ATOL) for x in (softmax(z) @ V, smaller)]
    return ok[0], ok[1]


def _merged(m, m_a, l_a, o_a, m_b, l_b, o_b) -> np.ndarray:
    """Both blocks measured from ``m`` (n_q,), added and divided: right when m = max."""
    a, b = np.exp(m_a - m)[:, None], np.exp(m_b - m)[:, None]
    return (a * o_a + b * o_b) / (a * l_a[:, None] + b * l_b[:, None])


def _missing_column(fn) -> str:
    """Which (n_q,) vector met o (n_q, d_v) without [:, None]: rerun on a square case."""
    z = np.array([[0.5, 2.0, -1.0, 1.0], [1.5, 0.0, 3.0, -0.5]])  # n_q = d_v = 2
    V = np.array([[1.0, 0.0], [0.5, 2.0], [-1.0, 1.0], [0.0, -2.0]])
    m_a, l_a, o_a = block_state(z[:, :2], V[:2])
    m_b, l_b, o_b = block_state(z[:, 2:], V[2:])
    m = np.maximum(m_a, m_b)
    a, b = np.exp(m_a - m), np.exp(m_b - m)  # (n_q,)
    ell, o = a * l_a + b * l_b, a[:, None] * o_a + b[:, None] * o_b
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fn(m_a, l_a, o_a.copy(), m_b, l_b, o_b.copy()), dtype=float)
    except Exception:  # noqa: BLE001 - any failure: fall back to the general hint
        out = None
    if out is not None and out.shape == o.shape and np.allclose(out, o / ell, atol=ATOL):
        return (  # o / ell divided column j by ell[j]
            "each query row of o has its own ℓ, so divide by a column: o / ell[:, None] "
            "gives ℓ (n_q,) the shape (n_q, 1) that meets o (n_q, d_v)"
        )
    return (
        "each query row of o needs its own scale factor, so a factor of shape (n_q,) "
        "needs a column shape (n_q, 1) to meet o (n_q, d_v): write a[:, None] * o_a"
    )

"""Chapter 11 checker: [CLS]'s share of one head's output for one query (exercise 11.5).

The share is the chapter's measure: key ``j`` sends query ``q`` a piece of size
``weights[l, h, q, j] * sizes[l, h, j]``, and [CLS]'s share is its piece's size over the sum
of all the pieces' sizes in that row. The hints name the usual slips: the weight alone, the
sizes alone, no division, a sum over the wrong axis or of the sizes alone, squared sizes,
sizes over weights, the average over the queries, and the wrong layer, head, query or key
(l and h swapped in one array or both), and indices counted from 1.
"""

from __future__ import annotations

import numpy as np

from .base import ATOL, Cases, CheckResult, Fail, same, unseen_cases, verdict


def _pieces(weights, sizes):
    """Each piece's size, ``(L, H, n, n)``: the sizes lined up with the keys (last axis)."""
    return weights * sizes[:, :, None, :]


def _share(weights, sizes, l, h, q, key=0):
    piece = weights[l, h, q] * sizes[l, h]  # (n,): one piece per key
    return piece[key] / piece.sum()


def _case(rng, L, H, n):
    """Weights whose rows sum to 1 and positive value sizes, [CLS]'s the shortest."""
    scores = rng.normal(scale=1.5, size=(L, H, n, n))
    weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    sizes = rng.uniform(1.0, 3.0, size=(L, H, n))
    sizes[..., 0] = rng.uniform(0.1, 0.4, size=(L, H))  # a short [CLS] value, as in the model
    return weights, sizes


def _index_hint(out, weights, sizes, l, h, q):
    """A hint when ``out`` is the right share of another layer, head, query or key."""
    L, H, n, _ = weights.shape
    if h < L and l < H:  # l and h swapped in one of the two arrays only
        for name, w, s in (
            ("weights", weights[h, l, q], sizes[l, h]),
            ("sizes", weights[l, h, q], sizes[h, l]),
        ):
            if np.isclose(out, w[0] * s[0] / (w * s).sum(), atol=ATOL):
                return (
                    f"you swapped l and h in {name}: both arrays put the layer first, "
                    "so index each one [l, h]."
                )
    column = weights[l, h, :, q] * sizes[l, h]  # key q's column read as if it were a row
    if np.isclose(out, column[0] / column.sum(), atol=ATOL):
        return (
            f"you read column {q}, the weights every query gives key {q}: query {q}'s own "
            f"weights are its row, weights[l, h, q]."
        )
    for key in range(1, n):
        if np.isclose(out, _share(weights, sizes, l, h, q, key), atol=ATOL):
            where = "the last key's ([SEP]'s)" if key == n - 1 else f"key {key}'s"
            return f"that is {where} share: [CLS] is the first key, index 0."
    for l2 in range(L):
        for h2 in range(H):
            for q2 in range(n):
                if (l2, h2, q2) == (l, h, q):
                    continue
                if not np.isclose(out, _share(weights, sizes, l2, h2, q2), atol=ATOL):
                    continue
                lower = (l2 in (l, (l - 1) % L)) and (h2 in (h, (h - 1) % H))
                lower = lower and q2 in (q, (q - 1) % n)  # some index 1 too low
                if lower and (l2, h2) != (l, h):
                    return (
                        "that is the share one index lower, as if you counted from 1: l, h "
                        "and q are already array indices, counted from 0 (L3 H8 is l=2, "
                        "h=7), so use weights[l, h, q] as they are."
                    )
                if (l2, h2) == (l, h):
                    return f"that is query {q2}'s share: query {q}'s row is weights[l, h, q]."
                if (l2, h2) == (h, l):
                    return (
                        "you swapped the layer and head: weights has shape (layers, heads, "
                        "n, n), so the layer comes first, weights[l, h]."
                    )
                return f"that is the share in another head (layer index {l2}, head {h2})."
    return None


def _judge(out, weights, sizes, l, h, q, case):
    """Fail with a named slip, or unless ``out`` is [CLS]'s share for query ``q``."""
    pieces = _pieces(weights, sizes)
    shares = pieces[..., 0] / pieces.sum(axis=-1)  # (L, H, n): [CLS]'s, per query
    row = pieces[l, h, q] / pieces[l, h, q].sum()  # (n,): every key's share
    if out.shape == row.shape and np.allclose(out, row, atol=ATOL):
        raise Fail(f"that is every key's share (on {case}): return [CLS]'s, the first one.")
    if out.shape == shares[l, h].shape and np.allclose(out, shares[l, h], atol=ATOL):
        raise Fail(f"that is [CLS]'s share for every query (on {case}): return query q's.")
    if out.shape != ():
        raise Fail(f"returned shape {out.shape} (on {case}): return one number, [CLS]'s share.")
    w, s = weights[l, h, q], sizes[l, h]  # (n,), (n,)
    expected = w[0] * s[0] / (w * s).sum()
    mistakes = (
        (
            w[0],
            "that is [CLS]'s weight, not its share: multiply each weight by its key's value "
            "size, sizes[l, h] (sizes lined up with the queries cancel out and give the "
            "weight too), then divide [CLS]'s piece by the row's sum.",
        ),
        (
            s[0] / s.sum(),
            "that uses the value sizes alone: each piece is a weight times a size, "
            "weights[l, h, q] * sizes[l, h].",
        ),
        (
            w[0] * s[0],
            "that is the size of [CLS]'s piece: divide it by the sum of all the pieces' "
            "sizes in the row, to get its share.",
        ),
        (
            pieces[l, h, q, 0] / pieces[l, h, :, 0].sum(),
            "you summed over the queries (axis -2), [CLS]'s column: the share divides by "
            "the sum over the keys in query q's row, the last axis.",
        ),
        (
            pieces[l, h, q, 0] / pieces[l, h].sum(),
            "you summed over the whole (n, n) head: the share divides by the sum over the "
            "keys in query q's row only.",
        ),
        (
            w[0] * s[0] ** 2 / (w * s**2).sum(),
            "you squared the sizes: the share uses the sizes themselves, weight x size.",
        ),
        (
            (w[0] * s[0]) ** 2 / ((w * s) ** 2).sum(),
            "you squared the pieces' sizes: the share divides the size itself by the sum of "
            "the sizes.",
        ),
        (
            w[0] * s[0] / np.linalg.norm(w * s),
            "you divided by the length of the sizes (np.linalg.norm): the share divides by "
            "their sum.",
        ),
        (
            shares[l, h].mean(),
            "that is [CLS]'s share averaged over every query (the chapter's cls_parts): "
            "give query q's alone.",
        ),
        (
            w[0] * s[0] / s.sum(),
            "you divided by the sum of the sizes: divide by the sum of the pieces, "
            "weight x size, (weights[l, h, q] * sizes[l, h]).sum().",
        ),
        (
            s[0] / w[0] / (s / w).sum(),
            "you divided the sizes by the weights: each piece is a weight times a size, "
            "weights[l, h, q] * sizes[l, h].",
        ),
        (1 - expected, "that is the other keys' share: give [CLS]'s piece over the sum."),
        (100 * expected, "that is a percentage: give the share as a fraction of 1."),
    )
    for wrong, hint in mistakes:
        if not np.isclose(wrong, expected, atol=ATOL) and np.isclose(out, wrong, atol=ATOL):
            raise Fail(f"{hint} (On {case}.)")
    if not np.isclose(out, expected, atol=ATOL):
        hint = _index_hint(out, weights, sizes, l, h, q)
        if hint is not None:
            raise Fail(f"{hint} (On {case}.)")
    same(out, expected, case)


def check_cls_share(fn) -> CheckResult:
    """Check ``fn(weights, sizes, l, h, q)``: [CLS]'s share in head (l, h) for query q.

    ``weights`` is ``(L, H, n, n)`` (layers, heads, queries, keys), ``sizes`` ``(L, H, n)``,
    the value sizes ``|v_j W_o^(i)|`` per key; ``l``, ``h`` and ``q`` are array indices.
    """

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(11)
        weights, sizes = _case(rng, 3, 4, 5)
        for l, h, q in ((1, 2, 3), (2, 1, 4), (0, 3, 0)):
            case = f"3 layers, 4 heads, 5 tokens; l={l}, h={h}, q={q}, counted from 0"
            out = cases.run(case, weights, sizes, l, h, q)
            _judge(out, weights, sizes, l, h, q, case)
        weights, sizes = _case(rng, 1, 2, 7)
        case = "1 layer, 2 heads, 7 tokens; l=0, h=1, q=6, counted from 0"
        out = cases.run(case, weights, sizes, 0, 1, 6)
        _judge(out, weights, sizes, 0, 1, 6, case)

    return verdict("cls_share", fn, run)


@unseen_cases("cls_share")
def _unseen(rng):
    L, H, n = (int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(3, 9)))
    weights, sizes = _case(rng, L, H, n)
    l, h, q = int(rng.integers(L)), int(rng.integers(H)), int(rng.integers(n))
    case = f"{L} layers, {H} heads, {n} tokens; l={l}, h={h}, q={q}, counted from 0"
    return [(case, (weights, sizes, l, h, q), np.float64(_share(weights, sizes, l, h, q)))]

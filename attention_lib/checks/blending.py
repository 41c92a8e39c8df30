"""Chapter 6 checkers: one value row doubled, the blend ``weights @ V`` (full attention is in
``attention.py``)."""

from __future__ import annotations

import numpy as np

from ..core import softmax
from .base import (
    ATOL,
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    check_number,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)


def _words(n: int) -> str:
    return ("no", "one", "two", "three", "four", "five", "six")[n] if 0 <= n <= 6 else str(n)


# --- Exercise: which outputs change, and by how much, when one value row doubles ---------


def check_output_change(
    answer,
    weights,
    V,
    query: int,
    key: int,
    feature: int,
    *,
    tokens=None,
    features=None,
    places: int = 3,
) -> CheckResult:
    """Check how much ``output[query, feature]`` rises when the value row ``V[key]`` doubles.

    Doubling ``V[key]`` adds one more ``V[key]`` to it and leaves the weights alone (they
    come from Q and K), so every output row ``i`` rises by ``weights[i, key] * V[key]``.
    The answer is ``weights[query, key] * V[key, feature]``, to ``places`` decimals. The
    hints name the usual slips: too few decimals (or cut rather than rounded), the weight
    read the wrong way round (how much ``key`` attends to ``query``), twice the change,
    the new element (also when added up from rounded parts) or the old one, the wrong
    sign, a percentage, the whole value, the weight alone, another column of the card,
    another token's change, and "nothing changes"; text or a one-element array is told
    how to become a number.
    An answer worked out with the weight rounded to ``places`` decimals is told so, never
    sent after another slip that rounds the same.
    """
    if isinstance(answer, str) or (isinstance(answer, np.ndarray) and answer.size == 1):
        fix = "drop the quotes" if isinstance(answer, str) else "take it out with float(...)"
        line = f"expected one number, got {answer!r}: {fix}, e.g. my_answer = 0.5."
        result = CheckResult("output change", "FAIL", line)
        print(result.line)
        return result
    W, V = np.asarray(weights, dtype=float), np.asarray(V, dtype=float)
    tokens = tokens or [f"token {j}" for j in range(W.shape[-1])]
    features = features or [f"dimension {f}" for f in range(V.shape[-1])]
    me, other, name = tokens[query], tokens[key], features[feature]
    value = V[key, feature]
    expected = W[query, key] * value
    before = W[query] @ V[:, feature]
    tol = 0.5 * 10.0**-places + 1e-12  # check_number's tolerance
    coarse = places - 1
    rounded = np.round(W[query, key], places) * value  # the weight rounded first
    twice = "that is twice the change: the whole new term, weight × 2 V"
    if np.isclose(V[key].sum(), 2 * value):  # summing the card gives the same number
        twice += (
            f", or the weight times the sum of the card of '{other}' "
            f"(its entries add up to {2 * value:g})"
        )
    mistakes = [
        (
            W[key, query] * value,
            f"that is how much '{other}' attends to '{me}'. The output of '{me}' takes "
            f"V['{other}'] with its own weight on '{other}': row '{me}', column '{other}'.",
        ),
        (2 * expected, twice + ". The change is one extra V, times the same weight."),
        (before + expected, f"that is the new '{name}' element; give how much it rises."),
        (
            np.round(before, places) + np.round(expected, places),  # the new element, rounded
            f"that is the new '{name}' element, added up from rounded parts; give how much "
            "it rises.",
        ),
        (
            -expected,
            f"the sign is wrong: the output of '{me}' gains one more weight × "
            f"V['{other}', '{name}'], and that product is "
            + ("positive." if expected > 0 else "negative."),
        ),
        *(  # 16.884, 16.9, 16.88: a percentage, however rounded
            (
                pct,
                "that looks like a percentage: give the rise itself, in the units of V, "
                f"to {_words(places)} decimals.",
            )
            for pct in {100 * expected, *(np.round(100 * expected, k) for k in range(places))}
        ),
        (before, f"that is the '{name}' element before the change; give how much it rises."),
        (
            value,
            f"that is all of V['{other}', '{name}']; the output of '{me}' receives only "
            "its weight's share of it.",
        ),
        (
            0.0,
            f"0 would mean the output of '{me}' does not move. The weights stay the same "
            f"(they come from Q and K), but the card of '{other}' they blend has grown: "
            f"the output gains weight × the extra V['{other}', '{name}'].",
        ),
    ]
    if not np.isclose(value, 1.0):  # only then is the weight alone a different number
        mistakes.append(
            (
                W[query, key],
                f"that is the weight alone. The output gains the weight times what was added, "
                f"V['{other}', '{name}'] = {value:g}.",
            )
        )
    for g in sorted({g for g in range(V.shape[1]) if V[key, g] != value and g != feature}):
        same_entry = [features[h] for h in range(V.shape[1]) if V[key, h] == V[key, g]]
        mistakes.append(  # the right row, another column of the card
            (
                W[query, key] * V[key, g],
                f"that is the rise of the '{' / '.join(same_entry)}' element; this one asks "
                f"for '{name}': V['{other}', '{name}'] = {value:g}.",
            )
        )
    mistakes += [  # the right column, the wrong row: another token's change
        (W[i, key] * value, f"that is how much the output of '{tokens[i]}' rises; read row '{me}'.")
        for i in range(W.shape[0])
        if i != query
    ]
    # A slip that rounds like the rounded-weight answer would get the wrong hint: drop it.
    mistakes = [(v, h) for v, h in mistakes if abs(v - rounded) > tol or abs(v - expected) <= tol]
    if abs(rounded - expected) > tol:
        hint = (
            f"close: that is what the weight rounded to {_words(places)} decimals gives "
            f"({W[query, key]:.{places}f}); use {_words(places + 1)} "
            f"({W[query, key]:.{places + 1}f})."
        )
        mistakes.insert(0, (rounded, hint))
    # Too few decimals, or cut off instead of rounded: said before any other slip.
    scale = 10.0**coarse
    for short in (np.round(expected * scale) / scale, np.floor(expected * scale) / scale):
        if abs(short - expected) > tol:
            mistakes.insert(
                0,
                (
                    short,
                    f"close, but give {_words(places)} decimals, rounded: {_words(coarse)} "
                    "are too few to tell which row of the weights you read.",
                ),
            )
    cut = np.floor(expected * 10.0**places) / 10.0**places
    if abs(cut - expected) > tol:
        mistakes.insert(0, (cut, "close: round the last decimal rather than cut it off."))
    return check_number(
        "output change", answer, float(expected), places=places, mistakes=tuple(mistakes)
    )


# --- Exercise: blend the values with the weights -----------------------------------------


def check_blend(fn) -> CheckResult:
    """Check ``fn(weights, V)``: the weighted sum of value rows, ``weights @ V``."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(6)
        W = softmax(rng.normal(size=(3, 3)))  # 3 queries x 3 keys: transposes still run
        V = rng.normal(size=(3, 3))  # 3 keys x d_v = 3
        case = "3 queries, 3 keys, d_v = 3"
        out = cases.run(case, W, V)
        _mistakes(
            out,
            W @ V,
            (
                V @ W,
                "you computed V @ weights: the order matters. Row i of the output mixes "
                "the rows of V, so the weights come first: weights @ V.",
            ),
            (
                W.T @ V,
                "you used weights.T: row i of the weights (what query i attends to) "
                "must multiply V, not column i.",
            ),
            (
                W @ V.T,
                "you transposed V: it already has one row per key, as the weights "
                "have one column per key.",
            ),
            (
                W * V,
                "you multiplied element by element (*). Blending is a matrix product "
                "(@): each output sums weight x value over all the keys.",
            ),
            (
                W * V.sum(axis=-1),
                "you summed over the value dimension d_v; the sum runs "
                "over the keys, one term per value row.",
            ),
            (
                W.sum(axis=0)[:, None] * V,
                "you summed over the queries; the sum runs over the keys, one term per value row.",
            ),
            (W @ V / 3, "you divided by n_k = 3, but the weights already sum to 1."),
            (
                softmax(W) @ V,
                "you applied softmax again: the weights are already a softmax (each row "
                "sums to 1). Multiply them by V as they are.",
            ),
            (W, "you returned the weights themselves; blend the values with them: weights @ V."),
        )
        expect_shape(out, (3, 3), case)
        same(out, W @ V, case)

        W = softmax(rng.normal(size=(2, 4)))  # 2 queries x 4 keys
        V = rng.normal(size=(4, 3))  # 4 keys x d_v = 3
        case = "2 queries, 4 keys, d_v = 3"
        out = cases.run(case, W, V)
        expect_shape(
            out,
            (2, 3),
            case,
            " The output has one row per query (n_q = 2) and one column per value "
            "dimension (d_v = 3): (2, 4) @ (4, 3).",
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
        out = _run_shapes(
            cases, case, W, V, hint=" Write it for any leading batch axes: @ handles them."
        )
        hint = ""
        if out.shape == (2, 3, 2, 3):
            hint = " np.dot does not treat the first axis as a batch; use @ (np.matmul)."
        expect_shape(out, (2, 3, 3), case, hint)
        same(out, W @ V, case)

    return verdict("blend", fn, run)


def _run_shapes(cases: Cases, case: str, *arrays, hint: str) -> np.ndarray:
    """Run a case; if the function crashes, add ``hint`` about shapes to the message."""
    try:
        return cases.run(case, *arrays)
    except Fail as fail:
        message = str(fail).replace(BROADCAST_HINT, "")  # not the keepdims question
        raise Fail(message + hint) from None


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return a.shape == b.shape and bool(np.allclose(a, b, atol=ATOL))
    except (TypeError, ValueError):  # not numbers
        return False


def _mistakes(out, expected, *mistakes) -> None:
    """:func:`known_mistakes`, skipping any "mistake" that happens to equal the answer."""
    real = [
        (wrong, hint)
        for wrong, hint in mistakes
        if np.shape(wrong) != np.shape(expected) or not np.allclose(wrong, expected, atol=ATOL)
    ]
    known_mistakes(out, *real)

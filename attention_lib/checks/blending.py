"""Chapter 6 checker: one value row doubled; and the helpers the other chapter 6 checkers
share (the blend is in ``blend_loop.py``, full attention in ``attention.py``)."""

from __future__ import annotations

import numbers
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from .base import (
    ATOL,
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    check_number,
    known_mistakes,
)

ONE_OFF = "one off in the last decimal: check your product and how you rounded it."


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
    sign, a percentage, the whole value or twice it, the weight alone, another column of the card,
    another token's change, every query's change (the column), one off in the last
    decimal (either side, also when a four-decimal answer such as 0.0455 rounds to it), and
    "nothing changes"; text or a one-element array is told how to become a number.
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
    if _is_row_change(answer, W[query, key] * V[key]):
        line = (
            f"that is the change of the whole row of '{me}', one number per column: "
            f"give the '{name}' column only."
        )
        result = CheckResult("output change", "FAIL", line)
        print(result.line)
        return result
    if _is_row_change(answer, W[:, key] * value):  # the column: one number per query
        line = f"that is the change for every query: take the row of '{me}'."
        result = CheckResult("output change", "FAIL", line)
        print(result.line)
        return result
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
            2 * value,
            f"that is 2 × V['{other}', '{name}']: the card doubled, but the output of "
            f"'{me}' takes only its weight's share of the extra V['{other}', '{name}'].",
        ),
        (
            0.0,
            f"0 would mean the output of '{me}' does not move. The weights stay the same "
            f"(they come from Q and K), but the card of '{other}' they blend has grown: "
            f"the output gains weight × the extra V['{other}', '{name}'].",
        ),
    ]
    n_keys = W.shape[-1]
    mistakes.append(  # 1/n × V: as if every token got an even share
        (
            value / n_keys,
            f"that is 1/{n_keys} × V['{other}', '{name}'], as if the weights were even. "
            f"Softmax did not give an even share: use the weight in row '{me}', column "
            f"'{other}'.",
        )
    )
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
    # The right column, the wrong row: another token's change. Rows that round alike are
    # named together, so a learner who read any of them is told so.
    rows = [i for i in range(W.shape[0]) if i != query]
    for i in rows:
        shown = np.round(W[i, key] * value, places)
        alike = [tokens[r] for r in rows if np.round(W[r, key] * value, places) == shown]
        who = "', '".join(alike[:-1]) + "' or '" + alike[-1] if len(alike) > 1 else alike[0]
        hint = f"that is how much the output of '{who}' rises; read row '{me}'."
        if abs(shown - np.round(expected, places)) < 1.5 * 10.0**-places:  # one off
            hint = (  # a near miss is more often a rounding slip than another row
                f"{ONE_OFF} (It is also how much the output of '{who}' rises; if you read "
                f"that row, read row '{me}'.)"
            )
        mistakes.append((W[i, key] * value, hint))
    for side in (-1, 1):  # a near miss no row explains, on either side, gets the same hint
        near = np.round(expected, places) + side * 10.0**-places
        mistakes.append((near, ONE_OFF))
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
    shorts = (np.round(expected * scale) / scale, np.floor(expected * scale) / scale)
    why = (
        f"{_words(coarse)} are too few to tell which row of the weights you read.",
        f"that is the answer cut off at {_words(coarse)} decimals, not a rounding of it.",
    )
    for short, reason in zip(shorts, why, strict=True):
        if abs(short - expected) > tol and (short == shorts[0] or abs(short - shorts[0]) > tol):
            line = f"close, but give {_words(places)} decimals, rounded: {reason}"
            mistakes.insert(0, (short, line))
    cut = np.floor(expected * 10.0**places) / 10.0**places
    if abs(cut - expected) > tol:
        mistakes.insert(0, (cut, "close: round the last decimal rather than cut it off."))
    rounded_to = _rounds_elsewhere(answer, float(expected), places)
    if rounded_to is not None:  # 0.0455 for 0.04506: close, but a learner rounds it to 0.046
        result = CheckResult(
            "output change", "FAIL", f"{answer:g} rounds to {rounded_to}, {ONE_OFF}"
        )
        print(result.line)
        return result
    return check_number(
        "output change", answer, float(expected), places=places, mistakes=tuple(mistakes)
    )


def _rounds_elsewhere(answer, expected: float, places: int) -> str | None:
    """The ``places``-decimal rounding of ``answer``, if it is near ``expected`` but not theirs.

    check_number passes anything within half a unit of the last decimal, so 0.0455 passes
    for 0.04506; yet the learner who wrote it would round it (half up) to 0.046, not 0.045.
    """
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Real):
        return None
    value = float(answer)
    if not np.isfinite(value) or abs(value - expected) > 0.5 * 10.0**-places + 1e-12:
        return None  # check_number says what is wrong
    step = Decimal(1).scaleb(-places)  # 0.001 for three decimals
    mine = Decimal(repr(value)).quantize(step, rounding=ROUND_HALF_UP)
    theirs = Decimal(repr(expected)).quantize(step, rounding=ROUND_HALF_UP)
    return None if mine == theirs else str(mine)


def _is_row_change(answer, row: np.ndarray) -> bool:
    """Whether ``answer`` is ``row``, the changed output row or column, to 3 decimals."""
    if isinstance(answer, (str, bytes)) or np.ndim(answer) != 1 or len(answer) != len(row):
        return False
    try:
        return bool(np.allclose(np.asarray(answer, dtype=float), row, atol=1e-3))
    except (TypeError, ValueError):
        return False


def _run_shapes(cases: Cases, case: str, *arrays, hint: str, broadcast: str = "") -> np.ndarray:
    """Run a case; if the function crashes, add ``hint`` about the matrix products.

    An element-wise broadcast error ("(5, 3) (5,)") is no product's fault: it keeps the
    keepdims question, or ``broadcast`` when given, in place of ``hint``.
    """
    try:
        return cases.run(case, *arrays)
    except Fail as fail:
        message = str(fail)
        if BROADCAST_HINT in message and "remapped shapes" not in message:
            raise Fail(message.replace(BROADCAST_HINT, broadcast or BROADCAST_HINT)) from None
        if "in place" in message:  # an in-place edit is no product's fault either
            raise Fail(message) from None
        if "raised ModuleNotFoundError" in message:  # not a shape problem: say so
            hint = " That module is not installed here: use NumPy and al.softmax."
        raise Fail(message.replace(BROADCAST_HINT, "") + hint) from None


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

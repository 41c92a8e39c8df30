"""Chapter 12's sampling checker: the word where ``u`` falls in ``softmax(logits / T)``."""

from __future__ import annotations

import numpy as np

from ..core import softmax
from ..decoder import sample
from .base import _NO_BODY, Cases, CheckResult, Fail, Todo, call, known_mistakes, verdict

# --- Exercise: sampling with a temperature ------------------------------------------------------

_SAMPLE_CASES = (
    ([2.0, 1.0, 0.5, -1.0], 1.0, 0.10),
    ([2.0, 1.0, 0.5, -1.0], 1.0, 0.70),
    ([2.0, 1.0, 0.5, -1.0], 1.0, 0.95),
    ([2.0, 1.0, 0.5, -1.0], 0.5, 0.80),
    ([2.0, 1.0, 0.5, -1.0], 2.0, 0.55),
    ([2.0, 1.0, 0.5, -1.0], 2.0, 0.90),
    ([0.0, 3.0, 1.0], 0.25, 0.02),
    ([0.0, 3.0, 1.0], 4.0, 0.30),
    ([1.0, 1.0, 1.0, 1.0, 1.0], 1.0, 0.99),
    ([0.5, 2.0, -0.3, 1.2], 2.0, 0.10),  # logits not in descending order
    ([0.5, 2.0, -0.3, 1.2], 0.5, 0.85),
    ([0.5, 2.0, -0.3, 1.2], 2.0, 0.60),
)


def check_sample(fn) -> CheckResult:
    """Check ``fn(logits, T, u)`` returns the word where ``u`` falls in the cumulative p."""

    floats = []  # set when fn returns a float, which call() hides by converting

    def typed(*args):
        out = fn(*args)
        if np.asarray(out).dtype.kind == "f":
            floats.append(True)
        return out

    def run(cases: Cases) -> None:
        got, want, out_of_range = [], [], None
        for logits, T, u in _SAMPLE_CASES:
            case = f"logits {logits}, T = {T}, u = {u}"
            out = cases.run(case, np.array(logits), T, u)
            if out.size != 1:
                raise Fail(f"returned shape {out.shape} (on {case}); return one word index.")
            value = float(out.reshape(()))
            if floats and value.is_integer():
                raise Fail(
                    f"returned {value:g} as a float (on {case}); an index is a whole number: "
                    "return int(...) of it, as np.argmax gives."
                )
            hint = (
                f"returned {value:g} (on {case}); return the index of a word, a whole "
                f"number from 0 to {len(logits) - 1}."
            )
            if not value.is_integer():
                raise Fail(hint)
            if not 0 <= value < len(logits):
                out_of_range = out_of_range or hint  # the first such case, after the rest
            got.append(value)
            want.append(sample(np.array(logits), T, u))
        _off_by_one(np.array(got), np.array(want))  # first: a range hint invites clipping
        if out_of_range:
            raise Fail(out_of_range)
        _check_constant(np.array(got), cases.fn)  # before the unnormalised exp: it also gives 0
        known_mistakes(np.array(got), *_sample_mistakes())
        _check_no_exp(np.array(got))
        _check_uses_u(cases.fn)
        wrong = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
        if wrong:  # name a case the learner can rerun, as the KV checker does
            logits, T, u = _SAMPLE_CASES[wrong[0]]
            p = np.round(softmax(np.array(logits), temperature=T), 3).tolist()
            raise Fail(
                f"returned {got[wrong[0]]:g}, expected {want[wrong[0]]:g} on logits {logits}, "
                f"T = {T}, u = {u} (p = {p}); {len(wrong)} of {len(got)} cases differ."
            )
        _check_u_near_1(cases)
        _check_edges(cases)

    def run_named(cases: Cases) -> None:  # al.softmax's refusal, said in this exercise's words
        try:
            run(cases)
        except Fail as fail:
            refusal = "attention needs finite numbers"
            if refusal not in str(fail):
                raise
            said = str(fail).replace(refusal, "sampling needs finite logits")
            raise Fail(
                f"{said} A probability that underflows to 0 has log -inf: divide the logits "
                "by T instead of taking the log of p."
            ) from None

    return verdict("sample", typed, run_named)


def _check_constant(got: np.ndarray, fn) -> None:
    """One index on every case. exp(logits / T) left undivided also gives word 0 on all of
    them, so probe: a first word of probability 0.003 that it cannot keep, u = 0.5."""
    if len(set(got.tolist())) > 1:
        return
    probe = np.array([-5.0, 0.0, 0.0])
    said = call(fn, f"logits {probe.tolist()}, T = 1.0, u = 0.5", probe, 1.0, 0.5)
    if float(said.reshape(-1)[0]) == got[0]:
        raise Fail(
            f"your function returned {got[0]:g} on every case; u and the probabilities "
            "must decide the word: the one whose stretch of np.cumsum(p) contains u."
        )


def _check_no_exp(got: np.ndarray) -> None:
    """p = (z - z.min()) / total with z = logits / T: the softmax without its exp."""
    for value, (logits, T, u) in zip(got, _SAMPLE_CASES, strict=True):
        z = np.array(logits) / T
        z = z - z.min()
        if z.sum() == 0:  # equal logits: 0 / 0, no verdict either way
            continue
        ends = np.cumsum(z / z.sum())
        ends[-1] = 1.0
        if value != np.argmax(ends > u):
            return
    raise Fail(
        "your probabilities are the logits / T shifted to start at 0 and divided by their "
        "total, without the exp. Softmax takes np.exp first: p = softmax(logits / T)."
    )


def _check_uses_u(fn) -> None:
    """Five equal words: u = 0.1, 0.3, ..., 0.9 each pick another; one u, one word."""
    logits, T = np.zeros(5), 1.0
    case = f"logits {logits.tolist()}, T = {T}"
    us = [0.1, 0.3, 0.5, 0.7, 0.9] + [0.5] * 8

    def word(u):
        return float(call(fn, f"{case}, u = {u}", logits, T, u).reshape(-1)[0])

    said = [word(u) for u in us]
    same_u = {said[2], *said[5:]}  # u = 0.5, nine times
    if len(set(said[:5])) == 1 and len(same_u) == 1:
        spread = np.array([2.0, 1.0, 0.5, -1.0])  # unequal logits: does u matter there?
        there = {float(call(fn, f"logits {spread.tolist()}, T = {T}", spread, T, u).reshape(-1)[0])
                 for u in (0.05, 0.5, 0.95)}  # fmt: skip
        if len(there) > 1:
            raise Fail(
                f"on {case} your function gave word {said[0]:g} for every u in {us[:5]}, "
                "though u changes the word on unequal logits. Equal logits must give equal "
                "probabilities, 1/5 each, as softmax(logits / T) does; check for a total of "
                "0 (0 / 0 is NaN)."
            )
    if len(set(said[:5])) == 1 or len(same_u) > 1:
        what = (
            f"gave {len(same_u)} different words for the same u = 0.5"
            if len(same_u) > 1
            else f"gave word {said[0]:g} for every u in {us[:5]}"
        )
        raise Fail(
            f"your function ignored u: on {case} it {what}. Drawing a random number "
            "yourself (np.random.choice) ignores u; pick the word whose stretch of "
            "np.cumsum(p) contains u."
        )


def _check_edges(cases: Cases) -> None:
    """Three rare inputs: a word of probability 0 at u = 0, logits / T near 800, and a u
    near 1 that the last word's tiny stretch does not reach (so `u > 0.999: last word` fails)."""
    for logits, T, u, hint in (
        ([-1000.0, 0.0], 1.0, 0.0, _EMPTY_STRETCH),
        ([0.0, 8.0, 2.0], 0.01, 0.5, _OVERFLOW),
        ([0.0, 2.0, 1.0, -9.0], 1.0, 0.9995, _NOT_LAST),
    ):
        case = f"logits {logits}, T = {T}, u = {u}"
        value = float(cases.run(case, np.array(logits), T, u).reshape(-1)[0])
        want = sample(np.array(logits), T, u)
        if value != want:
            raise Fail(f"returned {value:g}, expected {want} (on {case}): {hint}")


_EMPTY_STRETCH = (
    "word 0 has probability 0, so its stretch is empty and ends at 0. With ends >= u (or "
    "searchsorted's side='left'), u = 0 lands on it; take the first end strictly beyond u, "
    "ends > u."
)
_NOT_LAST = (
    "the last word has probability about 0.00001 here, so its stretch starts near 0.99999 "
    "and u = 0.9995 falls in word 2's. A u near 1 is not a special case: find the stretch that "
    "contains u, and only where no end lies beyond u (rounding) take the last word."
)
_OVERFLOW = (
    "logits / T reaches 800, and np.exp(800) overflows to inf. Subtract the largest logit "
    "first, or use al.softmax(logits, temperature=T), which does."
)


def _off_by_one(got: np.ndarray, want: np.ndarray) -> None:
    """Every index one too high (or low), except where clipping to a real word kept it."""
    last = np.array([len(logits) - 1 for logits, _, _ in _SAMPLE_CASES])
    for step, word, edge in ((1, "high", last), (-1, "low", 0)):
        if np.all((got - want == step) | ((got == want) & (want == edge))):
            i = int(np.argmax(got - want == step))
            logits, T, u = _SAMPLE_CASES[i]
            raise Fail(
                f"your index is one too {word}: on logits {logits}, T = {T}, u = {u} you "
                f"returned {got[i]:g}, the word is {want[i]:g}. Word j's stretch starts "
                "where word j - 1's ends; the first word is index 0."
            )


def _check_u_near_1(cases: Cases) -> None:
    """u just below 1, where the running total of p, rounded, ends a hair below u."""
    logits, T, u = np.array([-4.0, 0.9, 0.5, -0.1, -0.3]), 2.0, float(np.nextafter(1.0, 0.0))
    case = f"logits {logits.tolist()}, T = {T}, u = {u!r} (the largest float below 1)"
    try:
        value = float(cases.run(case, logits, T, u).reshape(-1)[0])
    except Todo as todo:  # the other cases passed: a loop that fell off its end
        if str(todo) != _NO_BODY:
            raise
        raise Fail(
            f"you returned None for u = {u!r}: the running total never passed u; "
            "return the last word after the loop."
        ) from None
    if value != sample(logits, T, u):
        raise Fail(
            f"returned {value:g} (on {case}); the answer is the last word, "
            f"{len(logits) - 1}. Rounding can leave np.cumsum(p) ending just below 1, "
            "so no end lies beyond u: set the last end to 1, or clip the index to the "
            "last word."
        )


_UNNORMALISED = [  # exp(logits / T) left undivided, with and without the max subtracted
    (z, float(np.exp(z(np.array(_SAMPLE_CASES[0][0])) / _SAMPLE_CASES[0][1]).sum()))
    for z in (lambda logits: logits, lambda logits: logits - logits.max())
]


def _sample_mistakes() -> list[tuple]:
    def variant(pick):
        out = []
        for logits, T, u in _SAMPLE_CASES:
            logits = np.array(logits)
            out.append(pick(logits, T, u, softmax(logits, temperature=T)))
        return np.array(out, dtype=float)

    def where(cumulative, u):  # the reference's rule: the first stretch that ends beyond u
        return min(int(np.searchsorted(cumulative, u, side="right")), len(cumulative) - 1)

    def in_sorted_order(logits, T, u, p):
        order = np.argsort(-logits, kind="stable")  # likeliest word first
        return order[where(np.cumsum(p[order]), u)]

    def power(logits, T, u, p):
        return where(np.cumsum(softmax(np.sign(logits) * np.abs(logits) ** (1 / T))), u)

    return [
        (variant(lambda logits, T, u, p: np.argmax(logits)),
         "you always picked the top word: that is greedy decoding. Use u: the word whose "
         "slice of the cumulative probabilities contains u."),
        (variant(lambda logits, T, u, p: where(np.cumsum(softmax(logits * T)), u)),
         "you multiplied the logits by T; divide them: softmax(logits / T)."),
        (variant(lambda logits, T, u, p: where(np.cumsum(softmax(logits)), u)),
         "T had no effect: divide the logits by T before softmax."),
        *[(variant(lambda logits, T, u, p, pick=pick: pick(np.cumsum(softmax(logits) / T), u)),
           "you divided the probabilities by T after softmax, so they no longer add up to "
           "1; divide the logits before it: softmax(logits / T).")
          for pick in (where, lambda ends, u: np.argmax(ends > u))],
        (variant(lambda logits, T, u, p: np.argmax(p > u)),
         "you compared each word's own probability with u; compare the running total "
         "np.cumsum(p): word j's stretch ends at p_0 + ... + p_j."),
        (variant(lambda logits, T, u, p: np.argmax(np.cumsum(logits / T) > u)),
         "you added up the logits; add up the probabilities softmax(logits / T), which "
         "end at 1."),
        *[(variant(lambda logits, T, u, p, z=z: where(np.cumsum(np.exp(z(logits) / T)), u)),
           f"your probabilities sum to {total:.3g}, not 1 (on logits {_SAMPLE_CASES[0][0]}, "
           "T = 1.0): you added up exp(logits / T) without dividing by its total. Use "
           "p = softmax(logits / T), which does.")
          for z, total in _UNNORMALISED],
        (variant(in_sorted_order),
         "you laid the words out likeliest first. That samples fairly, but the same u must "
         "give the same word as the reference: keep the vocabulary's order, word 0 first."),
        (variant(power),
         "you raised the logits to the power 1 / T; divide them by T: softmax(logits / T)."),
    ]  # fmt: skip

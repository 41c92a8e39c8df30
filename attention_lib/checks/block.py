"""Chapter 12's block checker: one pre-LN decoder block, assembled from the course's parts.

The learner writes ``fn(X, p, h)``: ``X`` (n, d_model), ``p`` a dict of the block's
weights (keys as in :data:`attention_lib.decoder.NAMES`), ``h`` heads. The answer is
compared with :func:`attention_lib.decoder.decoder_block` under a causal mask, and the
usual slips (post-LN order, a missing residual, no mask, ...) get their own hints.
"""

from __future__ import annotations

import numpy as np

from ..core import causal_mask
from ..decoder import decoder_block, init_params
from .base import (
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    unseen_cases,
    verdict,
)
from .block_mistakes import STRICT_MASK, slips
from .names import calls_library

__all__ = ["check_decoder_block"]

_CASES = ((5, 8, 2, 3), (4, 6, 3, 14), (6, 8, 4, 25))  # n, d_model, h, seed of the weights


def check_decoder_block(fn) -> CheckResult:
    """Check ``fn(X, p, h)`` returns one pre-LN causal block's output, (n, d_model)."""

    def with_weights(X, seed, h):  # a case names its weights by a seed: the inputs stay arrays
        try:
            out = fn(X, _weights(seed, X.shape[-1]), h)
        except ValueError as err:  # X + (output, weights): NumPy cannot add a pair
            if "inhomogeneous" in str(err) or "with a sequence" in str(err):
                raise _Pair from None
            raise
        if isinstance(out, tuple):
            raise _Pair
        return out

    banned = [name for name in _BANNED if calls_library(fn, name)]

    def run(cases: Cases) -> None:
        if banned:
            raise Fail(
                f"your function calls {banned[0]}, which this exercise rules out: split the "
                "projections into heads with reshape(n, h, d_k).transpose(1, 0, 2), attend "
                "with al.scaled_dot_product_attention, join the heads and apply W_o."
            )
        for n, d, h, seed in _CASES:
            X, p = np.random.default_rng(seed).normal(size=(n, d)), _weights(seed, d)
            case = f"n = {n} tokens, d_model = {d}, h = {h} heads, d_ff = {p['b_1'].size}"
            out = _run(cases, case, X, seed, h)
            expect_shape(out, (n, d), case, " The block keeps every token's width d_model.")
            right = _reference(X, p, h)
            if not np.allclose(out, right, atol=1e-6):  # a slip may equal the answer (h = 1)
                known_mistakes(out, *slips(X, p, h), *_other_h(X, p, h))
            same(out, right, case)

    return verdict("decoder_block", with_weights, run)


def _run(cases: Cases, case: str, *args) -> np.ndarray:
    """Run one case; a returned (X, weights) pair gets its own hint."""
    try:
        return cases.run(case, *args)
    except Fail as fail:
        if "NaN or infinity" in str(fail):  # a hand-made mask of -inf, fed to al.softmax
            raise Fail(
                f"your function raised 'contains NaN or infinity' (on {case}): al.softmax "
                "and the course's other functions refuse -inf. If you masked the scores by "
                "hand with -np.inf, pass the boolean mask to "
                "al.scaled_dot_product_attention instead (it handles -inf inside), or "
                "fill the masked scores with a large finite number such as -1e9."
            ) from None
        if "allows no key at all" in str(fail):  # token 0 hidden from itself: no key left
            raise Fail(f"your function raised an error (on {case}): {STRICT_MASK}") from None
        if "_Pair" in str(fail):
            raise Fail(
                f"your function returned or added a tuple (on {case}): {PAIR_HINT}; return "
                "the new X alone."
            ) from None
        raise


_BANNED = ("multi_head_attention", "decoder_block")  # each would do the exercise's work


class _Pair(Exception):
    pass


PAIR_HINT = (  # chapter 12's KV checker says it too
    "multi_head_attention and scaled_dot_product_attention return (output, weights), so "
    "take the output with [0]"
)


@unseen_cases("decoder_block")
def _unseen(rng):  # drawn at grading time (see .unseen)
    h = int(rng.choice([1, 2, 4]))
    n, d, seed = int(rng.integers(2, 8)), h * int(rng.integers(2, 5)), int(rng.integers(10**6))
    X = rng.normal(size=(n, d))

    def judge(out, case):
        same(out, _reference(X, _weights(seed, d), h), case)

    return [(f"n = {n}, d_model = {d}, h = {h}", (X, seed, h), judge)]


def _weights(seed: int, d: int) -> dict:
    """The weights of one case, fresh on every call, with layer norms and biases away from 1, 0."""
    rng = np.random.default_rng(seed)
    d_ff = 3 + seed % 10
    p = init_params(3, d, 2, d_ff, seed=seed)
    for name in ("ln1_gamma", "ln2_gamma", "lnf_gamma"):
        p[name] = 1 + 0.5 * rng.normal(size=d)
    for name in ("ln1_beta", "ln2_beta", "lnf_beta", "b_2"):
        p[name] = 0.5 * rng.normal(size=d)
    p["b_1"] = 0.5 * rng.normal(size=d_ff)
    return p


def _other_h(X, p: dict, h: int) -> list[tuple]:
    """The right block with some other number of heads: an h hard-coded, not the one given."""
    d = X.shape[-1]
    return [
        (
            _reference(X, p, k),
            f"your answer is the block with {k} head{'s' * (k > 1)}, but this case has "
            f"h = {h}: does your code use the h it was given?",
        )
        for k in range(1, d + 1)
        if d % k == 0 and k != h
    ]


def _reference(X, p: dict, h: int) -> np.ndarray:
    return decoder_block(X, p, h, causal_mask(X.shape[-2]))[0]

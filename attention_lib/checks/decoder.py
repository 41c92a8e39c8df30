r"""Chapter 12 checkers: one step of the KV cache; cross-entropy of next words (re-exported).

The cross-entropy checker is in :mod:`.next_word`, sampling with a temperature in
:mod:`.sampling`.
"""

from __future__ import annotations

import numpy as np

from ..core import softmax
from .base import Cases, CheckResult, Fail, Todo, call, expect_shape, known_mistakes, same, verdict
from .block import PAIR_HINT, _Pair
from .kv_slips import _kv_grown, _kv_other_slips, _kv_reference, _kv_weights
from .next_word import check_cross_entropy

__all__ = ["check_cross_entropy", "check_kv_step"]

# --- Exercise: one step of the KV cache -------------------------------------------------------


def _kv_case(rng, h: int, t: int, d_k: int, d_v: int):
    q, k, v = rng.normal(size=(h, d_k)), rng.normal(size=(h, d_k)), rng.normal(size=(h, d_v))
    return q, rng.normal(size=(h, t, d_k)), rng.normal(size=(h, t, d_v)), k, v


def check_kv_step(fn) -> CheckResult:
    r"""Check ``fn(q, K_cache, V_cache, k, v)``: the new token's attention output, (h, d_v)."""

    def unpaired(*args):  # an (output, weights) pair gets its own hint
        out = fn(*args)
        if isinstance(out, tuple):
            raise _Pair
        return out

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(12)
        # h = 2 first: with one head, a softmax over axis 0 (the heads) looks like no softmax
        # d_v != d_k first: keys and values swapped anywhere then fail on their shapes
        for h, t, d_k, d_v in [(2, 3, 4, 5), (1, 4, 3, 7), (4, 1, 2, 2), (2, 5, 3, 4)]:
            args = _kv_case(rng, h, t, d_k, d_v)
            case = f"h = {h} heads, {t} cached tokens, d_k = {d_k}, d_v = {d_v}"
            out = _kv_run(cases, case, args)
            weights = _kv_weights(*args)  # (h, t + 1)
            if out.shape == weights.shape and np.allclose(out, weights, atol=1e-6):
                raise Fail(
                    f"you returned the attention weights, one per key (shape {out.shape}, on "
                    f"{case}): blend the values with them, weights @ V, to get (h, d_v)."
                )
            if out.shape == (h, t + 1, d_v):
                raise Fail(
                    f"returned shape {out.shape}: one output per key. The new token asks "
                    "one question, so it gets one output per head, shape (h, d_v)."
                )
            if out.shape == (h, 1, d_v):
                raise Fail(
                    f"returned shape {out.shape} (on {case}): the query axis is still there. "
                    "Drop it with [:, 0] to get one output per head, shape (h, d_v)."
                )
            if out.shape == (h, d_k) != (h, d_v):
                raise Fail(f"returned shape {out.shape}, (h, d_k), on {case}: {_KV_SWAPPED}")
            expect_shape(out, (h, d_v), case, " One output per head for the new token.")
            known_mistakes(
                out,
                *_kv_near_misses(args),
                *_kv_other_slips(args),
                (
                    _kv_reference(*args, append=False),
                    "the new token attended only to the cached tokens: append its own key "
                    "and value to the cache first (a token may attend to itself).",
                ),
                (
                    _kv_reference(*args, scale=1.0),
                    "the scores are not scaled: divide q . k by sqrt(d_k) before softmax.",
                ),
                (
                    _kv_reference(*args, scale=1.0 / args[0].shape[-1]),
                    "the scores are divided by d_k: divide by its square root, sqrt(d_k), "
                    "which keeps their spread near 1 (chapter 4).",
                ),
                (
                    _kv_grown(*args).mean(axis=1),
                    "every key got the same weight: the weights must come from softmax of "
                    "the scores, q . k / sqrt(d_k), over the keys.",
                ),
                (_kv_grown(*args).sum(axis=1), _KV_NO_SOFTMAX),
                (np.einsum("ht,htd->hd", _kv_scores(*args), _kv_grown(*args)), _KV_NO_SOFTMAX),
                (np.einsum("ht,htd->hd", np.exp(_kv_scores(*args)), _kv_grown(*args)), _KV_EXP),
                (
                    _kv_over_heads(*args),
                    "the softmax ran over the heads (axis 0): each head has its own "
                    "distribution over the t + 1 keys, so normalise along the keys (axis -1).",
                ),
                (
                    args[2][:, 0],  # what a top-left (1, t + 1) tril mask leaves
                    "only the first key got any weight: a causal mask of shape (1, t + 1) "
                    "built with tril starts at the top-left corner and hides every key but "
                    "the first. The new token is the last position: it may see every key, "
                    "so use no mask at all.",
                ),
            )
            same(out, _kv_reference(*args), case)
        _check_empty_cache(cases, rng)
        _check_large_scores(cases, rng)

    return verdict("kv_step", unpaired, run)


def _check_empty_cache(cases: Cases, rng) -> None:
    """t = 0: generate's first step, with nothing cached yet; the token sees only itself."""
    args = _kv_case(rng, 2, 0, 3, 4)
    case = "h = 2 heads, 0 cached tokens (the first step: an empty cache), d_k = 3, d_v = 4"
    out = _kv_run(cases, case, args)
    expect_shape(out, (2, 4), case, " With an empty cache the new token sees only itself.")
    same(out, _kv_reference(*args), case)


def _check_large_scores(cases: Cases, rng) -> None:
    """Scores near 1000, where exp without the max subtracted overflows."""
    q, K, V, k, v = _kv_case(rng, 2, 3, 4, 4)
    args = 40 * q, 40 * K, V, 40 * k, v  # q . k / sqrt(d_k) of about 1000
    case = "h = 2 heads, 3 cached tokens, d_k = d_v = 4, scores near 1000"
    out = _kv_run(cases, case, args)
    if not np.all(np.isfinite(out)):
        raise Fail(
            f"got NaN or inf (on {case}): np.exp(1000) overflows. Subtract each row's "
            "largest score before np.exp, or use al.softmax, which does."
        )
    same(out, _kv_reference(*args), case)


def _kv_run(cases: Cases, case: str, args) -> np.ndarray:
    """Run one case; if the function raised, name two mistakes that make it raise."""
    try:
        return cases.run(case, *args)
    except Fail as fail:
        if "raised" not in str(fail):
            raise
        if "_Pair" in str(fail) or "tuple indices" in str(fail):  # (out, w)[:, 0] too
            raise Fail(f"your function returned a tuple (on {case}): {PAIR_HINT}.") from None
        if "NaN or infinity" in str(fail):
            raise Fail(
                f"{fail} al.softmax refuses -inf, which a mask puts in the scores. But a KV "
                "step needs no mask: every cached key is in the past, and the new token may "
                "see itself, so drop the mask."
            ) from None
        q, K, V, k, v = args
        grown = np.concatenate([V, v[:, None]], axis=1)  # the values the function forgot?
        try:
            right = np.allclose(call(cases.fn, case, q, K, grown, k, v), _kv_reference(*args))
        except (Fail, Todo):
            right = False
        if right:
            raise Fail(
                f"your function raised an error (on {case}): it appended the new key to "
                "K_cache but not the new value to V_cache, so there are t + 1 weights and t "
                "values. Append v as well: both grow by one row per head."
            ) from None
        if _runs_when_d_v_is_d_k(cases, case, args):
            raise Fail(
                f"your function raised an error (on {case}), yet runs when d_v = d_k: {_KV_SWAPPED}"
            ) from None
        raise


def _runs_when_d_v_is_d_k(cases: Cases, case: str, args) -> bool:
    """Whether the function runs once the values are cut to the keys' width."""
    q, K, V, k, v = args
    d_k = q.shape[-1]
    if V.shape[-1] <= d_k:
        return False
    try:
        call(cases.fn, case, q, K, V[..., :d_k], k, v[:, :d_k])
    except (Fail, Todo):
        return False
    return True


def _kv_near_misses(args) -> list[tuple]:
    """Right shapes, one slip: each one only where it differs from the right answer."""
    q, K, V, k, v = args
    d_k, d_v, keys = q.shape[-1], v.shape[-1], K.shape[1] + 1
    d_model = q.shape[0] * d_k  # h heads of d_k each
    right, misses = _kv_reference(*args), []
    grown_K = np.concatenate([K, k[:, None]], axis=1)  # (h, t + 1, d_k)
    if keys == d_k:  # only then does q @ K, without the transpose, run at all
        scores = (q[:, None] @ grown_K)[:, 0] / np.sqrt(d_k)  # (h, t + 1), but mixed up
        grown_V = np.concatenate([V, v[:, None]], axis=1)
        misses.append((np.einsum("ht,htd->hd", softmax(scores), grown_V), _KV_TRANSPOSE))
    misses += [
        (_kv_reference(*args, scale=1 / np.sqrt(d_v)), _KV_SQRT_DV),
        (_kv_reference(*args, scale=1 / np.sqrt(d_model)), _KV_SQRT_D_MODEL),
        (_kv_reference(*args, scale=1 / np.sqrt(keys)), _KV_SQRT_KEYS),
        (_kv_reference(k, K, V, k, v), _KV_K_AS_QUERY),
    ]
    if d_k == d_v:  # only then do swapped keys and values run at all
        misses.append((_kv_reference(q, V, K, v, k), _KV_SWAPPED))

    def told_apart(wrong):  # from the right answer and from every other slip
        twins = sum(np.allclose(wrong, other) for other, _ in misses)
        return twins == 1 and not np.allclose(wrong, right)

    return [(wrong, hint) for wrong, hint in misses if told_apart(wrong)]


_KV_TRANSPOSE = (
    "the scores look like q @ K without the transpose: each score must be the dot product "
    "of q with one key, so use q[:, None] @ K.swapaxes(-1, -2) (or einsum 'hd,htd->ht')."
)
_KV_SQRT_DV = (
    "the scores are divided by sqrt(d_v), the size of a value: the scale is sqrt(d_k), the "
    "size of the vectors in the dot product, q.shape[-1]."
)
_KV_SQRT_D_MODEL = (
    "the scores are divided by sqrt(h * d_k) = sqrt(d_model), the width of all heads "
    "together: each head scores with its own d_k-wide query and keys, so the scale is "
    "sqrt(d_k), q.shape[-1]."
)
_KV_SQRT_KEYS = (
    "the scores are divided by sqrt(t + 1), the number of keys: the scale is sqrt(d_k), the "
    "length of each key, q.shape[-1]."
)
_KV_SWAPPED = (
    "keys and values are swapped somewhere: score q against the keys (K_cache and k) and "
    "blend the values (V_cache and v), each new one appended to its own cache."
)
_KV_K_AS_QUERY = (
    "the new token's key k asked the question: the query is q. k only joins the cache, as "
    "one more key to be scored against q."
)
_KV_NO_SOFTMAX = (
    "the values were blended with weights that do not sum to 1 (raw scores, or all ones): "
    "apply softmax over the keys to the scores q . k / sqrt(d_k) first, then weights @ V."
)
_KV_EXP = (  # exp of the scores used as weights, never normalised
    "the weights are exp(scores) but were never divided by their sum, so they do not add "
    "up to 1: normalise them over the keys (axis -1), or use al.softmax."
)


def _kv_scores(q, K, V, k, v):
    """The new token's scaled scores against every key, (h, t + 1)."""
    K = np.concatenate([K, k[:, None]], axis=1)
    return np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])


def _kv_over_heads(q, K, V, k, v):
    """Softmax down the head axis instead of along the keys."""
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    scores = np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])  # (h, t + 1)
    return np.einsum("ht,htd->hd", softmax(scores, axis=0), V)

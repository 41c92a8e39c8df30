r"""Chapter 12 checkers: one step of the KV cache, cross-entropy of next words.

The third, sampling with a temperature, is in :mod:`.sampling`.
"""

from __future__ import annotations

import numpy as np

from ..core import scaled_dot_product_attention, softmax
from ..decoder import cross_entropy
from .base import Cases, CheckResult, Fail, Todo, call, expect_shape, known_mistakes, same, verdict

# --- Exercise: one step of the KV cache -------------------------------------------------------


def _kv_case(rng, h: int, t: int, d_k: int, d_v: int):
    q, k, v = rng.normal(size=(h, d_k)), rng.normal(size=(h, d_k)), rng.normal(size=(h, d_v))
    return q, rng.normal(size=(h, t, d_k)), rng.normal(size=(h, t, d_v)), k, v


def _kv_reference(q, K, V, k, v, scale=None, append=True):
    if append:
        K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    out, _ = scaled_dot_product_attention(q[:, None], K, V, scale=scale)  # (h, 1, d_v)
    return out[:, 0]


def check_kv_step(fn) -> CheckResult:
    r"""Check ``fn(q, K_cache, V_cache, k, v)``: the new token's attention output, (h, d_v)."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(12)
        for h, t, d_k, d_v in [(1, 3, 4, 4), (2, 4, 3, 6), (4, 1, 2, 2), (2, 5, 3, 4)]:
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
            expect_shape(out, (h, d_v), case, " One output per head for the new token.")
            known_mistakes(
                out,
                *_kv_near_misses(args),
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
                    _kv_uniform(args[2], args[4]),
                    "every key got the same weight: the weights must come from softmax of "
                    "the scores, q . k / sqrt(d_k), over the keys.",
                ),
                (
                    _kv_over_heads(*args),
                    "the softmax ran over the heads (axis 0): each head has its own "
                    "distribution over the t + 1 keys, so normalise along the keys (axis -1).",
                ),
                (
                    _kv_first_key(args[2]),
                    "only the first key got any weight: a causal mask of shape (1, t + 1) "
                    "built with tril starts at the top-left corner and hides every key but "
                    "the first. The new token is the last position: it may see every key, "
                    "so use no mask at all.",
                ),
            )
            same(out, _kv_reference(*args), case)

    return verdict("kv_step", fn, run)


def _kv_run(cases: Cases, case: str, args) -> np.ndarray:
    """Run one case; if the function raised, name two mistakes that make it raise."""
    try:
        return cases.run(case, *args)
    except Fail as fail:
        if "raised" not in str(fail):
            raise
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
        raise


def _kv_near_misses(args) -> list[tuple]:
    """Right shapes, one slip: each one only where it differs from the right answer."""
    q, K, V, k, v = args
    d_k, d_v, keys = q.shape[-1], v.shape[-1], K.shape[1] + 1
    right, misses = _kv_reference(*args), []
    grown_K = np.concatenate([K, k[:, None]], axis=1)  # (h, t + 1, d_k)
    if keys == d_k:  # only then does q @ K, without the transpose, run at all
        scores = (q[:, None] @ grown_K)[:, 0] / np.sqrt(d_k)  # (h, t + 1), but mixed up
        grown_V = np.concatenate([V, v[:, None]], axis=1)
        misses.append((np.einsum("ht,htd->hd", softmax(scores), grown_V), _KV_TRANSPOSE))
    misses += [
        (_kv_reference(*args, scale=1 / np.sqrt(d_v)), _KV_SQRT_DV),
        (_kv_reference(*args, scale=1 / np.sqrt(keys)), _KV_SQRT_KEYS),
        (_kv_reference(k, K, V, k, v), _KV_K_AS_QUERY),
    ]

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
_KV_SQRT_KEYS = (
    "the scores are divided by sqrt(t + 1), the number of keys: the scale is sqrt(d_k), the "
    "length of each key, q.shape[-1]."
)
_KV_K_AS_QUERY = (
    "the new token's key k asked the question: the query is q. k only joins the cache, as "
    "one more key to be scored against q."
)


def _kv_weights(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    return softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))  # (h, t + 1)


def _kv_uniform(V, v):
    return np.concatenate([V, v[:, None]], axis=1).mean(axis=1)


def _kv_over_heads(q, K, V, k, v):
    """Softmax down the head axis instead of along the keys."""
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    scores = np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])  # (h, t + 1)
    return np.einsum("ht,htd->hd", softmax(scores, axis=0), V)


def _kv_first_key(V):
    """What a top-left tril mask of shape (1, t + 1) leaves: the first key alone."""
    return V[:, 0]


# --- Exercise: cross-entropy of a batch of next words -----------------------------------------


def check_cross_entropy(fn) -> CheckResult:
    r"""Check ``fn(logits, Y)`` returns the mean of :math:`-\log p_{target}` (``Y`` one-hot)."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(13)
        for m, vocab, size in [(4, 6, 2.0), (3, 5, 1.0), (5, 7, 3.0)]:
            logits, targets = rng.normal(scale=size, size=(m, vocab)), rng.integers(0, vocab, m)
            case = f"{m} positions, a vocabulary of {vocab}"
            out = _scalar(cases, case, logits, targets)
            known_mistakes(out, *_ce_mistakes(logits, targets))
            same(out, cross_entropy(logits, targets), case)
        big = np.array([[1000.0, 0.0, -1000.0], [0.0, 999.0, 1000.0]])
        case = "logits as large as 1000"
        out = _scalar(cases, case, big, np.array([0, 1]))
        if not np.isfinite(out):
            raise Fail(f"got {out} for logits as large as 1000: " + _nan_hint(fn))
        same(out, cross_entropy(big, np.array([0, 1])), case)
        far = np.array([[1000.0, 0.0, -1000.0], [0.0, 1.0, 2.0]])  # target 2: 2000 below
        case = "a target whose logit is 2000 below the top"
        out, want = _scalar(cases, case, far, np.array([2, 2])), cross_entropy(far, [2, 2])
        if np.isinf(out):
            raise Fail(
                f"got {float(out)} where the loss is {want:.4g} (on {case}): the target's "
                "probability underflows to 0, and -log(0) is infinite. Compute log-softmax "
                "directly, z - max - log(sum(exp(z - max))), and pick the target's entry."
            )
        if not np.isfinite(out) or out < want - 1:
            raise Fail(
                f"got {float(out):.4g} where the loss is {want:.4g} (on {case}): the target's "
                "probability underflows to 0, so log(p) is -inf, and adding a small eps or "
                "clipping p caps the loss at -log(eps). Compute log-softmax directly: "
                "z - max - log(sum(exp(z - max)))."
            )
        same(out, want, case)

    return verdict("cross_entropy", fn, run)


def _nan_hint(fn) -> str:
    """Tell an overflow (no max shift) from an underflow (log of a probability that is 0)."""
    # Logits near 1000 that lie close together: after the max shift nothing underflows, so a
    # function that subtracts the max is finite here, and one that does not still overflows.
    close = np.array([[1000.0, 999.0, 998.0], [998.0, 1000.0, 999.0]])
    try:
        out = call(fn, "logits near 1000, close together", close, np.eye(3)[[0, 2]])
        shifted = out.shape == () and bool(np.isfinite(out))
    except (Fail, Todo):
        shifted = False
    if shifted:
        return (
            "a probability underflowed to 0, and Y * log(0) = 0 * (-inf) = nan. Compute the "
            "log-probabilities directly, z - max - log(sum(exp(z - max))), or pick out the "
            "target's log-probability by its index."
        )
    return (
        "exp(1000) overflows. Subtract each row's maximum first, or compute log-softmax as "
        "z - max - log(sum(exp(z - max)))."
    )


def _scalar(cases: Cases, case: str, logits, targets) -> np.ndarray:
    Y = np.eye(logits.shape[-1])[targets]  # (m, vocab): one 1 per row, at the next word
    out = cases.run(case, logits, Y)
    if out.shape == targets.shape:
        raise Fail(
            f"returned one loss per position, shape {out.shape} (on {case}): the loss of the "
            "batch is their mean, one number."
        )
    if out.shape == logits.shape:
        raise Fail(
            f"returned shape {out.shape}, one number per word (on {case}): keep only the "
            "target's -log p in each row (Y picks it out), then average over the rows."
        )
    expect_shape(out, (), case, " The loss is one number: the mean over the positions.")
    return out


def _ce_mistakes(logits, targets) -> list[tuple]:
    rows = np.arange(len(targets))
    p = softmax(logits)
    return [
        (
            np.log(p[rows, targets]).mean(),
            "the sign is flipped: the loss is -log p, a positive number.",
        ),
        (
            -np.log(p[rows, targets]).sum(),
            "you summed over the positions; take the mean, so the loss does not grow with "
            "the batch.",
        ),
        (
            -logits[rows, targets].mean(),
            "you used the raw logit of the target; turn the logits into probabilities with "
            "softmax first (or subtract log(sum(exp(logits)))).",
        ),
        (
            -np.log(softmax(logits, axis=0)[rows, targets]).mean(),
            "softmax ran down the columns (axis=0): each position's row is its own "
            "distribution over the vocabulary, so normalise along the last axis.",
        ),
        (
            -np.log2(p[rows, targets]).mean(),
            "you used log base 2 (bits); cross-entropy here uses np.log (nats).",
        ),
        (
            -np.log(p[rows, targets]).mean() / logits.shape[-1],
            "you averaged Y * log p over every entry, the vocabulary too, so the loss is "
            "vocab times too small: sum each row (only the right word's entry is not 0), "
            "then average over the positions.",
        ),
        (
            (1 - p[rows, targets]).mean(),
            "you averaged 1 - p; the loss is the mean of -log p.",
        ),
    ]

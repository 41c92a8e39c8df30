"""Chapter 12's KV-step checker: the reference answer and more slips, each with its hint.

:mod:`.decoder` names the first slip that matches the learner's output.
"""

from __future__ import annotations

import numpy as np

from ..core import scaled_dot_product_attention, softmax


def _kv_reference(q, K, V, k, v, scale=None, append=True):
    if append:
        K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    out, _ = scaled_dot_product_attention(q[:, None], K, V, scale=scale)  # (h, 1, d_v)
    return out[:, 0]


def _kv_grown(q, K, V, k, v):
    """The values after the new one is appended, (h, t + 1, d_v)."""
    return np.concatenate([V, v[:, None]], axis=1)


def _kv_weights(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    return softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))  # (h, t + 1)


def _kv_other_slips(args) -> list[tuple]:
    """More slips, each named only where it differs from the right answer."""
    right, (q, K, _, k, v) = _kv_reference(*args), args
    keys, values = np.concatenate([K, k[:, None]], axis=1), _kv_grown(*args)  # (h, t + 1, d)
    cut = _kv_weights(*args)[:, :-1]  # own key scored, own value never appended
    slips = [
        (np.einsum("ht,htd->hd", cut, args[2]), _KV_KEY_NOT_VALUE),
        (args[4], _KV_V_ONLY),
        (_kv_hard(*args), _KV_ARGMAX),
        (_kv_mixed_heads(*args), _KV_MIXED_HEADS),
        (_kv_reference(q, np.roll(keys, 1, 1), values, k, v, append=False), _KV_MISALIGNED),
        (_kv_reference(q, keys, np.roll(values, 1, 1), k, v, append=False), _KV_MISALIGNED),
    ]
    return [(wrong, hint) for wrong, hint in slips if not np.allclose(wrong, right)]


_KV_MISALIGNED = (
    "the keys and values are misaligned: the new key and value went to different ends of "
    "the cache. Append both at the same end, so key j and value j are the same token's."
)
_KV_KEY_NOT_VALUE = (
    "you appended the new key but not its value: t + 1 weights were cut to the t cached "
    "values, dropping the new token's own share. Append v to V_cache as well."
)
_KV_V_ONLY = (
    "you returned v, the new token's own value: the output ignores the cache. Blend all "
    "t + 1 values (the cached ones and v) with the softmax weights."
)
_KV_ARGMAX = (
    "each head returned the value of its single best key (an argmax): attention blends "
    "every value, weighted by softmax of the scores."
)
_KV_MIXED_HEADS = (
    "the scores mix the heads: each head's query met the sum of every head's keys. Pair "
    "head i's query with head i's keys only, e.g. einsum 'hd,htd->ht' (h on both sides)."
)


def _kv_hard(q, K, V, k, v):
    """Each head takes the value of its highest-scoring key: argmax instead of softmax."""
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    best = np.einsum("hd,htd->ht", q, K).argmax(axis=1)  # (h,)
    return V[np.arange(len(V)), best]


def _kv_mixed_heads(q, K, V, k, v):
    """einsum 'hd,gtd->ht': every head's query against the sum of all heads' keys."""
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    scores = np.einsum("hd,gtd->ht", q, K) / np.sqrt(q.shape[-1])
    return np.einsum("ht,htd->hd", softmax(scores), V)

r"""A tiny decoder that writes: one Transformer block, assembled from the course's parts.

Chapter 12 stacks what chapters 1 to 10 built, GPT style (layer norm *before* each
sub-layer)::

    ids (..., n) -> X = E[ids] + P[:n]                      token + position, (..., n, d_model)
    X <- X + MHA(LN1(X), causal mask)                       chapters 7 and 8
    X <- X + FFN(LN2(X))                                    a small two-layer network
    logits = LN_f(X) @ W_out + b_out                        one score per word, (..., n, vocab)

Row ``i`` of ``logits`` scores every word of the vocabulary as the word after token
``i``; the causal mask makes sure it was computed from tokens ``0..i`` only. The weights
live in a plain dict (:data:`NAMES`), so a training loop can treat them all alike.
:func:`kv_cache_step` runs the same model one token at a time, keeping the keys and
values of earlier tokens instead of recomputing them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .core import causal_mask, scaled_dot_product_attention, softmax
from .heads import multi_head_attention, split_heads
from .layers import layer_norm
from .validate import check_positive_int

EPS = 1e-5  # layer norm's epsilon, as in GPT-2
NAMES = (
    "E", "P", "ln1_gamma", "ln1_beta", "W_q", "W_k", "W_v", "W_o", "ln2_gamma", "ln2_beta",
    "W_1", "b_1", "W_2", "b_2", "lnf_gamma", "lnf_beta", "W_out", "b_out",
)  # fmt: skip


def init_params(
    vocab_size: int, d_model: int = 32, n_ctx: int = 16, d_ff: int = 64, seed: int = 0
) -> dict:
    """Random starting weights: a dict of arrays keyed by :data:`NAMES`.

    ``E`` (vocab_size, d_model) and ``P`` (n_ctx, d_model) are the token and position
    embeddings; the square ``W_q, W_k, W_v, W_o`` feed :func:`multi_head_attention`;
    ``W_1`` (d_model, d_ff), ``W_2`` (d_ff, d_model) form the feed-forward network;
    ``W_out`` (d_model, vocab_size) scores the words. Matrices start with standard
    deviation ``1 / sqrt(fan_in)``, biases at 0, layer norms as the identity.
    """
    V, d = check_positive_int(vocab_size, "vocab_size"), check_positive_int(d_model, "d_model")
    n_ctx, d_ff = check_positive_int(n_ctx, "n_ctx"), check_positive_int(d_ff, "d_ff")
    rng = np.random.default_rng(seed)
    shapes = {"E": (V, d), "P": (n_ctx, d), "W_1": (d, d_ff), "W_2": (d_ff, d)}
    shapes |= {name: (d, d) for name in ("W_q", "W_k", "W_v", "W_o")} | {"W_out": (d, V)}
    params = {}
    for name in NAMES:
        if name in shapes:
            fan_in = d if name in ("E", "P") else shapes[name][0]
            params[name] = rng.normal(scale=1 / np.sqrt(fan_in), size=shapes[name])
        else:  # biases and layer-norm shifts start at 0, layer-norm scales at 1
            width = {"b_1": d_ff, "b_out": V}.get(name, d)
            params[name] = np.full(width, 1.0 if name.endswith("gamma") else 0.0)
    return params


def n_params(params: dict) -> int:
    """How many learned numbers the model has."""
    return sum(params[name].size for name in NAMES)


def embed(params: dict, ids) -> np.ndarray:
    """Token embeddings plus learned positions: ``E[ids] + P[:n]``, shape (..., n, d_model)."""
    ids = check_ids(ids, params)
    return params["E"][ids] + params["P"][: ids.shape[-1]]  # (..., n, d_model)


def feed_forward(x, W_1, b_1, W_2, b_2) -> np.ndarray:
    r"""The position-wise network: :math:`\max(0,\, x W_1 + b_1)\, W_2 + b_2`.

    ``x`` (..., d_model) -> (..., d_model), through a hidden layer of width ``d_ff``
    (ReLU, as in *Attention Is All You Need*). Each token is processed on its own.
    """
    hidden = np.maximum(0.0, x @ W_1 + b_1)  # (..., n, d_ff)
    return hidden @ W_2 + b_2  # (..., n, d_model)


def decoder_block(X, params: dict, h: int, mask=None):
    """One pre-LN block: ``X + MHA(LN1(X))``, then ``+ FFN(LN2(.))``.

    ``X`` (..., n, d_model) -> the new ``X`` (..., n, d_model) and the attention
    weights (..., h, n, n). ``mask``: bool, ``True`` = may attend (causal for a decoder).
    """
    X2, weights, _ = _block(X, params, h, mask)
    return X2, weights


def _block(X0, p: dict, h: int, mask):
    Ws = p["W_q"], p["W_k"], p["W_v"], p["W_o"]
    a = layer_norm(X0, p["ln1_gamma"], p["ln1_beta"], EPS)  # (..., n, d_model)
    attended, weights = multi_head_attention(a, *Ws, h, mask)  # mask=causal_mask(n)
    X1 = X0 + attended  # the residual: each token keeps its own vector
    b = layer_norm(X1, p["ln2_gamma"], p["ln2_beta"], EPS)
    ffn = p["W_1"], p["b_1"], p["W_2"], p["b_2"]  # max(0, b W_1 + b_1) W_2 + b_2
    X2 = X1 + feed_forward(b, *ffn)  # (..., n, d_model)
    return X2, weights, {"a": a, "X1": X1, "b": b}


def forward(params: dict, ids, h: int):
    """Run the decoder: ``(logits, weights)``.

    Parameters
    ----------
    params : dict of arrays, as :func:`init_params` makes them
    ids : int array_like of shape (..., n)
        Token ids, ``n`` at most the ``n_ctx`` of ``params["P"]``.
    h : int
        Number of heads; must divide ``d_model``.

    Returns
    -------
    logits : ndarray of shape (..., n, vocab_size)
        Row ``i``: a score for every word as the word after token ``i``.
    weights : ndarray of shape (..., h, n, n)
        The causal attention weights of every head.
    """
    cache = _forward(params, ids, h)
    return _logits(cache["final"], params), cache["weights"]


def last_logits(params: dict, ids, h: int) -> np.ndarray:
    """Only the last row of :func:`forward`'s logits, shape (..., vocab_size).

    What a generator without a cache computes at each step: every token's keys and
    values again, but the output layer for the newest position alone (as nanoGPT does).
    """
    return _logits(_forward(params, ids, h)["final"][..., -1, :], params)


def _forward(params: dict, ids, h: int):
    """:func:`forward` up to the final layer norm, keeping what the backward pass needs."""
    p = params
    X0 = embed(p, ids)  # (..., n, d_model)
    mask = causal_mask(X0.shape[-2])  # (n, n): True on and below the diagonal
    X2, weights, inside = _block(X0, p, h, mask)
    final = layer_norm(X2, p["lnf_gamma"], p["lnf_beta"], EPS)  # (..., n, d_model)
    cache = {"ids": np.asarray(ids), "X0": X0, "X2": X2, "mask": mask, "weights": weights}
    return cache | inside | {"final": final}


def head_outputs(params: dict, ids, h: int) -> np.ndarray:
    """What each head adds to the residual stream, shape (..., h, n, d_model).

    Head ``k``'s blend of values times its ``d_k`` rows of ``W_o``; summed over the
    heads, this is the attention sub-layer's output in :func:`forward`.
    """
    c = _forward(params, ids, h)
    V = split_heads(c["a"] @ params["W_v"], h)  # (..., h, n, d_k)
    blended = c["weights"] @ V  # (..., h, n, d_k)
    W_o = params["W_o"].reshape(h, -1, params["W_o"].shape[-1])  # (h, d_k, d_model)
    return np.einsum("...hnk,hkd->...hnd", blended, W_o)


def forward_with_heads(params: dict, ids, outputs) -> np.ndarray:
    """The logits (..., n, vocab_size) when the heads add ``outputs`` (..., h, n, d_model).

    With ``outputs = head_outputs(params, ids, h)`` this equals :func:`forward`; change
    one head's slice first to see what the rest of the model makes of it (an ablation).
    """
    X0 = embed(params, ids)  # (..., n, d_model)
    outputs = np.asarray(outputs, dtype=float)
    if outputs.shape[:-3] + outputs.shape[-2:] != X0.shape:
        raise ValueError(
            f"outputs must have shape (..., h, n, d_model) matching the tokens' {X0.shape}, "
            f"got {outputs.shape}"
        )
    X1 = X0 + outputs.sum(axis=-3)  # the residual, as in the block
    b = layer_norm(X1, params["ln2_gamma"], params["ln2_beta"], EPS)
    X2 = X1 + feed_forward(b, *_ffn(params))
    return _logits(layer_norm(X2, params["lnf_gamma"], params["lnf_beta"], EPS), params)


def _logits(final: np.ndarray, p: dict) -> np.ndarray:
    return final @ p["W_out"] + p["b_out"]  # (..., n, d_model) -> (..., n, vocab_size)


def _ffn(p: dict) -> tuple:
    return p["W_1"], p["b_1"], p["W_2"], p["b_2"]


def cross_entropy(logits, targets, weights=None) -> float:
    r"""Mean of :math:`-\log p(\text{target})` over the (weighted) positions.

    ``logits`` (..., vocab); ``targets`` int (...); ``weights`` (...), optional, e.g. 0
    at padding. Computed as a log-softmax, so it never takes the log of 0.
    """
    return _cross_entropy(log_softmax(logits), targets, weights)


def log_softmax(logits) -> np.ndarray:
    """``log(softmax(logits))`` along the last axis, without computing the log of 0."""
    logits = np.asarray(logits, dtype=float)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _cross_entropy(log_p: np.ndarray, targets, weights) -> float:
    targets = np.asarray(targets)
    if targets.shape != log_p.shape[:-1]:
        raise ValueError(
            f"targets must have one id per row of logits: logits have shape {log_p.shape}, "
            f"so targets need shape {log_p.shape[:-1]}, but they have shape {targets.shape}"
        )
    nll = -np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]  # (...)
    w = np.ones_like(nll) if weights is None else np.asarray(weights, dtype=float)
    return float((nll * w).sum() / w.sum())


class KVCache(NamedTuple):
    """The keys and values of the tokens so far, per head: ``K``, ``V`` (h, t, d_k)."""

    K: np.ndarray
    V: np.ndarray


def kv_cache_step(params: dict, h: int, token: int, cache: KVCache | None = None):
    """Feed one more token; reuse the cached keys and values of the earlier ones.

    Returns the logits of the next word, shape (vocab_size,), the new cache (one key
    and one value longer) and the attention weights of the new token, (h, t + 1). The
    logits equal the last row of :func:`forward` on the whole sequence, but each step
    computes one query, one key and one value instead of ``t + 1`` of each.
    """
    p = params
    t = 0 if cache is None else cache.K.shape[-2]  # the new token's position
    if t >= p["P"].shape[0]:
        raise ValueError(f"the model has {p['P'].shape[0]} positions; position {t} is beyond")
    token = int(check_ids([token], p)[0])
    x = p["E"][token] + p["P"][t]  # (d_model,): the word at its own position
    d_model = x.shape[-1]
    a = layer_norm(x, p["ln1_gamma"], p["ln1_beta"], EPS)  # (d_model,)
    q, k, v = (np.reshape(a @ p[W], (h, 1, d_model // h)) for W in ("W_q", "W_k", "W_v"))
    if cache is not None:  # (h, 1, d_k) -> (h, t + 1, d_k): append, never recompute
        k, v = np.concatenate([cache.K, k], axis=-2), np.concatenate([cache.V, v], axis=-2)
    heads, weights = scaled_dot_product_attention(q, k, v)  # no mask: only the past is here
    x = x + heads.reshape(d_model) @ p["W_o"]  # (h, 1, d_k) -> (d_model,), then mix
    x = x + feed_forward(layer_norm(x, p["ln2_gamma"], p["ln2_beta"], EPS), *_ffn(p))
    logits = _logits(layer_norm(x, p["lnf_gamma"], p["lnf_beta"], EPS), p)  # (vocab_size,)
    return logits, KVCache(k, v), weights[:, 0]


def sample(logits, temperature: float, u: float) -> int:
    """The word whose share of ``softmax(logits / T)`` covers the number ``u`` in [0, 1).

    Inverse-CDF sampling: lay the probabilities end to end and see where ``u`` falls.
    With ``u`` uniform, word ``j`` comes out with probability ``p_j``.
    """
    p = softmax(logits, temperature=temperature)
    return int(min(np.searchsorted(np.cumsum(p), u, side="right"), p.size - 1))


def generate(params: dict, h: int, prompt, n_new: int, temperature=None, seed=0, stop=None):
    """Continue ``prompt`` (token ids) by up to ``n_new`` tokens, with the KV cache.

    ``temperature=None`` is greedy (always the top word); a number samples with
    :func:`sample` and a seeded generator, so the same seed writes the same text.
    Stops after the token ``stop`` or at the model's last position. Returns all ids.
    """
    rng = np.random.default_rng(seed)
    ids = [int(i) for i in check_ids(prompt, params)]
    cache = None
    for token in ids[:-1]:
        _, cache, _ = kv_cache_step(params, h, token, cache)
    for _ in range(n_new):
        logits, cache, _ = kv_cache_step(params, h, ids[-1], cache)
        if temperature is None:
            ids.append(int(np.argmax(logits)))
        else:
            ids.append(sample(logits, temperature, rng.random()))
        if ids[-1] == stop or len(ids) >= params["P"].shape[0]:
            break
    return ids


def check_ids(ids, params: dict) -> np.ndarray:
    """``ids`` as an int array of shape (..., n), every id a word, ``n`` within ``n_ctx``."""
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu" or ids.ndim < 1 or ids.size == 0:
        raise TypeError(
            f"ids must be a non-empty array of whole numbers (token ids), got dtype "
            f"{ids.dtype} and shape {ids.shape}"
        )
    vocab_size, n_ctx = params["E"].shape[0], params["P"].shape[0]
    if ids.min() < 0 or ids.max() >= vocab_size:
        bad = ids.min() if ids.min() < 0 else ids.max()
        raise ValueError(f"token id {bad} is not in the vocabulary of {vocab_size} words")
    if ids.shape[-1] > n_ctx:
        raise ValueError(
            f"the model has {n_ctx} positions, but ids has shape {ids.shape}: "
            f"{ids.shape[-1]} tokens; keep the last {n_ctx}"
        )
    return ids

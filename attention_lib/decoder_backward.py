r"""Gradients of chapter 12's decoder, by hand, in the style of :mod:`attention_lib.backward`.

One function per part of :mod:`attention_lib.decoder`, each taking the part's inputs and
the gradient ``dY`` of the loss with respect to its output, and returning the gradients
of its inputs and weights. Attention itself reuses :func:`attention_backward` of
chapter 10. :func:`loss_and_gradients` chains them all, from the loss back to the
embeddings. Every one is checked against :func:`numerical_gradient` in the tests.
"""

from __future__ import annotations

import numpy as np

from .backward import _sum_to, attention_backward
from .core import scaled_dot_product_attention
from .decoder import EPS, NAMES, _cross_entropy, _ffn, _forward, _logits, log_softmax
from .heads import merge_heads, split_heads


def _flat(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1, a.shape[-1])  # (..., k) -> (rows, k): all tokens as rows


def cross_entropy_backward(logits, targets, weights=None) -> np.ndarray:
    r"""Gradient of :func:`cross_entropy` at the logits: :math:`w\,(p - y) / \sum w`."""
    return _cross_entropy_backward(np.exp(log_softmax(logits)), targets, weights)


def _cross_entropy_backward(p: np.ndarray, targets, weights) -> np.ndarray:
    targets = np.asarray(targets)[..., None]  # (..., 1)
    w = np.ones(targets.shape[:-1]) if weights is None else np.asarray(weights, dtype=float)
    d = p.copy()  # (..., vocab)
    np.put_along_axis(d, targets, np.take_along_axis(d, targets, -1) - 1.0, -1)  # p - y
    return d * (w / w.sum())[..., None]  # weighted and averaged like the loss


def layer_norm_backward(x, gamma, dy, eps: float = EPS):
    r"""Gradients of :func:`attention_lib.layers.layer_norm`: ``(dx, dgamma, dbeta)``.

    Notes
    -----
    With :math:`\hat x = (x - \mu)/\sigma` and :math:`g = dy \odot \gamma`, each token
    gets :math:`dx = (g - \operatorname{mean}(g) - \hat x \operatorname{mean}(g \odot
    \hat x)) / \sigma`: the two means are the price of :math:`\mu` and :math:`\sigma`
    depending on every entry.
    """
    x, dy = np.asarray(x, dtype=float), np.asarray(dy, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)  # (..., 1)
    sigma = np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)  # (..., 1)
    x_hat = (x - mu) / sigma  # (..., d)
    g = dy * gamma
    dx = (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True)) / sigma
    return dx, _flat(dy * x_hat).sum(axis=0), _flat(dy).sum(axis=0)


def feed_forward_backward(x, W_1, b_1, W_2, dy):
    r"""Gradients of :func:`attention_lib.decoder.feed_forward`.

    Returns ``(dx, dW_1, db_1, dW_2, db_2)``. ReLU passes the gradient where its input
    was positive and blocks it elsewhere.
    """
    x, dy = np.asarray(x, dtype=float), np.asarray(dy, dtype=float)
    pre = x @ W_1 + b_1  # (..., d_ff)
    hidden = np.maximum(0.0, pre)
    d_hidden = (dy @ W_2.T) * (pre > 0)  # (..., d_ff): ReLU's gate
    dW_2 = _flat(hidden).T @ _flat(dy)  # (d_ff, d_model): summed over every token
    dW_1 = _flat(x).T @ _flat(d_hidden)  # (d_model, d_ff)
    return d_hidden @ W_1.T, dW_1, _flat(d_hidden).sum(0), dW_2, _flat(dy).sum(0)


def embedding_backward(ids, dX, vocab_size: int) -> np.ndarray:
    """Gradient of the table ``E`` from the gradient at ``E[ids]``: rows added per id."""
    dE = np.zeros((vocab_size, np.shape(dX)[-1]))
    np.add.at(dE, np.asarray(ids).reshape(-1), _flat(np.asarray(dX, dtype=float)))
    return dE  # a word used twice collects both gradients; an unused word gets 0


def multi_head_attention_backward(X, W_q, W_k, W_v, W_o, h: int, dOut, mask=None):
    """Gradients of :func:`attention_lib.multi_head_attention`.

    Returns ``(dX, dW_q, dW_k, dW_v, dW_o)``; the per-head step is chapter 10's
    :func:`attention_backward`, run on all heads at once.
    """
    X, dOut = np.asarray(X, dtype=float), np.asarray(dOut, dtype=float)
    Q, K, V = (split_heads(X @ W, h) for W in (W_q, W_k, W_v))  # (..., h, n, d_k)
    if mask is not None:
        mask = np.asarray(mask)[..., None, :, :]  # (..., 1, n, n): shared by the heads
    heads, _ = scaled_dot_product_attention(Q, K, V, mask)  # (..., h, n, d_k)
    dW_o = _flat(merge_heads(heads)).T @ _flat(dOut)  # (d_model, d_model)
    d_heads = split_heads(dOut @ W_o.T, h)  # (..., h, n, d_k)
    dQ, dK, dV = attention_backward(Q, K, V, d_heads, mask)
    dQ, dK, dV = (merge_heads(_sum_to(g, Q.shape)) for g in (dQ, dK, dV))  # (..., n, d_model)
    dX = dQ @ W_q.T + dK @ W_k.T + dV @ W_v.T  # X feeds all three projections
    flat_X = _flat(X).T  # (d_model, rows)
    return dX, flat_X @ _flat(dQ), flat_X @ _flat(dK), flat_X @ _flat(dV), dW_o


def loss_and_gradients(params: dict, h: int, ids, targets, weights=None):
    """Cross-entropy of the decoder on next words, and its gradient for every weight.

    ``ids`` and ``targets`` (..., n): ``targets[..., i]`` is the word after ``ids[...,
    i]``; ``weights`` (..., n) counts each position (0 for padding). Returns ``(loss,
    grads)`` with ``grads`` a dict keyed like ``params``. The backward pass visits the
    forward's steps in reverse: output layer, final layer norm, feed-forward, attention,
    embeddings.
    """
    p, targets = params, np.asarray(targets)
    c = _forward(p, ids, h)
    keep = np.ones(targets.shape, bool) if weights is None else np.asarray(weights) != 0
    final, w = c["final"][keep], None if weights is None else np.asarray(weights, float)[keep]
    log_p = log_softmax(_logits(final, p))  # (k, vocab): only the k positions that count
    loss = _cross_entropy(log_p, targets[keep], w)
    g = {}
    d_kept = _cross_entropy_backward(np.exp(log_p), targets[keep], w)  # (k, vocab)
    g["W_out"], g["b_out"] = final.T @ d_kept, d_kept.sum(axis=0)
    d_final = np.zeros(c["final"].shape)  # (..., n, d_model): padding gets no gradient
    d_final[keep] = d_kept @ p["W_out"].T
    dX2, g["lnf_gamma"], g["lnf_beta"] = layer_norm_backward(c["X2"], p["lnf_gamma"], d_final)
    db, g["W_1"], g["b_1"], g["W_2"], g["b_2"] = feed_forward_backward(c["b"], *_ffn(p)[:3], dX2)
    d_ln2, g["ln2_gamma"], g["ln2_beta"] = layer_norm_backward(c["X1"], p["ln2_gamma"], db)
    dX1 = dX2 + d_ln2  # the residual adds the two paths
    Ws = (p["W_q"], p["W_k"], p["W_v"], p["W_o"])
    da, g["W_q"], g["W_k"], g["W_v"], g["W_o"] = multi_head_attention_backward(
        c["a"], *Ws, h, dX1, c["mask"]
    )
    d_ln1, g["ln1_gamma"], g["ln1_beta"] = layer_norm_backward(c["X0"], p["ln1_gamma"], da)
    dX0 = dX1 + d_ln1  # (..., n, d_model)
    g["E"] = embedding_backward(c["ids"], dX0, p["E"].shape[0])
    g["P"] = np.zeros_like(p["P"])
    n, d_model = dX0.shape[-2:]
    g["P"][:n] = dX0.reshape(-1, n, d_model).sum(axis=0)  # every sentence uses P[:n]
    return loss, {name: g[name] for name in NAMES}

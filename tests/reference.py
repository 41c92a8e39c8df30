"""A deliberately naive reference implementation of the ``attention_lib`` contract.

Used only by the tests. Everything here is written the slow, obvious way: plain Python loops
over batch items, heads, rows and columns, float64 throughout, and ``math`` doing the
arithmetic one number at a time. No broadcasting tricks, no ``einsum``, no reshapes. That is the
point: when the vectorised library agrees with this file, the agreement means something.

The only NumPy used is for storage (``np.zeros``), for walking over leading batch indices
(``np.ndindex``) and, in one place, for expanding a mask to its full shape (``np.broadcast_to``).
No input validation either: the tests only call these functions with good input.
"""

import math

import numpy as np


def _dot(a, b):
    """Sum of products of two equal-length vectors, exactly rounded by math.fsum."""
    assert len(a) == len(b)
    return math.fsum(float(a[i]) * float(b[i]) for i in range(len(a)))


def _matmul(A, B):
    """Plain triple-loop product of two 2-D arrays."""
    n, m = A.shape
    m2, p = B.shape
    assert m == m2
    out = np.zeros((n, p))
    for i in range(n):
        for j in range(p):
            out[i, j] = _dot(A[i, :], B[:, j])
    return out


def _softmax_list(logits, temperature=1.0):
    """Softmax of a Python list of floats, shifted by the max so nothing overflows."""
    top = max(logits)
    # (v - top) is <= 0, so exp() never overflows; dividing by T after the shift keeps
    # huge-but-finite logits finite too.
    exps = [math.exp((v - top) / temperature) for v in logits]
    total = math.fsum(exps)
    return [e / total for e in exps]


def softmax(x, axis=-1, temperature=1.0):
    x = np.asarray(x, dtype=np.float64)
    rows = np.moveaxis(x, axis, -1)  # (..., n) with the softmax axis last
    out = np.zeros(rows.shape)
    for idx in np.ndindex(rows.shape[:-1]):
        row = [float(v) for v in rows[idx]]
        out[idx] = _softmax_list(row, temperature)
    return np.moveaxis(out, -1, axis)


def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    batch, (n_q, _), (n_k, _) = Q.shape[:-2], Q.shape[-2:], K.shape[-2:]
    assert K.shape[:-2] == batch
    scores = np.zeros(batch + (n_q, n_k))
    for b in np.ndindex(batch):
        for i in range(n_q):
            for j in range(n_k):
                scores[b + (i, j)] = _dot(Q[b + (i,)], K[b + (j,)])
    return scores


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None, temperature=1.0):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    batch, (n_q, d_k), n_k, d_v = Q.shape[:-2], Q.shape[-2:], K.shape[-2], V.shape[-1]
    assert K.shape[:-2] == batch and V.shape[:-2] == batch
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    if mask is None:
        mask = np.ones((n_q, n_k), dtype=bool)
    mask = np.broadcast_to(mask, batch + (n_q, n_k))

    output = np.zeros(batch + (n_q, d_v))
    weights = np.zeros(batch + (n_q, n_k))
    for b in np.ndindex(batch):
        for i in range(n_q):
            allowed = [j for j in range(n_k) if mask[b + (i, j)]]
            logits = [_dot(Q[b + (i,)], K[b + (j,)]) * scale for j in allowed]
            probs = _softmax_list(logits, temperature)
            for j, p in zip(allowed, probs, strict=True):
                weights[b + (i, j)] = p
            for c in range(d_v):
                output[b + (i, c)] = math.fsum(
                    p * float(V[b + (j, c)]) for j, p in zip(allowed, probs, strict=True)
                )
    return output, weights


def causal_mask(n):
    mask = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            mask[i, j] = j <= i
    return mask


def split_heads(X, h):
    X = np.asarray(X)
    batch, (n, hd) = X.shape[:-2], X.shape[-2:]
    d = hd // h
    out = np.zeros(batch + (h, n, d), dtype=X.dtype)
    for b in np.ndindex(batch):
        for i in range(h):
            for t in range(n):
                for c in range(d):
                    out[b + (i, t, c)] = X[b + (t, i * d + c)]
    return out


def merge_heads(X):
    X = np.asarray(X)
    batch, (h, n, d) = X.shape[:-3], X.shape[-3:]
    out = np.zeros(batch + (n, h * d), dtype=X.dtype)
    for b in np.ndindex(batch):
        for i in range(h):
            for t in range(n):
                for c in range(d):
                    out[b + (t, i * d + c)] = X[b + (i, t, c)]
    return out


def multi_head_attention(X, W_q, W_k, W_v, W_o, h, mask=None):
    """One head at a time, as in the paper: head i projects with its own column block of W_q,
    W_k and W_v, attends with scale 1/sqrt(d), and the heads' outputs are laid side by side
    before the final projection with W_o.
    """
    X = np.asarray(X, dtype=np.float64)
    W_q, W_k, W_v, W_o = (np.asarray(W, dtype=np.float64) for W in (W_q, W_k, W_v, W_o))
    batch, (n, d_model) = X.shape[:-2], X.shape[-2:]
    d = d_model // h
    if mask is not None:
        mask = np.broadcast_to(mask, batch + (n, n))  # one mask, shared by every head

    output = np.zeros(batch + (n, d_model))
    weights = np.zeros(batch + (h, n, n))
    for b in np.ndindex(batch):
        x = X[b]  # (n, d_model)
        concat = np.zeros((n, d_model))
        for i in range(h):
            cols = slice(i * d, (i + 1) * d)
            q = _matmul(x, W_q[:, cols])  # (n, d)
            k = _matmul(x, W_k[:, cols])  # (n, d)
            v = _matmul(x, W_v[:, cols])  # (n, d)
            head_mask = None if mask is None else mask[b]
            head_out, head_weights = scaled_dot_product_attention(q, k, v, mask=head_mask)
            for t in range(n):
                for c in range(d):
                    concat[t, i * d + c] = head_out[t, c]
            weights[b + (i,)] = head_weights
        output[b] = _matmul(concat, W_o)
    return output, weights


def positional_encoding(n, d_model):
    pe = np.zeros((n, d_model))
    for pos in range(n):
        for col in range(d_model):
            i = col // 2  # columns 2i and 2i+1 share a frequency
            angle = pos / 10000 ** (2 * i / d_model)
            pe[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe

"""The unseen cases of each function checker: inputs drawn at grading time, with answers.

The grader supplies a seed (:func:`.base.grading_seed`); each generator below gets a
random generator made from it and returns a few ``(description, inputs, expected)``
triples, with the same conventions as the exercise's fixed cases (argument order,
one-hot targets, 0/1 padding masks). The reference answers come from the library
itself or from the checker's own reference helpers, so they cannot drift apart.
Practice runs (no seed) never see these.
"""

from __future__ import annotations

import numpy as np

from ..backward import softmax_backward
from ..core import causal_mask, positional_encoding, scaled_dot_product_attention, softmax
from ..decoder import cross_entropy, sample
from ..heads import multi_head_attention, split_heads
from .base import expect_shape, same, unseen_cases
from .decoder import _kv_reference
from .encoder_attention import LAYER, _attend
from .merge import block_state
from .one_score import _score
from .real_model import _layer_norm, _mean_pool


def _size(rng, low: int = 2, high: int = 6) -> int:
    return int(rng.integers(low, high + 1))


def _batch(rng) -> tuple:
    """No batch axis, or one of 2 or 3."""
    return () if rng.random() < 0.5 else (_size(rng, 2, 3),)


def _qkv(rng, batch: tuple = ()) -> tuple:
    n_q, n_k, d_k, d_v = (_size(rng) for _ in range(4))
    shapes = ((*batch, n_q, d_k), (*batch, n_k, d_k), (*batch, n_k, d_v))
    return tuple(rng.normal(size=s) for s in shapes)


def _rows(rng, shape: tuple, zeros: bool = False) -> np.ndarray:
    """Probability rows along the last axis, some entries exactly 0 when ``zeros``."""
    p = softmax(rng.normal(scale=2.0, size=shape))
    if zeros:
        p = np.where(rng.random(shape) < 0.3, 0.0, p)
        p[..., 0] += 1e-3  # every row keeps some mass
        p = p / p.sum(axis=-1, keepdims=True)
    return p


@unseen_cases("softmax")
def _softmax(rng):
    found = []
    for _ in range(3):
        x = rng.normal(scale=3.0, size=tuple(_size(rng) for _ in range(_size(rng, 1, 3))))
        x = x + rng.choice([0.0, 1000.0, -1000.0])
        axis, T = int(rng.integers(-x.ndim, x.ndim)), float(rng.uniform(0.3, 3.0))
        found.append((f"shape {x.shape}, axis={axis}", (x, axis, T), softmax(x, axis, T)))
    return found


@unseen_cases("entropy")
def _entropy(rng):
    found = []
    for shape in ((_size(rng),), (_size(rng), _size(rng)), (2, _size(rng), _size(rng))):
        p = _rows(rng, shape, zeros=True)
        h = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)
        found.append((f"rows of shape {shape}, some p = 0", (p,), h))
    return found


def _score_cases(rng, scale: bool):
    found = []
    for _ in range(3):
        Q, K, _ = _qkv(rng, _batch(rng))
        expected = Q @ np.swapaxes(K, -1, -2) / (np.sqrt(Q.shape[-1]) if scale else 1.0)
        found.append((f"Q {Q.shape}, K {K.shape}", (Q, K), expected))
    return found


unseen_cases("scores")(lambda rng: _score_cases(rng, scale=False))
unseen_cases("scaled_scores")(lambda rng: _score_cases(rng, scale=True))


@unseen_cases("cosine")
def _cosine(rng):
    found = []
    for shape in ((_size(rng),), (_size(rng), _size(rng))):
        a, b = rng.normal(size=shape), rng.normal(size=shape)
        cos = np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
        found.append((f"a and b of shape {shape}", (a, b), cos))
    return found


@unseen_cases("positional-encoding")
def _positional_encoding(rng):
    pairs = [(_size(rng, 2, 30), 2 * _size(rng, 1, 8)) for _ in range(2)]
    return [(f"n = {n}, d_model = {d}", (n, d), positional_encoding(n, d)) for n, d in pairs]


@unseen_cases("blend")
def _blend(rng):
    found = []
    for batch in ((), (2,)):
        n_q, n_k, d_v = _size(rng), _size(rng), _size(rng)
        W, V = _rows(rng, (*batch, n_q, n_k)), rng.normal(size=(*batch, n_k, d_v))
        found.append((f"weights {W.shape}, V {V.shape}", (W, V), W @ V))
    return found


def _attention_cases(rng, batches: tuple):
    found = []
    for batch in batches:
        Q, K, V = _qkv(rng, batch)
        expected = scaled_dot_product_attention(Q, K, V)[0]
        found.append((f"Q {Q.shape}, K {K.shape}, V {V.shape}", (Q, K, V), expected))
    return found


unseen_cases("attention")(lambda rng: _attention_cases(rng, ((), (), (2,))))
unseen_cases("attention_rows")(lambda rng: _attention_cases(rng, ((), ())))


@unseen_cases("causal_mask")
def _causal_mask(rng):
    return [(f"n = {n}", (n,), causal_mask(n)) for n in (_size(rng, 2, 12), _size(rng, 2, 12))]


@unseen_cases("masked_softmax")
def _masked_softmax(rng):
    found = []
    for shape in ((_size(rng), _size(rng)), (2, _size(rng), _size(rng))):
        scores = rng.normal(scale=3.0, size=shape)
        mask = rng.random(shape) < 0.6
        mask[..., int(rng.integers(shape[-1]))] = True  # every query may attend somewhere
        top = np.where(mask, scores, -np.inf).max(axis=-1, keepdims=True)
        e = np.where(mask, np.exp(scores - top), 0.0)
        found.append((f"scores {shape} and a mask", (scores, mask), e / e.sum(-1, keepdims=True)))
    return found


@unseen_cases("split_heads")
def _split_heads(rng):
    found = []
    for _ in range(2):
        n, h, d_k = _size(rng), _size(rng, 1, 4), _size(rng, 1, 4)
        X = rng.normal(size=(n, h * d_k))
        found.append((f"X of shape {X.shape}, h = {h}", (X, h), split_heads(X, h)))
    return found


@unseen_cases("multi_head")
def _multi_head(rng):
    found = []
    for _ in range(2):
        h, d_k, n = _size(rng, 1, 4), _size(rng, 1, 3), _size(rng)
        X, Ws = rng.normal(size=(n, h * d_k)), rng.normal(scale=0.6, size=(4, h * d_k, h * d_k))
        expected = multi_head_attention(X, *Ws, h=h)[0]
        found.append((f"n = {n}, d_model = {h * d_k}, h = {h}", (X, *Ws, h), expected))
    return found


@unseen_cases("softmax_backward")
def _softmax_backward(rng):
    found = []
    for shape in ((_size(rng),), (_size(rng), _size(rng))):
        p, dp = _rows(rng, shape), rng.normal(size=shape)
        found.append((f"p and dp of shape {shape}", (p, dp), softmax_backward(p, dp)))
    return found


@unseen_cases("grad_V")
def _grad_V(rng):
    found = []
    for batch in ((), (2,)):
        n_q, n_k, d_v = _size(rng), _size(rng), _size(rng)
        A, dOut = _rows(rng, (*batch, n_q, n_k)), rng.normal(size=(*batch, n_q, d_v))
        found.append((f"A {A.shape}, dOut {dOut.shape}", (A, dOut), np.swapaxes(A, -1, -2) @ dOut))
    return found


@unseen_cases("layer_norm")
def _layer_norm_cases(rng):
    found = []
    for _ in range(2):
        m, d = _size(rng), _size(rng)
        x = rng.normal(loc=rng.normal(scale=3.0), scale=2.0, size=(m, d))
        gamma, beta, eps = rng.normal(size=d), rng.normal(size=d), 1e-5
        expected = _layer_norm(x, gamma, beta, eps)
        found.append((f"{m} tokens of width {d}", (x, gamma, beta, eps), expected))
    return found


@unseen_cases("mean_pool")
def _mean_pool_cases(rng):
    B, n, d = _size(rng), _size(rng), _size(rng)
    H = rng.normal(size=(B, n, d))
    mask = (np.arange(n) < rng.integers(1, n + 1, size=(B, 1))).astype(float)
    return [(f"H {H.shape} with padding", (H, mask), _mean_pool(H, mask))]


@unseen_cases("attention_with_biases")
def _attention_with_biases(rng):  # the learner's (X, layer, h); the checker passes LAYER
    X = rng.normal(size=(*_batch(rng), _size(rng), 8))
    h = int(rng.choice([1, 2, 4, 8]))
    return [(f"X {X.shape}, h = {h}", (X, h), _attend(X, LAYER, h))]


@unseen_cases("kv_step")
def _kv_step(rng):
    found = []
    for _ in range(2):
        h, t, d_k, d_v = _size(rng, 1, 4), _size(rng, 1, 5), _size(rng), _size(rng)
        q, k, v = rng.normal(size=(h, d_k)), rng.normal(size=(h, d_k)), rng.normal(size=(h, d_v))
        K, V = rng.normal(size=(h, t, d_k)), rng.normal(size=(h, t, d_v))
        args = (q, K, V, k, v)
        found.append((f"h = {h}, {t} cached tokens", args, _kv_reference(*args)))
    return found


@unseen_cases("cross_entropy")
def _cross_entropy(rng):
    found = []
    for _ in range(2):
        m, vocab = _size(rng), _size(rng, 3, 8)
        logits, targets = rng.normal(scale=3.0, size=(m, vocab)), rng.integers(0, vocab, m)
        Y = np.eye(vocab)[targets]
        expected = cross_entropy(logits, targets)
        found.append((f"{m} positions, a vocabulary of {vocab}", (logits, Y), expected))
    return found


@unseen_cases("sample")
def _sample(rng):
    found = []
    for _ in range(4):
        logits = rng.normal(scale=2.0, size=_size(rng, 3, 7))
        T, u = float(rng.uniform(0.3, 3.0)), float(rng.uniform(0.01, 0.99))
        expected = np.asarray(sample(logits, T, u))

        def judge(out, case, expected=expected):
            # like the fixed cases: one word index, in whatever shape holds one number
            same(out.reshape(()) if out.size == 1 else out, expected, case)

        found.append((f"{logits.size} logits, T = {T:.2f}, u = {u:.2f}", (logits, T, u), judge))
    return found


@unseen_cases("scores-that-change")
def _scores_that_change(rng):
    found = []
    for _ in range(2):
        n, d = _size(rng, 3, 7), _size(rng, 2, 5)
        X = np.where(rng.random((n, d)) < 0.5, 0.0, rng.normal(size=(n, d)))
        # No all-zero token: its key would be 0 for any W_k, so its column could never
        # move and the answer would no longer be whole rows (see check_scores_that_change).
        empty = np.flatnonzero(~X.any(axis=1))
        X[empty, rng.integers(d, size=empty.size)] = rng.normal(size=empty.size)
        f = int(rng.integers(d))
        expected = np.repeat((X[:, f] != 0)[:, None], n, axis=1)

        def judge(out, case, expected=expected, n=n):
            expect_shape(out, (n, n), case)
            same(out, expected, case)  # like the fixed cases: a boolean mask, not 0/1

        found.append((f"X of shape {X.shape}, feature {f}", (X, f), judge))
    return found


@unseen_cases("one-score")
def _one_score(rng):
    found = []
    for _ in range(3):
        n, d, d_k = _size(rng, 3, 7), _size(rng), _size(rng)
        X, (W_q, W_k) = rng.normal(size=(n, d)), rng.normal(size=(2, d, d_k))
        i, j = (int(rng.integers(n)) for _ in range(2))
        case = f"X {X.shape}, W_q and W_k {W_q.shape}, i = {i}, j = {j}"
        found.append((case, (X, W_q, W_k, i, j), _score(X, W_q, W_k, i, j)))
    return found


@unseen_cases("merge")
def _merge(rng):
    found = []
    for _ in range(2):
        n_q, n_a, n_b, d_v = _size(rng, 1, 4), _size(rng, 1, 4), _size(rng, 1, 4), _size(rng)
        z = rng.normal(scale=3.0, size=(n_q, n_a + n_b))
        V = rng.normal(size=(n_a + n_b, d_v))
        inputs = (*block_state(z[:, :n_a], V[:n_a]), *block_state(z[:, n_a:], V[n_a:]))
        found.append((f"{n_q} queries, {n_a} + {n_b} keys", inputs, softmax(z) @ V))
    return found

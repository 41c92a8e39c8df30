"""The blocked route of attention (``fast.attend_in_blocks``) equals the plain route.

Large inputs go through ``attend_in_blocks``, which computes the same attention a block of
queries at a time, in place, without the max shift and on several threads (see
``attention_lib/fast.py``). Every test here runs both routes on the same checked inputs and
compares, so the fast path can never drift from the one the chapters show, on one thread
and on three whatever BLAS is allowed here (the ``threads`` fixture). The public functions
are also checked to take the blocked route exactly when it applies, and to fall back to the
checked route when it does not. ``tests/test_fast_threads.py`` checks the threads
themselves and ``need_weights=False``.
"""

import numpy as np
import pytest

import attention_lib as al
from attention_lib import core, fast, parallel


def randn(seed, *shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def plain(Q, K, V, mask=None, s=None, T=1.0):
    s = 1 / np.sqrt(Q.shape[-1]) if s is None else s
    return core._attend(core._scores(Q, K), V, mask, s, T)


def blocked(Q, K, V, mask=None, s=None, T=1.0):
    s = 1 / np.sqrt(Q.shape[-1]) if s is None else s
    assert fast.blocks_pay_off(Q, K, V, s / T)
    if mask is not None:
        batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
        mask = np.broadcast_to(mask, (*batch, Q.shape[-2], K.shape[-2]))
    return fast.attend_in_blocks(Q, K, V, mask, s / T)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 3 rows, so that even these inputs are cut into many blocks, one ragged."""
    monkeypatch.setattr(fast, "_BLOCK", 3 * 300)


@pytest.fixture(params=[1, 3], ids=["1 thread", "3 threads"])
def threads(request, monkeypatch):
    """The fast route on 1 or 3 threads, at any size, whatever BLAS is allowed here."""
    monkeypatch.setattr(parallel, "workers", lambda: request.param)
    monkeypatch.setattr(parallel, "_THREADED", 0)
    return request.param


@pytest.mark.parametrize(
    ("q_shape", "k_shape", "v_shape"),
    [
        ((300, 8), (300, 8), (300, 5)),  # one head
        ((2, 3, 257, 4), (2, 3, 300, 4), (2, 3, 300, 6)),  # batch and heads, n_q != n_k
        ((2, 257, 4), (1, 300, 4), (300, 6)),  # K and V broadcast against Q's batch
    ],
)
@pytest.mark.parametrize(("s", "T"), [(None, 1.0), (0.3, 1.0), (None, 0.25), (None, 3.0)])
def test_blocked_equals_plain(small_blocks, threads, q_shape, k_shape, v_shape, s, T):
    Q, K, V = randn(1, *q_shape), randn(2, *k_shape), randn(3, *v_shape)
    out, weights = blocked(Q, K, V, s=s, T=T)
    expected_out, expected_weights = plain(Q, K, V, s=s, T=T)
    assert out.shape == expected_out.shape and weights.shape == expected_weights.shape
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)


def test_blocked_with_a_mask_gives_exact_zeros(small_blocks, threads):
    Q, K, V = randn(4, 2, 300, 8), randn(5, 2, 300, 8), randn(6, 2, 300, 3)
    mask = al.causal_mask(300)  # (300, 300), shared by the batch
    out, weights = blocked(Q, K, V, mask)
    expected_out, expected_weights = plain(Q, K, V, np.broadcast_to(mask, (2, 300, 300)))
    assert np.all(weights[:, ~mask] == 0)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)


def test_blocked_keeps_float32(small_blocks, threads):
    Q, K, V = (randn(seed, 2, 300, 8, dtype=np.float32) for seed in (7, 8, 9))
    out, weights = blocked(Q, K, V)
    assert out.dtype == weights.dtype == np.float32
    expected_out, expected_weights = plain(*(a.astype(np.float64) for a in (Q, K, V)))
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out, expected_out, rtol=1e-4, atol=1e-5)


def test_public_functions_take_the_blocked_route_when_it_applies(monkeypatch):
    calls = []
    real = core.attend_in_blocks
    monkeypatch.setattr(core, "attend_in_blocks", lambda *a, **k: calls.append(a) or real(*a, **k))
    Q, K, V = randn(10, 300, 8), randn(11, 300, 8), randn(12, 300, 8)
    out, weights = al.scaled_dot_product_attention(Q, K, V)
    expected_out, expected_weights = plain(Q, K, V)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)
    X, Ws = randn(13, 300, 16), [randn(s, 16, 16) / 4 for s in (14, 15, 16, 17)]
    mask = al.causal_mask(300)
    out, weights = al.multi_head_attention(X, *Ws, h=4, mask=mask)
    Q, K, V = (al.split_heads(X @ W, 4) for W in Ws[:3])
    heads, expected_weights = plain(Q, K, V, np.broadcast_to(mask, (4, 300, 300)))
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, al.merge_heads(heads) @ Ws[3], rtol=1e-12, atol=1e-13)
    assert len(calls) == 2
    al.scaled_dot_product_attention(Q[:, :200], K[:, :200], V[:, :200])  # 200 x 200: small
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("Q", "K", "V", "why"),
    [
        (randn(0, 300, 8) * 30, randn(1, 300, 8) * 30, randn(2, 300, 8), "logits may be large"),
        (randn(0, 300, 8), randn(1, 300, 8), randn(2, 2, 300, 8), "V adds a batch dimension"),
        (randn(0, 300, 8), randn(1, 300, 8, dtype=np.float32), randn(2, 300, 8), "mixed dtypes"),
        (randn(0, 200, 8), randn(1, 300, 8), randn(2, 300, 8), "too small to pay off"),
    ],
)
def test_other_inputs_take_the_checked_route(Q, K, V, why):
    assert not fast.blocks_pay_off(Q, K, V, 1 / np.sqrt(8)), why
    out, weights = al.scaled_dot_product_attention(Q, K, V)  # still right
    np.testing.assert_allclose(np.sum(weights, axis=-1), 1.0, rtol=1e-6)


def test_huge_but_finite_logits_still_work_on_the_checked_route():
    Q = np.zeros((300, 1))
    Q[0] = 1e300  # row 0 has logits +-1e300: only the shifted softmax survives them
    K = np.where(np.arange(300) % 2, 1.0, -1.0)[:, None]
    _, weights = al.scaled_dot_product_attention(Q, K, np.ones((300, 2)), scale=1.0)
    assert np.all(np.isfinite(weights))
    assert np.isclose(weights[0].sum(), 1.0) and weights[0, 0] == 0.0

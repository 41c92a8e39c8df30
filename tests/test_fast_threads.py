"""multi_head_attention's fast route: the reference's numbers, on threads, with or without weights.

``attention_lib/fast.py`` shares the blocks of large inputs out to threads and, with
``need_weights=False``, keeps no weights at all. Here the route is forced onto small inputs
(``_MIN_WEIGHTS`` lowered, blocks of two rows), so that ``tests/reference.py``, plain Python
loops, can check every number; a full-size case compares it with the step-by-step route.
The threads themselves are checked too: BLAS gets one thread while they run and its limit
comes back afterwards, an error in any thread reaches the caller, and two calls at once
both come out right.
"""

import os
import threading

import numpy as np
import pytest
import reference as ref
from test_core import make_weights, mha_mask
from threadpoolctl import threadpool_limits

import attention_lib as al
from attention_lib import core, fast, parallel
from attention_lib.chunked import peak_memory

CASES = [
    # X shape, h, mask kind
    ((12, 8), 2, None),
    ((3, 10, 6), 3, "causal"),  # a batch axis
    ((2, 3, 9, 8), 4, "padding"),  # two batch axes; (batch, 1, n) keys hidden per item
    ((2, 7, 4), 1, "causal"),  # one head
]


def weights_for(seed, d_model, dtype=np.float64):
    return [W.astype(dtype) for W in make_weights(seed, d_model)]


@pytest.fixture(params=[1, 3], ids=["1 thread", "3 threads"])
def fast_route(request, monkeypatch):
    """Every input takes the fast route, in blocks of 2 rows, on 1 or 3 threads; counted."""
    monkeypatch.setattr(fast, "_MIN_WEIGHTS", 1)
    monkeypatch.setattr(parallel, "_THREADED", 0)
    monkeypatch.setattr(fast, "_BLOCK", 2)  # max(1, 2 // n_k) = 1 row per block
    monkeypatch.setattr(parallel, "workers", lambda: request.param)
    calls = []
    real = core.attend_in_blocks
    monkeypatch.setattr(core, "attend_in_blocks", lambda *a, **k: calls.append(k) or real(*a, **k))
    return calls


@pytest.mark.parametrize(("x_shape", "h", "mask_kind"), CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fast_route_matches_the_reference(fast_route, x_shape, h, mask_kind, dtype):
    rng = np.random.default_rng(sum(x_shape) + h)
    X = rng.standard_normal(x_shape).astype(dtype)
    Ws = weights_for(h, x_shape[-1], dtype)
    mask = mha_mask(mask_kind, x_shape, rng)
    output, weights = al.multi_head_attention(X, *Ws, h, mask=mask)
    alone = al.multi_head_attention(X, *Ws, h, mask=mask, need_weights=False)
    assert [k["need_weights"] for k in fast_route] == [True, False]  # the route was taken
    expected_output, expected_weights = ref.multi_head_attention(X, *Ws, h, mask=mask)
    assert output.dtype == weights.dtype == alone.dtype == dtype
    assert output.shape == alone.shape == x_shape and weights.shape == expected_weights.shape
    tol = {"rtol": 1e-12, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-5}
    np.testing.assert_allclose(weights, expected_weights, **tol)
    np.testing.assert_allclose(output, expected_output, **tol)
    np.testing.assert_allclose(alone, expected_output, **tol)
    if mask is not None:  # masked keys get exactly 0 in every head
        hidden = ~np.broadcast_to(mask, (*x_shape[:-2], x_shape[-2], x_shape[-2]))
        assert np.all(np.moveaxis(weights, -3, 0)[:, hidden] == 0.0)


def test_full_size_matches_the_step_by_step_route(monkeypatch):
    """n = 300: the fast route by itself (2 threads, real blocks) against chapter 6's."""
    monkeypatch.setattr(parallel, "_THREADED", 0)
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    rng = np.random.default_rng(7)
    X, Ws, mask = rng.standard_normal((2, 300, 16)), weights_for(8, 16), al.causal_mask(300)
    output, weights = al.multi_head_attention(X, *Ws, 4, mask=mask)
    alone = al.multi_head_attention(X, *Ws, 4, mask=mask, need_weights=False)
    Q, K, V = (al.split_heads(X @ W, 4) for W in Ws[:3])  # (2, 4, 300, 4)
    heads, expected_weights = core._attend(core._scores(Q, K), V, mask, 0.5, 1.0)
    expected = al.merge_heads(heads) @ Ws[3]
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(output, expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(alone, expected, rtol=1e-12, atol=1e-13)


def test_without_weights_no_score_sized_memory_is_held():
    X, Ws = np.random.default_rng(9).standard_normal((1024, 16)), weights_for(10, 16)
    weights_bytes = 2 * 1024 * 1024 * 8  # h = 2 heads of (1024, 1024) float64
    (_, weights), with_weights = peak_memory(al.multi_head_attention, X, *Ws, 2)
    assert weights.nbytes == weights_bytes and with_weights < 1.2 * weights_bytes
    _, without = peak_memory(al.multi_head_attention, X, *Ws, 2, need_weights=False)
    scratch = parallel.workers() * fast._BLOCK * 8  # a block per thread, 2 MiB each
    assert without < scratch + 2**20 < weights_bytes / 2  # and under 1 MiB besides


@pytest.mark.parametrize("bad", [None, 0, 1, "no", np.array([True])])
def test_need_weights_must_be_true_or_false(bad):
    X, Ws = np.ones((3, 4)), weights_for(11, 4)
    with pytest.raises(TypeError, match=r"need_weights must be True or False, got "):
        al.multi_head_attention(X, *Ws, 2, need_weights=bad)


def test_without_weights_bad_input_raises_the_same_errors():
    X, Ws = np.ones((3, 6)), weights_for(12, 6)
    for call in [
        lambda **k: al.multi_head_attention(X, *Ws, 4, **k),  # 4 does not divide 6
        lambda **k: al.multi_head_attention(X[:, :4], *Ws, 2, **k),  # X and W disagree
        lambda **k: al.multi_head_attention(X, *Ws, 2, mask=np.zeros((3, 3), bool), **k),
    ]:
        with pytest.raises(ValueError) as with_weights:
            call()
        with pytest.raises(ValueError) as without:
            call(need_weights=False)
        assert str(without.value) == str(with_weights.value)


def test_workers_follow_the_blas_limit():
    with threadpool_limits(limits=1, user_api="blas"):
        assert parallel.workers() == 1  # chapter 9's stopwatch: one core
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with threadpool_limits(limits=2, user_api="blas"):
        assert parallel.workers() == min(2, cores)


def test_threads_run_with_one_blas_thread_and_restore_its_limit(monkeypatch):
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    both = threading.Barrier(2, timeout=10)  # each thread's first part waits for the other
    seen = []

    def task(part, scratch):
        if threading.get_ident() not in {ident for ident, _ in seen}:
            both.wait()
        seen.append((threading.get_ident(), parallel._blas().lib_controllers[0].num_threads))

    with threadpool_limits(limits=2, user_api="blas"):
        with parallel.threads(parallel._THREADED) as n_threads:
            assert n_threads == 2
            parallel.share_out(task, list(range(20)), None, None, n_threads)
        assert parallel._blas().lib_controllers[0].num_threads == 2  # restored
        with parallel.threads(parallel._THREADED - 1) as n_threads:  # too small to share out
            assert n_threads == 1 and parallel._blas().lib_controllers[0].num_threads == 2
    assert len(seen) == 20 and len({ident for ident, _ in seen}) == 2
    assert {limit for _, limit in seen} == {1}


def test_one_call_at_a_time_lowers_the_blas_limit(monkeypatch):
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    with (
        parallel.threads(parallel._THREADED) as first,
        parallel.threads(parallel._THREADED) as second,
    ):
        assert (first, second) == (2, 1)  # the second call runs on its own thread
    with parallel.threads(parallel._THREADED) as again:
        assert again == 2  # released


def test_an_error_in_a_thread_reaches_the_caller(monkeypatch):
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    done = []

    def task(part, scratch):
        if part == 5:
            raise ArithmeticError("part 5 failed")
        done.append(part)

    with pytest.raises(ArithmeticError, match="part 5 failed"):
        with parallel.threads(parallel._THREADED) as n_threads:
            parallel.share_out(task, list(range(40)), None, None, n_threads)
    with parallel.threads(parallel._THREADED) as n_threads:
        assert n_threads == 2  # released for the next call


def test_two_calls_at_once_both_come_out_right(monkeypatch):
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    monkeypatch.setattr(parallel, "_THREADED", 0)
    rng = np.random.default_rng(13)
    X, Ws = rng.standard_normal((2, 300, 16)), weights_for(14, 16)
    expected = [al.multi_head_attention(X[b], *Ws, 4) for b in range(2)]
    got = [None, None]

    def run(b):
        for _ in range(5):
            got[b] = al.multi_head_attention(X[b], *Ws, 4)

    callers = [threading.Thread(target=run, args=(b,)) for b in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    for (out, weights), (out_1, weights_1) in zip(got, expected, strict=True):
        np.testing.assert_allclose(out, out_1, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(weights, weights_1, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("which", [1, 3])  # W_k, or W_o (after the heads are blended)
def test_an_overflow_on_threads_raises_the_one_step_error(monkeypatch, which):
    X, Ws = np.ones((300, 8)), weights_for(15, 8)
    Ws[2] = np.eye(8)  # V = X: every head blends rows of ones into ones
    Ws[which] = np.full((8, 8), 5e307)  # X @ W_k or heads @ W_o: 8 x 5e307 = inf
    step = ["X @ W_q", "X @ W_k", "X @ W_v", "heads @ W_o"][which]
    with pytest.raises(ValueError, match="overflowed") as alone:
        al.multi_head_attention(X, *Ws, 2)  # small: one thread
    assert str(alone.value).startswith(f"{step} overflowed to infinity")
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    monkeypatch.setattr(parallel, "_THREADED", 0)
    with pytest.raises(ValueError, match="overflowed") as shared:
        al.multi_head_attention(X, *Ws, 2)  # the blocks of every product on 2 threads
    assert str(shared.value) == str(alone.value)

"""attention_lib.chunked: the loop, the rows and the tiles all equal the matrix form."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_lib as al
from attention_lib.chunked import (
    attention_by_rows,
    attention_loop,
    best_time,
    chunked_attention,
    peak_memory,
)

EXACT = 1e-12  # float64: the same numbers up to rounding


def qkv(rng, n_q, n_k, d_k=5, d_v=3, batch=(), scale=1.0, dtype=np.float64):
    Q = rng.normal(scale=scale, size=(*batch, n_q, d_k)).astype(dtype)
    K = rng.normal(scale=scale, size=(*batch, n_k, d_k)).astype(dtype)
    V = rng.normal(size=(*batch, n_k, d_v)).astype(dtype)
    return Q, K, V


def gap(a, b) -> float:
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b)))


def reference(Q, K, V, **kwargs):
    return al.scaled_dot_product_attention(Q, K, V, **kwargs)[0]


# --- The same output as the matrix form --------------------------------------------------


@pytest.mark.parametrize(
    ("n_q", "n_k", "batch", "block", "key_block"),
    [
        (1, 1, (), 1, None),
        (7, 7, (), 3, None),  # 7 is not a multiple of 3: a short last tile
        (13, 29, (), 4, 5),  # n_q != n_k, both ragged
        (29, 13, (), 5, 4),
        (10, 37, (), 128, None),  # one tile holds everything
        (10, 37, (), 3, 1000),  # plain query chunking: all keys at once
        (10, 37, (), 1, 1),  # one score at a time
        (6, 11, (2, 3), 4, 3),  # batch dimensions
    ],
)
def test_chunked_equals_the_matrix_form(n_q, n_k, batch, block, key_block):
    Q, K, V = qkv(np.random.default_rng(n_q * 100 + n_k), n_q, n_k, batch=batch)
    out = chunked_attention(Q, K, V, block=block, key_block=key_block)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert gap(out, reference(Q, K, V)) < EXACT


def test_batch_dimensions_broadcast_like_the_matrix_form():
    rng = np.random.default_rng(1)
    Q = rng.normal(size=(2, 1, 5, 4))
    K = rng.normal(size=(3, 9, 4))  # broadcasts against Q's (2, 1)
    V = rng.normal(size=(4, 1, 1, 9, 2))  # one more batch axis than Q and K
    out = chunked_attention(Q, K, V, block=2, key_block=4)
    assert out.shape == (4, 2, 3, 5, 2)
    assert gap(out, reference(Q, K, V)) < EXACT


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.integers(1, 5),
    st.integers(1, 13),
    st.integers(1, 13),
    st.integers(0, 2**32 - 1),
)
def test_any_shape_and_any_tiles(n_q, n_k, d, block, key_block, seed):
    Q, K, V = qkv(np.random.default_rng(seed), n_q, n_k, d_k=d, d_v=d, scale=3.0)
    out = chunked_attention(Q, K, V, block=block, key_block=key_block)
    assert gap(out, reference(Q, K, V)) < EXACT


@pytest.mark.parametrize(("scale", "temperature"), [(0.3, 1.0), (None, 2.5), (2.0, 0.3)])
def test_scale_and_temperature(scale, temperature):
    Q, K, V = qkv(np.random.default_rng(2), 9, 14, scale=2.0)
    out = chunked_attention(Q, K, V, scale=scale, temperature=temperature, block=4, key_block=5)
    assert gap(out, reference(Q, K, V, scale=scale, temperature=temperature)) < EXACT


# --- Masks -------------------------------------------------------------------------------


@pytest.mark.parametrize(("block", "key_block"), [(4, 4), (3, 8), (37, 5), (1, 1)])
def test_causal_mask(block, key_block):
    # Query 0 sees key 0 only, so every key block after the first is fully masked for it.
    Q, K, V = qkv(np.random.default_rng(3), 37, 37)
    mask = al.causal_mask(37)
    out = chunked_attention(Q, K, V, mask=mask, block=block, key_block=key_block)
    assert gap(out, reference(Q, K, V, mask=mask)) < EXACT
    assert gap(out[0], V[0]) < EXACT  # the first token can only copy itself


def test_rows_masked_in_the_first_blocks():
    # Every query may attend only to keys in the last block: until then the running
    # maximum is -inf, and the first unmasked block must start the sums cleanly.
    Q, K, V = qkv(np.random.default_rng(4), 6, 20)
    mask = np.zeros((6, 20), dtype=bool)
    mask[:, 17:] = True
    mask[3, 19] = False  # ...and one row sees fewer keys than the others
    out = chunked_attention(Q, K, V, mask=mask, block=2, key_block=4)
    assert gap(out, reference(Q, K, V, mask=mask)) < EXACT


def test_random_and_broadcast_masks():
    rng = np.random.default_rng(5)
    Q, K, V = qkv(rng, 8, 15, batch=(2,))
    mask = rng.random((2, 8, 15)) < 0.3
    mask[..., 0] = True  # every row keeps a key
    padding = np.arange(15) < 11  # (n_k,): the last 4 keys are padding
    for m in (mask, padding, padding[None, None, :]):
        out = chunked_attention(Q, K, V, mask=m, block=3, key_block=4)
        assert gap(out, reference(Q, K, V, mask=m)) < EXACT


# --- Extreme logits: the running maximum has to do its job -------------------------------


@pytest.mark.parametrize("order", ["rising", "falling", "shuffled"])
def test_extreme_logits(order):
    # Logits from -1e3 to 1e3. Rising keys make the maximum grow in every block, so the
    # old sums are rescaled each time; falling keys put the maximum in the first block.
    rng = np.random.default_rng(6)
    n_k = 40
    k = np.linspace(-1.0, 1.0, n_k)
    k = {"rising": k, "falling": k[::-1], "shuffled": rng.permutation(k)}[order]
    K = np.stack([k, np.zeros(n_k)], axis=-1)  # (n_k, 2)
    Q = np.array([[1e3, 0.0], [-1e3, 0.0], [1e3, 5.0], [0.5, 0.0]]) * np.sqrt(2)
    V = rng.normal(size=(n_k, 3))
    logits = (Q @ K.T) / np.sqrt(2)
    assert np.isclose(np.abs(logits).max(), 1e3)
    out = chunked_attention(Q, K, V, block=3, key_block=7)
    assert np.all(np.isfinite(out))
    assert gap(out, reference(Q, K, V)) < EXACT


# --- Dtypes ------------------------------------------------------------------------------


def test_float32_stays_float32():
    Q, K, V = qkv(np.random.default_rng(7), 9, 11, dtype=np.float32)
    for T in (1.0, 0.5, 2.0):
        out = chunked_attention(Q, K, V, temperature=T, block=4)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, reference(Q, K, V, temperature=T), atol=1e-5)
    for fn in (attention_loop, attention_by_rows):
        assert fn(Q, K, V).dtype == np.float32


def test_integers_and_mixed_precision_become_float64():
    Q = np.arange(6).reshape(3, 2)
    K = np.ones((4, 2), dtype=np.float32)
    V = np.arange(8.0).reshape(4, 2)
    out = chunked_attention(Q, K, V, block=2)
    assert out.dtype == np.float64
    assert gap(out, reference(Q, K, V)) < EXACT


# --- The two slow ways -------------------------------------------------------------------


@pytest.mark.parametrize("fn", [attention_loop, attention_by_rows])
@pytest.mark.parametrize(("n_q", "n_k", "scale"), [(1, 1, None), (5, 9, None), (9, 4, 0.7)])
def test_loop_and_rows_equal_the_matrix_form(fn, n_q, n_k, scale):
    Q, K, V = qkv(np.random.default_rng(8), n_q, n_k, scale=2.0)
    assert gap(fn(Q, K, V, scale=scale), reference(Q, K, V, scale=scale)) < EXACT


def test_plain_matrix_form_equals_the_library():
    Q, K, V = qkv(np.random.default_rng(3), 7, 11, scale=2.0)
    assert gap(al.attention_matrix(Q, K, V), reference(Q, K, V)) < EXACT


@pytest.mark.parametrize("fn", [attention_loop, attention_by_rows])
def test_loop_and_rows_take_one_sequence(fn):
    Q, K, V = qkv(np.random.default_rng(9), 3, 4, batch=(2,))
    with pytest.raises(ValueError, match=r"2-D arrays only: Q has shape \(2, 3, 5\)"):
        fn(Q, K, V)


# --- Bad input: the matrix form's errors -------------------------------------------------

FUNCTIONS = [chunked_attention, attention_loop, attention_by_rows]


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_shape_errors_name_the_shapes(fn):
    Q, K, V = np.ones((8, 4)), np.ones((8, 3)), np.ones((8, 2))
    with pytest.raises(ValueError, match=r"share d_k: Q has shape \(8, 4\), K has shape \(8, 3\)"):
        fn(Q, K, V)
    with pytest.raises(ValueError, match=r"same n_k.*K has shape \(8, 4\), V has shape \(7, 2\)"):
        fn(Q, np.ones((8, 4)), np.ones((7, 2)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fn(np.ones(4), np.ones((8, 4)), V)
    with pytest.raises(ValueError, match="NaN or infinity"):
        fn(np.full((8, 4), np.nan), np.ones((8, 4)), V)
    with pytest.raises(TypeError, match="boolean array"):
        fn(Q > 0, np.ones((8, 4)), V)
    with pytest.raises(ValueError, match="positive, finite number"):
        fn(Q, np.ones((8, 4)), V, scale=0.0)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_overflow_raises_instead_of_nan(fn):
    Q = np.array([[1e200, 1.0]])
    K = np.array([[1e200, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="overflowed to infinity"):
        fn(Q, K, np.ones((2, 1)))


def test_chunked_specific_errors():
    Q, K, V = qkv(np.random.default_rng(10), 4, 6)
    with pytest.raises(ValueError, match="block must be at least 1, got 0"):
        chunked_attention(Q, K, V, block=0)
    with pytest.raises(ValueError, match="key_block must be at least 1, got -2"):
        chunked_attention(Q, K, V, key_block=-2)
    with pytest.raises(TypeError, match="block must be a positive whole number, got 2.5"):
        chunked_attention(Q, K, V, block=2.5)
    with pytest.raises(ValueError, match=r"mask row \(1,\) allows no key"):
        chunked_attention(Q, K, V, mask=np.eye(4, 6, dtype=bool) * [[1], [0], [1], [1]] > 0)
    with pytest.raises(ValueError, match=r"mask of shape \(4, 5\) cannot be broadcast"):
        chunked_attention(Q, K, V, mask=np.ones((4, 5), dtype=bool))
    with pytest.raises(ValueError, match="temperature must be a positive"):
        chunked_attention(Q, K, V, temperature=-1)
    with pytest.raises(ValueError, match="scale = 1.7e.308 makes the scaled scores overflow"):
        chunked_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 1)), scale=1.7e308)
    batch = np.ones((3, 4, 5))
    with pytest.raises(ValueError, match=r"batch dimensions of Q \(2, 4, 5\) and K \(3, 4, 5\)"):
        chunked_attention(np.ones((2, 4, 5)), batch, np.ones((3, 4, 2)))


# --- Memory, measured without a clock ----------------------------------------------------


def test_memory_stays_far_below_one_score_matrix():
    # tracemalloc counts bytes, so this is deterministic, unlike a timing.
    n, d = 2048, 16
    Q, K, V = qkv(np.random.default_rng(11), n, n, d_k=d, d_v=d)
    score_matrix = n * n * 8  # 32 MiB in float64
    (_, weights), naive = peak_memory(al.scaled_dot_product_attention, Q, K, V)
    out, bounded = peak_memory(chunked_attention, Q, K, V)
    assert naive >= score_matrix == weights.nbytes  # the matrix form holds all the weights
    assert gap(out, reference(Q, K, V)) < EXACT
    assert bounded < score_matrix / 20
    output = n * d * 8
    assert output <= bounded < output + 2 * 2**20  # the output, plus a few small tiles


def test_memory_above_the_output_does_not_grow_with_n():
    extra = []
    for n in (512, 2048):
        Q, K, V = qkv(np.random.default_rng(n), n, n, d_k=8, d_v=8)
        extra.append(peak_memory(chunked_attention, Q, K, V, block=64)[1] - n * 8 * 8)
    assert extra[1] < 1.5 * extra[0]  # 16 times the scores, not more memory


def test_peak_memory_counts_what_a_call_allocates():
    zeros, peak = peak_memory(np.zeros, (1024, 1024))
    assert zeros.shape == (1024, 1024) and peak >= zeros.nbytes
    assert peak_memory(lambda: None)[1] < 10_000


def test_peak_memory_refuses_to_nest():
    with pytest.raises(RuntimeError, match="already tracing"):
        peak_memory(peak_memory, lambda: None)


def test_best_time_warms_up_then_runs_at_least_once_and_at_most_repeat_times():
    calls = []
    assert best_time(calls.append, 1, repeat=3, budget=10.0) >= 0.0
    assert len(calls) == 1 + 3  # the warm-up, then the timed runs
    calls.clear()
    best_time(calls.append, 1, repeat=50, budget=0.0)  # the budget is spent at once
    assert len(calls) == 1 + 1
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        best_time(calls.append, 1, repeat=0)
    assert len(calls) == 2  # a bad repeat is refused before any call


def test_best_time_does_not_time_the_warm_up():
    calls = []

    def slow_first_time():
        calls.append(None)
        if len(calls) == 1:
            time.sleep(0.3)  # e.g. fresh memory, BLAS starting its threads

    assert best_time(slow_first_time, repeat=1) < 0.15
    assert len(calls) == 2

"""Property tests: facts about attention that must hold for *every* input, not just a few.

Hypothesis draws the inputs (bounded, finite floats) and shrinks any failure to a small example.
"""

import numpy as np
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attention_lib as al

FAST = settings(max_examples=60, deadline=None)


def floats(bound):
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False)


def float_arrays(shape, bound=1e3):
    return hnp.arrays(np.float64, shape, elements=floats(bound))


# Extreme values on purpose: huge logits of both signs next to ordinary ones.
EXTREME = st.one_of(floats(1e300), st.sampled_from([1e300, -1e300, 1.7e308, -1.7e308, 0.0]))

SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6)


@st.composite
def array_and_axis(draw, elements):
    x = draw(hnp.arrays(np.float64, SHAPES, elements=elements))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    return x, axis


def assert_is_distribution(p, axis):
    assert np.all(np.isfinite(p))
    assert np.all((p >= 0.0) & (p <= 1.0))
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------
# softmax
# --------------------------------------------------------------------------------------------


@FAST
@given(array_and_axis(floats(1e6)), st.floats(0.05, 20.0))
def test_softmax_is_a_distribution(x_axis, temperature):
    x, axis = x_axis
    p = al.softmax(x, axis=axis, temperature=temperature)
    assert p.shape == x.shape
    assert_is_distribution(p, axis)


@FAST
@given(array_and_axis(EXTREME))
def test_softmax_is_a_distribution_even_for_extreme_logits(x_axis):
    x, axis = x_axis
    assert_is_distribution(al.softmax(x, axis=axis), axis)


@FAST
@given(float_arrays(st.tuples(st.integers(1, 4), st.integers(1, 6))), st.data())
def test_softmax_shift_invariance(x, data):
    # Adding the same constant to every logit in a row multiplies numerator and denominator by
    # the same e^c, so the probabilities do not change.
    c = data.draw(float_arrays((x.shape[0], 1)), label="c")
    np.testing.assert_allclose(al.softmax(x + c), al.softmax(x), rtol=0, atol=1e-10)


@FAST
@given(float_arrays(st.tuples(st.integers(1, 4), st.integers(1, 6))), st.floats(0.05, 20.0))
def test_softmax_temperature_is_dividing_the_logits(x, temperature):
    np.testing.assert_allclose(
        al.softmax(x, temperature=temperature), al.softmax(x / temperature), rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(
        al.softmax(x, temperature=temperature), ref.softmax(x, -1, temperature), rtol=0, atol=1e-9
    )


@FAST
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 6)), elements=floats(10)),
    st.floats(1e6, 1e9),
)
def test_softmax_high_temperature_approaches_uniform(x, temperature):
    n = x.shape[-1]
    p = al.softmax(x, temperature=temperature)
    # logits differ by at most 20 / T <= 2e-5, so every weight is within ~2e-5 / n of 1 / n
    np.testing.assert_allclose(p, 1.0 / n, rtol=0, atol=1e-4)


@FAST
@given(
    hnp.arrays(
        np.int64,
        st.tuples(st.integers(1, 4), st.integers(2, 8)),
        elements=st.integers(-100, 100),
        unique=True,  # distinct integers: any two logits are at least 1 apart
    ),
    st.floats(1e-3, 1e-2),
)
def test_softmax_low_temperature_approaches_one_hot_argmax(x, temperature):
    p = al.softmax(x.astype(np.float64), temperature=temperature)
    one_hot = np.eye(x.shape[-1])[np.argmax(x, axis=-1)]
    # the runner-up is at least 1 / T >= 100 below the winner: its weight is below e^-100
    np.testing.assert_allclose(p, one_hot, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------


@st.composite
def self_attention_setup(draw):
    """X (n, d_model), h heads, four weight matrices and a permutation of the n tokens."""
    n = draw(st.integers(1, 6), label="n")
    h = draw(st.integers(1, 3), label="h")
    d_model = h * draw(st.integers(1, 3), label="d_head")
    X = draw(float_arrays((n, d_model), bound=3.0), label="X")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    W = [rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    perm = np.array(draw(st.permutations(range(n)), label="perm"), dtype=int)
    return X, W, h, perm


@FAST
@given(self_attention_setup())
def test_self_attention_is_permutation_equivariant(setup):
    # Without positional encoding, attention sees a set, not a sequence: shuffling the tokens
    # shuffles the outputs the same way, and the weight matrix gets its rows and columns
    # shuffled.
    X, W, h, perm = setup

    output, weights = al.scaled_dot_product_attention(X, X, X)
    output_p, weights_p = al.scaled_dot_product_attention(X[perm], X[perm], X[perm])
    np.testing.assert_allclose(output_p, output[perm], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(weights_p, weights[perm][:, perm], rtol=1e-9, atol=1e-12)

    output, weights = al.multi_head_attention(X, *W, h)
    output_p, weights_p = al.multi_head_attention(X[perm], *W, h)
    np.testing.assert_allclose(output_p, output[perm], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(weights_p, weights[:, perm][:, :, perm], rtol=1e-9, atol=1e-12)


@st.composite
def qkv_and_mask(draw, batch=()):
    """Q, K, V and a bool mask (n_q, n_k) with at least one True in every row."""
    n_q, n_k = draw(st.integers(1, 5), label="n_q"), draw(st.integers(1, 5), label="n_k")
    d_k, d_v = draw(st.integers(1, 4), label="d_k"), draw(st.integers(1, 4), label="d_v")
    Q = draw(float_arrays((*batch, n_q, d_k), bound=10.0), label="Q")
    K = draw(float_arrays((*batch, n_k, d_k), bound=10.0), label="K")
    V = draw(float_arrays((*batch, n_k, d_v), bound=10.0), label="V")
    mask = draw(hnp.arrays(np.bool_, (n_q, n_k)), label="mask")
    keep = draw(st.lists(st.integers(0, n_k - 1), min_size=n_q, max_size=n_q), label="keep")
    mask[np.arange(n_q), keep] = True
    return Q, K, V, mask


@FAST
@given(qkv_and_mask())
def test_masked_weights_are_exactly_zero_and_rows_sum_to_one(qkv_mask):
    Q, K, V, mask = qkv_mask
    output, weights = al.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.all(weights[~mask] == 0.0)
    assert_is_distribution(weights, axis=-1)
    np.testing.assert_allclose(output, weights @ V, rtol=1e-10, atol=1e-10)
    expected_output, expected_weights = ref.scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(output, expected_output, rtol=1e-9, atol=1e-9)


@FAST
@given(st.integers(1, 3).flatmap(lambda b: qkv_and_mask(batch=(b,))), st.booleans())
def test_sdpa_batch_equals_stacked_items(qkv_mask, use_mask):
    Q, K, V, mask = qkv_mask
    mask = mask if use_mask else None
    output, weights = al.scaled_dot_product_attention(Q, K, V, mask=mask)
    items = [al.scaled_dot_product_attention(Q[b], K[b], V[b], mask=mask) for b in range(len(Q))]
    np.testing.assert_allclose(output, np.stack([o for o, _ in items]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, np.stack([w for _, w in items]), rtol=1e-12, atol=1e-12)


@FAST
@given(self_attention_setup(), st.integers(1, 3), st.booleans(), st.data())
def test_mha_batch_equals_stacked_items(setup, batch, causal, data):
    X0, W, h, _ = setup
    n, d_model = X0.shape
    X = data.draw(float_arrays((batch, n, d_model), bound=3.0), label="X batch")
    mask = al.causal_mask(n) if causal else None
    output, weights = al.multi_head_attention(X, *W, h, mask=mask)
    items = [al.multi_head_attention(X[b], *W, h, mask=mask) for b in range(batch)]
    np.testing.assert_allclose(output, np.stack([o for o, _ in items]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, np.stack([w for _, w in items]), rtol=1e-12, atol=1e-12)

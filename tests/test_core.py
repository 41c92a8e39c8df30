"""Unit tests of attention_lib's public contract (the conventions in core.py's docstring).

Each function is compared with the naive loops in ``tests/reference.py`` on fixed, seeded
inputs, plus a few examples small enough to work out by hand. The second half checks that
every kind of bad input listed in the contract raises ValueError/TypeError with a message that
names the offending shapes or values.
"""

import contextlib
import math
import re

import numpy as np
import pytest
import reference as ref

import attention_lib as al

BAD_INPUT = (ValueError, TypeError)


def randn(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def make_weights(seed, d_model):
    """W_q, W_k, W_v, W_o scaled so that scores stay O(1)."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((d_model, d_model)) / math.sqrt(d_model) for _ in range(4)]


def shape(*dims):
    """Regex for a shape exactly as Python prints it, e.g. shape(8, 3) matches '(8, 3)'."""
    return re.escape(str(tuple(dims)))


def number(value):
    """Regex for a number that is not part of a longer number ('4' but not '14' or '4.5')."""
    return rf"(?<![\d.]){re.escape(str(value))}(?![\d.])"


@contextlib.contextmanager
def raises_naming(*patterns):
    """Expect ValueError/TypeError whose message matches every regex in ``patterns``."""
    with pytest.raises(BAD_INPUT, match=patterns[0]) as info:
        yield info
    message = str(info.value)
    for pattern in patterns[1:]:
        assert re.search(pattern, message), f"{message!r} does not mention {pattern!r}"


# --------------------------------------------------------------------------------------------
# softmax
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "dims", "axis"),
    [(0, (5,), -1), (1, (3, 4), -1), (2, (3, 4), 0), (3, (2, 3, 4), 1), (4, (2, 3, 4), -1)],
)
@pytest.mark.parametrize("temperature", [1.0, 0.5, 3.0])
def test_softmax_matches_reference(seed, dims, axis, temperature):
    x = 3 * randn(seed, *dims)
    p = al.softmax(x, axis=axis, temperature=temperature)
    assert p.shape == x.shape
    np.testing.assert_allclose(p, ref.softmax(x, axis, temperature), rtol=1e-12, atol=1e-15)


def test_softmax_hand_example():
    # e^0 : e^(ln 3) = 1 : 3
    p = al.softmax(np.array([0.0, math.log(3.0)]))
    np.testing.assert_allclose(p, [0.25, 0.75], rtol=1e-14)


def test_softmax_temperature_equals_dividing_logits():
    x = randn(5, 4, 6)
    for T in (0.1, 0.7, 2.0, 50.0):
        np.testing.assert_allclose(al.softmax(x, temperature=T), al.softmax(x / T), rtol=1e-12)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ([1e300, -1e300, 0.0], [1.0, 0.0, 0.0]),
        ([-1e300, 1e300], [0.0, 1.0]),
        ([1e300, 1e300], [0.5, 0.5]),
        ([-1e300, -1e300, -1e300, -1e300], [0.25] * 4),
        ([1e308, -1e308, 0.0], [1.0, 0.0, 0.0]),  # max - min overflows to -inf here
        ([-1.5e308, 0.0, 1.5e308], [0.0, 0.0, 1.0]),
    ],
)
@pytest.mark.parametrize("temperature", [1.0, 0.5, 4.0])
def test_softmax_extreme_finite_logits(row, expected, temperature):
    p = al.softmax(np.array(row), temperature=temperature)
    assert np.all(np.isfinite(p))
    assert p.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(p, expected, atol=1e-15)


def test_softmax_extreme_float32_logits():
    x = np.array([3e38, -3e38, 0.0], dtype=np.float32)
    p = al.softmax(x)
    assert p.dtype == np.float32
    np.testing.assert_array_equal(p, np.array([1.0, 0.0, 0.0], dtype=np.float32))


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_softmax_long_float16_row_still_sums_to_one(temperature):
    # 70,000 equal scores: a float16 sum of the exponentials would be inf (max 65504),
    # and every weight would silently come out 0.
    x = np.zeros(70_000, dtype=np.float16)
    p = al.softmax(x, temperature=temperature)
    assert p.dtype == np.float16
    assert np.all(p > 0)
    assert float(p.astype(np.float64).sum()) == pytest.approx(1.0, rel=1e-2)


# --------------------------------------------------------------------------------------------
# attention_scores
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "q_shape", "k_shape"),
    [
        (10, (4, 3), (4, 3)),
        (11, (2, 5), (6, 5)),  # n_q != n_k
        (12, (2, 3, 4), (2, 5, 4)),  # one batch dim
        (13, (2, 3, 1, 4), (2, 3, 6, 4)),  # two batch dims, a single query
    ],
)
def test_attention_scores_matches_reference(seed, q_shape, k_shape):
    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal(q_shape), rng.standard_normal(k_shape)
    scores = al.attention_scores(Q, K)
    assert scores.shape == q_shape[:-1] + (k_shape[-2],)
    np.testing.assert_allclose(scores, ref.attention_scores(Q, K), rtol=1e-12, atol=1e-13)


def test_attention_scores_hand_example():
    Q = np.array([[1.0, 2.0], [0.0, 1.0]])
    K = np.array([[3.0, 0.0], [1.0, 1.0], [0.0, -2.0]])
    expected = [[3.0, 3.0, -4.0], [0.0, 1.0, -2.0]]
    np.testing.assert_array_equal(al.attention_scores(Q, K), expected)


# --------------------------------------------------------------------------------------------
# scaled_dot_product_attention
# --------------------------------------------------------------------------------------------

# d_k = 4, so the default scale is 1/2. Row 0 gives logits [ln 3, 0] -> weights [3/4, 1/4];
# row 1 gives logits [0, 0] -> uniform; row 2 would favour key 0 hugely, but the mask forbids it.
HAND_Q = np.array([[2 * math.log(3.0), 0, 0, 0], [0, 0, 0, 0], [100.0, 0, 0, 0]])
HAND_K = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
HAND_V = np.array([[4.0, 0.0], [0.0, 8.0]])
HAND_MASK = np.array([[True, True], [True, True], [False, True]])


def test_sdpa_hand_example():
    output, weights = al.scaled_dot_product_attention(HAND_Q, HAND_K, HAND_V, mask=HAND_MASK)
    np.testing.assert_allclose(weights, [[0.75, 0.25], [0.5, 0.5], [0.0, 1.0]], rtol=1e-14)
    # output = weights @ V: row 0 is 3/4 * [4, 0] + 1/4 * [0, 8] = [3, 2]
    np.testing.assert_allclose(output, [[3.0, 2.0], [2.0, 4.0], [0.0, 8.0]], rtol=1e-14)


def test_sdpa_hand_example_explicit_scale_and_temperature():
    Q = HAND_Q[:2] / 2  # logits [ln 3, 0] and [0, 0] once scale=1
    output, weights = al.scaled_dot_product_attention(Q, HAND_K, HAND_V, scale=1.0)
    np.testing.assert_allclose(weights, [[0.75, 0.25], [0.5, 0.5]], rtol=1e-14)
    # T = 2 halves the logits: [ln 3 / 2, 0] -> weights proportional to [sqrt 3, 1]
    _, weights = al.scaled_dot_product_attention(Q, HAND_K, HAND_V, scale=1.0, temperature=2.0)
    root3 = math.sqrt(3.0)
    np.testing.assert_allclose(weights[0], [root3 / (root3 + 1), 1 / (root3 + 1)], rtol=1e-14)


SDPA_CASES = [
    # seed, Q shape, K shape, V shape, mask shape (None = no mask)
    (20, (4, 3), (4, 3), (4, 3), None),
    (21, (2, 5), (6, 5), (6, 3), None),  # n_q != n_k, d_v != d_k
    (22, (2, 4, 3), (2, 6, 3), (2, 6, 5), None),
    (23, (2, 4, 3), (2, 6, 3), (2, 6, 5), (4, 6)),  # one mask for the whole batch
    (24, (2, 3, 4, 3), (2, 3, 4, 3), (2, 3, 4, 2), (2, 1, 4, 4)),  # mask per batch item
    (25, (3, 5, 2), (3, 5, 2), (3, 5, 2), (1, 5)),  # key-padding style mask
]


def random_mask(rng, mask_shape):
    """Random bool mask with at least one True in every row (so no row is empty)."""
    mask = rng.random(mask_shape) < 0.5
    mask[..., rng.integers(mask_shape[-1])] = True
    return mask


@pytest.mark.parametrize(("seed", "q_shape", "k_shape", "v_shape", "mask_shape"), SDPA_CASES)
@pytest.mark.parametrize(("scale", "temperature"), [(None, 1.0), (0.3, 1.0), (None, 0.25)])
def test_sdpa_matches_reference(seed, q_shape, k_shape, v_shape, mask_shape, scale, temperature):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal(s) for s in (q_shape, k_shape, v_shape))
    mask = None if mask_shape is None else random_mask(rng, mask_shape)
    output, weights = al.scaled_dot_product_attention(
        Q, K, V, mask=mask, scale=scale, temperature=temperature
    )
    expected_output, expected_weights = ref.scaled_dot_product_attention(
        Q, K, V, mask=mask, scale=scale, temperature=temperature
    )
    assert output.shape == q_shape[:-1] + v_shape[-1:]
    assert weights.shape == q_shape[:-1] + k_shape[-2:-1]
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(output, expected_output, rtol=1e-12, atol=1e-13)


def test_sdpa_masked_weights_are_exactly_zero():
    rng = np.random.default_rng(30)
    Q, K, V = randn(31, 2, 5, 4), randn(32, 2, 7, 4), randn(33, 2, 7, 3)
    mask = random_mask(rng, (2, 5, 7))
    assert not mask.all()  # the test means nothing unless something is masked
    _, weights = al.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.all(weights[~mask] == 0.0)
    assert np.all(weights[mask] > 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-14)


def test_sdpa_all_true_mask_is_no_mask():
    Q, K, V = randn(34, 3, 4), randn(35, 5, 4), randn(36, 5, 2)
    with_mask = al.scaled_dot_product_attention(Q, K, V, mask=np.ones((3, 5), dtype=bool))
    without = al.scaled_dot_product_attention(Q, K, V)
    for a, b in zip(with_mask, without, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-15, atol=0)


def test_sdpa_causal_mask_hides_the_future():
    X = randn(37, 6, 4)
    output, weights = al.scaled_dot_product_attention(X, X, X, mask=al.causal_mask(6))
    assert np.all(np.triu(weights, k=1) == 0.0)
    # the first token can only see itself, so its output is its own value vector
    np.testing.assert_allclose(weights[0, 0], 1.0)
    np.testing.assert_allclose(output[0], X[0], rtol=1e-15)


@pytest.mark.parametrize("scale", [None, 1.0])
def test_sdpa_extreme_finite_logits(scale):
    # with scale = 1 the logits are exactly [1e300, -1e300, 0]
    Q = np.array([[1e150, 0.0]])
    K = np.array([[1e150, 0.0], [-1e150, 0.0], [0.0, 0.0]])
    V = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    output, weights = al.scaled_dot_product_attention(Q, K, V, scale=scale)
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(output))
    np.testing.assert_allclose(weights, [[1.0, 0.0, 0.0]], atol=1e-15)
    np.testing.assert_allclose(output, [[1.0, 2.0]], atol=1e-14)


def test_sdpa_mask_beats_extreme_logits():
    # The only allowed key has logit -1e300; the forbidden one has logit 0. Filling masked
    # logits with a "big negative number" such as -1e9 instead of excluding them would hand all
    # the weight to the forbidden key.
    Q = np.array([[1e150, 0.0]])
    K = np.array([[-1e150, 0.0], [0.0, 0.0]])
    V = np.array([[1.0, 2.0], [3.0, 4.0]])
    output, weights = al.scaled_dot_product_attention(
        Q, K, V, mask=np.array([[True, False]]), scale=1.0
    )
    np.testing.assert_array_equal(weights, [[1.0, 0.0]])
    np.testing.assert_allclose(output, [[1.0, 2.0]], rtol=1e-15)


def test_functions_do_not_modify_their_inputs():
    X, W, mask = randn(38, 2, 4, 6), make_weights(39, 6), al.causal_mask(4)
    originals = [A.copy() for A in (X, *W, mask)]
    al.softmax(X)
    al.attention_scores(X, X)
    al.scaled_dot_product_attention(X, X, X, mask=mask)
    al.merge_heads(al.split_heads(X, 2))
    al.multi_head_attention(X, *W, 3, mask=mask)
    for before, after in zip(originals, (X, *W, mask), strict=True):
        np.testing.assert_array_equal(after, before)


# --------------------------------------------------------------------------------------------
# causal_mask, split_heads, merge_heads
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_causal_mask_matches_reference(n):
    mask = al.causal_mask(n)
    assert mask.dtype == np.bool_
    assert mask.shape == (n, n)
    np.testing.assert_array_equal(mask, ref.causal_mask(n))


def test_causal_mask_small_by_hand():
    expected = [[True, False, False], [True, True, False], [True, True, True]]
    np.testing.assert_array_equal(al.causal_mask(3), expected)


@pytest.mark.parametrize(
    ("dims", "h"), [((5, 6), 1), ((5, 6), 2), ((5, 6), 3), ((2, 4, 8), 4), ((2, 3, 4, 6), 2)]
)
def test_split_heads_matches_reference(dims, h):
    X = randn(40, *dims)
    heads = al.split_heads(X, h)
    *batch, n, d_model = dims
    d = d_model // h
    assert heads.shape == (*batch, h, n, d)
    np.testing.assert_array_equal(heads, ref.split_heads(X, h))
    for i in range(h):  # head i is exactly columns i*d:(i+1)*d
        np.testing.assert_array_equal(heads[..., i, :, :], X[..., :, i * d : (i + 1) * d])


@pytest.mark.parametrize("dims", [(1, 5, 3), (3, 5, 2), (2, 4, 3, 2), (2, 3, 2, 4, 5)])
def test_merge_heads_matches_reference(dims):
    heads = randn(41, *dims)
    merged = al.merge_heads(heads)
    *batch, h, n, d = dims
    assert merged.shape == (*batch, n, h * d)
    np.testing.assert_array_equal(merged, ref.merge_heads(heads))


@pytest.mark.parametrize(("dims", "h"), [((5, 6), 3), ((2, 4, 8), 4), ((2, 3, 4, 6), 6)])
def test_split_merge_roundtrip(dims, h):
    X = randn(42, *dims)
    np.testing.assert_array_equal(al.merge_heads(al.split_heads(X, h)), X)
    heads = al.split_heads(X, h)
    np.testing.assert_array_equal(al.split_heads(al.merge_heads(heads), h), heads)


# --------------------------------------------------------------------------------------------
# multi_head_attention
# --------------------------------------------------------------------------------------------

MHA_CASES = [
    # seed, X shape, h, mask kind
    (50, (5, 8), 1, None),
    (51, (5, 8), 2, None),
    (52, (6, 8), 4, "causal"),
    (53, (3, 5, 6), 3, None),  # batch dim
    (54, (3, 5, 6), 2, "causal"),  # batch dim and a causal mask
    (55, (2, 3, 4, 8), 4, "causal"),  # two batch dims
    (56, (3, 5, 8), 2, "padding"),  # (batch, 1, n): some keys hidden per batch item
]

# The mask of multi_head_attention is broadcastable to (..., n, n), the batch shape of X, and
# every head uses the same one, as the docstring of multi_head_attention says.


def mha_mask(kind, x_shape, rng):
    *batch, n, _ = x_shape
    if kind == "causal":
        return al.causal_mask(n)
    if kind == "padding":
        keep = rng.random((*batch, 1, n)) < 0.6
        keep[..., 0] = True
        return keep
    return None


@pytest.mark.parametrize(("seed", "x_shape", "h", "mask_kind"), MHA_CASES)
def test_mha_matches_loop_over_heads(seed, x_shape, h, mask_kind):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(x_shape)
    W = make_weights(seed + 1, x_shape[-1])
    mask = mha_mask(mask_kind, x_shape, rng)
    output, weights = al.multi_head_attention(X, *W, h, mask=mask)
    expected_output, expected_weights = ref.multi_head_attention(X, *W, h, mask=mask)
    *batch, n, _ = x_shape
    assert output.shape == x_shape
    assert weights.shape == (*batch, h, n, n)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(output, expected_output, rtol=1e-12, atol=1e-12)
    if mask is not None:
        per_head = np.broadcast_to(mask, (*batch, n, n))[..., None, :, :]  # (..., 1, n, n)
        assert np.all(weights[~np.broadcast_to(per_head, weights.shape)] == 0.0)


def test_mha_with_one_head_is_sdpa_of_projections():
    X, W = randn(57, 4, 6), make_weights(58, 6)
    W_q, W_k, W_v, W_o = W
    output, weights = al.multi_head_attention(X, *W, 1)
    head_out, head_weights = al.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
    np.testing.assert_allclose(weights[0], head_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(output, head_out @ W_o, rtol=1e-12, atol=1e-13)


# --------------------------------------------------------------------------------------------
# positional_encoding
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d_model"), [(1, 2), (4, 4), (10, 16), (50, 8), (3, 128)])
def test_positional_encoding_matches_reference(n, d_model):
    pe = al.positional_encoding(n, d_model)
    assert pe.shape == (n, d_model)
    assert pe.dtype == np.float64
    np.testing.assert_allclose(pe, ref.positional_encoding(n, d_model), rtol=1e-12, atol=1e-12)


def test_positional_encoding_by_hand():
    pe = al.positional_encoding(2, 4)
    # position 0: sin 0 = 0 and cos 0 = 1 in every pair of columns
    np.testing.assert_allclose(pe[0], [0.0, 1.0, 0.0, 1.0], atol=1e-15)
    # position 1, d_model 4: frequencies 1/10000^0 = 1 and 1/10000^(2/4) = 1/100
    expected = [math.sin(1.0), math.cos(1.0), math.sin(0.01), math.cos(0.01)]
    np.testing.assert_allclose(pe[1], expected, rtol=1e-14)


def test_positional_encoding_odd_d_model_is_correct_or_refused():
    # The contract does not say whether odd d_model is allowed. Either answer is fine, but a
    # silently wrong one is not.
    try:
        pe = al.positional_encoding(6, 5)
    except BAD_INPUT:
        return
    np.testing.assert_allclose(pe, ref.positional_encoding(6, 5), rtol=1e-12, atol=1e-12)


def test_positional_encoding_accepts_numpy_integers():
    pe = al.positional_encoding(np.int64(3), np.int64(4))
    np.testing.assert_allclose(pe, ref.positional_encoding(3, 4), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(al.causal_mask(np.int64(3)), ref.causal_mask(3))


def test_positional_encoding_breaks_permutation_equivariance():
    # Self-attention alone cannot tell word order (see test_properties.py). Adding the
    # positional encoding is what changes that, so a permuted input no longer gives permuted
    # outputs.
    X, W = randn(60, 5, 4), make_weights(61, 4)
    perm = np.array([4, 2, 0, 1, 3])
    pe = al.positional_encoding(5, 4)
    output, _ = al.multi_head_attention(X + pe, *W, 2)
    permuted, _ = al.multi_head_attention(X[perm] + pe, *W, 2)
    assert not np.allclose(permuted, output[perm], atol=1e-6)


# --------------------------------------------------------------------------------------------
# dtypes: float32 stays float32, integers become float64
# --------------------------------------------------------------------------------------------


def call_every_function(dtype):
    """Call each array-valued function on inputs of ``dtype``; yield (name, result array)."""
    X = (np.arange(24).reshape(2, 3, 4) % 5 - 2).astype(dtype)  # small ints, exact in any dtype
    W = (np.eye(4) + np.eye(4, k=1)).astype(dtype)
    yield "softmax", al.softmax(X)
    yield "attention_scores", al.attention_scores(X, X)
    output, weights = al.scaled_dot_product_attention(X, X, X)
    yield "sdpa output", output
    yield "sdpa weights", weights
    yield "split_heads", al.split_heads(X, 2)
    yield "merge_heads", al.merge_heads(X[None])
    output, weights = al.multi_head_attention(X, W, W, W, W, 2)
    yield "mha output", output
    yield "mha weights", weights


@pytest.mark.parametrize(
    ("in_dtype", "out_dtype"),
    [
        (np.float32, np.float32),
        (np.float64, np.float64),
        (np.int64, np.float64),
        (np.int32, np.float64),
    ],
)
def test_dtypes(in_dtype, out_dtype):
    for name, result in call_every_function(in_dtype):
        assert result.dtype == out_dtype, f"{name} gave {result.dtype} for {np.dtype(in_dtype)}"


def test_float32_results_are_still_right():
    Q, K, V = randn(70, 2, 4, 3), randn(71, 2, 5, 3), randn(72, 2, 5, 2)
    out32, w32 = al.scaled_dot_product_attention(*(a.astype(np.float32) for a in (Q, K, V)))
    expected_out, expected_w = ref.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(w32, expected_w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out32, expected_out, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------------
# Bad input: each kind the contract lists raises, and the message says what is wrong.
# --------------------------------------------------------------------------------------------

GOOD_Q, GOOD_K, GOOD_V = randn(80, 3, 4), randn(81, 5, 4), randn(82, 5, 2)  # n_q=3, n_k=5
GOOD_X, GOOD_W = randn(83, 6, 4), make_weights(84, 4)  # n=6, d_model=4


def sdpa_with(Q=GOOD_Q, K=GOOD_K, V=GOOD_V, **kwargs):
    return al.scaled_dot_product_attention(Q, K, V, **kwargs)


def mha_with(X=GOOD_X, W_q=GOOD_W[0], W_k=GOOD_W[1], W_v=GOOD_W[2], W_o=GOOD_W[3], h=2, **kwargs):
    return al.multi_head_attention(X, W_q, W_k, W_v, W_o, h, **kwargs)


def test_good_inputs_used_below_are_accepted():
    # Guards the error tests: each of them changes exactly one thing about these calls.
    assert sdpa_with()[0].shape == (3, 2)
    assert mha_with()[0].shape == (6, 4)
    assert mha_with(mask=np.tril(np.ones((6, 6), dtype=bool)))[0].shape == (6, 4)
    assert al.attention_scores(GOOD_Q, GOOD_K).shape == (3, 5)
    assert al.split_heads(GOOD_X, 2).shape == (2, 6, 2)


@pytest.mark.parametrize(
    ("call", "bad_shape"),
    [
        (lambda: al.attention_scores(np.ones(4), GOOD_K), (4,)),
        (lambda: al.attention_scores(GOOD_Q, np.ones(4)), (4,)),
        (lambda: sdpa_with(Q=np.ones(4)), (4,)),
        (lambda: sdpa_with(K=np.ones(4)), (4,)),
        (lambda: sdpa_with(V=np.ones(5)), (5,)),
        (lambda: mha_with(X=np.ones(4)), (4,)),
        (lambda: al.split_heads(np.ones(6), 2), (6,)),
        (lambda: al.merge_heads(np.ones((5, 6))), (5, 6)),
    ],
    ids=["scores-Q", "scores-K", "sdpa-Q", "sdpa-K", "sdpa-V", "mha-X", "split", "merge"],
)
def test_wrong_rank_raises(call, bad_shape):
    with raises_naming(shape(*bad_shape)):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda Q, K: al.attention_scores(Q, K),
        lambda Q, K: al.scaled_dot_product_attention(Q, K, np.ones((8, 2))),
    ],
    ids=["attention_scores", "sdpa"],
)
def test_mismatched_d_k_raises(call):
    with raises_naming(shape(8, 4), shape(8, 3)):
        call(np.ones((8, 4)), np.ones((8, 3)))


def test_mismatched_n_k_between_K_and_V_raises():
    with raises_naming(shape(6, 4), shape(5, 2)):
        sdpa_with(K=np.ones((6, 4)), V=np.ones((5, 2)))


@pytest.mark.parametrize(
    ("h", "patterns"),
    [
        (3, [number(3), number(4)]),  # the message names both h and d_model = 4
        (5, [number(5), number(4)]),
        (0, [number(0)]),  # not a divisor in any sense; naming h is enough
        (-2, [number(-2)]),  # -2 "divides" 4 arithmetically, but is no number of heads
    ],
)
def test_h_not_dividing_d_model_raises(h, patterns):
    with raises_naming(*patterns):
        al.split_heads(GOOD_X, h)
    with raises_naming(*patterns):
        mha_with(h=h)


# Calls that each take one array from ``bad``, a function that spoils a good input.
ONE_BAD_ARRAY = {
    "softmax": lambda bad: al.softmax(bad(GOOD_Q)),
    "scores-Q": lambda bad: al.attention_scores(bad(GOOD_Q), GOOD_K),
    "scores-K": lambda bad: al.attention_scores(GOOD_Q, bad(GOOD_K)),
    "sdpa-Q": lambda bad: sdpa_with(Q=bad(GOOD_Q)),
    "sdpa-K": lambda bad: sdpa_with(K=bad(GOOD_K)),
    "sdpa-V": lambda bad: sdpa_with(V=bad(GOOD_V)),
    "mha-X": lambda bad: mha_with(X=bad(GOOD_X)),
    "mha-W_q": lambda bad: mha_with(W_q=bad(GOOD_W[0])),
    "mha-W_k": lambda bad: mha_with(W_k=bad(GOOD_W[1])),
    "mha-W_v": lambda bad: mha_with(W_v=bad(GOOD_W[2])),
    "mha-W_o": lambda bad: mha_with(W_o=bad(GOOD_W[3])),
}


@pytest.mark.parametrize("where", list(ONE_BAD_ARRAY))
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_in_any_input_raises(where, value):
    def poison_one_entry(A):
        A = A.copy()
        A[(-1,) * A.ndim] = value
        return A

    with raises_naming(r"(?i)nan|inf|finite"):
        ONE_BAD_ARRAY[where](poison_one_entry)


def sdpa_mask_with_empty_row():
    mask = np.ones((3, 5), dtype=bool)
    mask[2] = False  # query 2 may look at nothing
    return mask


def batched_mask_with_one_empty_row():
    mask = np.ones((2, 3, 5), dtype=bool)
    mask[1, 2] = False  # only batch item 1, query 2
    return mask


def mha_mask_with_empty_row():
    mask = np.tril(np.ones((6, 6), dtype=bool))
    mask[3] = False
    return mask


@pytest.mark.parametrize(
    ("call", "mask"),
    [
        (sdpa_with, sdpa_mask_with_empty_row()),
        (sdpa_with, np.zeros((1, 5), dtype=bool)),  # broadcasts to every row
        (
            lambda mask: sdpa_with(
                Q=np.ones((2, 3, 4)), K=np.ones((2, 5, 4)), V=np.ones((2, 5, 2)), mask=mask
            ),
            batched_mask_with_one_empty_row(),
        ),
        (mha_with, mha_mask_with_empty_row()),
    ],
    ids=["one-row", "every-row", "one-batch-item", "mha"],
)
def test_mask_row_allowing_no_key_raises(call, mask):
    with raises_naming(r"(?i)mask"):
        call(mask=mask)


@pytest.mark.parametrize(
    "make_bad",
    [lambda A: np.full(A.shape, "a"), lambda A: A.astype(object)],
    ids=["strings", "object"],
)
@pytest.mark.parametrize("where", list(ONE_BAD_ARRAY))
def test_non_numeric_array_raises(make_bad, where):
    with raises_naming(r"(?i)numeric|number|dtype"):
        ONE_BAD_ARRAY[where](make_bad)


@pytest.mark.parametrize("temperature", [0, 0.0, -1.0, -np.inf, np.nan])
@pytest.mark.parametrize(
    "call",
    [lambda T: al.softmax(GOOD_Q, temperature=T), lambda T: sdpa_with(temperature=T)],
    ids=["softmax", "sdpa"],
)
def test_non_positive_temperature_raises(call, temperature):
    with raises_naming(r"(?i)temperature"):
        call(temperature)


@pytest.mark.parametrize(
    ("dtype", "fill"),
    [(np.int64, 1), (np.float64, 1.0), (np.float64, 0.0), (np.float32, 1.0)],
    ids=["int", "float-ones", "float-zeros", "float32"],
)
def test_non_bool_mask_raises(dtype, fill):
    # Float masks mean "add to the logits" in PyTorch; silently reading them as bool would
    # teach the wrong convention, so they are refused.
    with raises_naming(r"(?i)bool"):
        sdpa_with(mask=np.full((3, 5), fill, dtype=dtype))
    with raises_naming(r"(?i)bool"):
        mha_with(mask=np.full((6, 6), fill, dtype=dtype))


@pytest.mark.parametrize(
    ("call", "mask_shape"),
    [
        (sdpa_with, (3, 3)),  # scores are (3, 5)
        (sdpa_with, (3,)),
        (
            lambda mask: sdpa_with(
                Q=np.ones((3, 3, 4)), K=np.ones((3, 5, 4)), V=np.ones((3, 5, 2)), mask=mask
            ),
            (2, 3, 5),  # scores are (3, 3, 5)
        ),
        (mha_with, (4, 4)),  # weights are (2, 6, 6)
    ],
    ids=["sdpa-2d", "sdpa-1d", "sdpa-batch", "mha"],
)
def test_mask_not_broadcastable_raises(call, mask_shape):
    with raises_naming(shape(*mask_shape)):
        call(mask=np.ones(mask_shape, dtype=bool))


@pytest.mark.parametrize("name", ["W_q", "W_k", "W_v", "W_o"])
@pytest.mark.parametrize("bad_shape", [(4, 3), (3, 4), (4,), (4, 4, 1)])
def test_wrong_weight_shape_raises(name, bad_shape):
    with raises_naming(shape(*bad_shape)):
        mha_with(**{name: np.ones(bad_shape)})


def test_X_not_matching_weights_raises():
    with raises_naming(shape(6, 8)):
        mha_with(X=np.ones((6, 8)))  # d_model 8, but the weights are (4, 4)


@pytest.mark.parametrize("value", [0, -1, 2.5, "3", None])
def test_causal_mask_needs_a_positive_int(value):
    with raises_naming(number(value)):
        al.causal_mask(value)


@pytest.mark.parametrize(
    ("n", "d_model", "culprit"),
    [
        (0, 4, "n"),
        (-3, 4, "n"),
        (2.5, 4, "n"),
        ("3", 4, "n"),
        (None, 4, "n"),
        (3, 0, "d_model"),
        (3, -4, "d_model"),
        (3, 4.5, "d_model"),
        (3, "4", "d_model"),
    ],
)
def test_positional_encoding_needs_positive_ints(n, d_model, culprit):
    value = n if culprit == "n" else d_model
    with raises_naming(rf"\b{culprit}\b", number(value)):
        al.positional_encoding(n, d_model)

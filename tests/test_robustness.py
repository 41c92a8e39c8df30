"""Inputs at the edges: each must give the right answer or an error that names the problem."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import attention_lib as al
from attention_lib.plotting import bar_row, heatmap
from attention_lib.widgets import frame_slider


def test_huge_logits_with_huge_temperature_are_divided_before_shifting():
    # Shifting first overflowed to -inf and returned [1, 0].
    got = al.softmax(np.array([1.7e308, -1.7e308]), temperature=1e308)
    assert np.allclose(got, al.softmax(np.array([1.7, -1.7])))


def test_float32_accepts_temperatures_beyond_its_range():
    x = np.array([3e38, -3e38], dtype=np.float32)
    assert np.allclose(al.softmax(x, temperature=1e39), al.softmax(np.array([0.3, -0.3])))
    assert np.array_equal(al.softmax(x, temperature=1e-40), np.array([1, 0], dtype=np.float32))
    assert al.softmax(x, temperature=1e39).dtype == np.float32


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: al.softmax(al.causal_mask(3)), "boolean array.*mask="),
        (lambda: al.softmax(np.ma.array([1.0, 2.0], mask=[0, 1])), "masked array"),
        (lambda: al.attention_scores(np.ones((3, 4)), np.ones((0, 4))), r"K is empty.*\(0, 4\)"),
        (lambda: al.softmax(np.ones((2, 3)), axis=1.0), "axis must be a whole number"),
        (lambda: al.softmax([1.0, 2.0], temperature=1 + 0j), "temperature must be a positive"),
        (lambda: al.softmax([1.0, 2.0], temperature=True), "temperature must be a positive"),
        (lambda: al.scaled_dot_product_attention(*[np.ones((2, 2))] * 3, scale="2"), "scale"),
    ],
)
def test_unusual_inputs_get_a_type_or_value_error_that_names_them(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_numbers_of_any_real_kind_are_accepted():
    x = np.array([1.0, 2.0, 3.0])
    assert np.allclose(al.softmax(x, temperature=Fraction(1, 2)), al.softmax(x, temperature=0.5))
    Q = np.eye(2)
    out, _ = al.scaled_dot_product_attention(Q, Q, Q, scale=Decimal("0.5"))
    assert np.allclose(out, al.scaled_dot_product_attention(Q, Q, Q, scale=0.5)[0])


def test_a_ragged_mask_is_named():
    Q = np.ones((2, 2))
    with pytest.raises(ValueError, match="mask must be a rectangular array"):
        al.scaled_dot_product_attention(Q, Q, Q, mask=[[True], [True, False]])


@pytest.mark.parametrize(
    ("call", "what"),
    [
        (
            lambda: al.multi_head_attention(
                np.full((3, 4), 1e200), 1e200 * np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2
            ),
            r"X @ W_q overflowed",
        ),
        (
            lambda: al.scaled_dot_product_attention(
                np.zeros((1, 1)), np.zeros((11, 1)), np.full((11, 1), np.finfo(float).max)
            ),
            r"weights @ V overflowed",
        ),
    ],
)
def test_an_overflowing_product_is_an_error_not_infinity(call, what):
    with pytest.raises(ValueError, match=what):
        call()


def test_weights_follow_the_batch_of_the_output():
    Q = K = np.ones((3, 2))
    V = np.ones((4, 3, 5))  # a batch of 4 value sets
    out, weights = al.scaled_dot_product_attention(Q, K, V)
    assert out.shape == (4, 3, 5)
    assert weights.shape == (4, 3, 3)


def test_plot_helpers_name_bad_input():
    w = np.full((2, 2), 0.5)
    with pytest.raises(TypeError, match="rows must be a list of token labels"):
        heatmap(w, None, title="x")
    with pytest.raises(ValueError, match=r"outside ylim=\(0.0, 1.0\)"):
        bar_row(np.array([0.5, 1.5]), ["a", "b"], title="x")
    with pytest.raises(ValueError, match="is empty"):
        bar_row(np.array([]), [], title="x")
    with pytest.raises(TypeError, match=r"must return \(fig, alt_text\)"):
        frame_slider(lambda v: None, [1], description="T")

"""Chapter 8: padding masks and padded batches, the short sentence, figures, checkers."""

import pathlib

import matplotlib.pyplot as plt
import numpy as np
import pytest
from chapter_text import main_and_folded, prose_lines, shown

import attention_lib as al
from attention_lib import toy
from attention_lib.checks import batch_mask as batch_mask_module
from attention_lib.checks import (
    check_batch_mask,
    check_causal_count,
    check_causal_mask,
    check_masked_softmax,
)
from attention_lib.checks.base import grading_seed
from attention_lib.plotting import masked_heatmaps, masked_row
from attention_lib.plotting.masking import MASKED

SHORT = toy.masking


def masked_softmax(scores, mask):
    """The test's own reference: softmax over the keys where ``mask`` is True, else 0."""
    logits = np.where(mask, scores, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


IT, CAKE = toy.token_index("it"), toy.token_index("cake")

# --- padding_mask ------------------------------------------------------------------------


def naive_padding_mask(lengths, n):
    mask = np.zeros((len(lengths), 1, n), dtype=bool)
    for b, length in enumerate(lengths):
        for j in range(n):
            mask[b, 0, j] = j < length
    return mask


@pytest.mark.parametrize(
    ("lengths", "n"), [([8, 5], 8), ([1], 1), ([3, 1, 4, 4], 4), (np.array([2, 7]), 9)]
)
def test_padding_mask_matches_a_loop(lengths, n):
    mask = al.padding_mask(lengths, n)
    assert mask.dtype == np.bool_ and mask.shape == (len(lengths), 1, n)
    np.testing.assert_array_equal(mask, naive_padding_mask(lengths, n))


def test_padded_batch_equals_each_sentence_alone():
    rng = np.random.default_rng(0)
    lengths, n, d = [6, 2, 4], 6, 3
    sentences = [rng.normal(size=(length, d)) for length in lengths]
    batch, got_lengths = al.pad_batch(sentences, n)  # (3, 6, 3)
    assert list(got_lengths) == lengths
    out, weights = al.scaled_dot_product_attention(
        batch, batch, batch, mask=al.padding_mask(lengths, n)
    )
    leaky, _ = al.scaled_dot_product_attention(batch, batch, batch)
    for b, X in enumerate(sentences):
        alone_out, alone_w = al.scaled_dot_product_attention(X, X, X)
        length = lengths[b]
        np.testing.assert_allclose(out[b, :length], alone_out, rtol=0, atol=1e-12)
        np.testing.assert_allclose(weights[b, :length, :length], alone_w, rtol=0, atol=1e-12)
        assert np.all(weights[b, :, length:] == 0.0)
        if length < n:  # without the mask, padding changes the real outputs
            assert np.abs(leaky[b, :length] - alone_out).max() > 1e-3


def test_padding_mask_broadcasts_over_heads_and_combines_with_causal():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 5, 4))
    W = rng.normal(size=(4, 4, 4))
    mask = al.padding_mask([5, 3], 5)  # (b, 1, n)
    out, weights = al.multi_head_attention(X, *W, h=2, mask=mask)  # adds the head axis
    assert weights.shape == (2, 2, 5, 5) and np.all(weights[1, :, :, 3:] == 0.0)
    alone, _ = al.multi_head_attention(X[1, :3], *W, h=2)
    np.testing.assert_allclose(out[1, :3], alone, rtol=0, atol=1e-12)
    Qh, Kh, Vh = (al.split_heads(X @ W_i, 2) for W_i in W[:3])  # (b, h, n, d_k) each
    _, split_w = al.scaled_dot_product_attention(Qh, Kh, Vh, mask=mask[:, None])
    np.testing.assert_allclose(split_w, weights, rtol=0, atol=1e-15)  # (b, 1, 1, n) here
    both = al.causal_mask(5) & al.padding_mask([5, 3], 5)  # (2, 5, 5)
    assert both.shape == (2, 5, 5) and both.any(axis=-1).all()  # no empty row
    np.testing.assert_array_equal(both[1, 4], [True, True, True, False, False])


@pytest.mark.parametrize(
    ("lengths", "n", "error", "match"),
    [
        ([5, 0], 8, ValueError, r"lengths\[1\] = 0, but every sentence needs at least 1"),
        ([5, -2], 8, ValueError, r"lengths\[1\] = -2"),
        ([5, 9], 8, ValueError, r"lengths\[1\] = 9 is longer than the padded length n = 8"),
        ([5.0, 3.0], 8, TypeError, "lengths must be whole numbers.*float64"),
        ([True, True], 8, TypeError, "lengths must be whole numbers.*bool"),
        (["5"], 8, TypeError, "lengths must be whole numbers"),
        (5, 8, TypeError, r"one length per sentence, got the single number 5.*\[5\]"),
        ([], 8, TypeError, "lengths must be whole numbers"),
        (np.array([], dtype=int), 8, ValueError, "non-empty 1-D list"),
        ([[5, 3]], 8, ValueError, r"non-empty 1-D list.*\(1, 2\)"),
        ([[5, 3], [1]], 8, ValueError, "flat list of whole numbers"),
        ([5], 0, ValueError, "n must be at least 1"),
        ([5], 8.0, TypeError, "n must be a positive whole number"),
    ],
)
def test_padding_mask_rejects_bad_input(lengths, n, error, match):
    with pytest.raises(error, match=match):
        al.padding_mask(lengths, n)


# --- pad_batch ---------------------------------------------------------------------------


def test_pad_batch_pads_with_zero_rows_and_keeps_the_dtype():
    a = np.ones((3, 2), dtype=np.float32)
    b = np.full((1, 2), 2.0, dtype=np.float32)
    batch, lengths = al.pad_batch([a, b])
    assert batch.shape == (2, 3, 2) and batch.dtype == np.float32
    assert list(lengths) == [3, 1] and lengths.dtype == np.int64
    np.testing.assert_array_equal(batch[1], [[2, 2], [0, 0], [0, 0]])
    assert al.pad_batch([a], n=5)[0].shape == (1, 5, 2)
    assert al.pad_batch([[[1, 2]]])[0].dtype == np.float64  # integers promoted


@pytest.mark.parametrize(
    ("sequences", "n", "error", "match"),
    [
        ([], None, ValueError, "at least one sentence"),
        (np.zeros((2, 3, 4)), None, TypeError, "list of \\(n_b, d\\) matrices"),
        ([np.zeros((3, 4)), np.zeros((2, 5))], None, ValueError, r"same width d.*\(2, 5\)"),
        ([np.zeros(4)], None, ValueError, "at least 2 dimensions"),
        ([np.zeros((2, 2, 2))], None, ValueError, r"must be 2-D .*\(2, 2, 2\)"),
        ([np.zeros((6, 4))], 5, ValueError, "n = 5 is shorter than sequences\\[0\\]"),
        ([np.full((2, 2), np.nan)], None, ValueError, "NaN or infinity"),
    ],
)
def test_pad_batch_rejects_bad_input(sequences, n, error, match):
    with pytest.raises(error, match=match):
        al.pad_batch(sequences, n)


# --- The short sentence ------------------------------------------------------------------


def test_short_sentence_is_read_only_and_in_the_toy_space():
    assert SHORT.SHORT_TOKENS == tuple(SHORT.SHORT_SENTENCE.rstrip(".").split())
    np.testing.assert_array_equal(SHORT.X_SHORT, toy.embed(SHORT.SHORT_TOKENS))
    assert SHORT.BATCH.shape == (2, 8, 4) and list(SHORT.LENGTHS) == [8, 5]
    np.testing.assert_array_equal(SHORT.BATCH[0], toy.X)
    assert np.all(SHORT.BATCH[1, 5:] == 0.0)
    assert SHORT.BATCH_TOKENS[1][5:] == (SHORT.PAD,) * 3
    for array in (SHORT.X_SHORT, SHORT.BATCH, SHORT.LENGTHS):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1


def test_the_short_sentence_tells_the_padding_story():
    ate, pie = SHORT.SHORT_TOKENS.index("ate"), SHORT.SHORT_TOKENS.index("pie")
    alone_out, alone_w = SHORT.attention_alone()
    assert alone_w[ate].argmax() == pie and round(alone_w[ate, pie], 2) == 0.27
    Q, K, V = SHORT.projections()
    leaky_out, leaky_w = al.scaled_dot_product_attention(Q, K, V)
    to_padding = leaky_w[1, :5, 5:].sum(axis=-1)
    assert 0.29 <= to_padding.min() and to_padding.max() < 0.35  # about a third each
    assert round(leaky_w[1, ate, pie], 2) == 0.19
    out, _ = al.scaled_dot_product_attention(Q, K, V, mask=al.padding_mask(SHORT.LENGTHS, 8))
    np.testing.assert_allclose(out[1, :5], alone_out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[0], toy.attention()[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(leaky_out[0], toy.attention()[0], rtol=0, atol=1e-12)


def test_causal_story_of_the_sentence():
    Q, K, V = toy.projections()
    _, weights = al.scaled_dot_product_attention(Q, K, V, mask=al.causal_mask(8))
    assert weights[IT].argmax() == CAKE and round(weights[IT, CAKE], 2) == 0.28
    assert weights[CAKE, IT] == 0.0 and round(weights[CAKE, CAKE], 2) == 0.37


# --- Figures -----------------------------------------------------------------------------


def causal_weights():
    Q, K, V = toy.projections()
    return al.scaled_dot_product_attention(Q, K, V, mask=al.causal_mask(8))[1]


def test_masked_heatmaps_hatch_masked_cells_and_describe_them():
    _, plain = toy.attention()
    causal = al.causal_mask(8)
    fig, alt = masked_heatmaps(
        [plain, causal_weights()], [None, causal], toy.TOKENS, titles=["a", "b"], title="T"
    )
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == ["a", "b"]
    for ax in panels:
        assert [t.get_text() for t in ax.get_xticklabels()] == list(toy.TOKENS)
        assert ax.images[0].get_clim() == (0.0, 1.0)
    left, right = ([t.get_text() for t in ax.texts] for ax in panels)
    assert left.count("—") == 0 and right.count("—") == 28
    assert sum(p.get_hatch() == "///" for p in panels[1].patches) == 28
    assert "1.00" in right  # "I" sees only itself
    assert alt.startswith("2 heatmaps: T.") and "hatched" in alt
    assert "a: 0 of 64 masked" in alt and "b: 28 of 64 masked" in alt
    assert "it to cake 0.28" in alt
    plt.close(fig)
    # A highlighted cell is outlined in every panel, and the alt text gives its values.
    fig, alt = masked_heatmaps(
        [plain, causal_weights()],
        [None, causal],
        toy.TOKENS,
        titles=["a", "b"],
        title="T",
        highlight=(IT, CAKE),
    )
    for ax in (ax for ax in fig.axes if ax.images):
        outlined = [p for p in ax.patches if not p.get_fill()]
        assert len(outlined) == 1 and outlined[0].get_xy() == (CAKE - 0.5, IT - 0.5)
    assert alt.endswith("Outlined: it to cake, 0.21 then 0.28.")
    plt.close(fig)
    # A block (the real words' weights on the pads, say) gets a dashed outline in every panel.
    fig, alt = masked_heatmaps(
        [plain, causal_weights()],
        [None, causal],
        toy.TOKENS,
        titles=["a", "b"],
        title="T",
        block=((0, 5), (5, 8)),
    )
    for ax in (ax for ax in fig.axes if ax.images):
        (box,) = [p for p in ax.patches if not p.get_fill()]
        assert box.get_linestyle() == "--" and box.get_xy() == (4.5, -0.5)
        assert (box.get_width(), box.get_height()) == (3, 5)
    share = plain[:5, 5:].sum(axis=-1)
    assert alt.endswith(
        "Dashed outline: queries I to and on keys it to delicious (5 to 7); each row's "
        f"total there: a {share.min():.2f} to {share.max():.2f}, b 0.00."
    )
    plt.close(fig)
    for bad in (((0, 9), (5, 8)), ((3, 3), (0, 1))):
        with pytest.raises(ValueError, match="within the 8 x 8 weights"):
            masked_heatmaps([plain], [None], toy.TOKENS, titles=["a"], title="T", block=bad)
    with pytest.raises(ValueError, match="outside the 8 x 8"):
        masked_heatmaps([plain], [None], toy.TOKENS, titles=["a"], title="T", highlight=(8, 0))
    # A row whose allowed weights all tie has no "highest" key, and shows them as 1/k, so
    # that 1/8 is not rounded to 0.12 (eight of which add up to 0.96 on the screen).
    even = np.full((2, 8), 1 / 8)
    even[1] = [0.2] * 5 + [0] * 3
    M = np.array([[True] * 8, [True] * 5 + [False] * 3])
    fig, alt = masked_heatmaps(
        [even], [M], list("ab"), list("stuvwxyz"), titles=["e"], title="T", takeaway="Even."
    )
    (panel,) = [ax for ax in fig.axes if ax.images]
    labels = [t.get_text() for t in panel.texts]
    plt.close(fig)
    assert labels == ["1/8"] * 8 + ["1/5"] * 5 + ["—"] * 3
    assert alt.startswith("Even. 1 heatmap: T.")
    assert "weight: a 1/8 each, b 1/5 each." in alt
    fig, alt = masked_heatmaps(
        [np.vstack([even, even])],
        [np.vstack([M, M])],
        list("abcd"),
        list("stuvwxyz"),
        titles=["e"],
        title="T",
    )
    plt.close(fig)
    assert "weight: a 1/8 each, b 1/5 each, c 1/8 each, d 1/5 each." in alt
    rows = ["x", "<pad>", "<pad>"]  # identical neighbours are said once, with their count
    fig, alt = masked_heatmaps(
        [np.full((3, 8), 1 / 8)], [None], rows, list("stuvwxyz"), titles=["e"], title="T"
    )
    plt.close(fig)
    assert "weight: x 1/8 each, <pad> 1/8 each (2 rows)." in alt


def test_masked_heatmaps_vmax_gives_small_weights_the_colour_range():
    _, plain = toy.attention()
    causal = al.causal_mask(8)
    fig, alt = masked_heatmaps(
        [plain, causal_weights()],
        [None, causal],
        toy.TOKENS,
        titles=["a", "b"],
        title="T",
        vmax=0.6,
    )
    panels = [ax for ax in fig.axes if ax.images]
    assert all(ax.images[0].get_clim() == (0.0, 0.6) for ax in panels)
    bar = next(ax for ax in fig.axes if not ax.images and ax.get_ylabel())
    assert bar.get_ylabel() == "weight (0.6 and above: top colour)"
    assert "colour 0 to 0.6 (larger weights share the top colour)" in alt
    # Text stays readable: black on the light cells (above 0.55 * vmax), white on dark ones.
    colours = {t.get_text(): t.get_color() for t in panels[1].texts}
    assert colours["1.00"] == "black" and colours["0.37"] == "black" and colours["0.13"] == "white"
    plt.close(fig)
    for bad in (0, 1.5, "0.6"):
        with pytest.raises(ValueError, match="vmax must be a number in"):
            masked_heatmaps([plain], [None], toy.TOKENS, titles=["a"], title="T", vmax=bad)
    # Review 08o: no arrow when no coloured weight is above vmax (nothing shares the top).
    fig, alt = masked_heatmaps([plain], [None], toy.TOKENS, titles=["a"], title="T", vmax=0.3)
    assert plain.max() < 0.3
    bar = next(ax for ax in fig.axes if not ax.images and ax.get_ylabel())
    assert bar.get_ylabel() == "weight" and "colour 0 to 0.3;" in alt
    plt.close(fig)


def test_masked_row_ymax_cuts_a_tall_bar_and_says_so():
    """Review 08o: on a 0-1.15 axis the slider's later rows (below 0.3) were hard to read."""
    _, plain = toy.attention()
    w, causal = causal_weights(), al.causal_mask(8)
    fig, alt = masked_row(w[0], causal[0], toy.TOKENS, title="I", before=plain[0], ymax=0.6)
    ax = fig.axes[0]
    assert ax.get_ylim() == (0.0, 0.6)
    assert ax.containers[0][0].get_height() == 0.6  # the 1.00 bar of "I" is cut at the top
    assert "1.00, cut" in [t.get_text() for t in ax.texts]
    assert "(weight 0): 'ate'" in alt and "The axis stops at 0.6, so the taller bar is cut." in alt
    plt.close(fig)
    fig, alt = masked_row(w[IT], causal[IT], toy.TOKENS, title="it", ymax=0.6)
    assert "cut" not in alt and not any("cut" in t.get_text() for t in fig.axes[0].texts)
    plt.close(fig)
    for bad in (0, 2.0, "0.6", True):
        with pytest.raises(ValueError, match="ymax must be a number in"):
            masked_row(w[IT], causal[IT], toy.TOKENS, title="x", ymax=bad)


def test_masked_heatmaps_fade_ignored_query_rows():
    """Review 08l: the pads' query rows drew the eye in the top colour; they are greyed."""
    Q, K, V = SHORT.projections()
    pad = al.padding_mask(SHORT.LENGTHS, 8)[1]
    _, w = al.scaled_dot_product_attention(Q, K, V, mask=al.padding_mask(SHORT.LENGTHS, 8))
    rows = SHORT.BATCH_TOKENS[1]
    fig, alt = masked_heatmaps(
        [w[1]], [pad], rows, titles=["a"], title="T", faded_rows=(5, 8), vmax=0.3
    )
    (ax,) = [ax for ax in fig.axes if ax.images]
    colours = ax.images[0].get_array()
    assert colours.mask[5:].all() and not colours.mask[:5, :5].any()  # pads: no colour
    faded = [p for p in ax.patches if p.get_fill() and p.get_hatch() is None]
    assert sorted(p.get_xy() for p in faded) == [
        (c - 0.5, r - 0.5) for c in range(5) for r in (5, 6, 7)
    ]
    texts = {(t.get_position(), t.get_text()): t.get_color() for t in ax.texts}
    assert texts[((0, 5), "1/5")] == "0.4" and texts[((0, 0), "0.19")] in ("black", "white")
    ticks = [t.get_color() for t in ax.get_yticklabels()]
    assert ticks[5:] == ["0.4"] * 3 and "0.4" not in ticks[:5]
    assert alt.endswith("Greyed out: rows <pad> to <pad> (5 to 7).")
    plt.close(fig)
    for bad in ((5, 9), (6, 6)):
        with pytest.raises(ValueError, match="faded_rows .* within the 8 query rows"):
            masked_heatmaps([w[1]], [pad], rows, titles=["a"], title="T", faded_rows=bad)


def test_masked_row_ghost_bars_show_the_renormalisation():
    _, plain = toy.attention()
    w, causal = causal_weights(), al.causal_mask(8)
    fig, alt = masked_row(w[IT], causal[IT], toy.TOKENS, title="row of it", before=plain[IT])
    ax = fig.axes[0]
    ghosts = [p for p in ax.patches if p.get_linestyle() == "--" and not p.get_fill()]
    assert len(ghosts) == 8  # one outline per key, the masked ones too
    np.testing.assert_allclose([g.get_height() for g in ghosts], plain[IT])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "with the mask",
        "without the mask",
    ]
    # The legend's swatch is the colour of every bar, not of the largest only.
    swatch = ax.get_legend().get_patches()[0].get_facecolor()
    bars = [p for p in ax.patches if p.get_fill() and p.get_width() < 1]
    assert len(bars) == 6 and all(b.get_facecolor() == swatch for b in bars)
    assert ax.get_xlabel() == "key"
    plt.close(fig)
    # A full bar's "1.00" stays inside the frame (t = 0: 'I' sees only itself).
    fig, _ = masked_row(w[0], causal[0], toy.TOKENS, title="row of I", before=plain[0])
    fig.canvas.draw()
    ax = fig.axes[0]
    (label,) = [t for t in ax.texts if t.get_text() == "1.00"]
    box = label.get_window_extent()
    assert box.y1 < ax.get_window_extent().y1 - 2  # pixels of air under the frame
    assert alt.endswith(
        "Dashed outlines: the weights without the mask; the masked keys had 0.26 in all, "
        "and 'cake' had 0.21."
    )
    plt.close(fig)
    with pytest.raises(ValueError, match="one weight per key"):
        masked_row(w[IT], causal[IT], toy.TOKENS, title="x", before=plain[IT, :4])
    with pytest.raises(ValueError, match="summing to 1"):
        masked_row(w[IT], causal[IT], toy.TOKENS, title="x", before=2 * plain[IT])


def test_masked_heatmaps_reject_bad_input():
    w = causal_weights()
    causal = al.causal_mask(8)
    with pytest.raises(ValueError, match="not 0"):
        masked_heatmaps([toy.attention()[1]], [causal], toy.TOKENS, titles=["x"], title="x")
    with pytest.raises(ValueError, match="1 to 3 panels"):
        masked_heatmaps([w, w], [causal], toy.TOKENS, titles=["x", "y"], title="x")
    with pytest.raises(TypeError, match="must be boolean"):
        masked_heatmaps([w], [causal.astype(int)], toy.TOKENS, titles=["x"], title="x")
    with pytest.raises(ValueError, match="does not fit"):
        masked_heatmaps([w], [causal[:3]], toy.TOKENS, titles=["x"], title="x")
    with pytest.raises(ValueError, match="one label per row"):
        masked_heatmaps([w], [causal], toy.TOKENS[:7], titles=["x"], title="x")


def test_masked_row_marks_the_hidden_keys():
    w, causal = causal_weights(), al.causal_mask(8)
    fig, alt = masked_row(w[IT], causal[IT], toy.TOKENS, title="row of it")
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts.count(MASKED) == 2 and "0.28" in texts
    # No bar stands on a masked key: it is a background band, the weight axis reads 0 there.
    bars = [b for b in ax.patches if b.get_height() > 0 and b.get_width() < 1]
    assert sorted(round(b.get_x() + b.get_width() / 2) for b in bars) == [0, 1, 2, 3, 4, 5]
    greyed = [t.get_text() for t in ax.get_xticklabels() if t.get_color() == "0.5"]
    assert greyed == ["was", "delicious"]
    assert alt == (
        "Bar chart: row of it. 6 of 8 keys allowed; largest 'cake' (0.28); "
        "masked (weight 0): 'was', 'delicious'."
    )
    plt.close(fig)
    fig, alt = masked_row(w[-1], causal[-1], toy.TOKENS, title="last")
    assert alt.endswith("no key masked.")
    plt.close(fig)


def test_masked_row_legend_clears_the_bands_and_a_masked_key_draws_nothing():
    """Review 08j: at t = 0 the legend sat on the hatched bands, a flat black mark at 0 on
    each masked key read as a tiny bar, and at t = 7 the alt text spoke of masked keys."""
    _, plain = toy.attention()
    w, causal = causal_weights(), al.causal_mask(8)
    fig, _ = masked_row(w[0], causal[0], toy.TOKENS, title="row of I", before=plain[0])
    fig.canvas.draw()
    ax = fig.axes[0]
    legend, frame = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.y0 >= frame.y1  # above the axes, so over no band
    title = ax.title.get_window_extent()
    assert title.y0 >= legend.y1 - 1  # and under the title
    assert not ax.lines  # nothing is drawn on a masked key's axis
    plt.close(fig)
    fig, alt = masked_row(w[-1], causal[-1], toy.TOKENS, title="last", before=plain[-1])
    assert "no key masked. Dashed outlines: the weights without the mask; 'cake' had" in alt
    assert "masked keys had" not in alt
    plt.close(fig)


def test_masked_heatmaps_text_is_at_least_9_pt_and_never_shrunk():
    """Review 08j: 8 pt ticks read small; at 1280 px the column is 688 px wide."""
    from attention_lib.plotting.base import FIGURE_DPI, smallest_text_px

    _, plain = toy.attention()
    fig, _ = masked_heatmaps(
        [plain, causal_weights()],
        [None, al.causal_mask(8)],
        toy.TOKENS,
        titles=["a", "b"],
        title="t",
    )
    fig.canvas.draw()
    assert fig.get_size_inches()[0] * FIGURE_DPI <= 688  # shown at its own width
    assert smallest_text_px(fig) >= 9 * FIGURE_DPI / 72
    plt.close(fig)


def test_masked_row_rejects_bad_input():
    w, causal = causal_weights(), al.causal_mask(8)
    with pytest.raises(TypeError, match="boolean"):
        masked_row(w[0], causal[0].astype(int), toy.TOKENS, title="x")
    with pytest.raises(ValueError, match="one entry per key"):
        masked_row(w[0], causal[0, :4], toy.TOKENS, title="x")
    with pytest.raises(ValueError, match="no True entry"):
        masked_row(np.zeros(8), np.zeros(8, dtype=bool), toy.TOKENS, title="x")
    with pytest.raises(ValueError, match="not 0"):
        masked_row(toy.attention()[1][0], causal[0], toy.TOKENS, title="x")


# --- Checkers ----------------------------------------------------------------------------


def crashes(*args, **kwargs):
    raise KeyError("oops")


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (lambda n: np.tril(np.ones((n, n), dtype=bool)), "PASS", "all 3 cases match"),
        (lambda n: al.causal_mask(n), "FAIL", "calls al.causal_mask, which this exercise rules"),
        (al.causal_mask, "FAIL", "which this exercise rules out: build the triangle with NumPy"),
        (lambda n: np.arange(n)[None, :] <= np.arange(n)[:, None], "PASS", "all 3 cases"),
        (
            lambda n: np.triu(np.ones((n, n), dtype=bool)),
            "FAIL",
            "that is np.triu(ones, k=0), the upper triangle with the diagonal: query i sees keys i",
        ),
        (
            lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1),
            "FAIL",
            "that drops the diagonal (j < i, or np.tril(ones, k=-1))",
        ),
        (lambda n: ~np.tril(np.ones((n, n), dtype=bool)), "FAIL", "True marks the blocked keys"),
        (
            lambda n: np.triu(np.ones((n, n), dtype=bool), k=1),
            "FAIL",
            "(what np.triu(ones, k=1) gives)",
        ),
        (
            lambda n: np.arange(n)[None, :] > np.arange(n)[:, None],
            "FAIL",
            "or use np.tril(ones, k=0): the lower triangle with the diagonal",
        ),
        (lambda n: np.tri(n), "FAIL", "the pattern is right but the dtype is float64"),
        (lambda n: np.tril(np.ones((n, n), dtype=int)), "FAIL", "dtype is int64"),
        (lambda n: np.ones((n, n), dtype=bool), "FAIL", "that is no mask at all"),
        (
            lambda n: np.tril(np.ones((n, n), dtype=bool), k=1),
            "FAIL",
            "that is np.tril(ones, k=1), one diagonal too many: query i also sees key i + 1",
        ),
        (lambda n: np.ones((n, n + 1), dtype=bool), "FAIL", "one row per query"),
        # review 08e (round 5): a hard-coded size is named
        (
            lambda n: np.tril(np.ones((8, 8), dtype=bool)),
            "FAIL",
            "returned shape (8, 8) for n = 4 and for n = 5 too (on n = 4): use n, not a fixed",
        ),
        (lambda n: np.tril(np.ones((n + 1, n + 1), dtype=bool)), "FAIL", "expected (4, 4)"),
        (lambda n: None, "TODO", "returned None"),
        (crashes, "FAIL", "raised KeyError: 'oops'"),
    ],
)
def test_causal_mask_checker(fn, status, hint, capsys):
    result = check_causal_mask(fn)
    line = capsys.readouterr().out
    assert result.status == status and bool(result) is (status == "PASS")
    assert line.startswith(f"[causal_mask] {status}: ") and hint in line
    assert line.count("\n") == 1


def stable_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def shift_by_raw_max(scores, mask):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True)) * mask  # max of the raw row
    return e / e.sum(axis=-1, keepdims=True)


def over_queries(scores, mask):
    e = np.exp(np.where(mask, scores, -np.inf) - np.where(mask, scores, -np.inf).max())
    return e / e.sum(axis=0, keepdims=True)  # sums each column: the wrong axis


def softmax_zero_renormalise(scores, mask):
    w = stable_softmax(scores) * mask  # the masked 1000 takes the row: allowed exps underflow
    return w / w.sum(axis=-1, keepdims=True)  # 0 / 0


def no_shift(scores, mask):
    e = np.exp(np.where(mask, scores, -np.inf))  # no maximum subtracted: overflows at 1000
    return e / e.sum(axis=-1, keepdims=True)


def global_shift(scores, mask):
    logits = np.where(mask, scores, -np.inf)
    e = np.exp(logits - logits.max())  # one maximum for all rows: -1000 - 1001 underflows
    return e / e.sum(axis=-1, keepdims=True)


def raw_max_then_nan_to_num(scores, mask):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # the masked 1000 is the max
    e = np.where(mask, e, 0.0)  # every allowed exp underflowed: 0 / 0 ...
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))  # ... hidden as a row of 0


def no_shift_then_nan_to_num(scores, mask):
    e = np.exp(scores) * mask  # no shift at all: exp(1000) = inf on the masked key, inf * 0
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))  # nan hidden as a row of 0


def fill_no_shift_then_nan_to_num(scores, mask):
    e = np.exp(np.where(mask, scores, -np.inf))  # masked right, but exp(-1000) = 0
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))


def row_shift_over_queries(scores, mask):
    logits = np.where(mask, scores, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))  # the right, per-row shift
    return e / e.sum(axis=0 if e.ndim > 1 else -1, keepdims=True)  # but sums each column


def exp_times_mask(scores, mask):
    top = np.where(mask, scores, -np.inf).max(axis=-1, keepdims=True)  # the allowed maximum
    e = np.exp(scores - top) * mask  # the masked 1000 goes through exp: inf * 0 = nan
    return e / e.sum(axis=-1, keepdims=True)


def min_shift(scores, mask):
    low = np.where(mask, scores, np.inf).min(axis=-1, keepdims=True)  # the smallest allowed
    e = np.exp(np.where(mask, scores - low, -np.inf))  # exp(1600) on the wide case
    return e / e.sum(axis=-1, keepdims=True)


def mean_shift(scores, mask):
    full = np.broadcast_to(mask, scores.shape)
    mean = np.where(full, scores, 0.0).sum(axis=-1, keepdims=True) / full.sum(-1, keepdims=True)
    e = np.exp(np.where(full, scores - mean, -np.inf))  # exp(800) on the wide case
    return e / e.sum(axis=-1, keepdims=True)


def in_place(scores, mask):
    scores[~np.broadcast_to(mask, scores.shape)] = -np.inf
    return stable_softmax(scores)


def boolean_index(scores, mask):
    logits = scores.copy()
    logits[~mask] = -np.inf  # fails on the (2, 1, 5) mask: an index does not broadcast
    return stable_softmax(logits)


def sum_without_keepdims(scores, mask):
    logits = np.where(mask, scores, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)  # (..., n_q) lines up with the keys: wrong for 2-D scores


def sum_over_queries(scores, mask):
    logits = np.where(mask, scores, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-2, keepdims=True)  # one row (n_k,) has no axis -2


def logsumexp_form(scores, mask):
    """Right in maths: lse = mx + log(sum). Review 08t: the old lowest-float case (two allowed
    scores at -1.8e308) failed it, since adding log 2 to 1.8e308 changes nothing."""
    logits = np.where(mask, scores, -np.inf)
    mx = logits.max(axis=-1, keepdims=True)
    lse = mx + np.log(np.exp(logits - mx).sum(axis=-1, keepdims=True))
    return np.exp(logits - lse)


def max_without_keepdims(scores, mask):
    logits = np.where(mask, scores, -np.inf)
    e = np.exp(logits - logits.max(axis=-1))  # row j's maximum taken from key j
    return e / e.sum(axis=-1, keepdims=True)


def in_float32(scores, mask):  # review 08v: was told "without the shift"
    logits = np.where(mask, scores, -np.inf).astype(np.float32)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def no_keepdims_at_all(scores, mask):  # review 08j (round k): got only "rows sum to"
    logits = np.where(mask, scores, -np.inf)
    e = np.exp(logits - logits.max(axis=-1))  # neither the max nor the sum keeps its axis
    return e / e.sum(axis=-1)


def max_over_queries(scores, mask):  # review 08v: got only "values differ"
    logits = np.where(mask, scores, -np.inf)
    top = logits.max(axis=-2, keepdims=True) if logits.ndim > 1 else logits.max()
    e = np.exp(logits - top)
    return e / e.sum(axis=-1, keepdims=True)


def scaled_again(scores, mask):  # review 08m: got only "values differ"
    return masked_softmax(scores / np.sqrt(scores.shape[-1]), mask)


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (masked_softmax, "PASS", "all 8 cases match"),
        (logsumexp_form, "PASS", "all 8 cases match"),
        (lambda s, mask: stable_softmax(s) * mask, "FAIL", "never renormalised"),
        (lambda s, mask: stable_softmax(np.where(mask, s, 0.0)), "FAIL", "but exp(0) = 1"),
        (lambda s, mask: stable_softmax(np.where(mask, -np.inf, s)), "FAIL", "blocked the allowed"),
        (lambda s, mask: stable_softmax(s), "FAIL", "the mask was ignored"),
        (lambda x, m: masked_softmax(x, m), "PASS", "all 8 cases"),  # any parameter names
        (over_queries, "FAIL", "you normalised over the queries"),
        (lambda s, mask: masked_softmax(s, mask.T), "FAIL", "mask transposed"),
        (shift_by_raw_max, "FAIL", "the shift used a masked score, the 1000: every allowed"),
        (exp_times_mask, "FAIL", "the masked 1000 itself went through exp before the mask"),
        (exp_times_mask, "FAIL", "use np.where, on the scores or on the exponentials"),
        (
            lambda s, mask: stable_softmax(np.where(mask, s, -1e4)),
            "FAIL",
            "the exercise asks for -np.inf as the fill. A finite fill (-1e4, -1e9, even",
        ),
        # Every finite fill fails, as the exercise says (review 08m: -1e9 passed), and the
        # hint says which row (review 08n: "weight [1] on allowed scores at the lowest float").
        (
            lambda s, mask: stable_softmax(np.where(mask, s, -1e9)),
            "FAIL",
            "the exercise asks for -np.inf as the fill. A finite fill (-1e4, -1e9, even "
            "np.finfo(float).min) differs only on extreme rows, such as this one (on one "
            "allowed score at the lowest float, the masked ones 0): the allowed scores are "
            "about -1.8e+308, the masked score is 0, and masked keys get weight [0.5 0.5]",
        ),
        (
            lambda s, mask: stable_softmax(np.where(mask, s, np.finfo(float).min)),
            "FAIL",
            "the masked score is 0, and masked keys get weight [0.3333 0.3333]",
        ),
        (
            lambda s, mask: stable_softmax(np.where(mask, s, -1e30)),
            "FAIL",
            "the exercise asks for -np.inf as the fill. A finite fill",
        ),
        (softmax_zero_renormalise, "FAIL", "a masked key with score 1000. Mask first"),
        (softmax_zero_renormalise, "FAIL", "you took the softmax before masking"),  # 08q
        (
            lambda s, mask: stable_softmax(np.where(mask, s, -100.0)),
            "FAIL",
            "a masked weight must be exactly 0",
        ),
        (no_shift, "FAIL", "exp(1000) overflows to inf"),
        (global_shift, "FAIL", "allowed scores near 1000 and -1000"),
        (global_shift, "FAIL", "you shifted by one maximum for the whole array"),
        (global_shift, "FAIL", "Shift by each row's own maximum (axis=-1, keepdims=True)"),
        (no_shift, "FAIL", "without the shift a row divides inf by inf"),
        (shift_by_raw_max, "FAIL", "the shift used a masked score"),
        (raw_max_then_nan_to_num, "FAIL", "a row's weights are all 0 on a masked key with"),
        (
            raw_max_then_nan_to_num,
            "FAIL",
            "the shift used a masked score (the raw row's maximum), so every allowed exp(...) "
            "underflowed to 0. The 0 / 0 gave nan",
        ),
        (
            no_shift_then_nan_to_num,
            "FAIL",
            "all 0 on a masked key with score 1000: exp(1000) = inf on the masked key, and "
            "inf * 0 = nan (turned into 0): fill with -inf before exp, and shift by the allowed",
        ),
        (
            fill_no_shift_then_nan_to_num,
            "FAIL",
            "all 0 on allowed scores near 1000 and -1000: exp(1000) overflows to inf and "
            "exp(-1000) underflows to 0, so without the shift",
        ),
        (
            row_shift_over_queries,
            "FAIL",
            "4 x 4 scores with a lower-triangle mask): you normalised over",
        ),
        (row_shift_over_queries, "FAIL", "(axis=0 or axis=-2)"),
        (min_shift, "FAIL", "got nan or inf on allowed scores 1600 apart"),
        (min_shift, "FAIL", "subtract the row's maximum over the allowed keys"),
        (min_shift, "FAIL", "lie 1600 apart, so any other shift (the minimum, the mean)"),
        (mean_shift, "FAIL", "lie 1600 apart, so any other shift"),
        (
            lambda s, mask: masked_softmax(s, mask) + 1e-3 * ~np.broadcast_to(mask, s.shape),
            "FAIL",
            "a masked weight must be exactly 0",
        ),
        (lambda s, mask: 2 * masked_softmax(s, mask), "FAIL", "rows sum to 2 on"),
        (lambda s, mask: masked_softmax(s, mask)[..., :-1], "FAIL", "one weight per score"),
        (in_place, "FAIL", "changed its input array in place"),
        (in_place, "FAIL", "So does scores[~mask] = -np.inf: np.where(mask, scores, -np.inf)"),
        (boolean_index, "FAIL", "IndexError: boolean index did not match"),
        (boolean_index, "FAIL", "needs the full shape of the scores, but this mask only"),
        (sum_without_keepdims, "FAIL", "e.sum(axis=-1) without keepdims=True"),
        (max_without_keepdims, "FAIL", "logits.max(axis=-1) without keepdims=True"),
        (
            no_keepdims_at_all,
            "FAIL",
            "rows sum to [1 1.194 18.1 17.02] on 4 x 4 scores with a lower-triangle mask, not "
            "1: each query's weights over its allowed keys must add up to 1. If you summed or "
            "took a max over one axis, keepdims=True keeps it.",
        ),
        (lambda s, mask: 2 * masked_softmax(s, mask), "FAIL", "add up to 1.\n"),  # no hint
        (in_float32, "FAIL", "beyond float32's range, so a cast to float32"),
        (max_over_queries, "FAIL", "the shift took each column's maximum"),
        (
            scaled_again,
            "FAIL",
            "the weights are a softmax of the scores divided by 2.83 (on one row, the last 2 "
            "keys masked): the scores are already scaled, so do not divide by sqrt(d_k) again",
        ),
        (lambda s, mask: masked_softmax(s / 2, mask), "FAIL", "scores divided by 2 (on"),
        (sum_over_queries, "FAIL", "AxisError: axis -2 is out of bounds"),
        (sum_over_queries, "FAIL", "A single row has one axis, and it is the keys"),
        (lambda s, mask: None, "TODO", "returned None"),
        (  # the library's softmax refuses -inf: the hint says to write one
            lambda s, mask: al.softmax(np.where(mask, s, -np.inf)),
            "FAIL",
            "attention needs finite numbers (on one row, the last 2 keys masked). Write your "
            "own softmax here: al.softmax refuses -inf on purpose.",
        ),
        (crashes, "FAIL", "raised KeyError"),
        (  # review 08o: the masked logits, no exp, got "divides 0 by 0"
            lambda s, mask: np.where(mask, s, -np.inf),
            "FAIL",
            "you returned the masked scores (on one row, the last 2 keys masked): the allowed "
            "entries are the scores themselves. Apply a softmax to them",
        ),
        (lambda s, mask: np.where(mask, s, -1e9), "FAIL", "you returned the masked scores"),
        (  # review 08b (round 2): a hard-coded row was told its rows sum to 0.999
            lambda s, mask: np.array([0.1, 0.15, 0.1, 0.28, 0.1, 0.15, 0.0, 0.0]),
            "FAIL",
            "your output does not depend on the input (on one row, the last 2 keys masked)",
        ),
        (raw_max_then_nan_to_num, "FAIL", "np.nan_to_num (or a step like it) hid it as 0s"),
        (  # review 08l: a np.nan fill was told "not a fixed array"
            lambda s, mask: stable_softmax(np.where(mask, s, np.nan)),
            "FAIL",
            "every weight is nan on one row, the last 2 keys masked: np.nan poisons the max "
            "and the sum; fill with -np.inf",
        ),
    ],
)
def test_masked_softmax_checker(fn, status, hint, capsys):
    result = check_masked_softmax(fn)
    line = capsys.readouterr().out
    assert result.status == status and bool(result) is (status == "PASS")
    assert line.startswith(f"[masked_softmax] {status}: ") and hint in line
    assert line.count("\n") == 1


def test_masked_softmax_reference_is_the_library():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(3, 2, 5, 4))
    mask = al.causal_mask(5)
    _, weights = al.scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_allclose(masked_softmax(al.attention_scores(Q, K) / 2, mask), weights)


@pytest.mark.parametrize(
    ("answer", "status", "hint"),
    [
        (36, "PASS", "36 is right"),
        (sum(range(1, 9)), "PASS", "36 is right"),
        (None, "TODO", "replace None"),
        (28, "FAIL", "leaves out the diagonal"),
        (64, "FAIL", "every entry of the 8 x 8 mask"),
        (32, "FAIL", "splits the diagonal in two"),
        (8, "FAIL", "the diagonal alone; each row allows itself and every key before it"),
        (72, "FAIL", "needs dividing by 2"),
        # review 08n: 45 = 1 + ... + 9 is an off-by-one of its own, not "too high"
        (45, "FAIL", "45 is 1 + 2 + ... + 9, one row too many: rows run from 0 to 7"),
        (40, "FAIL", "too high"),
        ("36", "FAIL", "expected one number"),
        # review 08e (round 5): n (n - 1) and the fraction 36 / 64 named
        (56, "FAIL", "56 is n (n - 1) = 8 x 7: every entry off the diagonal"),
        (0.5625, "FAIL", "that is the fraction, give the count"),
        (0.56, "FAIL", "that is the fraction, give the count"),
    ],
)
def test_causal_count_checker(answer, status, hint, capsys):
    result = check_causal_count(answer)
    line = capsys.readouterr().out
    assert result.status == status and bool(result) is (status == "PASS")
    assert line.startswith(f"[causal_count] {status}: ") and hint in line


def test_causal_count_follows_n(capsys):
    assert check_causal_count(10, n=4)
    assert not check_causal_count(6, n=4)
    assert "leaves out the diagonal" in capsys.readouterr().out
    assert not check_causal_count(55, n=9)
    assert "55 is 1 + 2 + ... + 10, one row too many" in capsys.readouterr().out


# --- The combined causal + padding mask of a batch ------------------------------------------


def batch_mask(lengths, n):
    """The test's own reference, by loops: key j allowed when j <= i and j is real."""
    mask = np.zeros((len(lengths), 1, n, n), dtype=bool)
    for s, length in enumerate(lengths):
        for i in range(n):
            for j in range(n):
                mask[s, 0, i, j] = j <= i and j < length
    return mask


def eye(fn):
    """``fn`` with every position also allowed to see itself (not asked for)."""
    return lambda ell, n: fn(ell, n) | np.eye(n, dtype=bool)


def real_tokens(lengths, n):
    return np.arange(n) < np.asarray(lengths)[:, None]  # (b, n)


def pads_as_queries(lengths, n):
    return (al.causal_mask(n) & real_tokens(lengths, n)[:, :, None])[:, None]


def pads_as_both(lengths, n):
    real = real_tokens(lengths, n)
    return (al.causal_mask(n) & real[:, :, None] & real[:, None, :])[:, None]


def no_causal(lengths, n):
    return np.broadcast_to(real_tokens(lengths, n)[:, None, None, :], (len(lengths), 1, n, n))


def real_off(wrong):
    """The reference with its padding part replaced by ``wrong(j, lengths[:, None], n)``."""
    return lambda ell, n: (
        al.causal_mask(n) & wrong(np.arange(n), np.asarray(ell)[:, None], n)[:, None, :]
    )[:, None]


def with_causal(causal_of_n):
    """A batch mask whose causal part is ``causal_of_n(n)``; the padding part is right."""
    return lambda ell, n: (causal_of_n(n) & real_tokens(ell, n)[:, None, :])[:, None]


def lengths_without_axis(lengths, n):
    real = np.arange(n) < lengths  # (n,) against (b,): no [:, None]
    return (al.causal_mask(n) & real[:, None, :])[:, None]


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (batch_mask, "PASS", "all 3 cases match"),
        (lambda ell, n: batch_mask(list(ell), n), "PASS", "all 3 cases"),
        (lambda ell, n: ~batch_mask(ell, n), "FAIL", "True marks the blocked pairs"),
        (lambda ell, n: batch_mask(ell, n)[:, 0], "FAIL", "no head axis"),
        (  # review 08j (round k): a hard-coded n = 8 is named, as in check_causal_mask
            lambda ell, n: batch_mask(ell, 8),
            "FAIL",
            "returned shape (2, 1, 8, 8) for n = 4 and for n = 5 too (on lengths [3, 1], n = 4): "
            "use n, not a fixed size, so the mask is (b, 1, n, n).",
        ),
        (lambda ell, n: batch_mask(ell, 8)[:, 0], "FAIL", "use n, not a fixed size"),
        (lambda ell, n: batch_mask(ell, n)[:, 0][None], "FAIL", "went in front"),
        (
            lambda ell, n: real_tokens(ell, n)[:, None, None, :],
            "FAIL",
            "the padding part alone",
        ),
        # review 08e (round 5): right padding only, so the diagonal is not asked for
        (
            eye(batch_mask),
            "FAIL",
            "entry (i, i) is True for each pad i (on lengths [3, 1], n = 4): you added the "
            "diagonal",
        ),
        (
            pads_as_queries,
            "FAIL",
            "you blocked the pads as queries (on lengths [3, 1], n = 4): "
            "the pads' own rows lose the real words",
        ),
        (eye(pads_as_queries), "FAIL", "you blocked the pads as queries (on lengths"),
        (eye(pads_as_queries), "FAIL", "You also added the diagonal"),
        (pads_as_both, "FAIL", "the pads' own rows lose the real words"),
        (lengths_without_axis, "FAIL", "give lengths its own axis, lengths[:, None]"),
        (no_causal, "FAIL", "the causal part is missing"),
        (eye(no_causal), "FAIL", "the causal part is missing"),
        (
            lambda ell, n: np.broadcast_to(al.causal_mask(n), (len(ell), 1, n, n)),
            "FAIL",
            "that is the causal mask alone. It already hides the pads from the real words, "
            "but the pads' own rows still see the pads before them",
        ),
        # review 08 (round n): wrong lengths get their own hints, not "causal mask alone"
        (
            real_off(lambda j, e, n: j < np.array([8, 5])[:, None]),
            "FAIL",
            "your mask keeps [8, 5] real keys at n = 16 whatever lengths is (on lengths [3, 1]",
        ),
        (
            real_off(lambda j, e, n: j < np.array([3, 1])[:, None]),
            "FAIL",
            "lengths has 3 sentences but your mask has 2: take the sentences from the lengths",
        ),
        (
            real_off(lambda j, e, n: j < e * 0 + e.max()),
            "FAIL",
            "every sentence keeps max(lengths) = 3 real keys (on lengths [3, 1], n = 4)",
        ),
        (
            real_off(lambda j, e, n: j < e - 1),
            "FAIL",
            "each sentence keeps lengths[s] - 1 real keys (on lengths [3, 1], n = 4), so its",
        ),
        (
            lambda ell, n: (al.causal_mask(n) & al.padding_mask(ell, n))[:, None],
            "FAIL",
            "calls al.padding_mask, which this exercise rules out: mark",
        ),
        (real_off(lambda j, e, n: j >= n - e), "FAIL", "the padding is on the wrong side"),
        (
            real_off(lambda j, e, n: j <= e),
            "FAIL",
            "j <= lengths[s] lets in the first pad; use < (on lengths [3, 1]",
        ),
        (
            lambda ell, n: (al.causal_mask(n) | real_tokens(ell, n)[:, None, :])[:, None],
            "FAIL",
            "Combine with &: allowed only if both allow it",
        ),
        (
            with_causal(lambda n: np.triu(np.ones((n, n), dtype=bool))),
            "FAIL",
            "the causal part is not (on lengths [3, 1], n = 4): that is np.triu(",
        ),
        (
            with_causal(lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1)),
            "FAIL",
            "the causal part is not (on lengths [3, 1], n = 4): that drops",
        ),
        (
            lambda ell, n: al.causal_mask(n) & real_tokens(ell, n).astype(float)[:, None, :],
            "FAIL",
            "| and & need booleans on both sides: mark the real positions with a comparison",
        ),
        (
            lambda ell, n: batch_mask(ell, n).astype(int),
            "FAIL",
            "dtype int64 (on lengths [3, 1], n = 4), the pattern is right",
        ),
        (lambda ell, n: None, "TODO", "returned None"),
        (  # rows and columns swapped: named, not a bare "values differ"
            lambda ell, n: np.swapaxes(batch_mask(ell, n), -1, -2),
            "FAIL",
            "your mask is transposed (on lengths [3, 1], n = 4): the last two",
        ),
        (crashes, "FAIL", "raised KeyError"),
        (  # review 08w: Hugging Face-style, every pad's row unmasked
            lambda ell, n: batch_mask(ell, n) | ~real_tokens(ell, n)[:, None, :, None],
            "FAIL",
            "each pad's row sees every key (as Hugging Face unmasks a pad's row): here a pad's "
            "row is causal & padding too (on lengths [3, 1], n = 4).",
        ),
    ],
)
def test_batch_mask_checker(fn, status, hint, capsys):
    result = check_batch_mask(fn)
    line = capsys.readouterr().out
    assert result.status == status and bool(result) is (status == "PASS")
    assert line.startswith(f"[batch_mask] {status}: ") and hint in line, line
    assert line.count("\n") == 1


def test_batch_mask_checker_gets_int_lengths_and_unseen_cases(capsys):
    seen = []

    def spy(lengths, n):
        seen.append((np.asarray(lengths).dtype.kind, type(n)))
        return batch_mask(lengths, n)

    with grading_seed(4):
        assert check_batch_mask(spy)
    assert len(seen) == 5 and set(seen) == {("i", int)}  # 3 fixed + 2 unseen cases
    with grading_seed(4):  # a table of the practice cases fails the unseen ones
        table = {len(ell): batch_mask(ell, n) for ell, n in [([3, 1], 4)]}
        assert not check_batch_mask(lambda ell, n: table.get(len(ell), None))
    capsys.readouterr()


def test_batch_mask_reference_is_a_mask_attention_accepts():
    """Right padding leaves no row empty: every case runs, and the pads get weight 0."""
    rng = np.random.default_rng(0)
    cases = [([3, 1], 4), ([2, 4, 3], 4)]
    cases += [inputs for _, inputs, _ in batch_mask_module._unseen_batch_mask(rng)]
    for lengths, n in cases:
        mask = batch_mask_module._batch_mask(lengths, n)  # (b, 1, n, n)
        np.testing.assert_array_equal(mask, batch_mask(list(lengths), n))
        Q = np.ones((len(lengths), 1, n, 4))
        _, weights = al.scaled_dot_product_attention(Q, Q, Q, mask=mask)
        assert np.all(weights[~np.broadcast_to(mask, weights.shape)] == 0.0)


# --- The page -----------------------------------------------------------------------------


def _page():
    """Chapter 8 as the page tests read it: its cells, the cells by id, and each cell's
    source on one line."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    return cells, {c.id: c for c in cells}, {c.id: " ".join(c.source.split()) for c in cells}


def _words(cells) -> int:
    """Words of the prose a reader sees in ``cells``."""
    return sum(len(line.split()) for line in prose_lines(cells))


def test_page_after_review_08j_is_shorter_and_meets_the_empty_row_where_it_happens():
    """Review 08j: the empty-row section sat 20 cells before its real case (left padding);
    two leak experiments overlapped; exp(-inf) = 0 was said about five times; the fold
    counted heads from 1 while the code counts from 0."""
    import re
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    ids = [c.id for c in cells]
    visible = shown(cells)
    prose = prose_lines(cells)
    words = sum(len(line.split()) for line in prose)
    assert words < 2720, words  # 2,740 before this round; 08m added a folded note
    assert ids.index("left-pad-code") < ids.index("left-pad-assert")  # 08e (5): NaN demo cut
    assert "89c5247e" not in ids  # one leak table
    said = sum(len(re.findall(r"exp\(-inf\) = 0|e\^\{-\\infty\} = 0", c.source)) for c in visible)
    assert said == 1, said
    fold = cells[ids.index("in-practice")].source  # 08x: the heads fold merged into it
    assert "Several heads" not in fold  # 08a (round 2): the slip said once, on the main line
    assert not re.search(r"head [12]\b", fold)


def test_page_after_review_08k_shows_its_evidence_and_says_what_changed():
    """Review 08k: 'its largest weight is now on itself' (it already was); 'makes training
    cheap' (the mask makes the one pass valid); the pads-count trend and the broken symmetry
    were only asserted off the page; a baking-tray analogy with 'cakes' beside the token
    'cake'; exercise 8.4 repeated the cell above it; the padding figure's scale ran to 0.6."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    by_id = {c.id: c for c in cells}
    visible = shown(cells)
    prose = prose_lines(cells)
    words = sum(len(line.split()) for line in prose)
    assert words < 2720, words  # 2,613 before this round; 08m added a folded note
    text = " ".join(c.source for c in visible if c.cell_type == "markdown")
    assert "now on itself" not in by_id["bdd91142"].source
    assert "from 0.18 to 0.37" in by_id["bdd91142"].source
    assert "cheap" not in by_id["f94b9132"].source
    assert "baking" not in text and "cakes" not in text
    assert "counting from 1" not in text
    outputs = {
        c.id: "".join(o.get("text", "") for o in c.outputs)
        for c in visible
        if c.cell_type == "code"
    }
    assert "pads-count" not in by_id  # 08g: the trend is one clause, asserted off the page
    assert outputs["sym-code"].strip().splitlines()[0] == "outputs just swap: False"
    assert "outputs that change: ['ate', 'I']" in outputs["sym-code"]  # 08a (round 2)
    assert "27de366a" not in by_id  # 08s: one leak demonstration, the prefix runs
    assert "repeats over the heads" in by_id["b902f809"].source  # 08v: on the main line
    assert "vmax=0.3" in by_id["e9d676ee"].source
    assert "df82c2f9" not in by_id  # 08 (round n): the pads-not-zeros exercise cut


def test_page_after_review_08l_says_why_the_cache_holds_and_each_point_once():
    """Review 08l: the KV-cache 'so' had no force in one layer (it holds from layer 2 on);
    "chapter 5's" had no noun; renormalising was said 4 times and 'pad outputs are ignored'
    3 times; Fig. 1's left panel used a fifth of its colour scale; the pad rows drew the eye."""
    import re
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    by_id = {c.id: c for c in cells}
    visible = [c for c in cells if "remove-cell" not in c.metadata.get("tags", [])]
    markdown = [c.source for c in visible if c.cell_type == "markdown"]
    words = sum(
        len(line.split())
        for source in markdown
        for line in source.splitlines()
        if not line.startswith((":", "```"))
    )
    assert words < 2720, words  # 2,593 before this round; 08m added a folded note
    cache = " ".join(by_id["in-practice"].source.split())  # 08v: folded
    assert "keys and values" not in cache  # 08j (round k): the cache is chapter 12's
    assert "minus the check" not in by_id["abf3379f"].source  # 08v: library internals out
    text = " ".join(markdown)
    assert len(re.findall(r"renormalis", text)) == 1  # the Summary; the math shows it
    said = [s for s in markdown if re.search(r"\bignored?\b|\bjunk\b", s)]
    assert len(said) == 1 and "greys out the pads' rows" in " ".join(
        said[0].split()
    )  # the figure's cell only
    assert "vmax=0.3" in by_id["e9d676ee"].source  # 5cca86b5: 0 to 1 in 08m, 0 to 0.5 in 08n
    assert "faded_rows=(n_real, 8)" in by_id["e9d676ee"].source


def test_page_after_review_08m_folds_the_practice_note_and_shows_the_nan_on_left_batch():
    """Review 08m: the empty-row NaN was shown on a made-up value, not on left_batch; the
    causal heatmap clipped 0.31 to 1.00 into one colour; 'fused kernels', is_causal and a
    bare cross-attention line; "each row sums to 1" had no condition; no word on what other
    code does (finite fills, additive masks); softmax-zero-divide was not named."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    ids = [c.id for c in cells]
    by_id = {c.id: c for c in cells}
    main, folded = main_and_folded(cells)
    words = sum(len(line.split()) for line in prose_lines(main))
    assert words < 2147, words  # 2,147 on the main line before this round
    text = " ".join(" ".join(c.source for c in main).split())
    assert "fused" not in text and "is_causal" not in text and "Cross-attention" not in text
    assert "as long as it allows at least one key" in " ".join(by_id["79907c17"].source.split())
    assert "vmax=0.5" in by_id["5cca86b5"].source  # 08n: clipped, and 0.31 is not 1.00
    assert "V_nan" not in " ".join(c.source for c in cells)  # the hypothetical is gone
    # 08e (round 5): the two-layer NaN demo and the encoder check cut with their paragraphs
    assert "772c7115" not in ids and "left-pad-where" not in ids
    assert ids.index("nan-md") < ids.index("left-pad-code")
    assert "This course lets each pad see itself" in " ".join(by_id["nan-md"].source.split())
    out = "".join(o.get("text", "") for o in by_id["zero-route"].outputs)
    assert out.splitlines()[0] == "softmax, zero, divide: [nan nan nan]"
    note = by_id["zero-route-md"].source  # 08x: finite fills in the numerics fold
    assert ":class: dropdown" in note and "-1e9" in note
    assert "apex" not in note and "UvA" not in note  # 08j (round k): one attribution
    assert "word order" in by_id["sym-md"].source


def test_page_after_review_08n_practises_the_masked_softmax_where_it_is_taught():
    """Review 08n: exercise 'Softmax with a mask' sat ~60 cells after "In code"; the
    Raschka detour and the two-layer NaN demo crowded the main line; an unseen diagram, an
    unexplained "refuses -inf on purpose", an unused `real`, "b under h"; no cross-attention,
    is_causal, tile skipping or loss masking; the causal heatmap ran 0 to 1."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    ids = [c.id for c in cells]
    by_id = {c.id: c for c in cells}
    # the exercise right after "In code" (08uu: and its printed masked scores); the Raschka
    # route after its solution (08o)
    assert ids.index("abf3379f") + 1 == ids.index("masked-scores")  # 08uu
    assert ids.index("masked-scores") + 1 == ids.index("757f12f0") < ids.index("f94b9132")  # 08g
    assert ids.index("2441fb2b") < ids.index("78ddbfa5") < ids.index("zero-route")
    out = "".join(o.get("text", "") for o in by_id["zero-route"].outputs)
    assert out.splitlines()[1].split() == ["mask", "first:", "[0.", "0.5", "0.5]"]
    assert "e^0 = 1" not in by_id["2441fb2b"].source
    # the NaN demo folded; the main line goes empty row -> refusal -> | eye -> table
    assert by_id["left-pad-code"].metadata["tags"] == ["hide-cell"]
    assert ":class: dropdown" in by_id["nan-md"].source
    order = ["4543ab08", "nan-md", "left-pad-code", "left-pad-assert"]  # 08e (5): one fold
    assert [ids.index(i) for i in order] == sorted(ids.index(i) for i in order)
    assert "8fa3b26f" not in ids and "left-pad-fix-md" not in ids
    # stalls
    assert "Figure 2 of" in by_id["cf3bb74f"].source and "Mask (opt.)" in by_id["cf3bb74f"].source
    assert "real = " not in by_id["83d99a4f"].source
    assert "{term}`permutation equivariance`" in by_id["sym-md"].source
    assert "b under" not in by_id["in-practice"].source
    assert "`&` only changes" not in by_id["4543ab08"].source
    # the educator's additions, all folded
    cross = by_id["in-practice"].source  # 08x: cross-attention merged into the practice fold
    assert ":class: dropdown" in cross and "(b, 1, n_k)" in cross
    assert "cross-code" not in by_id  # 08m (round m): the demo cut, its sentence kept
    note = " ".join(by_id["in-practice"].source.split())
    for said in ("is_causal=True", '"flash" path'):
        assert said in note, said
    assert "chapter 12" not in note  # 08j (round k): the KV cache is not met yet
    route = " ".join(by_id["zero-route-md"].source.split())  # 08x: finite fills moved here
    assert "`-1e9` spreads it evenly, $-\\infty$ gives" in route
    # main-line words went down (1,976 after this round), and the whole page did not grow
    main, folded = main_and_folded(cells)
    assert _words(main) < 2000
    assert _words(cells) < 2717


def test_page_after_review_08o_is_shorter_explains_each_point_once_and_shows_the_leak():
    """Review 08o: 2,824 visible words; the (b, 1, n) broadcast explained four times; two
    left-padding sections; the fixed mask and the causal-only leak were never shown; the
    zero-route demo hid in a solution; 'a copy of chapter 5's' softmax; no HF convention,
    is_causal alignment or teacher forcing in the practice fold."""
    import re
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    ids = [c.id for c in cells]
    by_id = {c.id: c for c in cells}
    visible = shown(cells)
    raw = sum(len(c.source.split()) for c in visible if c.cell_type == "markdown")
    assert raw <= 2560, raw  # 2,824 before this round; 08v added an exercise (main line shorter)
    assert _words(cells) <= 2442  # 2,714 before
    # the key-axis broadcast explained once, with a shape diagram; the rest point to it
    text = " ".join(c.source for c in visible if c.cell_type == "markdown")
    assert len(re.findall(r"broadcasts? over the queries", text)) == 1, text  # cross (08v)
    assert "the 1 repeats over the queries" in by_id["b902f809"].source
    assert "as above" in by_id["in-practice"].source
    # one left-padding section, the fixed mask and the causal-only leak on the page
    assert (
        "Going deeper: padding on the left" in by_id["nan-md"].source  # 08b (round 2): folded
    )
    fig = by_id["left-pad-fig"]  # 08r: the fixed mask as a heatmap, not a 0/1 print
    assert "fixed[1]" in fig.source and fig.metadata["tags"] == ["hide-cell"]
    assert "left-pad-where" not in by_id  # 08e (round 5): 'Each mask alone' cut
    # the zero route in the main text, after the solution, with the float32 gap
    assert ids.index("78ddbfa5") + 1 == ids.index("zero-route-md")
    route = " ".join(by_id["zero-route-md"].source.split())
    assert "first masks after the softmax" in route  # 08r: folded, the gap defined
    assert "about 104 above the allowed ones" in route  # 08 (round n): measured, not "towers"
    assert "my_masked_softmax" not in by_id["zero-route"].source  # runs in the learner edition
    assert "59d4eaee" not in by_id  # 08g: the one-row detour cut
    assert "copy" not in by_id["abf3379f"].source
    assert "A pad's row may look only" not in by_id["nan-md"].source
    note = " ".join(by_id["in-practice"].source.split())
    assert "`attention_mask` marks a real token with 1" in note
    for gone in ("top-left corner", "causal_lower_right"):  # 08j (round k): chapter 12 says it
        assert gone not in note, gone
    assert "ymax=top" in by_id["7a7d4fda"].source
    assert "words, top = toy.TOKENS, 0.6" in by_id["7a7d4fda"].source


def test_page_after_review_08p_defines_on_the_page_what_the_page_uses():
    """Review 08p: causal_out was defined only in the hide-input figure cell; the left-pad
    fix cell ran three experiments; 'must come before' overstated; 'n_q != n_k'; 'folded
    cell below' in a fold; the summary sent readers to a table chapter 11 no longer has;
    the shifted targets hid in the practice fold."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    ids = [c.id for c in cells]
    by_id = {c.id: c for c in cells}
    assert "causal_out, causal_weights =" in by_id["07954ee0"].source
    assert "causal_out" not in by_id["5cca86b5"].source
    assert ids.index("07954ee0") < ids.index("5cca86b5") < ids.index("tf-code")
    # the fix, then which mask is needed where, in two cells
    order = ["nan-md", "left-pad-code", "left-pad-fig", "left-pad-fig-assert"]  # 08b (2)
    assert [ids.index(i) for i in order] == list(
        range(ids.index(order[0]), ids.index(order[0]) + 4)
    )
    assert "causal_only" not in by_id["left-pad-code"].source
    head = by_id["nan-md"].source  # 08e (round 5): the reason moved into the fold
    assert "new column" in head and "last column" in head  # 08y
    route = " ".join(by_id["zero-route-md"].source.split())
    assert "must come" not in route and "masking first" in route
    practice = " ".join(by_id["in-practice"].source.split())
    assert "need not equal" in practice and "\\ne" not in practice
    assert all("folded cell" not in c.source for c in cells)
    summary = by_id["6aa08049"].source
    assert "chapter 11" not in summary and "What you will meet in practice" in summary
    assert "MultiheadAttention` reads a boolean True as *blocked*" in by_id["in-practice"].source
    # the shifted targets on the main line; 08s: after the prefix experiment shows the mask
    assert ids.index("tf-after") + 1 == ids.index("shift-code")
    assert "teacher" in by_id["tf-after"].source and "teacher" not in by_id["in-practice"].source
    out = "".join(o.get("text", "") for o in by_id["shift-code"].outputs)
    assert "must guess 'was'" in out, out


def test_page_after_review_08q_names_teacher_forcing_left_padding_and_finite_fills():
    """Review 08q: teacher forcing is reading the true words before (the mask makes it one
    pass); M^pad had no left-padded form; the left-padding conclusion (0.37) was unstated;
    the exercise did not say finite fills fail; the slider opened on another frame than
    its first (its first frame's alt text was read as the slider's)."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "08_masking.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    by_id = {c.id: " ".join(c.source.split()) for c in cells}
    teacher = "reads the true words $0$ to $t$ (**teacher forcing**)"
    assert teacher in by_id["tf-after"]  # 08r: 'before it' left out position t itself
    assert "\\ge" not in by_id["79907c17"]  # 08z: no left-padding form in the math
    assert "0.37" not in by_id["nan-md"]  # 08e (round 5): 'Each mask alone' cut
    ex81 = " ".join(by_id["757f12f0"].split())  # 08x: the -1e9 reason made exact
    assert "-1e9" not in ex81  # 08y/08aa: the full story in the fold only
    assert "initial=" not in by_id["7a7d4fda"]  # opens on t = 0, its first frame


def test_page_after_review_08r_folds_the_detour_shows_the_empty_rows_and_the_prefix():
    """Review 08r: the float32 zero-route demo stalled the main line before the causal
    mask; 'gap' and n were undefined; 'reads the words before it' left out position t;
    teacher forcing's one pass was claimed, not shown; left padding had no picture and
    its table came last; "both masks apply" vs "the causal mask is enough" on the right;
    'rounding swamps the scores' was cryptic."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, folded = main_and_folded(cells)
    assert _words(main) < 1775  # 1,775 before
    assert _words(cells) < 2396  # 2,396 before
    # the detour folded, with its code
    assert by_id["zero-route-md"] in folded and by_id["zero-route"].metadata["tags"] == [
        "hide-cell"
    ]
    assert "padded at the end" in flat["21507266"]  # 08l: M^pad moved beside padding_mask
    assert "ell_b" not in flat["79907c17"]  # 08l: the math defines the causal mask only
    # teacher forcing shown: the masked outputs are attention on each prefix alone
    assert ids.index("f45245d3") + 1 == ids.index("tf-code") < ids.index("tf-after")
    out = "".join(o.get("text", "") for o in by_id["tf-code"].outputs)
    assert "masked run, same as the prefixes: True" in out  # 08s: and no mask, False
    # left padding: the table leads, the empty rows and the fix are drawn
    # 08e (round 5): the table cut; its right-padded decoder cell is said on the main line
    assert "already hides them from every real word" in flat["4543ab08"]
    out = "".join(o.get("text", "") for o in by_id["left-pad-code"].outputs)
    assert out.splitlines()[1] == "rows that allow no key: [0 1 2]"
    html = "".join(
        str(o.get("data", {}).get("text/html", "")) for o in by_id["left-pad-fig"].outputs
    )
    assert "<img" in html and "dashed box" in html  # 08s: one panel, the pads' box
    # one message on the right (08s): the causal mask alone; & padding touches the pads' rows
    assert "decoder applies both" not in flat["8e65a9c6"]
    assert "`& padding` changes only" not in flat["4543ab08"]  # 08b (round 2): said once
    assert "swamps" not in flat["in-practice"]  # 08v: the float32 detail cut


def test_page_after_review_08s_says_one_thing_about_right_padding_and_is_shorter():
    """Review 08s: the table's right-padded decoder 'needed' causal & padding while the
    prose said the padding part touches only the pads' rows; 'every score rounds to one
    number' held only within 32 of zero; 'try each alone' tested two different models;
    two cells made the leak point; the left-pad figure's panels differed in 3 cells."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, folded = main_and_folded(cells)
    assert _words(main) < 1704  # 1,704 before
    assert _words(cells) < 2391  # 2,391 before
    decoder = [r for r in by_id["nan-md"].source.split("\n") if r.startswith("| decoder")]
    assert not decoder  # 08e (round 5): the table cut
    assert "rounds to one number" not in flat["in-practice"]
    assert "**Each mask alone.**" not in flat["nan-md"]  # 08e (round 5): cut
    # one leak demonstration; teacher forcing after the triangle is shown
    assert "27de366a" not in ids and "8058d5b6" not in ids
    assert ids.index("07954ee0") < ids.index("tf-code") < ids.index("shift-code")
    assert "7 (input, target) pairs from one pass" in flat["tf-after"]  # 08g, 08l
    assert "would copy the answer" in flat["1fff3ec1"]  # 08g: the motive names training
    out = "".join(o.get("text", "") for o in by_id["tf-code"].outputs)
    assert "no mask, same as the prefixes: False" in " ".join(out.split())
    # 08w: the left-pad figure is a before/after pair, the empty pad rows drawn
    assert (
        'titles=["causal and padding masks", "plus: each pad sees itself"]'
        in by_id["left-pad-fig"].source
    )  # 08x: words, not code fragments
    # nits
    assert "The second reason" not in flat["30ab71aa"]
    assert "flushes tiny numbers to zero" not in flat["zero-route-md"]  # 08g: cut
    assert "changes only the pads' rows" not in flat["ex-batch-md"]  # 08x: said once


def test_page_after_review_08t_folds_the_left_padding_checks_and_is_shorter():
    """Review 08t: left padding was a quarter of the page (NaN fold, two checks, a
    positions note on the main line); no reason why an encoder has no empty row; the table,
    'left-pad-after' and the summary said one thing three times; 16 arrays to track; 'pads
    on the left' as a rule; 'Two checks:' and 'The fix:' gave no reason."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, folded = main_and_folded(cells)
    assert _words(main) < 1670  # 1,685 before
    assert _words(cells) < 2388  # 2,388 before
    # the NaN demo, the two checks and the positions note in one fold, after the fix
    assert "left-pad-where-md" not in ids and "left-pad-after" not in ids
    assert by_id["nan-md"] in folded and "**Positions.**" in flat["nan-md"]
    assert "Positions" not in flat["in-practice"]
    fold = ["nan-md", "left-pad-code", "left-pad-fig", "left-pad-fig-assert"]
    fold += ["left-pad-assert"]  # 08e (round 5): the NaN demo and 'Each mask alone' cut
    start = ids.index("ex-batch-sol-end") + 1
    assert ids[start : start + 5] == fold and ids.index("further-md") == start + 5
    note = flat["nan-md"]  # 08e (round 5): the reason for left padding in the fold
    assert "pads on the **left**" in note and "(chapter 12)" not in note
    assert "among its pads" not in note and "after its pads" in note  # lands after the pads
    assert "unmasks the whole row instead)" in flat["nan-md"]  # 08a (round 2)
    # the padding figure's takeaway does not repeat 'about a third' from 70bdfd29
    assert "about a third" not in by_id["e9d676ee"].source


def test_page_after_review_08u_qualifies_the_diagonal_and_is_shorter():
    """Review 08u: 'the table's left column' pointed at the right-padding column; 'plus the
    diagonal' read as the universal recipe (a -inf fill needs it; Hugging Face unmasks the
    whole row); 'on the right, only the pads' rows change' said not relative to what; the
    checker named masks not yet built."""
    cells, _, flat = _page()
    main, _ = main_and_folded(cells)
    assert _words(main) < 1657  # 1,657 before
    assert _words(cells) < 2378  # 2,378 before
    table = flat["nan-md"]  # 08b (round 2): the table in the fold
    assert "|" not in table  # 08e (round 5): the table cut
    assert "This course lets each pad see itself" in flat["nan-md"]  # the course's choice
    assert "Hugging Face's SDPA path unmasks the whole row" in flat["nan-md"]  # 08m (m)
    summary = flat["6aa08049"]  # the left-padding fix sits with the 0 / 0 it avoids
    assert "Masks combine with `&`. - A row" in summary
    assert "$0 / 0$. Next" in summary  # 08x: left padding is optional, the summary core
    assert "on the right, only" not in flat["ex-batch-md"]
    source = pathlib.Path(batch_mask_module.__file__).with_name("masked_softmax.py").read_text()
    assert "with a causal mask" not in source and "with a padding mask" not in source


def test_page_after_review_08v_builds_the_mask_and_keeps_the_padding_half_light():
    """Review 08v: the objective 'build a causal mask' had no exercise; the left-padding
    table spoke of empty rows before they were shown; fold code sat outside its fold with
    no label; the head axis of ex-batch-mask was only in a fold; 15 one-off names in the
    padding half; no float16 numbers."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, folded = main_and_folded(cells)
    assert _words(main) < 1649  # 1,649 before
    assert _words(cells) < 2373  # 2,373 before
    # the build exercise, checked by check_causal_mask, before al.causal_mask is used
    assert "my_causal_mask(n)" in flat["ex-cm-md"] and "{exercise}" in flat["ex-cm-md"]
    assert "check_causal_mask(my_causal_mask)" in by_id["ex-cm-stub"].source
    stub = "".join(o.get("text", "") for o in by_id["ex-cm-stub"].outputs)
    solved = "".join(o.get("text", "") for o in by_id["ex-cm-sol"].outputs)
    assert "[causal_mask] TODO" in stub and "[causal_mask] PASS" in solved
    assert ids.index("ex-cm-sol-end") < ids.index("14375a97") < ids.index("07954ee0")
    # the table after the fix and its figure; the head axis on the main line
    assert ids.index("nan-md") < ids.index("left-pad-fig") and "|" not in flat["4543ab08"]
    assert "pad_mask[:, None] (b, 1, 1, n)" in flat["b902f809"] and by_id["b902f809"] in main
    # each fold's code toggle names its fold
    for cid in ("zero-route", "left-pad-code"):
        prompt = by_id[cid].metadata["mystnb"]["code_prompt_show"]
        assert prompt.startswith("Code of the fold above: "), cid
    # one helper instead of per-batch projections in the visible padding code
    visible = [c for c in cells if "remove-cell" not in c.metadata.get("tags", [])]
    code = " ".join(c.source for c in visible if c.cell_type == "code")
    for name in ("bQ", "sQ", "lQ", "pQ", "left_gap", "short_causal", "left_mask"):
        assert name not in code, name
    assert "def attend(X, mask=None)" in by_id["33419e14"].source
    # float16 in the folds, both numbers asserted on the page
    assert by_id["zero-route-md"] in folded  # 08x: float16 beside the finite fills
    assert (
        "a cast makes it $-\\infty$, so an empty row gives NaN again" in flat["zero-route-md"]
    )  # 08j (round k): short; 08l: its consequence; 08m (round m): PyTorch raises
    assert "np.float16(-1e9) == -np.inf" in by_id["zero-route-assert"].source


def test_page_after_review_08w_folds_the_details_after_the_exercises_and_is_shorter():
    """Review 08w: masked_fill(-1e9) on a half tensor raises, it does not overflow to -inf;
    three folds of edge cases sat between the main idea and the exercises; the table's
    left/decoder cell was the hardest sentence; the empty pad rows were never drawn; no
    nanoGPT bridge (buffer sliced to the length); the dtype fold had three thresholds."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, _ = main_and_folded(cells)
    assert _words(main) < 1637  # 1,637 before
    assert ids.index("further-md") > ids.index("left-pad-assert") > ids.index("pad-fig-assert")
    assert ids.index("in-practice") + 1 == ids.index("6aa08049")  # then the Summary
    note = flat["in-practice"]
    assert "overflows to" not in note and "does it build the triangle once" in note
    assert "`finfo(dtype).min` in Hugging Face" in note
    assert "88 is enough" not in flat["zero-route-md"]  # 08g: flush-to-zero cut
    assert "745" not in flat["zero-route-md"]
    alt = " ".join(o.get("data", {}).get("text/plain", "") for o in by_id["left-pad-fig"].outputs)
    assert "<pad> no key (3 rows)" in alt


def test_page_after_review_08x_is_shorter_with_fewer_folds_and_exact_fills():
    """Review 08x: 'a blocked weight is then tiny, not exactly 0' is wrong in floating
    point (exp(-1e9 - max) underflows); five folds plus a full left-padding section; three
    dense sentences; code-like panel titles; the diagonal presented as the only fix."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, folded = main_and_folded(cells)
    assert _words(main) < 1630  # 1,630 before
    assert _words(cells) < 2347  # 2,347 before
    route = flat["zero-route-md"]
    assert "tiny, not exactly 0" not in " ".join(flat.values())
    assert "gives the same weights as $-\\infty$, exactly 0 where blocked" in route  # 08a
    dropdowns = [
        c.id for c in folded if ":class: dropdown" in c.source and "admonition" in c.source
    ]
    assert dropdowns == ["zero-route-md", "sym-md", "nan-md", "in-practice"], dropdowns
    assert "cross-md" not in ids and "mh-mask-md" not in ids and "1cc31342" not in ids
    # the core ends with the padding exercise; left padding and its exercise are optional
    assert ids.index("pad-fig-assert") + 1 == ids.index("8e65a9c6")  # 08 (n): exercise cut
    assert ids.index("4543ab08") + 3 == ids.index("ex-batch-md") < ids.index("further-md")
    assert "the pads up to itself" not in flat["nan-md"]
    assert "lands on the heads" not in flat["b902f809"]
    assert "np.eye" not in flat["nan-md"]


def test_page_after_review_08y_motivates_left_padding_and_tells_each_story_once():
    """Review 08y: 'Most code adds a float mask' (four of the six anchors replace the
    scores); the Cross-attention paragraph ran into the caching one; the largest exercise
    sat in an 'optional' section; the several-heads slip only in a fold; the finite-fill
    story in four places; the colour bar's label clipped at the figure's right edge."""
    cells, by_id, flat = _page()
    main, _ = main_and_folded(cells)
    assert _words(main) < 1616  # 1,616 before: the main line did not grow
    assert _words(cells) < 2342  # 2,342 before
    note = by_id["in-practice"].source
    assert "Most code" not in note and "Other code, like ours, *replaces*" in flat["in-practice"]
    assert "\n\n**Cross-attention.**" in note
    assert "optional" not in flat["4543ab08"].lower() and "(chapter 12)" not in flat["4543ab08"]
    ids = list(by_id)  # "the fold after the solution": the full finite-fill story
    assert ids.index("78ddbfa5") + 1 == ids.index("zero-route-md")
    assert "spreads it evenly" in flat["zero-route-md"]
    assert "spreads an empty row" not in flat["757f12f0"]
    heads = flat["b902f809"]  # the slip on the main line, its demo in the fold
    assert "NumPy lines up the sentence axis with the heads" in heads  # 08a (2), 08l
    assert by_id["b902f809"] in main and "mh-mask-code" not in by_id
    assert ids.index("b902f809") + 1 == ids.index("heads-assert")


@pytest.mark.parametrize("vmax", [0.3, 0.5])
def test_masked_heatmaps_colour_bar_label_inside_the_figure(vmax):
    """Review 08y: the label 'weight' was clipped by about 2 px at the right edge."""
    W = np.full((8, 8), 0.1)
    W[0, 0] = 0.9  # above vmax: the longer label
    fig, _ = masked_heatmaps(
        [W, W], [None, None], [f"t{i}" for i in range(8)], titles=["a", "b"], title="t", vmax=vmax
    )
    box = fig.axes[-1].get_tightbbox(fig.canvas.get_renderer())
    assert box.x1 <= fig.bbox.x1 - 2, (box.x1, fig.bbox.x1)
    plt.close(fig)


def test_page_after_review_08z_scopes_the_toy_and_spells_out_the_exercises():
    """Review 08z: zero pads read as the norm and 'shrink' as general; ex 8.1 made -1e9 look
    like a bug; 'about 100' for PyTorch unmeasured; the left form in the math too early;
    ex 8.4 in one sentence; folds pointed at 'the first/second code cell under this fold';
    the causal figure's left panel was one colour with no word on why."""
    cells, by_id, flat = _page()
    assert "In this toy a pad is a row of zeros" in flat["29bfb6fd"]
    assert "Fill with `-np.inf`." in flat["757f12f0"]  # 08aa: the -1e9 remark is in the fold
    assert "-1e9" not in flat["757f12f0"] and "-1e9" in flat["zero-route-md"]
    assert (
        "about 17 in float16" in flat["zero-route-md"]  # 08 (round n): the gaps, measured
        and "PyTorch's default" not in flat["zero-route-md"]
    )
    assert "(left)" not in flat["79907c17"]
    spec = by_id["ex-batch-md"].source
    assert (
        "key $j$ is a real token" in spec and "each pad sees itself" not in spec  # 08e (5)
    )
    assert all("code cell under this fold" not in c.source for c in cells)
    assert "hidden cell" in flat["nan-md"]
    assert 'titles=["no mask (every weight 0.09 to 0.21)"' in by_id["5cca86b5"].source
    main, _ = main_and_folded(cells)
    assert _words(main) < 1610  # 1,615 before this round


def test_page_after_review_08aa_states_each_fill_and_number_once():
    """Review 08aa: Hugging Face's additive fill given two ways; 'as here' pointed at nothing
    on screen; 'leaks into its pads' said no number; the left-pad box title; 'eight prefix
    runs ... 7 positions'; the bracket [j <= i] undefined."""
    cells, by_id, flat = _page()
    fold = flat["in-practice"]
    assert "`finfo(dtype).min` in Hugging Face" in fold and "-np.inf)`" not in fold
    assert "0.31" not in fold  # 08a (round 2): the heads paragraph cut
    assert "as here" not in flat["b902f809"]
    assert "pad rows (dashed box) are empty until each sees itself" in flat["left-pad-fig"]
    assert "feed the first 7 words and use the last 7 as targets" in flat["tf-after"]  # 08l
    assert "is True when the condition holds" in flat["79907c17"]
    main, _ = main_and_folded(cells)
    assert _words(main) <= 1569  # 1,605 before 08aa


def test_page_after_review_08a_round_2_says_why_left_and_the_slip_once():
    """Review 08a (round 2): a pointer to chapter 12, which writes one sentence at a time;
    the table's right-padded decoder cell held for the real words only; 'more pads take
    more' pointed at another number; one layer's prefix claim read as a stack's; the
    head-axis slip twice; 'The difference' had no antecedent; left padding too long."""
    cells, by_id, flat = _page()
    main, _ = main_and_folded(cells)
    assert _words(main) <= 1561  # 1,569 before
    assert _words(cells) <= 2250  # 2,319 before
    assert _words([by_id["4543ab08"]]) <= 60  # 08b (round 2): a short note, the rest folded
    assert "seven pads" not in flat["70bdfd29"]  # 08h (polish): cut, "a third" says it
    assert "if every layer is masked" in flat["tf-after"]
    assert "(for the real words)" not in flat["nan-md"]  # 08e (round 5): the table cut
    assert "The difference" not in flat["zero-route-md"] and "checker" not in flat["zero-route-md"]
    assert "What you will meet" not in flat["b902f809"]
    assert "pad_mask           (b, 1, n)       the 1" in by_id["b902f809"].source


def test_page_after_review_08b_round_2_folds_left_padding_into_one_dropdown():
    """Review 08b (round 2): left padding (19 cells, a NaN demo) sat on the main line; the
    new word lands after the pads, not among them; teacher forcing in one long sentence;
    'The rest replaces'; the cache pointer; Raschka's own reason; the padding_mask ban."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, folded = main_and_folded(cells)
    assert _words(main) <= 1248  # 1,561 before: at least 20% shorter
    assert _words(cells) <= 2066  # 2,250 before: the page did not grow
    for gone in ("lp-head", "left-pad-mid", "left-pad-refuse", "left-pad-intro", "lp-table"):
        assert gone not in ids, gone
    note = flat["nan-md"]  # 08e (round 5): moved into the fold
    assert "one shared new column" in note and "ends at the last column" in note
    fold = by_id["nan-md"]
    assert fold in folded and "Going deeper: padding on the left" in fold.source
    for cid in ("left-pad-code", "left-pad-fig"):
        assert by_id[cid].metadata["tags"] == ["hide-cell"], cid
    spec = flat["ex-batch-md"]
    assert "left" not in spec and "padded at the end" in spec  # 08e (round 5)
    assert "not `al.padding_mask`" in spec and by_id["ex-batch-md"] in main
    assert "(**teacher forcing**) and must guess word $t + 1$:" in flat["tf-after"]
    practice = flat["in-practice"]
    assert "The rest replaces" not in practice and "KV cache" not in practice  # 08j (k)
    assert "for efficiency" in flat["zero-route-md"]
    # each point once: 0 / 0 in the math and the Summary; no real output change in 8.61
    said = [c.id for c in main + folded if "0 / 0" in c.source and "float32" not in c.source]
    assert said == ["79907c17", "6aa08049"], said
    assert "no real output changes" not in " ".join(flat.values())


def test_page_after_plain_pass_08d_reads_one_idea_per_sentence():
    """Plain-language pass (round d): semicolon chains on the main line, 'with a cut-off per
    row', a printout labelled 'before:'/'after:', the padding mask introduced in the card
    analogy, a result sentence after its printout, and 'al.causal_mask(8)' asked before it
    was shown."""
    cells, by_id, flat = _page()
    main, _ = main_and_folded(cells)
    assert _words(main) <= 1235  # 1,245 before this pass
    assert _words(cells) <= 2048  # 2,066 before
    prose = [line for line in prose_lines(main) if not line.rstrip().endswith(";")]
    assert not [line for line in prose if ";" in line]  # list items end in ';' only
    assert "cut-off" not in flat["f94b9132"] and "padding" not in flat["30ab71aa"]
    assert "al.causal_mask(8)" not in flat["96002f3b"]
    assert "should match its run alone" in flat["21507266"]
    assert "now gives the outputs" not in flat["b902f809"]
    assert "59d4eaee" not in by_id  # 08g: the one-row detour cut


def test_page_after_review_08e_round_5_keeps_left_padding_in_its_fold():
    """Review 08e (round 5): left padding's reason and the pads-see-themselves convention sat
    on the main line with an exercise flag; the & printout made no point; 0 / 0 four times;
    'could copy the answer:' dangled; 'depending on the backend'; no running average."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, folded = main_and_folded(cells)
    assert _words(main) < 1235  # 1,235 before this round
    assert _words(cells) < 2048  # 2,048 before
    text = " ".join(flat[c.id] for c in main)
    assert "left" not in flat["ex-batch-md"] and "np.eye" not in flat["ex-batch-md"]
    assert "def my_batch_mask(lengths, n):" in by_id["ex-batch-sol"].source
    assert "new column" not in text and "sees itself" not in flat["4543ab08"]
    assert "So the `&` changes only the pads' own rows." in flat["4543ab08"]
    assert ids.index("85f9e4d9") < ids.index("e30045fe") < ids.index("4543ab08")
    fold = flat["nan-md"]
    assert "one shared new column" in fold and "This course lets each pad see itself" in fold
    assert "Without the refusal" not in fold and "Each mask alone" not in fold
    assert "get the same outputs as the short sentence run alone" in fold
    assert "use the last 7 as targets: 7 (input, target) pairs" in flat["tf-after"]  # 08l
    assert "backend" not in flat["zero-route-md"] and "88 is enough" not in flat["zero-route-md"]
    assert (
        "$1/(t+1)$ each" in flat["30ab71aa"]
        and ids.index("avg-assert") == ids.index("30ab71aa") + 2  # 08g: avg-code between
    )
    assert "Its $e^0 = 1$ joins every row's sum" in flat["29bfb6fd"]


def test_page_after_review_08g_names_training_and_cuts_the_detours():
    """Review 08g: 'Writing one, it is cheating' named no training; the one-row mask repeated
    the causal "it" row; 'the first 7 words' (all 8 are used) and 'the last word' (the last
    position); the 'ate'->'pie' trend a third leak demo; 1/(t+1) only off the page."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, _ = main_and_folded(cells)
    assert _words(main) < 1217  # 1,217 before
    assert _words(cells) < 1959  # 1,959 before
    motive = flat["1fff3ec1"]
    assert "cheating" not in motive and "guessing each next word" in motive
    assert "An encoder" not in motive  # 08j (round k): moved to the padding section
    assert flat["10f2ca1f"].startswith("## The padding mask An encoder (chapter 11) reads")
    for gone in ("59d4eaee", "18ac3498", "03ce7898", "pads-count"):
        assert gone not in ids, gone
    assert "0.21 divided by the 0.74 the row kept" in flat["bdd91142"]
    assert "7 (input, target) pairs from one pass" in flat["tf-after"]
    assert "Training and caching" not in flat["in-practice"]  # 08j (round k): chapter 12's
    assert "the last word" not in flat["in-practice"]
    out = "".join(o.get("text", "") for o in by_id["avg-code"].outputs)
    assert ids.index("avg-code") == ids.index("30ab71aa") + 1 and "[0.333 0.333 0.333 0." in out
    assert "7a7d4fda" in ids  # the slider stays


def test_page_after_review_08l_gives_the_and_its_reason_and_defines_each_mask_once():
    """Review 08l: M^pad was defined 40 cells before padding; the & had no stated reason
    (it matters with pads first); 8 prefix runs 'so' 7 examples; the head-axis slip in three
    cases; float16's overflow without its consequence; only the opposite convention named."""
    cells, by_id, flat = _page()
    main, _ = main_and_folded(cells)
    assert _words(main) < 1205  # 1,205 before
    assert "text{pad}" not in flat["79907c17"] and "text{pad}" in flat["21507266"]
    assert 'lets "The" put 0.73 of its weight on them' in flat["nan-md"]  # 08m (round m)
    assert "round(left_causal_w[1, 3, :3].sum(), 2) == 0.73" in by_id["left-pad-assert"].source
    assert "silently wrong" not in flat["b902f809"] and "harmless" not in flat["b902f809"]
    assert (
        "`F.scaled_dot_product_attention` reads True as *may attend*, like ours."
        in flat["in-practice"]
    )


def test_page_after_review_08m_round_m_shows_its_numbers_and_defines_the_mask_once():
    """Review 08m (round m): 0.73 stated on the main line but shown only in a fold's assert;
    the causal mask defined four times; the opening row unlabelled; the cross-attention
    demo; float16 and PyTorch; the head-axis slip for b = 1; the stack claim without the
    per-position blocks; b as size and index; "Hugging Face" for one code path."""
    cells, by_id, flat = _page()
    main, _ = main_and_folded(cells)
    assert _words(main) < 1197  # 1,197 before
    assert "0.73" not in flat["4543ab08"] and "pads come first (the fold below)" in flat["4543ab08"]
    out = "".join(o.get("text", "") for o in by_id["left-pad-code"].outputs)
    assert out.splitlines()[0] == "'The' on its pads, causal mask alone: 0.73"
    assert flat["f94b9132"] == "## The causal mask"
    assert "astype(int)" not in by_id["07954ee0"].source
    out = "".join(o.get("text", "") for o in by_id["30ecaa92"].outputs)
    assert out.strip() == "was 0.094, delicious 0.163 -> 0.257"
    assert "cross-code" not in by_id and "cross-assert" not in by_id
    assert (
        "Three random queries" not in flat["in-practice"] and "(b, 1, n_k)" in flat["in-practice"]
    )
    assert "PyTorch's `masked_fill` refuses it with an error" in flat["zero-route-md"]
    assert "65504" in flat["zero-route-md"]
    heads = flat["b902f809"]
    assert "fine for a single sentence, a silent mix-up when $b = h$" in heads
    assert "otherwise an error from `attention_lib`" in heads
    assert "works on each position separately, chapter 11)" in flat["tf-after"]
    assert "M^{\\text{pad}}_{s,\\,i,\\,j} = [\\, j < \\ell_s \\,]" in flat["21507266"]
    assert "\\sum_{j'}" in flat["79907c17"] and "\\sum_{k}" not in flat["79907c17"]


def test_page_after_review_08_round_n_keeps_the_padding_story_together():
    """Review 08 (round n): the head-axis table split the padding demo from its figure; a
    fourth pad-row point (the pads-not-zeros exercise); l_s not tied to `lengths`; 'towers'
    unmeasured; finite fills 'differ on' an empty row only in practice."""
    cells, by_id, flat = _page()
    ids = list(by_id)
    main, _ = main_and_folded(cells)
    assert _words(main) <= 1173  # 1,175 before
    assert _words(cells) <= 1762  # 1,829 before; +9 in folds for review 08uu's two nits
    assert "df82c2f9" not in ids and "pad-rows-assert" not in ids
    assert ids.index("1f0151b7") + 1 == ids.index("pad-fig-md")  # demo, then its figure
    assert ids.index("4543ab08") + 1 == ids.index("b902f809")  # the table before ex-batch
    assert ids.index("heads-assert") + 1 == ids.index("ex-batch-md")
    assert "$\\ell_s$ = `lengths[s]` real keys" in flat["21507266"]
    route = flat["zero-route-md"]
    assert "about 104 above the allowed ones" in route and "about 17 in float16" in route
    assert "towers" not in route
    assert "In practice the two differ only on a row with no allowed key" in route
    assert "(0/0)" not in flat["pad-fig-md"]


def test_page_after_review_08uu_prints_the_masked_scores_and_says_why_104():
    """Review 08uu (9/9, nits): the masked score matrix never printed; the fold did not say
    why a towering masked score zeroes the allowed weights (the softmax shifts by the row's
    maximum); the fold's two code toggles said "of 4"; nanoGPT's buffer exists only
    without PyTorch's fused attention."""
    import numpy as np

    import attention_lib as al
    from attention_lib import toy

    cells, by_id, flat = _page()
    ids = list(by_id)
    main, _ = main_and_folded(cells)
    assert _words(main) <= 1171  # the main line did not grow
    # the masked scores, printed before the first exercise, -inf above the diagonal
    cell = by_id["masked-scores"]
    assert ids.index("abf3379f") < ids.index("masked-scores") < ids.index("757f12f0")
    assert "remove-cell" not in cell.metadata.get("tags", [])
    out = "".join(o.get("text", "") for o in cell.outputs)
    assert out.count("-inf") == 28 and out.splitlines()[0].startswith("[[0.6 ")
    even = np.tril(np.ones((8, 8)))
    logits = np.where(even == 1, toy.scaled_scores(), -np.inf)
    assert np.array_equal(np.isneginf(logits), ~al.causal_mask(8))
    route = flat["zero-route-md"]
    assert "The softmax subtracts the row's maximum; when that is a masked score" in route
    towering = np.array([104.0, 0.0, 0.0], dtype=np.float32)  # its allowed weights
    assert not al.softmax(towering)[1:].any() and al.softmax(towering)[0] == 1
    for cid, k in (("left-pad-code", 1), ("left-pad-fig", 2)):
        assert by_id[cid].metadata["mystnb"]["code_prompt_show"].endswith(f"({k} of 2)")
    note = flat["in-practice"]
    assert "only without that function does it build the triangle once" in note

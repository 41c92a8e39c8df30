"""Chapter 4: the softmax Jacobian and the claims the chapter makes with it (a saturated row
barely responds; the scaled path responds alike at every width), the scaling figures, and both
checkers in both directions."""

import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pytest
from chapter_text import markdown_text, shown
from matplotlib.text import Text

import attention_lib as al
from attention_lib.backward import attention_backward, softmax_jacobian
from attention_lib.checks import check_dot_variance, check_scaled_scores
from attention_lib.plotting import gradients_vs_dimension, scaling_frame
from attention_lib.plotting.scaling import RAW, SCALED

# --- softmax_jacobian ----------------------------------------------------------------------


def naive_jacobian(p):
    """dp_i/dz_j = p_i (delta_ij - p_j), one entry at a time."""
    n = len(p)
    J = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            J[i, j] = float(p[i]) * ((1.0 if i == j else 0.0) - float(p[j]))
    return J


def finite_difference_jacobian(z, eps=1e-6):
    """Central differences of al.softmax: column j is how p moves when z_j is nudged."""
    n = len(z)
    J = np.zeros((n, n))
    for j in range(n):
        step = np.zeros(n)
        step[j] = eps
        J[:, j] = (al.softmax(z + step) - al.softmax(z - step)) / (2 * eps)
    return J


@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0, 30.0])
def test_jacobian_matches_finite_differences_of_softmax(scale):
    z = np.random.default_rng(1).normal(size=7) * scale
    J = softmax_jacobian(al.softmax(z))
    assert J.shape == (7, 7)
    np.testing.assert_allclose(J, finite_difference_jacobian(z), atol=1e-8)


def test_jacobian_matches_a_naive_loop_on_a_batch():
    z = np.random.default_rng(2).normal(size=(2, 3, 5))
    p = al.softmax(z)
    J = softmax_jacobian(p)
    assert J.shape == (2, 3, 5, 5)
    for idx in np.ndindex(2, 3):
        np.testing.assert_allclose(J[idx], naive_jacobian(p[idx]), atol=1e-15)


def test_jacobian_rows_sum_to_zero_and_it_is_symmetric():
    p = al.softmax(np.random.default_rng(3).normal(size=(4, 6)) * 3)
    J = softmax_jacobian(p)
    np.testing.assert_allclose(J.sum(axis=-1), 0.0, atol=1e-15)
    np.testing.assert_allclose(J, np.swapaxes(J, -1, -2))


def test_jacobian_of_uniform_and_one_hot_rows():
    n = 8
    uniform = softmax_jacobian(np.full(n, 1 / n))
    np.testing.assert_allclose(uniform, (np.eye(n) - np.ones((n, n)) / n) / n)
    assert math.isclose(np.linalg.norm(uniform), math.sqrt(n - 1) / n)
    one_hot = softmax_jacobian(np.eye(4)[2])
    assert np.array_equal(one_hot, np.zeros((4, 4)))


def test_jacobian_shrinks_as_softmax_saturates():
    z = np.random.default_rng(0).normal(size=16)
    sizes = [np.linalg.norm(softmax_jacobian(al.softmax(s * z))) for s in (2, 8, 32, 128)]
    assert all(a > b for a, b in zip(sizes, sizes[1:], strict=False))
    assert sizes[-1] < 0.01


def test_jacobian_keeps_float32_and_accepts_lists():
    assert softmax_jacobian(np.array([0.25, 0.75], dtype=np.float32)).dtype == np.float32
    np.testing.assert_allclose(softmax_jacobian([0.5, 0.5]), [[0.25, -0.25], [-0.25, 0.25]])


@pytest.mark.parametrize(
    ("p", "error", "message"),
    [
        ([1.5, -0.5], ValueError, r"never negative, but p\[1\] = -0.5"),
        ([1.8, 1.3, 0.4], ValueError, r"p sums to 3.5 \(p has shape \(3,\)\)"),
        ([[0.5, 0.5], [0.2, 0.2]], ValueError, r"row p\[1\] sums to 0.4"),
        ([0.5, np.nan], ValueError, "NaN or infinity"),
        (0.5, ValueError, r"at least 1 dimensions, but it has shape \(\)"),
        (np.zeros((2, 0)), ValueError, "empty"),
        (["a", "b"], TypeError, "real numbers"),
        ([True, False], TypeError, "boolean"),
    ],
)
def test_jacobian_rejects_what_is_not_a_probability_row(p, error, message):
    with pytest.raises(error, match=message):
        softmax_jacobian(p)


def test_jacobian_is_not_in_the_top_level_api():
    assert "softmax_jacobian" not in al.__all__


# --- saturated rows: the chapter's claims about J ------------------------------------------


@pytest.mark.parametrize("spread", [0.5, 3.0, 20.0, 80.0])
def test_every_entry_of_j_is_at_most_one_minus_the_top_weight(spread):
    """'If the top weight is 1 - eps, every entry of J is at most eps' (and so is its size
    per entry): a saturated row, top weight above 0.99, has no entry of 0.01 or more."""
    rng = np.random.default_rng(8)
    z = rng.normal(size=(500, 16)) * spread  # (500, 16): rows of scores
    p = al.softmax(z)
    eps = 1 - p.max(axis=-1)  # (500,)
    J = softmax_jacobian(p)  # (500, 16, 16)
    assert np.all(np.abs(J).max(axis=(-2, -1)) <= eps + 1e-15)
    saturated = eps < 0.01
    assert np.all(np.abs(J[saturated]) < 0.01)


def test_a_saturated_row_responds_less_the_more_it_saturates():
    top = [0.9, 0.99, 0.999, 0.9999]
    sizes = [np.linalg.norm(softmax_jacobian(np.r_[t, np.full(15, (1 - t) / 15)])) for t in top]
    assert all(a > 5 * b for a, b in zip(sizes, sizes[1:], strict=False))


def test_scaled_rows_respond_alike_at_every_width_and_raw_rows_saturate():
    """Softmax fed scaled scores has the same ||J||_F at any d_k (about 0.30 for 16 keys);
    fed raw scores, most rows saturate at d_k = 512 and the median row barely responds."""
    rng = np.random.default_rng(11)
    medians, saturated = {}, {}
    for d_k in (16, 512):
        Q, K = rng.normal(size=(2, 50, 16, d_k))
        z = al.attention_scores(Q, K).reshape(-1, 16)  # (800, 16) raw
        for name, c in [("raw", 1.0), ("scaled", 1 / np.sqrt(d_k))]:
            p = al.softmax(c * z)
            medians[d_k, name] = np.median(np.linalg.norm(softmax_jacobian(p), axis=(-2, -1)))
            saturated[d_k, name] = np.mean(p.max(axis=-1) > 0.99)
    assert abs(medians[16, "scaled"] / medians[512, "scaled"] - 1) < 0.05
    assert 0.28 < medians[512, "scaled"] < 0.32
    assert saturated[16, "scaled"] == saturated[512, "scaled"] == 0
    assert saturated[512, "raw"] > 0.6 and medians[512, "raw"] < 0.01


def test_scaled_queries_get_the_same_gradient_at_every_width_and_raw_ones_lose_it():
    """The chapter's measure: median ||dL/dq_i|| from attention_backward, L = sum(dOut * out).
    Scaled, the division and |k| ~ sqrt(d_k) cancel; raw, saturated rows pass almost nothing."""
    rng = np.random.default_rng(5)
    V, dOut = rng.normal(size=(2, 50, 16, 8))
    median = {}
    for d_k in (16, 512):
        Q, K = rng.normal(size=(2, 50, 16, d_k))
        for name, scale in [("raw", 1.0), ("scaled", None)]:
            dQ = attention_backward(Q, K, V, dOut, scale=scale)[0]
            median[d_k, name] = np.median(np.linalg.norm(dQ, axis=-1))
    assert abs(median[16, "scaled"] / median[512, "scaled"] - 1) < 0.2
    assert median[16, "raw"] > median[16, "scaled"]  # narrow: raw still passes more
    assert median[512, "scaled"] > 20 * median[512, "raw"]


def test_at_512_most_raw_rows_pass_nothing_and_the_rest_several_times_more_for_other_seeds():
    """The chapter's words at d_k = 512: about 70% of raw rows saturate and pass almost
    nothing back; the others get several times (8 with the chapter's seeds) the scaled median."""
    for seed in (100, 102, 103):
        rng = np.random.default_rng(seed)
        V, dOut = rng.normal(size=(2, 100, 16, 8))
        Q, K = rng.normal(size=(2, 100, 16, 512))
        raw, scaled = (
            np.linalg.norm(attention_backward(Q, K, V, dOut, scale=s)[0], axis=-1).ravel()
            for s in (1.0, None)
        )
        free = al.softmax(al.attention_scores(Q, K)).max(axis=-1).ravel() <= 0.99
        assert 0.65 < 1 - free.mean() < 0.75, seed
        assert np.median(raw[~free]) < 0.01 * np.median(scaled), seed
        assert 4 < np.median(raw[free]) / np.median(scaled) < 12, seed


# --- plotting ------------------------------------------------------------------------------


def test_gradients_figure_draws_two_median_lines_on_log_axes():
    d = np.array([4, 64, 512, 1024])
    raw = np.array([1.2, 1.0, 0.014, 0.0007])
    scaled = np.array([0.64, 0.74, 0.73, 0.73])
    fig, alt = gradients_vs_dimension(d, raw, scaled)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    raw_line, scaled_line = ax.get_lines()
    assert raw_line.get_marker() != scaled_line.get_marker()  # not colour alone
    assert raw_line.get_linestyle() != scaled_line.get_linestyle()
    np.testing.assert_allclose(raw_line.get_ydata(), raw)
    np.testing.assert_allclose(scaled_line.get_ydata(), scaled)
    # plain words in the legend, no mathtext
    assert ax.get_legend_handles_labels()[1] == ["raw scores, median", "scaled scores, median"]
    assert not ax.collections  # no bands asked for, none drawn
    assert ax.get_title() == "Gradient reaching a query, by width"  # the quantity drawn
    assert ax.get_ylabel().startswith("size of the gradient")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "64", "512", "1024"]
    assert "Scaled scores: between 0.64 and 0.74 at every width" in alt
    assert "Raw scores: 1.2 at d_k = 4, highest (1.2) at d_k = 4, then falling to 0.0007" in alt
    plt.close(fig)
    with pytest.raises(ValueError, match=r"raw needs one value per d_k: shape \(4,\)"):
        gradients_vs_dimension(d, raw[:2], scaled)
    with pytest.raises(ValueError, match="must be positive"):
        gradients_vs_dimension(d, raw, -scaled)


def test_the_gradients_figure_shades_each_series_spread_over_rows():
    d = np.array([64, 512, 1024])
    raw, scaled = np.array([1.0, 0.014, 0.0007]), np.full(3, 0.73)
    raw_band = [[0.006, 1e-9, 2e-13], [9.4, 11.2, 10.9]]
    scaled_band = [[0.4, 0.41, 0.4], [1.27, 1.27, 1.27]]
    fig, alt = gradients_vs_dimension(
        d, raw, scaled, raw_band=raw_band, scaled_band=scaled_band, band_label="10th to 90th"
    )
    ax = fig.axes[0]
    raw_fill, scaled_fill = ax.collections
    assert raw_fill.get_hatch() != scaled_fill.get_hatch()  # not colour alone
    np.testing.assert_allclose(raw_fill.get_paths()[0].vertices[:, 1].max(), 11.2)
    # "spread" is the chapter's word for the standard deviation: the title does not use it
    # for a percentile band, the legend names the band
    assert "spread" not in ax.get_title().lower() and "percentile" not in ax.get_title().lower()
    # Both bands are in the legend, and the thin scaled strip is drawn above the raw band,
    # more opaque and edged, with the lines thinner than matplotlib's default on top.
    assert ax.get_legend_handles_labels()[1][2:] == ["raw: 10th to 90th", "scaled: 10th to 90th"]
    assert scaled_fill.get_zorder() > raw_fill.get_zorder()
    assert scaled_fill.get_alpha() >= 2 * raw_fill.get_alpha()
    assert scaled_fill.get_linewidth()[0] > 0
    assert all(line.get_zorder() > scaled_fill.get_zorder() for line in ax.get_lines())
    assert all(line.get_linewidth() < plt.rcParams["lines.linewidth"] for line in ax.get_lines())
    assert fig.get_size_inches()[0] * 90 >= 600  # at the course's 90 dpi: 600 px or more
    assert "around the raw line (10th to 90th) spans 2e-13 to 11 at d_k = 1024" in alt
    assert "around the scaled line (10th to 90th) spans 0.4 to 1.3 at d_k = 1024" in alt
    plt.close(fig)
    with pytest.raises(ValueError, match="band_label"):
        gradients_vs_dimension(d, raw, scaled, raw_band=raw_band)
    with pytest.raises(ValueError, match=r"raw_band needs a low and a high row: shape \(2, 3\)"):
        gradients_vs_dimension(d, raw, scaled, raw_band=raw_band[0], band_label="x")
    with pytest.raises(ValueError, match="low <= median <= high"):
        gradients_vs_dimension(d, raw, scaled, scaled_band=[[0.8] * 3, [1.3] * 3], band_label="x")


def test_the_gradients_figure_is_two_lines_and_one_band_without_inset_or_grey_band():
    """Review 04t: the figure packed a grey 'passes 50%' band and a linear inset beside the
    bands; the page now draws two median lines and the raw band only."""
    d = np.array([16, 32, 64, 128, 256, 512])
    raw = np.array([1.85, 1.68, 1.02, 0.69, 0.15, 0.014])
    scaled = np.array([0.71, 0.71, 0.74, 0.73, 0.72, 0.73])
    band = [raw / 100, raw * 10]
    fig, alt = gradients_vs_dimension(d, raw, scaled, raw_band=band, band_label="middle 80%")
    (ax,) = fig.axes
    assert len(ax.get_lines()) == 2 and len(ax.collections) == 1
    assert not ax.patches and not ax.child_axes  # no grey band, no inset
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["raw scores, median", "scaled scores, median", "raw: middle 80%"]
    assert "grey" not in alt and "inset" not in alt.lower()
    assert "A shaded band around the raw line (middle 80%) spans 0.00014 to 0.14" in alt
    plt.close(fig)
    for gone in ("saturated", "zoom"):
        with pytest.raises(TypeError):
            gradients_vs_dimension(d, raw, scaled, **{gone: None})


def test_the_floor_cuts_the_raw_band_off_and_says_so():
    """Review 04s: a raw band over 13 decades squeezed the scaled one into a thin strip."""
    d = np.array([64, 512, 1024])
    raw, scaled = np.array([1.0, 0.014, 0.0007]), np.full(3, 0.73)
    raw_band = [[0.006, 1e-9, 2e-13], [9.4, 11.2, 10.9]]
    scaled_band = [[0.4, 0.41, 0.4], [1.27, 1.27, 1.27]]
    bands = dict(raw_band=raw_band, scaled_band=scaled_band, band_label="10th to 90th")
    fig, alt = gradients_vs_dimension(d, raw, scaled, floor=1e-6, **bands)
    ax = fig.axes[0]
    assert ax.get_ylim()[0] == 1e-6
    raw_fill, scaled_fill = ax.collections
    assert raw_fill.get_paths()[0].vertices[:, 1].min() == 1e-6  # cut off, not drawn below
    assert scaled_fill.get_paths()[0].vertices[:, 1].min() == 0.4  # above the floor: as given
    assert "The y axis starts at 1e-06, which cuts off the raw band below it." in alt
    assert "cuts off the scaled band" not in alt
    assert "spans 2e-13 to 11 at d_k = 1024" in alt  # the alt text still gives the full band
    # review 04x: the plot itself marks the cut, at the width where the band goes lowest
    marks = [t for t in ax.texts if "continues" in t.get_text()]
    assert [t.get_text() for t in marks] == ["raw band continues\ndown to 2e-13"]
    assert marks[0].xy == (1024, 1e-6)
    plt.close(fig)
    fig, alt = gradients_vs_dimension(d, raw, scaled, **bands)  # no floor: nothing cut
    assert "cuts off" not in alt and fig.axes[0].get_ylim()[0] < 1e-12
    assert not [t for t in fig.axes[0].texts if "continues" in t.get_text()]
    plt.close(fig)
    for bad in (0, -1e-6, 1e-3, np.inf, np.nan):  # 1e-3 lies above the raw median 0.0007
        with pytest.raises(ValueError, match="floor must be positive and below every median"):
            gradients_vs_dimension(d, raw, scaled, floor=bad)
    for bad in ("low", [1e-6, 1e-5]):
        with pytest.raises(ValueError, match="floor must be one positive number"):
            gradients_vs_dimension(d, raw, scaled, floor=bad)


def test_the_gradients_figure_text_is_ten_points_or_more_legend_included():
    from attention_lib.plotting.base import smallest_text_px  # noqa: PLC0415

    d = np.array([16, 32, 64, 128, 256, 512])
    raw = np.array([1.85, 1.68, 1.02, 0.69, 0.15, 0.014])
    scaled = np.array([0.71, 0.71, 0.74, 0.73, 0.72, 0.73])
    fig, _ = gradients_vs_dimension(
        d,
        raw,
        scaled,
        raw_band=[raw / 10, raw * 10],
        scaled_band=[scaled / 2, scaled * 2],
        band_label="10th to 90th",
    )
    fig.canvas.draw()  # the tick labels get their text
    assert smallest_text_px(fig) >= 10 * 90 / 72  # 10 pt at 90 dpi: 12.5 px in the PNG
    assert fig.axes[0].get_legend().get_texts()[0].get_fontsize() >= 10
    plt.close(fig)


def test_fix_round_4r_measures_what_it_prints_and_bounds_its_claims():
    cells = {c.get("id"): c for c in chapter_cells()}
    # the printed scaled variance divides the scores, it does not apply the rule to raw_var
    assert "(raw_scores[d_k] / np.sqrt(d_k)).var()" in cells["38e3619d"].source
    assert "raw_var / d_ks" not in cells["38e3619d"].source
    # the rules are stated once (and simulated), then applied without a second derivation
    assert "product rule" in cells["fc268831-b"].source
    assert r"\operatorname{E}[q_m^2]" not in cells["fc268831-b"].source
    # the Jacobian's bound is on the main line; the pooled "a third at the 0.99 threshold" is
    # gone (it held only near a top weight of 0.997, review 04r)
    why = cells["grad-rows-read"].source
    # review 04hh (F7): the 4-factor bound is cut; the fold says "at most a multiple of"
    assert "about a third" not in why and r"at most a multiple of $1 - p_{\text{top}}$" in why
    # review 04z: the main line needs no backprop (1 - p_top per row); attention_backward
    # sits in the fold, and the code that uses it is folded too. Review 04b (round 6): the
    # loss L = dOut · output is defined on the main line, once
    # review 04rr (item 1): the section opens with the worked example (grad-intro), the table,
    # then the gradient and its formula (grad-formula); read covers both
    read = " ".join((cells["grad-intro"].source + "\n" + cells["grad-formula"].source).split())
    # review 04aa: the factor is not fixed (raw, it grows with the keys' length); 04b: folded
    rows_fold = " ".join(cells["grad-rows-read"].source.split())
    # review 04f (round g): c is back in the one-line summary; review 04m: with its constant
    # review 04p: the bound's factors named, G_i defined before the formula
    # review 04hh (F7): the bound and G_i leave the fold (grad-assert still checks the bound)
    assert r"\le 4\, c" not in rows_fold and "G_i" not in rows_fold
    assert "confirms" not in read and "fixed multiple" not in read
    # review 04d (round e): a fixed random G; review 04l: the loss written out, G = dOut;
    # review 04m: with c, so it covers the raw case too, and why G is random
    # review 04o: the sum written over all entries, so no undefined odot
    # review 04p: the stand-in loss, G and dOut leave the main line for the fold
    # review 04hh (F7): the written-out loss leaves the fold too; grad-figure-read names it
    said = r"A score $z = c\,q \cdot k$, with $c = 1/\sqrt{d_k}$ (scaled) or 1 (raw)"
    assert said in rows_fold and "G_{ij}" not in read and "dOut" not in read
    assert "attention_backward" not in read and "odot" not in read
    assert "ackpropagation" not in read
    fold = " ".join(cells["grad-rows-read"].source.split())
    assert "ackpropagation" not in fold and "$L$ = `dOut`" not in fold
    # review 04k: the plotted quantity is named and how it is measured, by the figure
    figure_read = " ".join(cells["grad-figure-read"].source.split())
    # review 04p: what is plotted, in plain words; review 04q: with the stand-in loss named
    # review 04_x (F3): two plain sentences, what is measured, then what the lines show
    # review 04_z (F4): the stand-in loss in one plain clause, shared by raw and scaled
    # review 04aa (F2): what G stands for, and why a random one is fair; "pull" is cut
    said = "We plot the size of each query's gradient, $\\lVert\\partial L/\\partial q_i\\rVert$"
    assert said + ", over 16" in figure_read and "pull" not in figure_read
    # review 04cc: "any fixed random G works" cut for words (the code's comment says it)
    # review 04pp (item 1): the loss and G move up to grad-intro, where the two-key equation
    # needs a_j = G . v_j; (item 4) the figure's cell says what attention_backward is
    # review 04qq (item 3): the stand-in G's definition and the chain rule move into a fold
    # right below grad-intro, so the main line meets a worked example before the symbols
    # review 04ss (item 2): the loss is back on the main line, one sentence before the
    # formula that uses it; the fold keeps the chain rule
    said_g = r"Here $L = G \cdot o$: $G$ is a fixed stand-in for what the layers above want"
    intro_fold = " ".join(cells["grad-intro-fold"].source.split())
    assert said_g + " from the attention output $o$." in read
    assert said_g not in intro_fold and ":class: dropdown" in intro_fold
    assert read.index(said_g) < read.index("Let $a_j")
    assert "stands in" not in figure_read
    said_b = "`attention_backward` computes it by {term}`backpropagation`: the chain rule through"
    assert said_b + " the blend, the softmax and the scores ([chapter 10](10_learning.ipynb)" in (
        figure_read
    )
    # review 04ss: "With two keys it gives the formula above." cut for words (grad-two-assert
    # still checks attention_backward against the two-key formula)
    assert "With two keys it gives the formula above." not in figure_read
    assert cells["grad-code"].metadata["tags"] == ["hide-cell"]
    # exercise 4.3's verdict is bounded to initialisation
    # review 04qq (item 2): the optional fold follows the solution's code, in its own cell
    solution = " ".join((cells["ebd8373f"].source + "\n" + cells["ebd8373f-more"].source).split())
    # review 04hh (F3): the gradient leads; μP named as what makes 1/d_k work
    # review 04kk (F1): the verdict depends on the optimiser: SGD, then Adam (μP's reason)
    assert "at initialisation" in solution.lower()
    # review 04_ll (F2): muP's reason is given once, in Going further, not here as well
    assert solution.index("plain SGD") < solution.index("With Adam")
    assert "μP divides" not in solution
    # review 04ii (F3, F9): the near-even row is not the harm (μP starts exactly even); the
    # cost is the gradient; μP is explained once, in Going further, and pointed at here
    # review 04qq (item 2): "not harmful in themselves"; the short answer (the variance at the
    # start) comes before the optional fold on SGD, Adam and μP, and no "So" joins them
    said = "Nearly even rows are not harmful in themselves: μP (Going further) starts exactly even."
    # review 04vv (item 1): the solution's code prints a table across widths first; the text
    # opens on it (the 0.068 is the checker's and the printed line's, ebd83750)
    assert solution.index("As the table shows") < solution.index("not harmful")
    assert solution.index("not harmful") < solution.index("shrinks")
    assert said in solution and "So the standard" not in solution
    short, optional = solution.split(
        "````{admonition} Exercise 4.3, going further: which divisor trains better?"
    )
    assert "keeps the scores' variance the same at every width" in short
    # review 04tt (item 3): the short answer ends on why sqrt(d_k) is the default
    # review 04vv (item 1): "steady start" points back at the variance sentence above it
    said = r"The default stays $\sqrt{d_k}$: it gives that steady start with no other change."
    assert said in short
    # review 04uu (item 1): 1/d_k does not "need" μP at one width: it is a fixed extra
    # factor that W_q and W_k can learn to undo; μP keeps training steady across widths
    said = r"At one width, dividing by $d_k$ still trains: $W_q$ and $W_k$ can learn to undo its"
    said += r" extra $\sqrt{d_k}$. μP adds its own initialisation and learning rates to keep"
    said += " training steady across widths."
    assert said in short and "also needs μP" not in short
    # ... so the optional fold names μP's choice without its recipe again (gf-training has it)
    assert optional.count("μP") == 1 and "Dividing by $d_k$ is μP's choice" in optional
    assert "GPT-2, nanoGPT and PyTorch's default `scale`" in short and "Adam" not in short
    # review 04vv (item 3): they follow the paper's argument (the cause is not shown here)
    assert "default `scale` follow the paper's argument." in short and "That is why" not in short
    assert ":class: dropdown" in optional and "With Adam" in optional
    assert "rescaling" not in solution
    assert "rescaling the learning rates" in cells["gf-training"].source
    assert "rows start almost even" not in solution and "over-corrects" not in solution
    # review 04dd (F2, F7): the SGD caveat; muP in the after-training box
    assert "plain SGD at a fixed learning rate" in solution
    assert "{cite}`yang2022tensor`" in cells["gf-training"].source
    # the GPT-2 head's code follows the box that names the real heads' widths
    ids = list(cells)
    assert ids.index("2e6482c3") == ids.index("gpt2-deeper") + 1
    # review 04ii (F1): what is measured, not deduced from the lead alone
    assert "so $1 - p < 10^{-4}$" not in cells["grad-intro"].source


def test_the_sliders_middle_panel_has_its_own_y_label():
    # not "(same y scale)": heights of panels whose x units differ by √d_k do not compare
    raw = np.random.default_rng(0).normal(scale=8.0, size=(50, 8))
    fig, _ = scaling_frame(raw, 64, xlim=(-40, 40))
    assert fig.axes[1].get_ylabel() == "density"
    plt.close(fig)


def test_scaling_frame_shows_raw_scaled_and_the_mean_sorted_row_in_three_panels():
    raw = np.random.default_rng(0).normal(scale=8.0, size=(50, 8))  # like d_k = 64
    fig, alt = scaling_frame(raw, 64, xlim=(-40, 40))
    left, middle, right = fig.axes
    assert left.get_xlim() == (-40, 40) and middle.get_xlim() == (-4, 4)
    assert left.get_title() == "raw scores, $d_k$ = 64" and "d_k" in right.get_title()
    assert middle.get_ylim() == left.get_ylim()  # one density axis
    assert [t.get_text() for t in right.get_xticklabels()] == [str(j) for j in range(1, 9)]
    wide, _ = scaling_frame(np.zeros((3, 16)), 4)  # 16 keys: every fourth rank labelled
    assert [t.get_text() for t in wide.axes[2].get_xticklabels()] == ["1", "4", "8", "12", "16"]
    plt.close(wide)
    assert right.get_ylim() == (0, 1) and "ranked" in right.get_xlabel()
    assert right.get_legend_handles_labels()[1] == ["softmax(raw)", "softmax(scaled)"]
    # Markers on lines, not bars: a weight near 0 is still drawn, and not by colour alone.
    raw_line, scaled_line = right.get_lines()
    assert not right.patches and raw_line.get_marker() != scaled_line.get_marker()
    assert not raw_line.get_clip_on()
    top_raw = al.softmax(raw).max(axis=-1).mean()
    top_scaled = al.softmax(raw / 8).max(axis=-1).mean()
    assert math.isclose(raw_line.get_ydata()[0], top_raw)
    assert math.isclose(scaled_line.get_ydata()[0], top_scaled)
    assert list(raw_line.get_ydata()) == sorted(raw_line.get_ydata(), reverse=True)
    assert f"top key gets {top_raw:.2f} of a raw row and {top_scaled:.2f} of a scaled" in alt
    assert f"their spread (standard deviation) is {raw.std():.1f}" in alt
    assert f"divided by √64, on an axis from -4 to 4; spread {raw.std() / 8:.1f}" in alt
    # The legends say "spread", the chapter's word, not "std".
    assert left.get_legend_handles_labels()[1] == [f"spread {raw.std():.1f}"]
    assert middle.get_legend_handles_labels()[1] == [f"spread {raw.std() / 8:.1f}"]
    plt.close(fig)
    # Without xlim the raw axis fits this frame's scores, symmetric around 0.
    fig, _ = scaling_frame(raw, 64)
    lo, hi = fig.axes[0].get_xlim()
    assert lo == -hi and hi >= np.abs(raw).max()
    plt.close(fig)
    with pytest.raises(ValueError, match=r"must be \(queries, keys\)"):
        scaling_frame(np.zeros((2, 3, 4)), 4)
    with pytest.raises(ValueError, match="xlim must be two finite numbers"):
        scaling_frame(raw, 64, xlim=(5, -5))
    with pytest.raises(ValueError, match="d_k must be at least 1"):
        scaling_frame(raw, 0)
    with pytest.raises(ValueError, match="scaled_bins must be at least 1"):
        scaling_frame(raw, 64, scaled_bins=0)
    for bad in [(4, -4), (-4, np.inf), (-4,), "ab", 4]:
        with pytest.raises(ValueError, match="scaled_xlim must be two finite numbers"):
            scaling_frame(raw, 64, scaled_xlim=bad)


def test_the_sliders_frames_keep_the_scaled_panel_the_same_and_widen_the_raw_one():
    # The slider's frames: with one xlim, ylim and bin count, the scaled histogram (N(0, 1)
    # at every width) is the same curve in each frame, a readable bell, while the raw one
    # widens. Its text is at least 9 pt: 10.2 CSS px in the 688 px column at 1280 px.
    rng = np.random.default_rng(1)
    z = rng.normal(size=(1600, 16))
    axes = {"xlim": (-120, 120), "ylim": (0, 0.55), "bins": 160}
    curves = {}
    for d_k in (4, 1024):
        fig, _ = scaling_frame(z * np.sqrt(d_k), d_k, **axes, scaled_xlim=(-4, 4), scaled_bins=32)
        left, middle, _ = fig.axes
        assert left.get_xlim() == (-120, 120) and left.get_ylim() == (0, 0.55)
        (raw_steps,), (scaled_steps,) = left.patches[:1], middle.patches[:1]
        curves[d_k] = [s.get_data().values for s in (raw_steps, scaled_steps)]
        fig.canvas.draw()
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
        assert min(sizes) >= 9 and fig.get_size_inches()[0] * 90 <= 688
        plt.close(fig)
    assert np.array_equal(curves[4][1], curves[1024][1])  # scaled: the same curve
    assert np.sum(curves[4][1] > 0.05) >= 15  # a bell over many bins, not a needle
    assert abs(curves[4][1].max() - 1 / np.sqrt(2 * np.pi)) < 0.05  # its peak, about 0.40
    assert curves[4][0].max() > 4 * curves[1024][0].max()  # raw: flattens


def test_a_raw_histogram_flattened_by_the_shared_axes_is_named_in_title_and_alt():
    z = np.random.default_rng(3).normal(size=(1600, 16))
    axes = {"xlim": (-120, 120), "ylim": (0, 0.55), "bins": 160}
    wide, alt = scaling_frame(z * 32, 1024, **axes)
    # review 04k: each frame's left title names its width
    # review 04kk (F8): "spread wide", not "nearly flat" (which the page uses for weight rows)
    assert wide.axes[0].get_title() == "raw scores, $d_k$ = 1024: spread wide"
    assert "The raw histogram is spread wide on its axis: its tallest bin reaches 0.01" in alt
    assert "histogram of 25 600 raw scores" in alt
    plt.close(wide)
    narrow, alt = scaling_frame(z * 4, 16, **axes)
    assert narrow.axes[0].get_title() == "raw scores, $d_k$ = 16" and "flat" not in alt
    plt.close(narrow)


# --- check_scaled_scores -------------------------------------------------------------------


def swap(K):
    return np.swapaxes(K, -1, -2)


def good_scaled_scores(Q, K):
    return Q @ swap(K) / np.sqrt(Q.shape[-1])


def test_reference_scaled_scores_passes(capsys):
    result = check_scaled_scores(good_scaled_scores)
    assert result and result.status == "PASS"
    assert capsys.readouterr().out == "[scaled_scores] PASS: all 4 cases match the reference.\n"


def right_on_2d_batch_size_on_3d(Q, K):
    d = Q.shape[-1] if Q.ndim == 2 else Q.shape[0]
    return Q @ swap(K) / np.sqrt(d)


def floor_root(Q, K):
    # right on the checker's perfect squares 9 and 25, wrong on d_k = 10
    return Q @ swap(K) / int(np.sqrt(Q.shape[-1]))


def rounded_root(Q, K):
    return Q @ swap(K) / round(np.sqrt(Q.shape[-1]))


def three_axes_only(Q, K):
    # K.T on 2-D, a hard-coded transpose(0, 2, 1) on a batch: breaks on batch and heads
    K_t = K.T if K.ndim == 2 else K.transpose(0, 2, 1)
    return Q @ K_t / np.sqrt(Q.shape[-1])


def loop_over_rows(Q, K):
    # one score at a time: right on 2-D inputs, a matmul error on a batch (no K.T anywhere)
    out = np.zeros((Q.shape[0], K.shape[0]))
    for i in range(Q.shape[0]):
        for j in range(K.shape[0]):
            out[i, j] = Q[i] @ K[j] / np.sqrt(Q.shape[-1])
    return out


def test_a_loop_over_rows_is_not_told_about_k_t(capsys):
    assert not check_scaled_scores(loop_over_rows)
    line = capsys.readouterr().out
    assert "K.T" not in line and "transpose" not in line.split("(on a batch")[1]


def test_a_hard_coded_three_is_not_blamed_on_n_q_alone(capsys):
    assert not check_scaled_scores(lambda Q, K: Q @ swap(K) / 3)  # √9 from the first case
    line = capsys.readouterr().out
    assert "on a batch" in line and "typed in" in line and "n_q" in line


def heads_as_d_k(Q, K):
    d = Q.shape[-1] if Q.ndim < 4 else Q.shape[1]
    return Q @ swap(K) / np.sqrt(d)


def test_the_keepdims_hint_is_not_given_for_an_entry_by_entry_product(capsys):
    check_scaled_scores(lambda Q, K: (Q * K).sum(-1))
    assert "keepdims" not in capsys.readouterr().out


def scores_by_alias(Q, K):
    product = al.attention_scores  # the library's, under another name
    return product(Q, K) / np.sqrt(Q.shape[-1])


def scores_from_core(Q, K):
    import attention_lib  # noqa: PLC0415 - the module path, not the top-level name

    return attention_lib.core.attention_scores(Q, K) / np.sqrt(Q.shape[-1])


def scores_imported_under_another_name(Q, K):
    from attention_lib.core import attention_scores as product  # noqa: PLC0415

    return product(Q, K) / np.sqrt(Q.shape[-1])


def test_each_wrong_divisor_in_the_first_case_is_a_different_number(capsys):
    # d_k = 9 and √d_k = 3, n_q = 5 and n_k = 7, their roots, and the toy's 2 and 4: dividing
    # by any of them fails on the first case, each with a hint that names that divisor.
    hints = {
        1: "you returned the raw scores",
        2: "only for the toy's d_k = 4",
        4: "you divided by 4, the toy's d_k",
        5: "you divided by 5 = n_q",
        7: "you divided by 7 = n_k",
        9: "you divided by d_k = 9",
        np.sqrt(5): "you divided by √5 = √n_q",
        np.sqrt(7): "you divided by √7 = √n_k",
    }
    for divisor, hint in hints.items():
        result = check_scaled_scores(lambda Q, K, c=divisor: Q @ swap(K) / c)
        line = capsys.readouterr().out
        assert not result, divisor
        assert hint in line and "on a batch" not in line, (divisor, line)
    assert check_scaled_scores(lambda Q, K: Q @ swap(K) / np.sqrt(Q.shape[-1]))


def own_attention_scores(Q, K):
    return Q @ swap(K)


def test_a_helper_of_the_learners_own_may_be_called_attention_scores(capsys):
    def attention_scores(Q, K):
        return own_attention_scores(Q, K)

    assert check_scaled_scores(lambda Q, K: attention_scores(Q, K) / np.sqrt(Q.shape[-1]))


def crashes(Q, K):
    raise ZeroDivisionError("oops")


def t_or_fixed_swap(Q, K):
    return Q @ (K.T if K.ndim == 2 else np.swapaxes(K, 1, 2)) / np.sqrt(Q.shape[-1])


def divides_q_in_place(Q, K):
    Q /= np.sqrt(Q.shape[-1])
    return Q @ swap(K)


def mutates(Q, K):
    Q *= 2
    return good_scaled_scores(Q / 2, K)


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (lambda Q, K: None, "TODO", "returned None"),
        (crashes, "FAIL", "your function raised ZeroDivisionError: oops"),
        (mutates, "FAIL", "changed its input array Q in place"),
        (lambda Q, K: Q @ swap(K), "FAIL", "you returned the raw scores Q Kᵀ"),
        (lambda Q, K: al.softmax(good_scaled_scores(Q, K)), "FAIL", "you applied softmax: each"),
        (lambda Q, K: al.softmax(Q @ swap(K)), "FAIL", "softmax to the raw scores"),
        (lambda Q, K: Q @ swap(K) / Q.shape[-1], "FAIL", "you divided by d_k = 9"),
        (lambda Q, K: Q @ swap(K) * np.sqrt(Q.shape[-1]), "FAIL", "you multiplied by √d_k"),
        (lambda Q, K: Q @ swap(K) / 2, "FAIL", "only for the toy's d_k = 4"),
        (lambda Q, K: Q @ swap(K) / 4, "FAIL", "you divided by 4, the toy's d_k"),
        (lambda Q, K: Q @ swap(K) / np.sqrt(len(Q)), "FAIL", "√5 = √n_q: d_k is the number"),
        (lambda Q, K: Q @ swap(K) / np.sqrt(K.shape[-2]), "FAIL", "√7 = √n_k: d_k is the number"),
        (lambda Q, K: Q @ swap(K) / len(Q), "FAIL", "divided by 5 = n_q, the number of queries"),
        (lambda Q, K: Q @ swap(K) / K.shape[-2], "FAIL", "divided by 7 = n_k, the number of keys"),
        (lambda Q, K: Q @ swap(K) / np.sqrt(Q.shape[1]), "FAIL", "3 = Q.shape[1] is the number"),
        (right_on_2d_batch_size_on_3d, "FAIL", "2 = Q.shape[0] (or len(Q)) is the batch size"),
        (lambda Q, K: good_scaled_scores(K, Q), "FAIL", "compute Q @ np.swapaxes(K, -1, -2)"),
        (lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]), "FAIL", "With a batch axis, K.T reverses"),
        (lambda Q, K: Q @ K.transpose() / np.sqrt(Q.shape[-1]), "FAIL", "transpose without axes"),
        (lambda Q, K: Q @ np.transpose(K) / np.sqrt(Q.shape[-1]), "FAIL", "transpose without"),
        (loop_over_rows, "FAIL", "Your function works on 2-D inputs but not with a batch axis"),
        (lambda Q, K: Q @ swap(K) / 3, "FAIL", "either a 3 typed in (√9, right only for the first"),
        (lambda Q, K: Q @ K / np.sqrt(Q.shape[-1]), "FAIL", "transpose K (not Q) to put d_k"),
        (lambda Q, K: swap(Q) @ K / np.sqrt(Q.shape[-1]), "FAIL", "transpose K (not Q)"),
        (lambda Q, K: Q * K / np.sqrt(Q.shape[-1]), "FAIL", "Q * K multiplies entry by entry"),
        (lambda Q, K: (Q * K).sum(-1) / np.sqrt(Q.shape[-1]), "FAIL", "pairing query i only"),
        (lambda Q, K: Q @ K.transpose(0, 2, 1) / 3, "FAIL", "fits one number of dimensions"),
        (three_axes_only, "FAIL", "(on batch and heads: Q of shape (2, 3, 5, 36)"),
        (heads_as_d_k, "FAIL", "3 = Q.shape[1] is the number of heads"),
        (lambda Q, K: good_scaled_scores(Q, K).sum(-1), "FAIL", "returned shape (5,)"),
        (lambda Q, K: good_scaled_scores(K, Q), "FAIL", "returned shape (7, 5), which is (n_k"),
        (lambda Q, K: good_scaled_scores(Q, K) + 0.1, "FAIL", "values differ from the reference"),
        (floor_root, "FAIL", "with d_k = 10 you divided by 3, √10 rounded down"),
        (rounded_root, "FAIL", "not int(np.sqrt(d_k))"),
        (lambda Q, K: np.dot(Q, K.T) / np.sqrt(Q.shape[-1]), "FAIL", "np.dot is a matrix product"),
        (lambda Q, K: np.dot(Q, swap(K)) / np.sqrt(Q.shape[-1]), "FAIL", "(np.matmul) multiplies"),
        # tensordot never transposes: its hint names the batch pairing, not a transpose
        (lambda Q, K: np.tensordot(Q, K, ([-1], [-1])) / 3, "FAIL", "np.tensordot sums over"),
        (lambda Q, K: Q @ K.swapaxes(0, 1) / np.sqrt(Q.shape[-1]), "FAIL", "Your swapaxes swaps"),
        # written for 3-D arrays: axis 2 does not exist on the first, 2-D case
        (lambda Q, K: Q @ np.swapaxes(K, 1, 2) / 3, "FAIL", "count axes from the end, np.swapaxes"),
        # K.T served the 2-D case, which passed: the fixed swapaxes broke the heads case
        (t_or_fixed_swap, "FAIL", "(on batch and heads: Q of shape (2, 3, 5, 36)"),
        (t_or_fixed_swap, "FAIL", "Your swapaxes swaps the wrong pair: axes counted from"),
        (divides_q_in_place, "FAIL", "Q = Q / np.sqrt(d_k), not Q /= np.sqrt(d_k)"),
        (lambda Q, K: al.attention_scores(Q, K) / np.sqrt(Q.shape[-1]), "FAIL", "rules out"),
        (scores_by_alias, "FAIL", "your function calls al.attention_scores"),
        (scores_from_core, "FAIL", "your function calls al.attention_scores"),
        (scores_imported_under_another_name, "FAIL", "your function calls al.attention_scores"),
        (lambda Q, K: good_scaled_scores(Q, K).tolist(), "FAIL", "returns a list: return the"),
        (lambda Q, K: tuple(good_scaled_scores(Q, K)), "FAIL", "returns a tuple: return the"),
        # a divisor a hair off √d_k: every entry off by the same factor, named
        (
            lambda Q, K: Q @ swap(K) / (np.sqrt(Q.shape[-1]) + 1e-3),
            "FAIL",
            "every entry is off by the same factor 0.9997: check the divisor",  # review 04b
        ),
        # review 04 (round s): the square root taken of the scores, not of d_k: NaN named
        (
            lambda Q, K: np.sqrt(Q @ swap(K) / Q.shape[-1]),
            "FAIL",
            "NaN exactly where Q Kᵀ < 0: a square root of the scores? Use np.sqrt(d_k).",
        ),
    ],
)
def test_each_scaled_scores_mistake_gets_its_own_hint(fn, status, hint, capsys):
    result = check_scaled_scores(fn)
    line = capsys.readouterr().out
    assert not result and result.status == status
    assert line.startswith(f"[scaled_scores] {status}: ")
    assert hint in line
    assert line.count("\n") == 1


def test_float32_and_einsum_answers_are_arrays_and_pass(capsys):
    assert check_scaled_scores(lambda Q, K: good_scaled_scores(Q, K).astype(np.float32))
    assert check_scaled_scores(
        lambda Q, K: np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    )


def test_scaled_scores_checker_never_raises(capsys):
    assert not check_scaled_scores(42)
    assert not check_scaled_scores(lambda Q: Q)
    assert capsys.readouterr().out.count("FAIL") == 2


# --- check_dot_variance --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "status", "text"),
    [
        (64, "PASS", "64 is right"),
        (64.0, "PASS", "64 is right"),
        (None, "TODO", "replace None"),
        (8, "FAIL", "standard deviation"),
        (1, "FAIL", "variance of one product"),
        (4096, "FAIL", "variances of independent terms add"),
        (0, "FAIL", "0 is the mean of q · k"),
        (0.016, "FAIL", "dividing the score by d_k"),
        (70, "FAIL", "70 is too high"),
        ("64", "FAIL", "expected one number"),
        (np.array(64), "PASS", "64 is right"),  # a 0-d array is one number
        (np.array(64.0), "PASS", "64 is right"),
        (np.array(70), "FAIL", "70 is too high"),
        (np.array([64]), "FAIL", "expected one number"),
        (np.array(True), "FAIL", "expected one number"),
        (np.array("64"), "FAIL", "expected one number"),
    ],
)
def test_dot_variance_prediction(answer, status, text, capsys):
    result = check_dot_variance(answer, d_k=64)
    line = capsys.readouterr().out
    assert result.status == status and bool(result) is (status == "PASS")
    assert line.startswith(f"[dot_variance] {status}: ") and text in line
    assert line.count("\n") == 1


def test_dot_variance_follows_d_k(capsys):
    assert check_dot_variance(16, d_k=16)
    assert not check_dot_variance(64, d_k=16)
    assert "16 = √256" in (check_dot_variance(16, d_k=256).message)
    with pytest.raises(ValueError, match="d_k must be at least 1"):
        check_dot_variance(1, d_k=0)


@pytest.mark.parametrize(
    ("answer", "status", "text"),
    [
        (3888, "PASS", "3888 is right"),
        (None, "TODO", "replace None"),
        (432, "FAIL", "σ²·d_k: each product"),
        (48, "FAIL", "the answer for components of variance 1"),
        (144, "FAIL", "144 = σ·d_k: σ = 3 is a standard deviation"),
        (864, "FAIL", "864 = 2·σ²·d_k: adding the variances of q_m and k_m is the rule for a sum"),
        (7776, "FAIL", "7776 is twice the answer"),
        (20736, "FAIL", "20,736 = (σ·d_k)² = σ²·d_k²: the variance grows like d_k, not d_k²"),
        (3807, "FAIL", "3807 = σ⁴·(48 − 1): count the products again"),
        (3969, "FAIL", "3969 = σ⁴·(48 + 1): count the products again"),
        (-3888, "FAIL", "a variance cannot be negative"),
        (3879.0, "FAIL", "3879 is close, but not the exact expected value"),
        (3887, "FAIL", "check the arithmetic"),  # a hand slip is not called a simulation
        (81, "FAIL", "variance of one product"),
        (186624, "FAIL", "186,624 grows like d_k²: variances of independent terms add"),
        (1.6875, "FAIL", "dividing the score by d_k"),
        (256, "FAIL", "256 is too low"),  # d_k² / σ²: no formula of the exercise lands here
        (1296, "FAIL", "1296 = σ³·d_k: that mixes the variance of one factor"),
        (288, "FAIL", "288 = 2·σ·d_k: spreads do not add"),
        (1.0, "FAIL", "1 is the variance of a scaled score"),
        (3000, "FAIL", "3000 is too low"),
        (3 * np.sqrt(48), "FAIL", "20.7846 = σ·√48 looks like a spread, not a variance"),
        (
            9,
            "FAIL",
            "9 = σ² is the variance of one component q_m. A product q_m k_m has σ²·σ² = 81",
        ),
    ],
)
def test_dot_variance_with_sigma(answer, status, text, capsys):
    result = check_dot_variance(answer, d_k=48, sigma=3)
    line = capsys.readouterr().out
    assert result.status == status and line.count("\n") == 1
    assert text in line, line


def test_the_exercises_numbers_make_no_wrong_formula_coincide_with_the_answer(capsys):
    # d_k = 64 and sigma = 2 let d_k² / σ² = 1024 = σ⁴·d_k pass; 48 and 3 have no such pair.
    d_k, sigma = 48, 3
    wrong = [d_k**2 / sigma**2, sigma**3 * d_k, sigma**2 * d_k, sigma * d_k**2, d_k**2]
    wrong += [sigma**4 * d_k**2, sigma**2 * d_k**2, sigma**4 * np.sqrt(d_k), 2 * sigma**2 * d_k]
    assert all(not check_dot_variance(w, d_k=d_k, sigma=sigma) for w in wrong)
    assert check_dot_variance(sigma**4 * d_k, d_k=d_k, sigma=sigma)


def test_with_sigma_one_the_square_root_of_d_k_keeps_its_standard_deviation_hint(capsys):
    # sqrt(d_k) is then both "the spread" and sigma^2 sqrt(d_k): one hint, the first
    assert not check_dot_variance(8, d_k=64)
    assert "8 = √64 is the standard deviation of q · k" in capsys.readouterr().out


def test_the_near_hint_needs_a_number_within_two_percent():
    assert "simulated" in check_dot_variance(63.5, d_k=64).message
    assert "simulated" not in check_dot_variance(62, d_k=64).message  # 3% off
    assert check_dot_variance("3888", d_k=48, sigma=3).message.startswith("expected one")


def test_dot_variance_rejects_a_bad_sigma():
    with pytest.raises(ValueError, match="sigma must be a positive number"):
        check_dot_variance(1, d_k=4, sigma=0)


# --- the chapter's shape -------------------------------------------------------------------


def chapter_cells():
    path = Path(__file__).resolve().parents[1] / "chapters" / "04_scaling.ipynb"
    return nbformat.read(path, as_version=4).cells


def visible_markdown(cells):
    return [c.source for c in shown(cells) if c.cell_type == "markdown"]


def outside_folds(text):
    """Markdown with its dropdown admonitions taken out: what a reader sees without a click."""
    return re.sub(r"````\{admonition\}.*?\n:class: dropdown.*?````", "", text, flags=re.S)


def test_the_main_line_ends_at_the_summary_and_the_gpt2_aside_folds_after_saturation():
    """Review 04s: table -> slider -> gradient -> summary; review 04u: the optional GPT-2
    aside is a dropdown right after the saturation result that raises its question. The main
    line explains the gradient without the Jacobian; review 04pp names the chain rule (its
    two-key equation, and what attention_backward does), not the Jacobian."""
    cells = chapter_cells()
    ids = [cell.get("id") for cell in cells]
    headings = [
        line
        for source in visible_markdown(cells)
        for line in source.splitlines()
        if line.startswith("## ")
    ]
    # session 10: a final Going further section of dropdowns follows the summary
    assert headings[-3:] == ["## Exercises", "## Summary", "## Going further"]
    at_summary = ids.index("108c6c23")
    summary = cells[at_summary].source
    main = " ".join(" ".join(visible_markdown(cells[:at_summary])).split())
    # nothing after the summary; the GPT-2 dropdown (and its folded code) follows fa6cbeb4
    after = [c for c in shown(cells[at_summary + 1 :]) if c.cell_type == "markdown"]
    assert after[0].source == "## Going further"
    assert all(":class: dropdown" in c.source for c in after[1:]) and len(after) <= 6
    # review 04ii (F8): the GPT-2 box moves into Going further, so the table -> slider ->
    # gradient line runs without a detour; d_model != d_k stays on the main line (issue #29)
    assert ids.index("gpt2-deeper") == ids.index("going-further") + 1
    assert ids.index("439f69a3") == ids.index("fa6cbeb4") + 1
    said = "(GPT-2 small splits $d_{model} = 768$ into heads of $d_k = 64$)"
    assert said in " ".join(cells[ids.index("4875b8d4")].source.split())
    box = cells[ids.index("gpt2-deeper")]
    aside = " ".join(box.source.split())
    assert aside.startswith("````{admonition} Does a GPT-2-style head")
    assert ":class: dropdown" in aside and outside_folds(box.source).strip() == ""
    assert "hide-cell" in cells[ids.index("2e6482c3")].metadata["tags"]
    # the main line: what shows before the summary without opening a box
    main = " ".join(
        " ".join(outside_folds(s) for s in visible_markdown(cells[:at_summary])).split()
    )
    for word in (
        "without its division by",  # GPT-2 divides; the simulation does not
        "typically 64 to 128 wide, and",
        "from 0.54 to 0.10",  # what the division does at GPT-2's start: rows start nearly even
    ):
        assert word in aside and word not in main, word
    # the 31% is a unit-variance worst case: the main line says so next to the headline and
    # points at the box; the GPT-2-like head's share (0.25% to 0.62% over seeds: "under 1%")
    # sits in the box only, beside its answer (review 04ab: stated once)
    # review 04f (round g): the point is made once, after the table, with the box's contrast
    # review 04k: one plain sentence pointing at the box, no repeat of its numbers
    # review 04_t (F8): the teaser leads with the box's conclusion, not a bare spread
    # session 10: the teaser is cut; the box's title asks its question
    assert "rows saturate, but half still give one random key" not in main
    assert "Does a GPT-2-style head at initialisation saturate?" in aside
    # review 04m: the pointer only on the main line; the box has the numbers
    assert "but half still give one random key over half the weight" in aside
    # review 04 (round s): the "so what" of a skewed start, in one clause each
    assert "starts out copying mostly one random token" in aside
    # review 04_v (F9): "training decides where to focus" replaced; (F5) why not a smaller W_q
    # diet 11: "= 0.06" cut (one number per claim)
    # review 04hh (F4): 0.10 is not "near" 1/16: the even row's value is given instead
    assert "(an even row would give 1/16 = 0.06)." in aside and "training decides" not in aside
    assert "near an even row" not in aside
    assert "A smaller $W_q$ could do the same, but it would have to shrink as heads" in aside
    assert "real GPT-2" not in main and "a real head" not in aside  # review 04l: simulated
    assert "a GPT-2-style head at initialisation" in aside
    assert "0.5%" not in main and "0.54" not in main and "2.5" not in aside
    assert "real models use" not in main
    assert "GPT-2-like head" not in main
    said = "**variance is $d_k$** times that of one product ($d_k$ at unit variance)"
    assert said in " ".join(summary.split())  # review 04ai: not only at unit variance
    # the gradient in words and one formula, not the Jacobian; the fold keeps the Jacobian
    plain = " ".join(outside_folds("\n".join(visible_markdown(cells[:at_summary]))).split())
    for word in ("Jacobian", r"\partial p_i"):
        assert word not in plain, word
    # review 04pp: grad-intro and grad-figure-read; review 04qq (item 3): grad-intro's moved
    # into its fold
    assert (
        plain.count("chain rule") == 1
        and "chain rule" in cells[ids.index("grad-intro-fold")].source
    )
    rows = cells[ids.index("grad-rows-read")].source
    assert "Jacobian" not in rows and "[chapter 10](10_learning.ipynb)" in rows  # review 04k
    # review 04_z (F6): the W_q / W_k / W_v remark moved in from the main line (+29 words)
    # review 04hh (F7): the bound cut, 155 -> 115; review 04ss (item 3): 115 -> 134 for the
    # 1024 ratio's seed range, moved here from the main line
    assert len(rows.split()) <= 134
    for word in (
        r"\operatorname{Var}(q \cdot k) = d_k",  # derived once; the summary bolds it
        "**saturated**",
        # review 04rr (item 2): the paragraph opens on what to see in the figure
        "The raw median is larger at small widths",  # review 04af/04n: what the figure shows
        "In the figure, scaled gradients stay steady.",  # review 04kk (F9): plain sentences
    ):
        assert word in plain, word
    # review 04a (round 5): the backward formula is fold-only; review 04l: the figure's
    # paragraph says why the raw median starts higher (nothing cancels the keys' length)
    assert r"\partial z_{ij}" not in plain
    # review 04m: why the key's length enters a query's gradient, in one clause
    # review 04n: the three steps spelled out (slope c k, key length, c cancels it)
    # review 04p: c is the fold's; the main line divides by sqrt(d_k) itself
    # review 04_t (F2): the slope's length and the rows' spread, both the same at every width
    # session 10: the mechanism moved into the row-by-row fold, beside the bound
    # review 04_y (F7): "steady" is said once, on the main line
    # review 04bb (F8): dz/dq = c k, its length c sqrt(d_k) in both cases
    said = r"$\partial z/\partial q = c\,k$, of length about $c\sqrt{d_k}$: about 1 when scaled"
    rows_fold0 = " ".join(cells[ids.index("grad-rows-read")].source.split())
    assert said in rows_fold0 and "nothing does" not in plain and "$c\\,k$" not in plain
    # review 04cc (F6): what "alike" meant, said (grad-share-assert: the percentiles)
    # review 04ss (item 5): "nearly": row by row |q|^2 / d_k varies at small d_k
    said = r"Scaled, the scores (and so $1 - p_{\text{top}}$) have nearly the same spread at every"
    assert said + " width" in rows_fold0
    assert "cancels a key's" not in plain
    # round 04b: the 1 - p_top factor sits in a fold; review 04b (round 6): the two-key
    # slope is on the main line (asserted in grad-two), said once
    rows_fold = " ".join(cells[ids.index("grad-rows-read")].source.split())
    assert "a constant times" not in rows_fold  # review 04p: the factors are named
    # diet 11: the table below prints 0.25 and 1e-4; the prose says what they show
    # review 04hh: the table shows the fall; review 04ii (F4): the slope's variable named
    # review 04qq (item 3): the sentence runs on into the equation (", and")
    # review 04rr (item 1): the slope glossed, right above the table that measures it
    said = r"Its slope, how fast $p$ rises with $g$, is $p\,(1 - p)$; the table measures it:"
    assert said in plain and "Two keys" not in rows_fold
    # review 04p: the divide-or-shrink box drew a finding in three reviews running: cut,
    # with its cells (SGD and Adam are not taught by chapter 4)
    for gone in ("why-divide", "divide-or-shrink", "why-divide-code", "why-divide-assert"):
        assert gone not in ids, gone
    # review 04kk (F1): Adam is named once, in exercise 4.3's solution only
    assert "start smaller" not in markdown_text(cells) and markdown_text(cells).count("Adam") == 1
    # the general sum of keys lives in the fold (review 04t): not on the main line
    fold = " ".join(cells[ids.index("grad-rows-read")].source.split())
    for word in (
        r"at most a multiple of $1 - p_{\text{top}}$",  # review 04hh (F7): the bound, in words
        "ranges from most of the row to almost nothing",  # review 04 round s, finding 6
    ):
        assert word in fold and word not in plain, word
    assert "Scaled, $c = 1/\\sqrt{d_k}$ cancels that length" not in fold  # round s: said once
    for gone in (r"\bar k", r"\bar a", "k_t"):  # review 04k: the derivation is chapter 10's
        assert gone not in fold, gone
    # review 04ae: "a key is about sqrt(d_k) long" is said once; round s: on the main line
    assert markdown_text(cells).count(r"$\sqrt{d_k}$ long") == 0
    # review 04dd (F1): with two keys the slope multiplies a difference of keys, k_1 - k_2
    # review 04pp (item 1): one equation, the phrase kept as the gloss of a_1 - a_2
    said = r"\frac{\partial L}{\partial q} = (a_1 - a_2)\, p\,(1 - p)\, c\,(k_1 - k_2)."
    assert markdown_text(cells).count(said) == 1
    # review 04rr (item 1): a_j is defined on the main line, in words, before the equation
    # (L = sum_j p_j a_j, so a_j = dL/dp_j); "how much the loss cares which value wins" is cut
    # review 04ss (item 2): with L = G . o on the main line, a_j = G . v_j joins it there
    said = r"Let $a_j = G \cdot v_j$, how fast the loss grows with the weight on value $j$."
    assert said in plain and "how much the loss cares" not in markdown_text(cells)
    # review 04qq (item 3): a_j = G . v_j sat in the fold that defines G; review 04ss: the
    # main line's, once
    intro_fold = cells[ids.index("grad-intro-fold")].source
    assert markdown_text(cells).count(r"a_j = G \cdot v_j") == 1
    assert r"L = G \cdot o = p\,a_1 + (1 - p)\,a_2" in intro_fold
    said = r"key 1 ahead by a gap $g$: key 1 gets $p = 1/(1 + e^{-g})$."
    assert said in plain and r"($c = 1$ raw, $1/\sqrt{d_k}$ scaled)" in plain
    assert "key's length (about" not in markdown_text(cells)
    assert markdown_text(cells).count("about 1 when scaled") == 1
    assert "almost nothing gets through" not in plain  # rows just past 0.99 still pass a lot
    # review 04dd (F3, F6): starvation tied to the lead, not to the 0.99 cut, in one clause
    # review 04hh (F2): saturation the symptom, starving how far past it, one lead statistic
    # review 04ii (F4): one threshold; the table read against it, then how far past it rows go
    # review 04qq (item 3): the ln 10 step moves into grad-intro's fold
    # review 04vv (item 2): the 25 times joins the reason the slope's fall wins (grad-formula)
    said = "(at 0.99 it is already 25 times below its peak)"
    assert "each further $2.3 = \\ln 10$ of gap divides it by 10." in " ".join(intro_fold.split())
    # review 04kk (F5): the two halves joined: the gap and k_1 - k_2 both grow like sqrt(d_k)
    # review 04_mm (F2, F3): no two-key gap spreads beside the 16-key table; "past a modest width"
    assert (
        # review 04vv (item 2): why the fall wins: it is exponential in the gap
        r"and $k_1 - k_2$ grow like $\sqrt{d_k}$. But the slope falls exponentially with the gap"
        in plain
    )
    assert "11 at $d_k = 64$" not in plain
    # review 04jj (F5): the unshown "lead by 10 or more" sentence is cut
    assert "10 or more" not in plain
    # review 04rr (item 4): "just past 0.99" is back, as the measured contrast at d_k = 1024
    # (grad-why-uneven; grad-share-assert: 1.3 times the scaled median here)
    assert said in plain and "symptom" not in plain
    # review 04tt (item 1): ... and moves, with its table, into its own fold (grad-starve-fold)
    starve = " ".join(cells[ids.index("grad-starve-fold")].source.split())
    assert "just past 0.99" not in plain and "far past 0.99, above 0.9999" in plain
    assert "rows just past 0.99 still get about a scaled row's gradient" in starve
    assert r"is $p\,(1 - p)$; the table measures it:" in plain
    assert ids.index("grad-rows-read") < ids.index("2eda6d98")  # before the exercises
    # review 04m: the summary names the GPT-2-style init (it saturates few rows)
    # review 04kk (F2): the GPT-2 variance, 0.31, is now the summary's caveat
    for aside_only in ("µP", "μP", "learning rate", "shrink", "Shrink"):
        assert aside_only not in summary, aside_only
    # the numbers hold for independent components (review 04z; 04ag: sigma^4, not only 1);
    # the unshown after-training claim is cut (review 04v)
    said = "assumes independent components of variance 1; at GPT-2's initialisation"  # 04kk
    assert said in " ".join(summary.split())
    assert "After training" not in summary
    assert "temperature" not in summary  # review 04aa: no forward reference


def test_the_hand_sum_cell_is_cut_and_the_main_line_says_why_raw_carries_sqrt_d_k():
    # review 04y: grad-hand repeated what the Jacobian paragraph proves; it is cut, and the
    # fold no longer points at it. The main line gives the reason in one clause.
    cells = chapter_cells()
    ids = [cell.get("id") for cell in cells]
    assert "grad-hand" not in ids and "grad-hand-assert" not in ids
    fold = " ".join(cells[ids.index("grad-rows-read")].source.split())
    assert "by hand" not in fold
    assert ids[ids.index("grad-rows-read") + 1] == "grad-rows"  # grad-two moved up (04f)
    # review 04p: the divide-or-shrink box is cut; the exercises follow the gradient's cells
    assert ids[ids.index("grad-share-assert") + 1] == "2eda6d98"
    # round 04b: one main-line paragraph (conclusion first), the figure, then the row-by-row
    # detail in a fold with its cells hidden under it
    prose = " ".join(cells[ids.index("grad-rows-read")].source.split())
    read = " ".join(cells[ids.index("grad-intro")].source.split())
    read += " " + " ".join(cells[ids.index("grad-formula")].source.split())
    figure_read = " ".join(cells[ids.index("grad-figure-read")].source.split())
    # review 04b (round 6): the loss and the two-key slope move up from the fold (the
    # section as a whole shrank, 529 -> 505 words)
    # review 04pp (item 1): 140 -> 185 for the two-key equation, p = 1/(1 + e^-g), and the
    # loss moved up from grad-figure-read (the equation alone splits into 20 "words")
    # review 04rr (item 1): split into grad-intro (example, then the table) and grad-formula;
    # 185 -> 210 for the two, as the coffee analogy (24 words) moved in from grad-why-uneven
    # and a_j is defined in words on the main line
    intro_and_formula = [
        outside_folds(cells[ids.index(i)].source) for i in ("grad-intro", "grad-formula")
    ]
    # review 04ss (item 2): 210 -> 232 for the loss, L = G . o, defined on the main line
    # before the formula that uses it (and a_j = G . v_j beside a_j's words)
    # review 04tt (item 2): 232 -> 257 for a one-sentence roadmap (two effects compete; the
    # winner sets the gradient), paid for in grad-why-uneven (103 -> 80)
    # review 04vv (item 2): 257 -> 262 for why the slope's fall wins (exponential in the gap);
    # the gradient's definition moved up from grad-formula at about the same length
    # review 04ww: +19 for 'learned number (the entries of W_q, W_k, W_v)' in place of
    # 'weight' (an attention weight everywhere else) and what the gradient is measured on
    assert len(" ".join(intro_and_formula).split()) <= 281
    # review 04f (round g): the section is split at the two-key table; the figure's paragraph
    # review 04aa (F2): 30 -> 45 for the sentence on what G stands for (the legend-duplicate
    # "Lines: median; bands: middle 80%." is cut to pay for part of it)
    assert len(cells[ids.index("grad-figure-read")].source.split()) <= 45
    # review 04ag: seed-robust wording (other seeds asserted in grad-share-assert)
    # review 04ah: the squared share and its seed caveat live in the fold, with the key length
    # review 04ai: the page's own share, with the seed range (grad-share-assert)
    # review 04a (round 5): a share that holds across seeds, and "30%" said once (cell 17)
    share_said = "The saturated rows get well under a thousandth of the total squared gradient"
    # review 04d (round e): the "Row by row" paragraph repeated the figure; the fold keeps
    # its bound only
    assert share_said not in prose and "thousandth of the total" not in read
    assert "30%" not in prose and "30%" not in read
    assert "squares averaging 1" not in prose  # round s: the key length is the main line's
    assert "stand in for any loss" not in read  # review 04a: opaque with the code hidden
    assert r"\lVert\partial L/\partial q_i\rVert" in figure_read  # the plotted quantity, named
    assert r"z_{ij}" not in read  # review 04a: the backward formula is the fold's
    # review 04a: the key-length reason sits in the fold, by the bound that needs it
    # review 04d (round e): far more uneven only from d_k ~ 16 (asserted in grad-assert)
    # review 04f (round g): at 64 the raw median is a little higher; the harm is the spread
    # review 04l: split into what is plotted, then what it shows; uneven both ways
    # review 04_t: what is plotted before the figure; what it shows after it (grad-why-uneven)
    plotted = figure_read
    shows = " ".join(cells[ids.index("grad-why-uneven")].source.split())
    assert ids.index("4c97044e") < ids.index("grad-why-uneven")  # after the figure
    # review 04rr (item 2): it opens on what to see in the figure
    assert "Lines: median" not in plotted
    assert shows.startswith("In the figure, scaled gradients stay steady. The raw median")
    # review 04aa (F1, F4): 40 -> 75 for the numbers behind "uneven" and the moved analogy
    # review 04pp (item 2): 75 -> 85 for the crossing said as its own sentence
    # review 04rr (items 2 and 4): 85 -> 90 for the figure's reading first and "rows just past
    # 0.99 get about a scaled row's gradient" (the coffee analogy, 24 words, moved out)
    # review 04ss (items 1 and 3): 90 -> 103 for why rows just past 0.99 still learn at 1024
    # (raw scores move 32 times faster); the seed range (7 words) moved to grad-rows-read
    # review 04tt (item 1): 103 -> 80: the 32-vs-25 reason and the band table moved into
    # grad-starve-fold; one sentence stays
    assert "**Scaled: steady" not in figure_read and len(shows.split()) <= 80  # 04_z: two short
    roadmap = "Two effects compete: saturation mutes a row's response to its scores, while unscaled"
    roadmap += " scores respond more to $q$ as keys grow longer; the winner sets the gradient."
    assert roadmap in read and read.index("Two effects") < read.index("Take a row with two keys")
    # review 04n: the unsaturated rows' own median, at 64, and uneven both ways said once
    # review 04p: the figure's own ratio (1.4) first, then the two groups it hides
    # review 04q: seed-robust ranges (this seed's 1.4 and 3.7, and other seeds, asserted in
    # grad-assert); the two groups the median hides follow a "but"
    # review 04 (round s): one ratio per idea; the collapse measured (grad-share-assert)
    # review 04_t (F3): a larger raw gradient is not a better one: its size depends on d_k and
    # differs over 1000-fold between rows (grad-assert); the median's collapse is the figure's
    said = "unsaturated rows get *larger* gradients (the key's length is not divided out)."
    # review 04_x (F1): the 1000-fold band is the figure's; the page says why uneven hurts
    assert "1000-fold" not in shows
    # review 04_z (F6): the largest ratio, 2.6 at d_k = 16, with its cause (grad-assert)
    # review 04cc (F5): "it" named: the keys' length, then saturation
    # diet 11: the 2.6 is cut (one number per claim; grad-assert keeps the peak at 16)
    # review 04kk (F4): the keys are the same; unscaled scores move sqrt(d_k) times faster
    # review 04rr (item 2): the rise, the crossing near 128 (grad-assert: 1.39 at 64, 0.94 at
    # 128) and the collapse in one sentence; "uneven" in its own short paragraph
    said = r"larger at small widths (scores move $\sqrt{d_k}$ times faster with $q$), falls below"
    said += r" the scaled one near $d_k = 128$, then collapses."
    assert said in shows and "1.4" not in shows and "2.6" not in shows
    assert "Raw gradients are also uneven: at $d_k = 64$ saturated rows get 3%" in shows
    # review 04rr (item 4): 0.99 is a label; starving happens far past it (grad-share-assert)
    # review 04tt (item 1): one main-line sentence; the rows just past 0.99 are the fold's
    # review 04uu (item 5): the fold named, since two folds follow
    said = 'the starved rows sit far past 0.99, above 0.9999 (the "Which saturated rows starve?"'
    said += " fold)."
    assert "starve?" in cells[ids.index("grad-starve-fold")].source.splitlines()[0]
    assert said in shows and "just past" not in shows
    # review 04_v (F1): the figure's median curve in words (grad-share-assert has the ratios)
    # review 04_x (F5): one seed's ratios, said loosely (grad-share-assert has the ranges)
    # review 04_y (F6): two ratios; the 3.7 split moved into the row-by-row fold
    # review 04cc: the 5 times at 256 is the summary's
    # review 04dd (F5): split into short sentences; the collapse's number said once
    # review 04ii (F6): "collapses" fit 512 and 1024, not 256: the ratios said instead
    # review 04jj (F1): the 1024 ratio as the seeds' range (grad-share-assert)
    # review 04kk (F3): the raw median falls from d_k = 16; from 256 it is below the scaled one
    # review 04pp (item 2): they cross between 64 and 128 (grad-assert); the 1024 ratio is
    # the figure's (about 1000) and the range is said to be across seeds (grad-share-assert)
    # review 04qq (item 4): two numbers on the main line (3% at 64, about 1000 times at 1024);
    # the crossing and the 5 times at 256 are the figure's (grad-assert, grad-share-assert
    # keep them); the seed range measured on 20 seeds, 561 to 2168 (a reviewer drew 472)
    # review 04ss (item 3): the seed range moves into grad-rows-read's fold
    said = "At $d_k = 1024$ the raw median is about 1000 times below the scaled one; the"
    assert "several hundred to over 2000" in prose and "across seeds" not in shows
    # review 04ss (item 1): the reason; review 04tt (item 1): in the fold, said as a rough
    # two-key argument (grad-share-assert: 32 / 25 = 1.28 against the measured 1.3)
    starve = " ".join(cells[ids.index("grad-starve-fold")].source.split())
    said2 = r"A rough two-key argument suggests why: raw scores move $\sqrt{1024} = 32$ times"
    assert said2 in starve and "25 times below its peak" in starve and "32 times" not in shows
    assert "so it gives only the order of magnitude; the table is the measurement." in starve
    assert ids.index("grad-starve-fold") == ids.index("grad-why-uneven") + 1
    assert "medians cross" not in shows and "5 times at 256" not in shows
    # review 04aa (F1): the numbers for "uneven" move from the fold to the main line
    # review 04bb (F2): the two numbers are printed by grad-rows64, just above
    # diet 11: the 3.7 is printed just above; the prose keeps the 3% (one number)
    said2 = "at $d_k = 64$ saturated rows get 3% of the scaled median"  # review 04jj: ","
    assert said in shows and said2 in shows and "3.7" not in fold and "3%" not in fold
    assert "about 4 times" not in figure_read and "collapses" not in figure_read
    assert "typical" not in figure_read
    # review 04hh (F7): the fold's written-out stand-in loss is cut; the figure's cell names it
    # review 04pp: the loss and G are defined in grad-intro, beside the equation that uses G
    # review 04qq (item 3): ... and into grad-intro's fold
    intro_fold = " ".join(cells[ids.index("grad-intro-fold")].source.split())
    # review 04ss (item 2): ... and back to the main line, before the formula (grad-formula)
    assert "stand-in for what the layers above want" in " ".join(
        cells[ids.index("grad-formula")].source.split()
    )
    assert "stand-in" not in intro_fold
    assert "stands in" not in figure_read
    # review 04q: the main line says in one clause what L is, the fold writes it out
    # review 04_v (F4): why a random loss is a fair probe, in the same clause
    # review 04_z (F4): L written out, the same G for raw and scaled
    said = "We plot the size of each query's gradient, $\\lVert\\partial L/\\partial q_i\\rVert$"
    assert said in figure_read and "pull" not in figure_read
    order = ["grad-intro", "grad-two", "grad-figure-read", "grad-code", "4c97044e"]
    order += ["grad-rows-read", "grad-rows"]
    assert [ids.index(i) for i in order] == sorted(ids.index(i) for i in order)
    assert prose.startswith("````{admonition} Going deeper (optional): the gradient, row by row")
    assert outside_folds(cells[ids.index("grad-rows-read")].source).strip() == ""
    rows = cells[ids.index("grad-rows")]
    # review 04ag: the fold states its numbers; its three cells leave the page (no stray toggles)
    assert rows.metadata.get("tags") == ["remove-cell"] and "dOut" not in rows.source
    out = "".join(o.get("text", "") for o in rows.outputs)
    # review 04a (round 5): medians over bands of rows, not one row each
    assert re.search(r"^near 0\.6\s+\d+\s+9\.9$", out, flags=re.M), out
    assert re.search(r"^near 0\.9999\s+\d+\s+0\.00\d+$", out, flags=re.M), out
    assert "a median of 7 to 10 times a typical scaled gradient" not in prose  # cut (04d)
    assert "rows near 0.9999" not in prose and "0.3%" not in prose
    # the starved tail at real head widths (review 04y), one number each (review 04z);
    # review 04ac: the spread, not the median, is the argument, and it names the learning rate
    assert "The middle 80%" not in prose  # review 04b (round 6): the figure's bands show it
    assert "One raw query in ten is starved" not in prose  # cut with "Row by row" (04d)
    assert r"\le 4\, c\, \max_j" not in prose  # review 04hh (F7): the bound is cut
    # review 04ad: a learning rate applies to W_q, whose gradient sums the rows: that is cut
    assert "No single learning rate" not in " ".join(c.source for c in cells)
    # review 04jj (F6) asked why uneven hurts; a per-row learning-rate clause is cut again
    # (04ad: rows are not parameters; W_q's gradient sums them)
    assert "one learning rate cannot suit" not in shows
    check = cells[ids.index("grad-assert")].source
    assert "starved" not in check and "ratio[at[256] :] < 0.25" in check  # review 04m
    share = cells[ids.index("grad-share-assert")]
    assert share.metadata["tags"] == ["remove-cell"]
    assert "sat_share < 1 / 3000" in share.source and "range(20, 30)" in share.source


def test_the_gradient_section_opens_with_two_keys_and_a_slope_of_p_times_1_minus_p():
    cells = chapter_cells()
    ids = [cell.get("id") for cell in cells]
    assert ids.index("grad-intro") < ids.index("grad-two") < ids.index("grad-code")
    # review 04aa: the 1 - p_top table is cut (it primed a wrong expectation); review 04m:
    # the starved-queries table is cut too (the figure's band shows it)
    assert "grad-cap" not in ids and "grad-table" not in ids
    assert "grad-prose" not in ids and "grad-two-read" not in ids  # folded (round 04b)
    assert ids.index("4c97044e") + 1 == ids.index("grad-rows64")
    assert "starved" not in cells[ids.index("grad-code")].source
    assert 'np.median(per_row["scaled"])' not in cells[ids.index("grad-code")].source
    two = cells[ids.index("grad-two")]
    # review 04f (round g): the gap -> p -> p(1 - p) table is shown, after its paragraph
    assert not two.metadata.get("tags") and "attention_backward" not in two.source
    # review 04qq (item 3): grad-intro's fold (L, G, the chain rule) sits between them
    # review 04rr (item 1): the table follows the worked example directly; the formula and
    # its fold come after the table
    assert ids.index("grad-two") == ids.index("grad-intro") + 1
    assert ids.index("grad-two-assert") == ids.index("grad-two") + 1
    assert ids.index("grad-formula") == ids.index("grad-two-assert") + 1
    assert ids.index("grad-intro-fold") == ids.index("grad-formula") + 1
    out = "".join(o.get("text", "") for o in two.outputs)
    # review 04_x (F8): the finite-difference column was cut; review 04jj (F4): it is back, so
    # the learner sees that p(1 - p) is the slope (grad-two-assert checks it)
    assert "nudged slope" in two.source
    rows = re.findall(r"^\s*([\d.]+)\s+([\d.]+)\s+(\S+)\s+(\S+)$", out, flags=re.M)
    table = {float(g): (float(p), float(slope)) for g, p, slope, nudged in rows}
    assert all(slope == nudged for *_, slope, nudged in rows)
    assert len(table) == 4 and table[0.0] == (0.5, 0.25)
    assert table[9.2][0] == 0.9999 and table[9.2][1] == 0.0001  # "about 1e-4"
    for p, slope in table.values():
        assert math.isclose(slope, p * (1 - p), rel_tol=0.05)


def test_the_gpt2_teaser_leads_with_the_boxs_conclusion():
    cells = {c.get("id"): c for c in chapter_cells()}
    aside = " ".join(cells["gpt2-deeper"].source.split())
    main = " ".join(cells["fa6cbeb4"].source.split())  # review 04k: said once, on the main line
    # review 04_t (F8): the conclusion first; the spread 2.5 is the hidden cell's printout
    assert "spread 2.5" not in main and "chapter 3" not in aside  # session 10: teaser cut
    out = "".join(o.get("text", "") for o in cells["2e6482c3"].outputs)
    assert "spread of a raw score: 2.45" in out and "top weight above 0.5:  50% of rows" in out
    assert "(spread 8 at $d_k = 64$)" in " ".join(cells["2e6482c2"].source.split())
    assert "used unit-variance vectors, a harsh start" in aside  # why it is not 8
    # review 04ii (F2): the sentence length said, and GPT-2's own 1024 tokens
    assert "In our 16-token sentences almost no rows saturate" in aside
    # review 04pp (item 5): three bullets; "only 3%" says what it counts
    # review 04qq (item 1): "their" read as the 3%; the 0.17 is the mean over all rows
    # review 04uu (item 4): one draw's 3% becomes the range over 10 draws (the next test)
    said = "only 3 to 5% of rows give one key over half the weight (10 draws), and the mean"
    said += " top weight over all rows is 0.17 to 0.18 (an even row: 0.001)."
    assert said in aside and "no causal mask" in aside and "only 3% of" not in aside
    assert "their mean top weight" not in aside
    bullets = [line for line in cells["gpt2-deeper"].source.splitlines() if line.startswith("- ")]
    assert [b.split()[1:3] for b in bullets] == [
        ["In", "our"],
        ["Over", "GPT-2's"],
        ["Dividing", "by"],
    ]
    assert "at 1024 tokens: 3% of rows above 0.5, mean top 0.17" in out


def test_the_gpt2_box_1024_token_ranges_hold_over_ten_draws():
    # review 04uu (item 4): "3 to 5%" and "0.17 to 0.18" over seeds 1 to 10, drawn as the
    # page's hidden cell draws seed 1 (W_q, W_k, the 16-token sentences, then 1024 tokens);
    # measured: 2.8% to 4.6%, mean top weight 0.170 to 0.182 (about 4 s, too slow for the page)
    shares, tops = [], []
    for seed in range(1, 11):
        rng = np.random.default_rng(seed)
        W_q, W_k = rng.normal(scale=0.02, size=(2, 768, 64))
        rng.normal(size=(100, 16, 768))  # the 16-token sentences, drawn first on the page
        x = rng.normal(size=(4, 1024, 768))
        x = (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)
        top = al.softmax(al.attention_scores(x @ W_q, x @ W_k)).max(axis=-1)
        shares.append(np.mean(top > 0.5))
        tops.append(top.mean())
    assert round(shares[0], 3) == 0.032 and round(tops[0], 2) == 0.17  # the page's draw
    assert (round(100 * min(shares)), round(100 * max(shares))) == (3, 5)  # "3 to 5%"
    assert (round(min(tops), 2), round(max(tops), 2)) == (0.17, 0.18)  # "0.17 to 0.18"


@pytest.mark.parametrize("scale", [1.0, 0.125])
def test_the_pages_sum_of_keys_is_the_backward_pass(scale):
    """dL/dq_i = c sum_j a_j p_j (k_j - k_bar), a_j = dOut_i . v_j, for L = sum(dOut * out)."""
    rng = np.random.default_rng(4)
    Q, K = rng.normal(size=(2, 3, 6, 64))
    V, dOut = rng.normal(size=(2, 3, 6, 5))
    p = al.softmax(scale * al.attention_scores(Q, K))  # (3, 6, 6)
    a = dOut @ np.swapaxes(V, -1, -2)  # (3, 6, 6): a[b, i, j] = dOut_i . v_j
    k_bar = p @ K  # (3, 6, 64): one weighted average key per query
    by_hand = scale * np.einsum("bij,bijd->bid", a * p, K[:, None] - k_bar[:, :, None])
    np.testing.assert_allclose(by_hand, attention_backward(Q, K, V, dOut, scale=scale)[0])


def test_the_invented_protocol_is_gone_and_the_chapter_stays_short():
    # Ten reviews stalled on a "deaf"/"brittle" test with a nudge and a probe; the chapter
    # now uses only the standard measures (top weight above 0.99, the size of J).
    text = " ".join(visible_markdown(chapter_cells())).lower()
    for word in ("deaf", "brittle", "probe", "runner-up", "nudge"):
        assert word not in text, word
    words = len(text.split())
    assert words <= 2050, f"{words} visible words; fix round 6 left 1760"


def test_a_value_diff_prints_enough_digits_to_tell_the_two_apart():
    from attention_lib.checks.base import difference  # noqa: PLC0415

    out, want = np.full(5, 1.0), np.full(5, 1.0)
    out[2], want[2] = 1.98162, 1.98234
    assert difference(out, want).endswith("got 1.9816, expected 1.9823")
    out[2], want[2] = 0.5, 0.25  # already apart at four digits: unchanged
    assert difference(out, want).endswith("got 0.5, expected 0.25")
    out[2] = want[2] = np.nan  # never apart: four digits, and no crash
    assert difference(out, want).endswith("got nan, expected nan")


# --- review 04u: the scatter, the moved aside, the loose phrasings --------------------------


def test_raw_and_scaled_colours_reach_3_to_1_on_white_in_every_chapter_4_figure():
    """Review 04v: the scaled mustard had 2.0:1 against white; WCAG 1.4.11 asks 3:1."""
    from matplotlib.colors import to_rgb  # noqa: PLC0415

    def contrast(colour):
        rgb = np.array(to_rgb(colour))
        linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        return 1.05 / (float(linear @ [0.2126, 0.7152, 0.0722]) + 0.05)

    assert contrast(RAW["color"]) >= 3 and contrast(SCALED["color"]) >= 3
    d = np.array([16, 64, 512])
    fig, _ = gradients_vs_dimension(d, [1.0, 0.5, 0.01], [0.7, 0.7, 0.7])
    raw_line, scaled_line = fig.axes[0].get_lines()
    assert to_rgb(raw_line.get_color()) == to_rgb(RAW["color"])
    assert to_rgb(scaled_line.get_color()) == to_rgb(SCALED["color"])
    plt.close(fig)
    frame, _ = scaling_frame(np.random.default_rng(0).normal(scale=8, size=(50, 8)), 64)
    left, middle, right = frame.axes
    assert to_rgb(left.patches[0].get_edgecolor()) == to_rgb(RAW["color"])
    assert to_rgb(middle.patches[0].get_edgecolor()) == to_rgb(SCALED["color"])
    raw_line, scaled_line = right.get_lines()
    assert to_rgb(raw_line.get_color()) == to_rgb(RAW["color"])
    assert to_rgb(scaled_line.get_color()) == to_rgb(SCALED["color"])
    for ax in frame.axes:  # no title repeats its y label
        assert ax.get_ylabel().lower() not in ax.get_title().lower()
    plt.close(frame)


def test_review_04u_phrasings_are_exact():
    cells = {c.get("id"): c for c in chapter_cells()}

    def text(cid):
        return " ".join(cells[cid].source.split())

    assert "**Experiment:** ten widths from 2 to 1024," in text("fc268831-b")
    assert "stays between 0.5 and 0.75" not in text("grad-rows-read")  # the figure's (04b)
    # session 10: the slider's paragraph says what to watch; the panels' titles and y labels
    # name them (density: test_the_sliders_middle_panel_has_its_own_y_label)
    assert "hardly moves" not in text("grad-intro")
    summary = text("108c6c23")
    assert "no row saturates" not in summary
    # review 04ag: the variance stays sigma^4, 1 only for unit-variance components
    # review 04ai: sigma^4 is in the first bullet (times that of one product), said once
    assert "keeps the variance from growing with $d_k$, and the gradients steady." in summary
    assert "($d_k$ at unit variance)" in summary
    said = "at GPT-2's initialisation (variance about 0.31) unscaled rows are sharp but rarely"
    assert said in summary  # review 04kk (F2): the main line's 30% / 70% need variance 1
    # review 04z: one measurement in the starved-rows bullet; shrink-vs-divide is fold-only
    assert "a typical query collapses" not in summary
    # review 04ac: the saturated and the starved shares are not mixed in one sentence; the
    # bullet says what the grad-rows cell shows (asserted on medians in summary-assert)
    # review 04_v (F8): only the queries' gradient is measured; "uneven", as the objectives
    # review 04_z (F1): and the collapse at large widths
    # review 04aa (F5): "mostly vanishing" was the median's 5x drop; most rows saturate there
    # review 04bb (F3): the starved queries and the median's collapse, both named
    # review 04cc (F2): at d_k = 64 the harm is unevenness; the median falls from 256
    # review 04dd (To reach 9): the collapse's number is said once, beside the figure
    # review 04hh (F1): the summary's 1000-fold (a different quantity from the body's) is cut
    # review 04ii: cut to its first claim, for words (the figure's reading has the fall)
    said = r"**saturate** softmax rows and starve many queries of gradient."
    assert "mostly vanishing" not in summary
    assert said in summary and "one raw query in ten" not in summary  # 04m: with the shares
    assert "a tenth to a fifth" not in summary and "suit every width" not in summary
    assert "2 keys" not in summary  # review 04w: an unshown claim, cut
    # review 04_t (F7): one short sentence per panel; the axis ratio is the code's detail
    # review 04_z (F3): the middle axis's true ratio, said (slider-assert: 120 / 4)
    # review 04qq (item 6): the axes' ranges said first (slider-assert: ±120 and ±4), so the
    # 30-fold narrower middle axis registers before the learner drags
    said = "Note the fixed x-axes: ±120 on the left, ±4 in the middle. Drag the slider: raw scores"
    said += " (left) spread out and their rows pile onto"
    assert said in text("439f69a3")  # session 10: one sentence, what to watch
    # review 04af: the article's analogy is raw scores as water too hot, scaling as cooling
    # review 04ah: the scaling as chapter 5's temperature; the 20 tied to the data. The
    # article's coffee analogy stays (the course keeps its analogies), cited.
    # review 04a (round 5): "cooling" beside a temperature above 1 read backwards; the
    # analogy is about the scores' size. Review 04b (round 6): it moves to where the page
    # first says raw scores are too large, glossed as shrinking, with chapter 5's temperature
    # Review 04d (round e): the toy barely needs scaling, so the analogy moves to right after
    # the measurement that shows rows saturating; chapter 5 makes the temperature link.
    # Review 04f (round g): it opens the chapter, where raw scores are first said to run large
    # review 04n: one clause of the course's own makes the analogy explain
    # review 04o: the mapping made honest: past a point, more heat spoils rather than helps
    # review 04_t (F5): the analogy stays, its gloss shorter
    # review 04_v (F2): cell 3 used it before "saturate" was defined; it moves to the
    # saturation section, one sentence, right after the word is defined
    # review 04_x (F2, F4): "saturated" defined by its 0.99 cut-off, then the analogy, as the
    # intuition, before the numbers
    # review 04aa (F4): saturation only grows with the spread; the analogy moves to the
    # gradient figure's reading, where the raw median rises, then falls
    said = "We call a row **saturated** when its top weight exceeds 0.99."
    assert said in text("cd18d051") and "coffee" not in text("cd18d051")
    # review 04hh: one short sentence, at the collapse
    # review 04jj (F3): the analogy mapped in one clause (heat: spread; flavour: sharper rows)
    # review 04rr (item 2): it opens the section it motivates, before the worked example
    said = "Like water for coffee {cite}`understanding-transformers-4`: hot enough extracts"
    intro = text("grad-intro")
    assert said in intro and "coffee" not in text("fa6cbeb4")
    assert intro.index("coffee") < intro.index("Take a row with two keys")
    why = text("grad-why-uneven")
    assert "coffee" not in why
    assert why.index("3%") < why.index("1000 times below") < why.index("0.9999")  # 04pp, 04qq
    # review 04ii (F5): what "more" was: sharper scores
    assert "spread-out scores sharpen rows, too spread out they starve learning." in intro
    # review 04p: the image is for "too large" only; dividing shrinks the scores, which in
    # chapter 5's terms is a temperature above 1 (it flattens rows), so nothing "cools"
    assert "coffee" not in text("4875b8d4")
    assert "cool" not in text("4875b8d4") and "bitter" not in text("4875b8d4")
    # review 04q: "flattens" is said once, on the toy row (fcdb6ff2)
    # review 04 (round s): the temperature aside is cut; chapter 5 makes the link
    assert "temperature" not in text("4875b8d4")
    assert "coffee" not in text("fcdb6ff2") and "temperature" not in text("fcdb6ff2")
    # review 04q: the toy does not saturate, so why divide is said: for wide heads, and
    # training fits the weights with the division in place
    # review 04bb (F7): "saturates" is defined later; say nearly one-hot, with the number
    # review 04cc (F4): the 0.32 is the largest of all 8 rows, named as such
    # review 04ii (F7): "only flattens that row" misread; every row flattens (b22339f3)
    # review 04kk (F7): the ranking stays, said (b22339f3 asserts it on every row)
    said = "scaling makes every row flatter without changing its order (it → cake: 0.32 → 0.21,"
    assert said in text("fcdb6ff2") and "a little" not in text("fcdb6ff2")  # review 04p
    # review 04_t (finding 1): saturation is tied to unit-variance q and k (the GPT-2 box
    # shows 0.5% at d_k = 64 under a realistic start), not to width alone
    # review 04_u (finding 6): no forward claims (31%, W_q/W_k) before they are measured
    # review 04dd (F4): why the spread matters, before the variance maths
    said = "Scaling matters for wide queries and keys: spread-out scores push softmax rows"
    assert said in text("fcdb6ff2") and "31%" not in text("fcdb6ff2")
    assert "training fits" not in text("fcdb6ff2")
    assert "wide heads (64 and up)" not in text("fcdb6ff2")
    assert "22.6" not in text("fcdb6ff2")  # review 04o: a dangling fact, cut
    assert text("fcdb6ff2").count("one-hot") == 1  # review 04bb (F7), replacing "saturates"
    # review 04k: one forward pointer to chapter 5's temperature, where softmax is written out
    # review 04l: the direction made explicit: the cooling is a higher temperature
    # review 04m: cut; chapter 5 says "Chapter 4's scaling is T = sqrt(d_k)" where T is taught
    assert "temperature" not in text("cd18d051")
    # review 04_v (F3): the step from 5000 to over 0.99 shown (saturation-assert)
    # review 04_y (F2): "about 8", which holds across seeds (saturation-assert)
    # review 04cc: cut for words (too many numbers); saturation-assert keeps the step
    assert "0.995" not in text("cd18d051")
    # review 04hh (F2, F8): the e^8 sentence and its second lead statistic are cut
    assert "e^{8}" not in text("cd18d051") and "gap of 5" not in text("cd18d051")
    assert "understanding-transformers-4" in text("grad-intro")  # with its analogy
    # review 04p: the paper suspects it in section 3.2.1; footnote 4 has the variance only
    said = "{cite:t}`vaswani2017attention` (section 3.2.1 and footnote 4) suspected this"
    # session 10: the paper's note moves to a Going further dropdown
    assert said in text("gf-paper") and "Footnote 4 of" not in text("gf-paper")
    # review 04ai: the gap that saturates a row is the top score's lead over the next one
    # review 04d (round e): "typically" was a median; said so. Review 04l: the median lead
    # is said after the cell that prints it
    # review 04q: the lead of 8 is tied to d_k = 512's printed median, not to the spread 8
    # at d_k = 64
    assert "typically" not in text("cd18d051")
    assert "8.5" not in text("fa6cbeb4")  # review 04p: printed by the cell, not repeated
    # review 04dd (F8): the printed lead is a median
    # review 04hh (F2): one lead statistic on the page (grad-intro's 10 or more); no median
    assert "leads the next by about 8" not in text("cd18d051")
    assert "median lead" not in cells["saturation-code"].source
    # review 04n: what softmax does, in two sentences, before the lead of 8
    said = "Softmax exponentiates each score, then divides by the row's sum:"
    assert said in text("cd18d051")
    said = "Bigger gaps between scores make a row closer to one-hot. We call a row"
    assert said in text("cd18d051")
    # review 04n: the slider's right panel, pointed out (asserted in slider-assert)
    # review 04o: the numbers of the slider's opening frame (d_k = 64)
    # session 10: one number per claim: the 0.85 (slider-assert) left the prose
    said = "raw scores (left) spread out and their rows pile onto the top key (right)"
    assert said in " ".join(text("439f69a3").split()) and "skew" not in text("439f69a3")
    # review 04n: exercise 3 asks for a guess first; the solution gives the number
    assert "Guess the mean top weight for `raw_scores[512] / 512`" in text("ebd8373d")
    # review 04vv (item 1): the solution's code prints the 0.068 (its checker line) and a
    # table across widths; the text reads the table
    assert "0.068" not in text("ebd8373d") and "0.068" not in text("ebd8373f")
    assert "the mean of the row maxima is 0.068" in "".join(
        o.get("text", "") for o in cells["ebd83750"].outputs
    )
    assert "gap of 20" not in text("cd18d051")
    assert "fixed x-axes" in text("439f69a3") and "## " not in cells["439f69a3"].source
    # review 04v: the scatter is cut; the gradient is made twice on the main line
    assert "grad-scatter" not in cells and "one dot per row" not in text("grad-intro")
    # attention_backward and dOut are explained in the fold the main line points at (04z)
    read = text("grad-intro") + " " + text("grad-formula")  # review 04rr (item 1): split
    assert "attention_backward" not in text("grad-rows-read")  # review 04k: chapter 10's
    # review 04p: the stand-in loss, G and dOut live in the fold and the code's comment
    # review 04bb (F6): one name, G, in the prose and in the code
    assert "dOut" not in read and "dOut" not in text("grad-rows-read")
    assert "Stand-in loss: L = sum(G * attention output)" in cells["grad-code"].source
    assert not any("dOut" in c.source for c in cells.values())
    assert "Lines: median" not in text("grad-figure-read")  # review 04aa: the legend says it
    assert "standing in for any loss" not in text("grad-rows-read")
    # review 04ag: a gradient for any number; the weights are what training steps. Landing
    # review s: the loss is defined where chapter 4 first uses it (chapter 10 trains one).
    # review 04vv (item 2): ... at the top of grad-intro, before "the winner sets the gradient"
    # review 04ww: "weight" means an attention weight everywhere else: the learned numbers
    said = "Training moves each learned number (the entries of $W_q$, $W_k$, $W_v$) against its"
    said += " **gradient**: how fast the **loss** $L$ (how wrong the model is) changes as that"
    said += " number moves. We measure the gradient reaching a query $q$, through which $W_q$"
    assert said in read and read.index(said) < read.index("the winner sets the gradient")
    assert "A **gradient** says" not in read
    # review 04a (round 5): the mean-1 aside moved into the code cell that prints it
    assert "only at mean 0" not in text("fc268831")
    # review 04l: the 3 derived in the comment; review 04m: for the shifted variables
    rules = cells["variance-rules"].source
    # review 04_y (F4): the page never introduces E[.]; the comment keeps the result
    assert "# means 1: the variance is not 1 but 3" in rules and "E[" not in rules
    assert "E[a²]E[b²]" not in cells["variance-rules-assert"].source
    assert '"Var((a+1)(b+1)), means 1:"' in cells["variance-rules"].source  # review 04f
    # review 04p: the divide-or-shrink box is cut
    assert "divide-or-shrink" not in cells
    # review 04w/04y: why the raw median starts above the scaled one, in one main-line clause
    # review 04af: the exercise named by a reference, not by a bare number
    assert "nothing cancels" not in read
    # review 04ag: the pointer to exercise 3 is cut (the exercise asks it); no "(exercise 3)"
    assert "over-cancel" not in read and "(exercise 3)" not in read
    # review 04ac: the box said how; round s: the main line says it once, the box cut it
    assert "cancels that length" not in text("grad-rows-read")


# --- review 04z: checker hints -----------------------------------------------------------


def divides_both(Q, K):
    root = np.sqrt(Q.shape[-1])
    return (Q / root) @ swap(K / root)


def divides_k_in_place(Q, K):
    K /= np.sqrt(K.shape[-1])
    return Q @ swap(K)


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (divides_both, "dividing both Q and K by √d_k does that too"),
        (lambda Q, K: Q @ swap(K) / Q.shape[-1] ** 1 / 2, "you divided by d_k, then by 2; **"),
        (lambda Q, K: Q @ swap(K) / (Q.shape[-1] ** 1 / 2), "d_k ** 1/2 = 4.5; ** binds"),
        (divides_k_in_place, "input array K in place"),
        (divides_k_in_place, "K = K / np.sqrt(d_k), not K /= np.sqrt(d_k)"),
        (divides_q_in_place, "input array Q in place"),
    ],
)
def test_review_04z_scaled_scores_hints_name_the_slip(fn, hint, capsys):
    assert not check_scaled_scores(fn)
    line = capsys.readouterr().out
    assert hint in line, line
    assert "np.sqrt(d_k)" in line or "√9 = 3" in line


def test_review_04ac_the_scaled_legend_sits_above_the_peak_in_the_chapters_frames():
    # The chapter's slider passes ylim (0, 0.55): the bell (peak about 0.40) stays under the
    # legend of the middle panel, which it covered at ylim (0, 0.45).
    source = next(c.source for c in chapter_cells() if c.get("id") == "a4941e9d")
    assert "ylim=(0, 0.55)" in source
    z = np.random.default_rng(3).normal(size=(1600, 16)) * 8  # d_k = 64: spread about 8
    fig, _ = scaling_frame(z, 64, xlim=(-120, 120), ylim=(0, 0.55), bins=160)
    fig.canvas.draw()
    middle = fig.axes[1]
    box = middle.get_legend().get_window_extent()
    low, high = middle.transData.inverted().transform(box)  # legend corners, data units
    density, edges = np.histogram(z / 8, bins=32, range=(-4, 4), density=True)
    under = (edges[1:] > low[0]) & (edges[:-1] < high[0])  # bins beneath the legend
    assert density[under].max() < low[1]
    plt.close(fig)


# --- round 04b: exercise 4.3 has a cell to fill in, and a checker --------------------------


def test_mean_top_weight_checker_names_each_slip(capsys):
    from attention_lib.checks.variance import check_mean_top_weight

    rng = np.random.default_rng(0)
    raw = al.attention_scores(*rng.normal(size=(2, 20, 16, 512)))
    weights = al.softmax(raw / 512)
    right = weights.max(axis=-1)
    assert check_mean_top_weight(right, raw)
    assert f"{right.mean():.3f}" in capsys.readouterr().out
    assert check_mean_top_weight(right.tolist(), raw)  # a nested list is fine
    assert check_mean_top_weight(None, raw).status == "TODO"
    z = raw / 512
    col_softmax = np.exp(z) / np.exp(z).sum(axis=-2, keepdims=True)
    slips = [  # review 04ae: the first four passed the old one-number check
        (weights.max(axis=-2), "wrong axis: .max(axis=-2)"),
        (col_softmax.max(axis=-1), "each column sum to 1"),
        (np.median(right), "a mean or a median"),
        (weights[0].max(axis=-1), "first sentence only"),
        (right.mean(), "a mean or a median"),
        (al.softmax(raw / 512**2).max(axis=-1), "dividing by 512² = 262144"),
        (al.softmax(raw).max(axis=-1), "undivided raw scores"),
        (al.softmax(raw / np.sqrt(512)).max(axis=-1), "after dividing by √512"),
        (z.max(axis=-1), "largest scores, not weights"),
        (weights.argmax(axis=-1), "those are indices, not weights"),  # review 04ah
        ((al.softmax(raw) / 512).max(axis=-1), "you divided after softmax"),  # review 04ah
        # review 04m: the two slips that got the generic hint
        (al.softmax(raw * 512).max(axis=-1), "you multiplied the scores by 512 instead of"),
        (weights.min(axis=-1), "those are each row's smallest weight (.min)"),
        (np.full(right.shape, 1 / 16), "that is the mean weight of a row, always 1/n = 1/16"),
        (weights.mean(axis=-1), "always 1/n = 1/16: take each row's largest, .max(axis=-1)."),
        (right[..., :-1], "expected shape (20, 16)"),
        (right.reshape(-1), "values right; keep the (20, 16) layout: one entry per query"),
        # review 04a (round 5): keepdims named, in the course's sense of "row"
        (right[..., None], "drop keepdims=True: shape (20, 16), one entry per query"),
        (right.T, "expected shape (20, 16)"),  # same size, values in the wrong places
        (right.T, "your array is transposed"),  # review 04d (round e): named
        # review 04d (round e): the normalisation slips share one opening
        (np.exp(z).max(axis=-1), "your weights do not sum to 1 along each row"),
        (np.ones_like(right), "your weights do not sum to 1 along each row"),
        (
            (np.exp(z) / np.exp(z).sum(axis=0, keepdims=True)).max(axis=-1),
            "do not sum to 1 along each row: that softmax normalises over the first (batch)",
        ),
        ((np.exp(z) / np.exp(z).sum()).max(axis=-1), "the sum over the whole array"),
        ("0.07", "expected an array of numbers"),
        # review 04f (round g): the whole weights, the batch axis, and a mean per sentence
        (weights, "these are all the weights; take each row's largest, .max(axis=-1)"),
        (weights.max(axis=0), ".max(axis=0) takes the largest over the sentences"),
        (right.mean(axis=-1), "that averages each sentence's row maxima"),
        # review 04l: an int cast truncates every weight to 0
        (right.astype(int), "your array is integer: the weights were truncated to 0"),
        # review 04p: a hard-coded constant is told to compute each row's maximum
        (np.full(right.shape, 0.068), "every row has the same value, 0.068: compute each"),
        # review 04cc: right values held in float16 are named, not "not each row's largest"
        (right.astype(np.float16), "right values in float16: compute in float64"),
    ]
    for answer, hint in slips:
        assert not check_mean_top_weight(answer, raw)
        assert hint in capsys.readouterr().out, hint
    for bad in [dict(raw_scores=raw, d_k=0), dict(raw_scores=np.zeros((3, 1)), d_k=2)]:
        with pytest.raises(ValueError, match="must"):
            check_mean_top_weight(0.1, **bad)


def test_exercise_4_3_has_a_stub_cell_with_its_checker_on_the_website():
    cells = chapter_cells()
    ids = [cell.get("id") for cell in cells]
    stub = cells[ids.index("ebd8373d") + 1]
    assert stub.get("id") == "ebd8373d-code" and stub.cell_type == "code"
    assert not stub.metadata.get("tags")  # shown on the website
    assert "my_top = None" in stub.source and "check_mean_top_weight(my_top" in stub.source
    assert "check_mean_top_weight(my_top" in cells[ids.index("ebd83750")].source


def test_mean_top_weight_checker_names_another_widths_scores(capsys):
    """Review 04a (round 5): raw_scores[64] / 64 is the likeliest slip. Review 04b (round 6):
    another width is named only when the answer is exactly its softmax(raw_scores[d] / d)
    maxima; a rounded right answer is told so; other slips get the generic hint."""
    from attention_lib.checks.variance import check_mean_top_weight

    rng = np.random.default_rng(0)
    scores = {}  # d_k -> raw scores, as the chapter's raw_scores
    for d in 2 ** np.arange(1, 11):
        scores[int(d)] = al.attention_scores(*rng.normal(size=(2, 100, 16, d)))
    raw = scores[512]
    right = al.softmax(raw / 512).max(axis=-1)
    for d in (64, 128, 1024):
        answer = al.softmax(scores[d] / d).max(axis=-1)
        assert not check_mean_top_weight(answer, scores)
        line = capsys.readouterr().out
        assert f"softmax(raw_scores[{d}] / {d})" in line, line
        assert "divides raw_scores[512] by 512" in line
    for places in (2, 3, 4):  # tested first: a rounded answer is right, only rounded
        assert not check_mean_top_weight(right.round(places), scores)
        assert f"values right to {places} decimals: don't round" in capsys.readouterr().out
    # review 04jj: another width's divisor, or another width's scores, is named
    named = [
        (al.softmax(raw / 8).max(axis=-1), "you divided by 8 = √64, a d_k = 64 head's √d_k"),
        (al.softmax(raw / 256).max(axis=-1), "you divided by 256, another width"),
        (al.softmax(raw / 64).max(axis=-1), "you divided by 64, another width"),
        (al.softmax(scores[64] / 512).max(axis=-1), "those come from raw_scores[64] divided"),
        (al.softmax(scores[1024] / 512).max(axis=-1), "from raw_scores[1024] divided by 512"),
    ]
    for answer, hint in named:
        assert not check_mean_top_weight(answer, scores)
        line = capsys.readouterr().out
        assert hint in line and "512" in line, line
    generic = [  # (answer, others): no exact match, so no width is named
        (np.sort(al.softmax(raw / 512), axis=-1)[..., -2], scores),  # the second largest
        (al.softmax(scores[64] / 64).max(axis=-1), None),  # no other widths given
    ]
    for answer, others in generic:
        assert not check_mean_top_weight(answer, others or raw)
        assert "not each row's largest weight" in capsys.readouterr().out
    # review 04m: on the chapter's scores a product is not all ones, so it is named alone
    assert not check_mean_top_weight(al.softmax(raw * 512).max(axis=-1), scores)
    line = capsys.readouterr().out
    assert "you multiplied the scores by 512 instead of dividing: divide" in line, line
    assert not check_mean_top_weight(al.softmax(raw / 512).min(axis=-1), scores)
    assert "each row's smallest weight (.min)" in capsys.readouterr().out


def test_review_04vv_a_row_sum_is_named_as_a_sum(capsys):
    """Review 04vv (item 4): `.sum(-1)` for `.max(-1)` (all ones) was told "every top is exactly
    1, as np.exp(z - z.max) gives"; a sum's rounding tells it apart, so it is named."""
    from attention_lib.checks import check_mean_top_weight  # noqa: PLC0415

    rng = np.random.default_rng(0)
    scores = {int(d): al.attention_scores(*rng.normal(size=(2, 100, 16, d))) for d in (64, 512)}
    small = al.attention_scores(*rng.normal(size=(2, 20, 16, 512)))  # all-ones products
    said = "that is each row's sum (always 1: a row's weights add up to 1). Take each row's"
    for raw, given in ((scores[512], scores), (small, small)):
        z = raw / 512
        own = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)  # a softmax written out
        for sums in (al.softmax(z).sum(axis=-1), own.sum(axis=-1)):
            assert np.allclose(sums, 1) and not np.all(sums == 1)
            assert not check_mean_top_weight(sums, given)
            assert said + " largest weight, .max(axis=-1)." in capsys.readouterr().out
        # exactly 1 everywhere is still the unnormalised exp (or, here, the product)
        top = np.exp(z - z.max(axis=-1, keepdims=True)).max(axis=-1)
        assert not check_mean_top_weight(top, given)
        line = capsys.readouterr().out
        assert "np.exp(z - z.max(axis=-1, keepdims=True))" in line and "row's sum (" not in line
        assert not check_mean_top_weight(al.softmax(raw * 512).max(axis=-1), given)
        assert "you multiplied the scores by 512" in capsys.readouterr().out


def test_review_04pp_a_divisor_near_d_k_is_told_to_check_the_divisor(capsys):
    """Review 04pp: row maxima right except for a divisor near d_k (511, 500) got "not each
    row's largest weight"; they are row maxima, after the wrong division."""
    from attention_lib.checks import check_mean_top_weight  # noqa: PLC0415
    from attention_lib.checks.top_weight_divisor import fitted_divisor  # noqa: PLC0415

    rng = np.random.default_rng(0)
    scores = {int(d): al.attention_scores(*rng.normal(size=(2, 100, 16, d))) for d in (64, 512)}
    raw = scores[512]
    for c, said in (
        (511, "511"),
        (500, "500"),
        (513, "513"),
        (1000, "1000"),
        (512.5, "about 512.5"),
    ):
        for given in (scores, raw):  # the chapter's dict, or the array alone
            assert not check_mean_top_weight(al.softmax(raw / c).max(axis=-1), given)
            line = capsys.readouterr().out
            assert "FAIL: check your divisor" in line and f"dividing the scores by {said}" in line
            assert "this exercise divides by d_k = 512." in line
            assert "not each row's largest weight" not in line, line
    assert np.isclose(fitted_divisor(al.softmax(raw / 511).max(axis=-1), raw), 511)
    # not row maxima of this raw at any divisor: the generic hint stays
    right = al.softmax(raw / 512).max(axis=-1)
    shuffled = right[np.random.default_rng(1).permutation(len(right))]
    second = np.sort(al.softmax(raw / 512), axis=-1)[..., -2]
    for answer in (shuffled, second, right + 1e-4):
        assert fitted_divisor(answer, raw) is None
        assert not check_mean_top_weight(answer, scores)
        assert "not each row's largest weight" in capsys.readouterr().out
    # the named slips keep their own hints (√512, 8 = √64, another width's scores)
    for answer, hint in (
        (al.softmax(raw / np.sqrt(512)).max(axis=-1), "after dividing by √512"),
        (al.softmax(raw / 8).max(axis=-1), "8 = √64"),
        (al.softmax(scores[64] / 64).max(axis=-1), "softmax(raw_scores[64] / 64)"),
    ):
        assert not check_mean_top_weight(answer, scores)
        line = capsys.readouterr().out
        assert hint in line and "check your divisor" not in line, line
    assert check_mean_top_weight(right, scores)
    capsys.readouterr()


def test_review_04pp_exercise_4_3_asks_for_a_guess_first():
    cells = {c.get("id"): c for c in chapter_cells()}
    stub = cells["ebd8373d-code"].source
    assert stub.startswith("my_guess = None  # your guess first") and "my_top = None" in stub
    assert "Guess the mean top weight" in cells["ebd8373d"].source


def test_review_04jj_scaled_scores_names_an_int_cast_and_floor_division(capsys):
    def int_cast(Q, K):
        return (Q @ swap(K) / np.sqrt(Q.shape[-1])).astype(int)

    def floor_division(Q, K):
        return Q @ swap(K) // np.sqrt(Q.shape[-1])

    assert not check_scaled_scores(int_cast)
    assert "an int cast (.astype(int) or int())" in capsys.readouterr().out
    assert not check_scaled_scores(floor_division)
    assert "// is floor division" in capsys.readouterr().out


def test_review_04b_scaled_scores_names_float16_and_a_divisor_off_everywhere(capsys):
    def half(Q, K):
        Q, K = Q.astype(np.float16), K.astype(np.float16)
        return Q @ swap(K) / np.float16(np.sqrt(Q.shape[-1]))

    assert not check_scaled_scores(half)
    assert "are you using float16?" in capsys.readouterr().out
    for divisor in (lambda Q: np.sqrt(Q.shape[-1] - 1), lambda Q: np.sqrt(Q.size), lambda Q: 2.9):
        assert not check_scaled_scores(lambda Q, K, c=divisor: Q @ swap(K) / c(Q))
        line = capsys.readouterr().out
        assert "every entry is off by the same factor" in line and "check the divisor" in line
    assert check_scaled_scores(lambda Q, K: good_scaled_scores(Q, K).astype(np.float32))


def test_review_04b_the_chapter_passes_its_widths_to_the_top_weight_checker():
    cells = chapter_cells()
    calls = [c.source for c in cells if "check_mean_top_weight(my_top" in c.source]
    assert len(calls) == 2
    # the learner's cell holds no checker configuration: the dict of widths, nothing else
    assert all("check_mean_top_weight(my_top, raw_scores)" in source for source in calls)


def test_review_04d_the_right_panel_title_fits_inside_the_figure():
    """Review 04d (round e): "largest first" ran off the right edge of the slider's frame."""
    z = np.random.default_rng(3).normal(size=(1600, 16))
    axes = {"xlim": (-120, 120), "ylim": (0, 0.55), "bins": 160}
    for d_k in (16, 1024):
        fig, _ = scaling_frame(z * np.sqrt(d_k), d_k, **axes, scaled_xlim=(-4, 4), scaled_bins=32)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            box = ax.title.get_window_extent(renderer)
            assert box.x0 >= 0 and box.x1 <= fig.bbox.width - 5, ax.get_title()
        plt.close(fig)


def test_review_04k_title_logits_and_the_scalar_hint(capsys):
    cells = {c.get("id"): c for c in chapter_cells()}
    head = cells["52058736"].source
    assert head.startswith("# 4. Scaling by √d_k\n") and "title writes" not in head
    # review 04l: saturation starves the query/key path, not the values' gradient
    # review 04n: only the queries' gradient is measured; review 04q: so only they are named
    # review 04_u: uneven, not starved: the raw median is above the scaled one up to d_k = 64
    # review 04bb (F3): the collapse named as well as the starved queries
    # review 04cc (F2): uneven at d_k = 64, not starved overall (the summary has numbers)
    said = r"**saturate** softmax rows (nearly one-hot) and starve many queries of gradient;"
    assert said in " ".join(head.split())
    # chapter 3 promises the scaled scores are chapter 4's logits
    said = "These scaled scores are the {term}`logits <logit>` that softmax (chapter 5) turns"
    assert said in " ".join(cells["4875b8d4"].source.split())
    from attention_lib.checks import check_mean_top_weight  # noqa: PLC0415

    # a scalar: no "cell below" (the exercise cell has none but the folded solution)
    raw = np.random.default_rng(0).normal(size=(100, 16, 16)) * 22
    assert not check_mean_top_weight(0.07, raw)
    line = capsys.readouterr().out
    assert "the solution averages it" in line and "cell below" not in line, line


def test_review_04o_why_uneven_hurts_the_16_keys_and_the_softmax_pointer():
    cells = chapter_cells()
    ids = [cell.get("id") for cell in cells]
    # one sentence after the gradient figure says why uneven is bad (asserted in grad-assert)
    at = ids.index("grad-why-uneven")
    assert at == ids.index("grad-rows64") + 1 and ids.index("4c97044e") < at
    why = " ".join(cells[at].source.split())
    # review 04 (round s): the saturated rows' share of the squared query gradients
    # review 04_t (F4): the squared sum in words
    # review 04_v (F1, F6, F7): the 31% share sentence is trimmed to the median comparison;
    # "30%" is said once, in fa6cbeb4
    # review 04_x (F1): why uneven hurts, in one sentence with the page's numbers (3.7 in
    # grad-assert, 3% in grad-share-assert, other seeds in grad-rows-assert); the learning
    # rate is named as shared by every row, not as a cure (04ad)
    # review 04_y (F1, F8): rows are not parameters; W_q's update sums them, and saturation
    # starves W_q and W_k but not W_v (grad-share-assert)
    # review 04_z (F6): the W_q / W_k / W_v remark moves into the row-by-row fold
    # review 04aa (F1): the fold's 3% moved to the main line; "pull" is cut
    # review 04bb (F8): plainer wording
    said = "Saturated rows contribute little to the updates of $W_q$ and $W_k$, but $W_v$ still"
    fold = " ".join(cells[ids.index("grad-rows-read")].source.split())
    assert said in fold and "pull" not in fold
    assert "W_q" not in why and "W_v" not in why
    # review 04ad: no learning-rate clause here (rows are not parameters)
    assert "learning rate" not in why
    assert "31%" not in why and "total squared size" not in why
    assert r"\rVert^2" not in why
    assert "under 4" not in why
    check = cells[ids.index("grad-assert")].source
    assert "raw_pct[2, at[64]] / raw_pct[0, at[64]] > 1000" in check
    # the saturated shares belong to 16-key rows
    shares = " ".join(cells[ids.index("fa6cbeb4")].source.split())
    assert "more of our 16-key rows saturate" in shares
    # al.softmax is used before its formula: the first cell that calls it names chapter 5;
    # review 04_t (F6): the formula is written once, in cd18d051
    first = next(c for c in cells if c.cell_type == "code" and "al.softmax(" in c.source)
    said = "# al.softmax turns each row into weights (chapter 5)"
    assert said in first.source and "formula comes below" not in first.source
    # the row-by-row fold names G_i
    # review 04hh (F7): the bound and its G_i are cut from the fold
    assert "G_i" not in cells[ids.index("grad-rows-read")].source


def test_review_04z_checker_wording(capsys):
    # review 04_z (F7): the number said once on a PASS; a rounded answer is named as such
    from attention_lib.checks import check_dot_variance, check_scaled_scores  # noqa: PLC0415

    assert check_dot_variance(3888, d_k=48, sigma=3).message == "3888 is right."
    # review 04uu (item 8): a near answer read "3888 is right (3,888)"; each number once now
    for near in (3888.004, np.float32(3888.004), 3887.996):
        message = check_dot_variance(near, d_k=48, sigma=3).message
        assert message == f"{near!s} is right; the exact value is 3888.", message
    # review 04uu (item 3): einsum without '...' got the keepdims hint; name the subscripts
    for subscripts in ("qd,kd->qk", "bqd,bkd->bqk"):  # fails on a batch / on 2-D inputs

        def summed(Q, K, subscripts=subscripts):
            return np.einsum(subscripts, Q, K) / np.sqrt(Q.shape[-1])

        message = check_scaled_scores(summed).message
        assert "keepdims" not in message and "np.einsum subscripts name a fixed number" in message
        assert "np.einsum('...qd,...kd->...qk', Q, K)" in message, message
    for places in (0, 2, 3):

        def rounded(Q, K, places=places):
            return np.round(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), places)

        message = check_scaled_scores(rounded).message
        assert message.endswith(": don't round."), message
    capsys.readouterr()


def test_review_04ii_a_hard_coded_whole_divisor_is_named(capsys):
    # review 04ii (checkers): "/ 8" got only "check the divisor"; a whole number typed in is
    # named against this case's √d_k; a divisor that is not whole keeps the generic hint
    assert not check_scaled_scores(lambda Q, K: Q @ swap(K) / 8)
    line = capsys.readouterr().out
    assert "off by the same factor 0.375: you divided by 8; here √d_k = 3." in line
    assert not check_scaled_scores(lambda Q, K: Q @ swap(K) / 2.9)
    assert "check the divisor" in capsys.readouterr().out


def test_review_04rr_the_answer_first_the_guess_echoed_and_the_printed_words_match():
    cells = {c.get("id"): c for c in chapter_cells()}
    # item 3: the solution's first sentence answers "Why not divide by d_k?"
    solution = cells["ebd8373f"].source.split("```", 4)[-1].strip()
    first = " ".join(solution.split(". ")[0].split())
    # review 04vv (item 1): ... by pointing at the table the solution's code just printed
    said = r"As the table shows, dividing by $\sqrt{d_k}$ keeps the rows about as sharp at every"
    said += r" width, while dividing by $d_k$ flattens them more as the head widens"
    assert first.startswith(said)
    second = " ".join(solution.split()).split(". ")[1]
    assert second.startswith("At initialisation the first keeps the scores' variance the same")
    assert r"the second cuts it to $1/d_k$" in second
    # ... and the solution's code prints the learner's guess beside the computed value
    code = cells["ebd83750"]
    assert "my_guess" in code.source
    out = "".join(o.get("text", "") for o in code.outputs)
    assert "mean top weight: 0.0676 (your guess: none yet), an even row: 0.0625" in out
    # review 04vv (item 1): ... and the mean top weight by width for both divisors: d_k flattens
    # the rows more as the head widens, sqrt(d_k) keeps them (ebd8373e asserts the numbers)
    for row in ("    4   0.133    0.233", "   64   0.078    0.249", " 1024   0.066    0.247"):
        assert row in out.splitlines(), row
    assert max(len(line) for line in code.source.splitlines()) <= 80
    ids = [c.get("id") for c in chapter_cells()]  # the code first, then the text reading it
    start = ids.index("ebd8373f-start")
    assert ids[start : start + 4] == ["ebd8373f-start", "ebd83750", "ebd8373f", "ebd8373f-more"]
    assert cells["ebd8373f-start"].source.strip().endswith(":class: dropdown\n```")
    # item 5: the 3 of Var((a+1)(b+1)) explained where it is printed (variance-rules-assert)
    rules = cells["variance-rules"].source
    assert "(a+1)² averages 1 + 1² = 2" in " ".join(rules.replace("#", "").split())
    assert "so 2 x 2 - 1² = 3" in rules
    # item 6: the printed line says what grad-why-uneven says, in the same words
    out = "".join(o.get("text", "") for o in cells["grad-rows64"].outputs)
    assert "saturated rows get 3% of the scaled median" in out
    assert "saturated rows get 3% of the scaled median" in cells["grad-why-uneven"].source
    assert "unsaturated rows get 3.7 times it" in out


def test_review_04ss_a_divisor_off_everywhere_is_named(capsys):
    # review 04ss (item 6): "check the divisor" now says what the learner divided by: the
    # root of d_k - 1, of Q.size (n_q d_k), or a number that is no root of a whole number
    cases = [
        (lambda Q: np.sqrt(Q.shape[-1] - 1), "You divided by √8 = 2.828, the root of d_k − 1;"),
        (
            lambda Q: np.sqrt(Q.size),
            "You divided by √45 = 6.708, the root of n_q·d_k = 5·9, Q.size;",
        ),
        (lambda Q: np.sqrt(13.0), "You divided by √13 = 3.606; here √d_k = √9 = 3."),
        (lambda Q: 2.9, "You divided by about 2.9; here √d_k = √9 = 3."),
    ]
    for divisor, said in cases:
        assert not check_scaled_scores(lambda Q, K, c=divisor: Q @ swap(K) / c(Q))
        line = capsys.readouterr().out
        assert "check the divisor. " + said in line, line
    from attention_lib.checks.scaled_divisor import divisor_said  # noqa: PLC0415

    assert divisor_said(3.0, 3.0 / np.sqrt(10)).startswith(
        "You divided by √10 = 3.162, the root of d_k + 1"
    )
    assert divisor_said(3.0, 3.0 / np.sqrt(63), n_q=5, n_k=7).endswith(
        "K.size; here √d_k = √9 = 3."
    )


def test_review_04ss_the_band_table_is_printed_and_the_gpt2_share_is_averaged():
    cells = {c.get("id"): c for c in chapter_cells()}
    # item 1: which rows starve is shown, not asserted: the raw gradient of rows just past
    # 0.99 and above 0.9999 at d_k = 64 and 1024. Review 04tt (item 1): the table leaves the
    # main line for grad-starve-fold; grad-share-assert computes and checks its numbers
    out = "".join(o.get("text", "") for o in cells["grad-rows64"].outputs)
    assert "0.99 to 0.995" not in out and "saturated rows get 3%" in out
    fold = cells["grad-starve-fold"].source
    assert ":class: dropdown" in fold
    assert "| 0.99 to 0.995 | 0.23 | 1.3 |" in fold
    assert r"| above 0.9999 | $4 \times 10^{-4}$ | $3 \times 10^{-7}$ |" in fold
    check = cells["grad-share-assert"].source
    assert "(round(bands[64][0], 2), round(bands[1024][0], 1)) == (0.23, 1.3)" in check
    assert '"4e-04"' in check and '"3e-07"' in check
    # item 4: the summary no longer quotes one draw's 0.5%; the box gives the 20-draw mean
    summary = " ".join(cells["108c6c23"].source.split())
    assert "0.5%" not in summary and "rarely saturated (under 1%; Going further)" in summary
    box = " ".join(cells["gpt2-deeper"].source.split())
    assert "almost no rows saturate (0.3% on average over 20 draws)" in box
    assert "range(1, 21)" in cells["2e6482c4"].source


def test_review_04tt_dividing_by_n_is_named_as_the_number_of_keys(capsys):
    # review 04tt (item 5): ÷ 16 said "16, another width"; a learner who divides by 16 has
    # more likely mistaken n = 16, the number of keys, for d_k
    from attention_lib.checks import check_mean_top_weight  # noqa: PLC0415

    rng = np.random.default_rng(0)
    widths = (16, 64, 512)
    scores = {d: al.attention_scores(*rng.normal(size=(2, 100, 16, d))) for d in widths}
    raw = scores[512]
    for given in (scores, raw):  # with 16 among the widths, and the array alone
        assert not check_mean_top_weight(al.softmax(raw / 16).max(axis=-1), given)
        line = capsys.readouterr().out
        said = "you divided by 16 = n, the number of keys; this exercise divides by d_k = 512."
        assert said in line and "another width" not in line, line
    # a real width keeps its hint
    assert not check_mean_top_weight(al.softmax(raw / 64).max(axis=-1), scores)
    assert "you divided by 64, another width" in capsys.readouterr().out

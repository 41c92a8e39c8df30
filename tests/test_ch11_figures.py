"""Chapter 11's figures on a phone: every text at 9 CSS px or more, and labels that do not
collide.

tests/test_figure_text_07_12.py holds chapters 7 to 12 to 9 CSS px at 1280 px, where a
figure is shrunk to the 688 px column. On a 375 px phone a figure is drawn at most 520 px
wide and scrolls in its box (_static/wrap-output.css), so a figure wider than 520 px
shrinks there too. The site test allows 7 px on a phone; chapter 11's grids of small
panels are where that was too small to read, so here they are held to 9 px at both widths.
"""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from attention_lib import plotting as P
from attention_lib.plotting.encoder import encoder_diagram
from attention_lib.plotting.influence import weight_vs_share

DPI, SMALLEST = 90, 9.0
DRAWN = {1280: 688, 375: 520}  # the widest a figure is drawn, in CSS px, by window width
TOKENS = ["[CLS]", "i", "ate", "the", "cake", "and", "it", "was", "delicious", ".", "[SEP]"]


def smallest_text(fig, window: int) -> tuple[float, str]:
    """The smallest visible text of ``fig`` in CSS px, as drawn in a window so wide."""
    fig.canvas.draw()
    natural = fig.get_size_inches()[0] * DPI
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible()]
    size, text = min((t.get_fontsize(), t.get_text()) for t in texts if t.get_text().strip())
    return size * DPI / 72 * min(1.0, DRAWN[window] / natural), text


def figures():
    W = np.random.default_rng(0).dirichlet(np.ones(11), size=(6, 12, 11))  # (6, 12, n, n)
    yield "layer slider, 12 heads", lambda: P.attention_panels(W[0], TOKENS, title="t")
    yield "token slider", lambda: P.token_attention(W, TOKENS, 6)
    yield "72-head grid", lambda: P.head_grid(W[:, :, 6, 4], title="t")
    yield (
        "two heads",
        lambda: P.attention_panels(W[0, :2], TOKENS, ["a", "b"], title="t", highlight=(6, 4)),
    )
    yield "encoder diagram", lambda: encoder_diagram(n_layers=6, h=12, d_model=384, d_ff=1536)
    yield "weight vs share", lambda: weight_vs_share(W[0, :, 0, 0], W[0, :, 0, 1] / 2, title="t")


@pytest.mark.parametrize(("name", "draw"), list(figures()), ids=[n for n, _ in figures()])
@pytest.mark.parametrize("window", [1280, 375])
def test_every_text_shows_at_9_css_px_on_a_laptop_and_a_phone(name, draw, window):
    fig, _ = draw()
    size, text = smallest_text(fig, window)
    plt.close(fig)
    assert size >= SMALLEST, f"{name} at {window} px: {text!r} shows at {size:.1f} CSS px"


def test_the_measure_catches_the_old_panels_on_a_phone():
    # The old 12-panel figure: 7.5 pt labels, 671 px wide. 9.4 px at 1280, 7.3 on a phone.
    fig = plt.figure(figsize=(671 / DPI, 10))
    fig.text(0.5, 0.5, "cake", fontsize=7.5)
    assert smallest_text(fig, 1280)[0] == pytest.approx(7.5 * 1.25)
    assert smallest_text(fig, 375)[0] == pytest.approx(7.5 * 1.25 * 520 / 671)
    plt.close(fig)


@pytest.mark.parametrize("name", ["layer slider, 12 heads", "token slider", "two heads"])
def test_labels_titles_and_colour_bar_do_not_overlap(name):
    fig, _ = dict(figures())[name]()
    fig.canvas.draw()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts]
    boxes += [(t.get_text(), t.get_window_extent(renderer)) for t in fig.texts]
    boxes.append(("colour bar", fig.axes[1].get_tightbbox(renderer)))
    figure_box = fig.bbox
    for k, (text, box) in enumerate(boxes):
        inside = figure_box.x0 <= box.x0 and box.x1 <= figure_box.x1 + 0.5
        assert inside and figure_box.y0 <= box.y0 and box.y1 <= figure_box.y1 + 0.5, text
        for other, box2 in boxes[k + 1 :]:
            assert not box.overlaps(box2), f"{name}: {text!r} overlaps {other!r}"
    assert fig.axes[1].get_position().y1 < ax.get_position().y0  # the bar is below the panels
    plt.close(fig)


def test_the_two_heads_figure_outlines_one_row_and_one_column_per_panel():
    W = np.random.default_rng(1).dirichlet(np.ones(11), size=(2, 11))  # (2, n, n)
    fig, _ = P.attention_panels(W, TOKENS, ["a", "b"], title="t", highlight=(6, 4))
    outlines = [p for p in fig.axes[0].patches if p.get_edgecolor()[:3] != (0, 0, 0)]
    sizes = sorted((round(p.get_width()), round(p.get_height())) for p in outlines)
    assert sizes == [(1, 11)] * 2 + [(11, 1)] * 2
    # Each outline lies inside its panel (cells -0.5 to 10.5, then a blank column), so
    # its line does not spill into the gap between the panels.
    for p in outlines:
        x0, y0 = p.get_xy()
        x1, y1 = x0 + p.get_width(), y0 + p.get_height()
        panel = 0 if x0 < 10.5 else 12
        assert panel - 0.5 < x0 and x1 < panel + 10.5 and -0.5 < y0 and y1 < 10.5
    plt.close(fig)


def test_the_72_head_grid_names_its_colour_bar():
    fig, _ = P.head_grid(np.full((6, 12), 0.1), title="t")
    assert fig.axes[1].get_ylabel() == "weight"
    plt.close(fig)


def test_the_encoder_diagram_prints_its_shapes_and_rejects_bad_sizes():
    fig, alt = encoder_diagram(n_layers=6, h=12, d_model=384, d_ff=1536)
    shown = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    assert "(n, 384)" in shown and any("(12, n, 32)" in t for t in shown)
    assert "residual stream" in shown  # the path that skips each sub-layer is named
    assert "(12, n, 32)" in alt and "1536" in alt
    assert alt.startswith("Block diagram of the whole encoder") and "6 layers" in alt
    assert "straight" not in alt and alt.count("layer-normed") == 2  # an LN after each add
    plt.close(fig)
    with pytest.raises(ValueError, match="h dividing d_model"):
        encoder_diagram(n_layers=6, h=5, d_model=384, d_ff=1536)


def test_the_weight_share_scatter_states_its_means_and_the_points_below_the_diagonal():
    fig, alt = weight_vs_share([0.9, 0.6, 0.3], [0.1, 0.2, 0.5], title="parking heads")
    assert "3 heads" not in alt and "(3)" in alt
    assert "2 of the 3 points lie below" in alt  # 0.3 -> 0.5 lies above
    assert "Mean weight 0.60, mean share 0.27" in alt
    points = fig.axes[0].collections[0].get_offsets()
    assert np.allclose(points, [[0.9, 0.1], [0.6, 0.2], [0.3, 0.5]])
    plt.close(fig)


@pytest.mark.parametrize(
    ("weight", "share", "match"),
    [
        ([0.5, 0.6], [0.1], "same length"),
        ([[0.5]], [[0.1]], "1-d"),
        ([0.5, 1.2], [0.1, 0.2], r"\[0, 1\]"),
        ([0.5, 0.6], [-0.1, 0.2], r"\[0, 1\]"),
        ([0.5, np.nan], [0.1, 0.2], "NaN"),
    ],
)
def test_the_weight_share_scatter_rejects_bad_input(weight, share, match):
    with pytest.raises(ValueError, match=match):
        weight_vs_share(weight, share, title="t")


def test_the_argmax_dots_have_a_dark_ring_that_shows_on_bright_cells():
    """Review 11 k: white dots on yellow cells almost vanished; a 0.8 pt black ring shows."""
    fig, _ = P.attention_panels(np.eye(11)[None], TOKENS, title="t")
    dots = [c for c in fig.axes[0].collections if len(c.get_offsets()) == 11]
    plt.close(fig)
    assert len(dots) == 1
    assert dots[0].get_linewidths()[0] >= 0.8
    assert tuple(dots[0].get_edgecolors()[0][:3]) == (0.0, 0.0, 0.0)

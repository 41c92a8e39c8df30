"""Figures carry token labels and data-driven alt text; sliders switch precomputed frames."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attention_lib import toy
from attention_lib.plotting import CMAP, bar_row, figure_html, heatmap, show
from attention_lib.widgets import FrameSlider, frame_slider


@pytest.fixture
def weights():
    return toy.attention()[1]


def test_heatmap_labels_every_token_and_prints_every_value(weights):
    fig, alt = heatmap(weights, toy.TOKENS, title="weights")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(toy.TOKENS)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(toy.TOKENS)
    assert len(ax.texts) == 64
    assert ax.texts[5 * 8 + 3].get_text() == "0.21"  # row 'it', column 'cake'
    assert ax.images[0].get_cmap().name == CMAP == "cividis"
    assert "'it' -> 'cake' (0.21)" in alt
    plt.close(fig)


def test_heatmap_rejects_labels_that_do_not_fit(weights):
    with pytest.raises(ValueError, match=r"matrix has shape \(8, 8\), got 7 row labels"):
        heatmap(weights, toy.TOKENS[:7], toy.TOKENS, title="x")
    with pytest.raises(ValueError, match=r"must be 2-D"):
        heatmap(weights[0], toy.TOKENS, title="x")


def test_bar_row_alt_text_names_the_extremes(weights):
    fig, alt = bar_row(weights[5], toy.TOKENS, title="row of it")
    assert alt == "Bar chart: row of it. Largest 'cake' (0.21), smallest 'was' (0.09)."
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == list(toy.TOKENS)
    plt.close(fig)
    with pytest.raises(ValueError, match="3 labels given"):
        bar_row(weights[5], toy.TOKENS[:3], title="x")


def test_figure_html_is_deterministic_accessible_and_closes_the_figure(weights):
    first = figure_html(*heatmap(weights, toy.TOKENS, title="A <b> & 'c'"))
    second = figure_html(*heatmap(weights, toy.TOKENS, title="A <b> & 'c'"))
    assert first == second
    assert first.startswith('<img src="data:image/png;base64,')
    assert 'alt="Heatmap: A &lt;b&gt; &amp; &#x27;c&#x27;.' in first
    assert plt.get_fignums() == []


def test_show_displays_an_image_and_reads_as_its_alt_text(weights):
    figure = show(*bar_row(weights[5], toy.TOKENS, title="row"))
    assert repr(figure) == figure.alt
    assert figure._repr_html_().startswith("<img ")


def test_frame_slider_links_slider_to_precomputed_frames(weights):
    values = [0.5, 1, 2]
    box = frame_slider(
        lambda T: bar_row(weights[5] ** (1 / T), toy.TOKENS, title=f"T={T}"),
        values,
        description="T",
        initial=1,
    )
    assert isinstance(box, FrameSlider)
    slider, stack = box.children
    assert [label for label, _ in slider.options] == ["0.5", "1", "2"]
    assert slider.index == stack.selected_index == 1
    assert len(stack.children) == 3
    assert all('alt="Bar chart: T=' in frame.value for frame in stack.children)
    assert box.link.source == (slider, "index")
    assert box.link.target == (stack, "selected_index")
    assert repr(box) == "FrameSlider(T: 3 frames from 0.5 to 2; run the cell to use it)"


def test_frame_slider_works_without_stack_as_in_ipywidgets_7(weights, monkeypatch):
    # Colab ships ipywidgets 7, which has no Stack: the kernel swaps the visible frame.
    import ipywidgets

    monkeypatch.delattr(ipywidgets, "Stack")
    box = frame_slider(
        lambda T: bar_row(weights[5] ** (1 / T), toy.TOKENS, title=f"T={T}"),
        [0.5, 1, 2],
        description="T",
        initial=1,
    )
    slider, view = box.children
    assert box.link is None and len(box.frames) == 3
    assert view.children == (box.frames[1],)
    slider.index = 2
    assert view.children == (box.frames[2],)
    assert 'alt="Bar chart: T=2' in view.children[0].value
    assert box.static_html().count('class="frame-slider__frame"') == 3


def test_frame_slider_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one value"):
        frame_slider(lambda v: None, [], description="T")
    with pytest.raises(ValueError, match=r"initial=3 is not one of the slider values \[1, 2\]"):
        frame_slider(
            lambda v: bar_row(np.ones(2) / 2, "ab", title="x"), [1, 2], description="T", initial=3
        )


# --- what a page test needs to measure a figure's text, and what the PNG costs -------------
# The sizes themselves are measured on the built site, as drawn at 375 and 1280 px, for
# every figure and slider frame of every chapter (tests/site/test_site_reader.py).


def test_figure_html_carries_its_smallest_text_in_png_pixels():
    import re

    fig, ax = plt.subplots(figsize=(4, 2))
    ax.set_title("big", fontsize=12)
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    ax.text(0.2, 0.2, "   ", fontsize=2)  # blank text draws nothing and does not count
    html = figure_html(fig, "alt")
    assert re.search(r'data-text-px="7.50"', html), html[-120:]  # 6 pt at 90 dpi
    empty, _ = plt.subplots()
    empty.axes[0].set_axis_off()
    assert "data-text-px" not in figure_html(empty, "nothing written")


def test_figure_png_is_a_palette_that_keeps_every_colour_a_reader_sees(weights):
    import base64
    import io
    import re

    from PIL import Image

    fig, _ = heatmap(weights, toy.TOKENS, title="weights")
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=90)
    html = figure_html(fig, "alt")
    small = base64.b64decode(re.search(r"base64,([^\"]+)", html).group(1))
    before = np.asarray(Image.open(full).convert("RGB"), dtype=int)
    after_image = Image.open(io.BytesIO(small))
    after = np.asarray(after_image.convert("RGB"), dtype=int)
    assert after_image.mode == "P" and before.shape == after.shape
    assert len(small) < 0.6 * len(full.getvalue())
    assert np.abs(before - after).mean() < 0.5  # of 255 levels
    # the cells' colours, which carry the data, come through exactly or nearly so
    assert np.percentile(np.abs(before - after).max(axis=2), 99) <= 8


def test_numbers_printed_in_cells_keep_wcag_contrast_on_every_colour():
    # text_colour picks black or white by relative luminance: at least 4.5:1 (WCAG AA for
    # small text) on every colour of the colormap, and never the weaker of the two.
    import matplotlib.pyplot as plt

    from attention_lib.plotting.base import CMAP, text_colour

    def luminance(rgb):
        rgb = np.asarray(rgb, dtype=float)
        linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        return float(linear @ [0.2126, 0.7152, 0.0722])

    for fraction in np.linspace(0, 1, 201):
        cell = luminance(plt.get_cmap(CMAP)(fraction)[:3])
        with_black, with_white = (cell + 0.05) / 0.05, 1.05 / (cell + 0.05)
        chosen = with_black if text_colour(fraction) == "black" else with_white
        assert chosen >= 4.5 and chosen == max(with_black, with_white), fraction
    assert text_colour(0.0) == "white" and text_colour(1.0) == "black"
    assert text_colour(-3) == "white" and text_colour(7) == "black"  # clipped to the scale


def test_signed_cmap_is_white_at_zero_and_refuses_one_signed_data():
    from attention_lib.plotting.base import signed_cmap

    cmap = signed_cmap(-1.9, 5.4)
    at_zero = cmap(1.9 / (5.4 + 1.9))[:3]  # where 0 falls on the data's range
    assert min(at_zero) > 0.9, at_zero  # near white
    assert cmap(1.0)[0] > cmap(1.0)[2] and cmap(0.0)[2] > cmap(0.0)[0]  # red top, blue bottom
    with pytest.raises(ValueError, match="lo < 0 < hi"):
        signed_cmap(0.5, 2.0)

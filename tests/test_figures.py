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


def test_frame_slider_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one value"):
        frame_slider(lambda v: None, [], description="T")
    with pytest.raises(ValueError, match=r"initial=3 is not one of the slider values \[1, 2\]"):
        frame_slider(
            lambda v: bar_row(np.ones(2) / 2, "ab", title="x"), [1, 2], description="T", initial=3
        )


# --- every figure of chapters 01-06 is legible at 1280 px -----------------------------------

# At a 1280 px window a chapter draws a figure at most this wide (CSS px): measured in
# Chromium on the built site, where a 756 px frame of chapter 4 is drawn 688 px wide.
CONTENT_WIDTH_1280 = 688
FIGURE_DPI = 90  # figure_html saves every figure at this resolution
SMALLEST_LABEL_PX = 9.0
LEGIBLE_CHAPTERS = [
    "01_embeddings",
    "02_queries_keys_values",
    "03_scores",
    "04_scaling",
    "05_softmax",
    "06_blending",
]


def label_px(fig, png: bytes, dpi: float) -> tuple[float, str]:
    """The smallest text of ``fig`` in CSS px as drawn at 1280 px, and that text.

    font size (pt) × dpi ÷ 72 gives its height in the PNG; the page then scales the PNG by
    displayed width ÷ natural width (never up: images have ``max-width: 100%``).
    """
    import matplotlib.text

    natural = int.from_bytes(png[16:20], "big")  # the PNG header's width
    shown = min(natural, CONTENT_WIDTH_1280)
    texts = [
        t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()
    ]
    small = min(texts, key=lambda t: t.get_fontsize())
    return small.get_fontsize() * dpi / 72 * shown / natural, small.get_text()


def test_label_px_follows_font_size_dpi_and_scaling():
    import io

    fig, ax = plt.subplots(figsize=(10, 2))  # 900 px at 90 dpi: drawn at 688
    ax.set_title("big", fontsize=12)
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=FIGURE_DPI)
    px, text = label_px(fig, buffer.getvalue(), FIGURE_DPI)
    plt.close(fig)
    assert text == "tiny" and px == pytest.approx(6 * 90 / 72 * 688 / 900)


@pytest.mark.parametrize("chapter", LEGIBLE_CHAPTERS)
def test_every_label_of_a_chapter_figure_is_at_least_9_px_at_1280(chapter, monkeypatch):
    """Runs the chapter's visible cells in-process and measures each figure as it is saved
    for the page: static figures and every frame of every slider."""
    import contextlib
    import io
    from pathlib import Path

    import matplotlib.figure
    import nbformat

    save = matplotlib.figure.Figure.savefig
    measured = []

    def measuring_savefig(self, fname, *args, **kwargs):
        save(self, fname, *args, **kwargs)
        if isinstance(fname, io.BytesIO):
            dpi = kwargs.get("dpi", self.dpi)
            title = self.axes[0].get_title() if self.axes else ""
            measured.append((*label_px(self, fname.getvalue(), dpi), title))

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", measuring_savefig)
    path = Path(__file__).resolve().parents[1] / "chapters" / f"{chapter}.ipynb"
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and "remove-cell" not in cell.metadata.get("tags", []):
                exec(compile(cell.source, str(path), "exec"), namespace)  # noqa: S102
    assert measured, f"{chapter}: no figure was drawn, so this proves nothing"
    small = sorted({m for m in measured if m[0] < SMALLEST_LABEL_PX})
    assert not small, [f"{px:.1f} px: {text!r} in {title!r}" for px, text, title in small]

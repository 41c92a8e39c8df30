"""Chapters 7 to 12, a quick check without the site: no figure text under 9 CSS px at 1280 px.

A figure is a PNG rendered at 90 dpi (``plotting.figure_html``) and shown at its natural
width, or shrunk to the text column when wider. At 1280 px the column is 688 px
wide, so a label of ``s`` points shows at ``s * 90 / 72 * min(1, 688 / natural width)``
CSS px. Every figure function these chapters draw is measured here, with inputs of the
chapters' own sizes. The site test measures every figure as drawn, at 375 and 1280 px
(tests/site/test_site_reader.py).
"""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_lib as al
from attention_lib import plotting as P
from attention_lib import toy

DPI, COLUMN, SMALLEST = 90, 688, 9.0  # the column at 1280 px, as drawn in Chromium
TOKENS_11 = ["[CLS]", "i", "ate", "the", "cake", "and", "it", "was", "delicious", ".", "[SEP]"]


def smallest_text(fig) -> tuple[float, str]:
    """The smallest visible text of ``fig`` in CSS px on the page, and that text."""
    fig.canvas.draw()
    scale = min(1.0, COLUMN / (fig.get_size_inches()[0] * DPI))
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text()]
    size, text = min((t.get_fontsize(), t.get_text()) for t in texts if t.get_text().strip())
    return size * DPI / 72 * scale, text


def figures():
    rng = np.random.default_rng(0)
    Q, K, V = toy.projections()
    _, weights = toy.attention()
    causal = al.causal_mask(8)
    _, causal_w = al.scaled_dot_product_attention(Q, K, V, mask=causal)
    W6 = rng.dirichlet(np.ones(11), size=(6, 12, 11))
    times = {"loop": [1e-4, 4e-4, 2e-3], "matrix": [4e-5, 5e-5, 7e-5], "RNN": [2e-5, 4e-5, 8e-5]}
    yield (
        "07 head_heatmaps",
        lambda: P.head_heatmaps(toy.heads.attention(h=4)[1], toy.TOKENS, title="x"),
    )
    yield (
        "07 h = 1 frame",
        lambda: P.head_heatmaps(toy.heads.attention(h=1)[1], toy.TOKENS, title="x"),
    )
    yield "07 shape_tracer", lambda: P.shape_tracer(8, 32, 8)
    yield (
        "08 masked_heatmaps",
        lambda: P.masked_heatmaps(
            [weights, causal_w], [None, causal], toy.TOKENS, titles=["a", "b"], title="t"
        ),
    )
    yield "08 masked_row", lambda: P.masked_row(causal_w[5], causal[5], toy.TOKENS, title="t")
    yield "09 dependency_figure", lambda: P.dependency_figure(toy.TOKENS)
    yield "09 timing_plot", lambda: P.timing_plot([8, 16, 32], times, title="t\nmachine")
    yield (
        "09 memory_plot",
        lambda: P.memory_plot(2 ** np.arange(3, 15), {"x": ([256], [5e5])}, title="t"),
    )
    yield (
        "09 tile_figure",
        lambda: P.tile_figure(Q @ K.T / 2, toy.TOKENS, [0, 4, 8], [0, 3, 8], 2, V=V),
    )
    sentences = [tuple(toy.TOKENS)] * 6
    grid = rng.dirichlet(np.ones(8), size=6)
    referent = np.full(6, 3)
    yield (
        "10 training_frame",
        lambda: P.training_frame(
            5, grid, sentences, referent, np.linspace(2, 0, 11), np.linspace(0, 1, 11)
        ),
    )
    yield (
        "10 training_curves",
        lambda: P.training_curves(
            np.linspace(2, 0, 11), np.linspace(0, 1, 11), np.linspace(0, 1, 11), chance=1 / 8
        ),
    )
    yield "11 attention_panels, 12 heads", lambda: P.attention_panels(W6[0], TOKENS_11, title="t")
    yield (
        "11 attention_panels, 2 heads",
        lambda: P.attention_panels(W6[0, :2], TOKENS_11, ["a", "b"], title="t", highlight=(6, 4)),
    )
    yield "11 token_attention", lambda: P.token_attention(W6, TOKENS_11, 6)
    yield "11 head_grid", lambda: P.head_grid(W6[:, :, 6, 4], title="t")
    yield (
        "12 loss_vs_baselines",
        lambda: P.loss_vs_baselines(
            [0, 100], [6.1, 2.0], [6.1, 2.1], {"unigram": 4.3, "bigram": 2.3}
        ),
    )
    yield (
        "12 writing_frame",
        lambda: P.writing_frame(
            1.0, [f"w{i}" for i in range(243)], rng.dirichlet(np.ones(243)), ["a b ."], prompt="p"
        ),
    )


@pytest.mark.parametrize(
    ("name", "draw"), list(figures()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_no_figure_text_is_smaller_than_9_css_px(name, draw):
    fig, _ = draw()
    size, text = smallest_text(fig)
    plt.close(fig)
    assert size >= SMALLEST, f"{name}: {text!r} shows at {size:.1f} CSS px"


def test_the_measure_catches_small_text_and_shrunk_figures():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "tiny", fontsize=6)  # 7.5 px at natural size
    assert smallest_text(fig) == (6 * DPI / 72, "tiny")
    fig.set_size_inches(14, 3)  # 1260 px natural, shown at 688: 10 pt becomes 6.8 px
    ax.texts[0].set_fontsize(10)
    size, _ = smallest_text(fig)
    plt.close(fig)
    assert size < SMALLEST and abs(size - 10 * DPI / 72 * COLUMN / 1260) < 1e-9

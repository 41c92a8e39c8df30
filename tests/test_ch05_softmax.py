"""Chapter 5: the weights heatmap on a fixed, labelled 0-1 colour scale."""

import matplotlib.pyplot as plt

import attention_lib as al
from attention_lib import toy
from attention_lib.plotting import heatmap


def test_heatmap_can_fix_and_label_its_colour_scale():
    weights = al.softmax(toy.scaled_scores())
    fig, alt = heatmap(
        weights, toy.TOKENS, title="w", vmin=0, vmax=1, cbar_label="attention weight"
    )
    image, bar = fig.axes[0].images[0], fig.axes[1]
    assert image.get_clim() == (0, 1)
    assert bar.get_ylabel() == "attention weight"
    assert alt.endswith("Colour scale (attention weight) from 0 to 1.")
    plt.close(fig)


def test_heatmap_without_a_label_is_unchanged():
    weights = al.softmax(toy.scaled_scores())
    fig, alt = heatmap(weights, toy.TOKENS, title="w")
    assert fig.axes[1].get_ylabel() == ""
    assert "Colour scale" not in alt
    assert fig.axes[0].images[0].get_clim() == (weights.min(), weights.max())
    plt.close(fig)

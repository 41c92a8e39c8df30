"""Figures for the course, each returned as ``(fig, alt)`` with alt text made from the data.

Import helpers from here (``from attention_lib.plotting import heatmap, show``); the
submodules group them by topic and share :mod:`.base`.
"""

from .ablation import ablation_bars
from .base import CMAP, Figure, figure_html, show
from .blend import blend_hull
from .contributions import contributions
from .decoder import decoder_heads, loss_vs_baselines, writing_frame
from .dependency import dependency_figure
from .embeddings import similarity_map, token_panels
from .heads import Step, head_heatmaps, shape_tracer, trace_shapes
from .hull import convex_hull, inside_hull
from .learning import fills, it_attention, one_per_template, training_curves, training_frame
from .masked_row import masked_row
from .masking import masked_heatmaps
from .matrices import bar_row, heatmap
from .positions import clock_hands, encoding_heatmap
from .real_model import attention_panels, head_grid, token_attention
from .scaling import gradients_vs_dimension
from .scaling_frame import scaling_frame
from .scores import dot_product_arrows, score_bars, score_heatmap
from .shapes import matmul_diagram
from .softmax_curve import two_key_softmax
from .tiles import tile_figure, tile_steps
from .timing import (
    fmt_bytes,
    fmt_time,
    memory_plot,
    timing_plot,
)

__all__ = [
    "CMAP",
    "Figure",
    "Step",
    "ablation_bars",
    "attention_panels",
    "bar_row",
    "blend_hull",
    "clock_hands",
    "contributions",
    "convex_hull",
    "dependency_figure",
    "dot_product_arrows",
    "encoding_heatmap",
    "figure_html",
    "fills",
    "fmt_bytes",
    "fmt_time",
    "gradients_vs_dimension",
    "head_grid",
    "head_heatmaps",
    "heatmap",
    "inside_hull",
    "it_attention",
    "decoder_heads",
    "loss_vs_baselines",
    "masked_heatmaps",
    "masked_row",
    "matmul_diagram",
    "memory_plot",
    "one_per_template",
    "scaling_frame",
    "score_bars",
    "score_heatmap",
    "shape_tracer",
    "show",
    "similarity_map",
    "tile_figure",
    "tile_steps",
    "timing_plot",
    "token_attention",
    "token_panels",
    "trace_shapes",
    "training_curves",
    "training_frame",
    "two_key_softmax",
    "writing_frame",
]

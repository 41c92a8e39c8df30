"""Figures for the course, each returned as ``(fig, alt)`` with alt text made from the data.

Import helpers from here (``from attention_lib.plotting import heatmap, show``); the
submodules group them by topic and share :mod:`.base`.
"""

from .base import CMAP, Figure, figure_html, show
from .blend import blend_hull, contributions, convex_hull, inside_hull
from .embeddings import encoding_heatmap, token_panels, word_map
from .heads import Step, head_heatmaps, shape_tracer, trace_shapes
from .matrices import bar_row, heatmap
from .scaling import (
    jacobian_norm_vs_scale,
    scaling_frame,
    sharpness_vs_dimension,
    variance_vs_dimension,
)
from .scores import dot_product_arrows, score_bars
from .shapes import matmul_diagram

__all__ = [
    "CMAP",
    "Figure",
    "Step",
    "bar_row",
    "blend_hull",
    "contributions",
    "convex_hull",
    "dot_product_arrows",
    "encoding_heatmap",
    "figure_html",
    "head_heatmaps",
    "heatmap",
    "inside_hull",
    "jacobian_norm_vs_scale",
    "matmul_diagram",
    "scaling_frame",
    "score_bars",
    "shape_tracer",
    "sharpness_vs_dimension",
    "show",
    "token_panels",
    "trace_shapes",
    "variance_vs_dimension",
    "word_map",
]

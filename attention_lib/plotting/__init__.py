"""Figures for the course, each returned as ``(fig, alt)`` with alt text made from the data.

Import helpers from here (``from attention_lib.plotting import heatmap, show``); the
submodules group them by topic and share :mod:`.base`.
"""

from .base import CMAP, Figure, figure_html, show
from .matrices import bar_row, heatmap

__all__ = ["CMAP", "Figure", "bar_row", "figure_html", "heatmap", "show"]

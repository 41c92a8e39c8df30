"""The pieces of the block diagrams (chapter 11's encoder layer, chapter 12's decoder).

Boxes with text, arrows between them and the "+" where a residual branch comes back,
drawn on an axes without ticks. One look for both diagrams.
"""

from __future__ import annotations


def box(ax, x: float, y: float, text: str, colour: str, fontsize: float = 10) -> None:
    """A rounded box with ``text`` centred at ``(x, y)``, filled with ``colour``."""
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        fontsize=fontsize,
        zorder=3,
        bbox=dict(boxstyle="round,pad=0.35", fc=colour, ec="black", lw=1),
    )


def arrow(ax, x0: float, y0: float, x1: float, y1: float) -> None:
    """An arrow from ``(x0, y0)`` to ``(x1, y1)``, under the boxes."""
    ax.annotate("", (x1, y1), (x0, y0), arrowprops=dict(arrowstyle="-|>", lw=1.2), zorder=2)


def plus(ax, x: float, y: float) -> None:
    """The circled "+" where a residual branch joins the stream."""
    ax.text(
        x,
        y,
        "+",
        ha="center",
        va="center",
        fontsize=14,
        zorder=3,
        bbox=dict(boxstyle="circle,pad=0.1", fc="white", ec="black"),
    )

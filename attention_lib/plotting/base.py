"""What every figure of the course shares: the colormap, alt text, and how it is shown.

Every plotting helper in this package returns ``(fig, alt)``: a Matplotlib figure and a
sentence that describes what the figure shows, generated from the data. :func:`show`
displays the pair so that the page carries the alt text (screen readers read it, and
nbval compares it, so a change in the numbers shows up in review).

The colormap is ``cividis``, designed to read the same with the common kinds of colour
blindness and in greyscale.
"""

from __future__ import annotations

import base64
import html
import io

import matplotlib.pyplot as plt
import matplotlib.text
import numpy as np
from PIL import Image

from ..validate import as_float_array

CMAP = "cividis"


def signed_cmap(lo: float, hi: float, name: str = "RdBu_r"):
    """A diverging colormap cut to the data's range ``lo < 0 < hi``, white at 0, so a
    heatmap of signed numbers shows their sign and no colour is spent outside the data."""
    if not lo < 0 < hi:
        raise ValueError(f"signed_cmap needs lo < 0 < hi, got lo={lo}, hi={hi}")
    from matplotlib.colors import ListedColormap

    top = max(-lo, hi)  # the colour ends sit at -top and +top; keep only [lo, hi]
    return ListedColormap(
        plt.get_cmap(name)(np.linspace(0.5 + 0.5 * lo / top, 0.5 + 0.5 * hi / top, 256))
    )


def text_colour(fraction: float, cmap=CMAP) -> str:
    """Black or white: whichever contrasts more with ``cmap`` at ``fraction`` of its scale
    (0 = its first colour). Contrast as WCAG defines it, from relative luminance, so a
    number printed in a cell keeps at least 4.5:1 on every colour of ``cividis``.
    """
    rgb = np.asarray(plt.get_cmap(cmap)(float(np.clip(fraction, 0.0, 1.0)))[:3])
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    lum = float(linear @ [0.2126, 0.7152, 0.0722])
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


def annotate_cells(
    ax, M: np.ndarray, lo: float, hi: float, fmt: str, fontsize: float = 8, cmap=CMAP
) -> None:
    """Print each value of ``M`` in its cell of an ``imshow`` on ``ax``, in black or white
    by :func:`text_colour` on ``cmap``, so every number stays legible on the scale ``lo``
    to ``hi``.
    """
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            colour = text_colour((M[i, j] - lo) / (hi - lo) if hi > lo else 0.0, cmap)
            ax.text(
                j,
                i,
                format(M[i, j], fmt),
                ha="center",
                va="center",
                fontsize=fontsize,
                color=colour,
            )


FIGURE_DPI = 90  # every figure of the course is saved at this resolution


def smallest_text_px(fig, dpi: float = FIGURE_DPI) -> float | None:
    """The height, in the saved PNG's pixels, of the smallest visible text of ``fig``.

    A font of ``s`` points is ``s * dpi / 72`` pixels tall. Measure after the figure is
    drawn (``savefig`` draws it), when the tick labels hold their text. ``None`` for a
    figure without text.
    """
    sizes = [
        t.get_fontsize()
        for t in fig.findobj(matplotlib.text.Text)
        if t.get_visible() and t.get_text().strip()
    ]
    return min(sizes) * dpi / 72 if sizes else None


def _palette_png(buffer: io.BytesIO) -> bytes:
    """The PNG in ``buffer`` with at most 256 colours: about a third of the bytes.

    Course figures hold a few hundred colours, most of them the anti-aliased edges of
    text and lines, so a palette changes no pixel by more than a shade a reader can see
    (mean difference under 0.1 of 255 levels on chapter 11's figures) and the pages load
    faster. No dithering, so a flat cell stays flat; the result is deterministic.
    """
    image = Image.open(buffer).convert("RGBA")
    white = Image.new("RGBA", image.size, "white")
    flat = Image.alpha_composite(white, image).convert("RGB")
    palette = flat.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


def figure_html(fig, alt: str) -> str:
    """Render ``fig`` to an ``<img>`` tag with ``alt`` text and close the figure.

    The PNG is written without a software/version stamp, so re-running a notebook with
    the same library versions yields byte-identical output. ``data-text-px`` carries the
    height of the figure's smallest text in the PNG's pixels, so a page test can tell how
    large that text is drawn at any screen width (tests/site).
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=FIGURE_DPI, metadata={"Software": None})
    text_px = smallest_text_px(fig)
    plt.close(fig)
    data = base64.b64encode(_palette_png(buffer)).decode("ascii")
    measured = "" if text_px is None else f'data-text-px="{text_px:.2f}" '
    return (
        f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" {measured}'
        'style="max-width:100%;height:auto">'
    )


class Figure:
    """A rendered figure plus its alt text, displayed as an ``<img alt=...>``.

    Jupyter shows the image; its plain-text form is the alt text, which is what nbval
    compares and what a screen reader reads.
    """

    def __init__(self, fig, alt: str):
        self.alt = alt
        self.html = figure_html(fig, alt)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.alt


def show(fig, alt: str) -> Figure:
    """Turn ``(fig, alt)`` into a displayable :class:`Figure`; use as a cell's last line."""
    return Figure(fig, alt)


def check_labels(M: np.ndarray, rows, cols) -> None:
    for name, labels in (("rows", rows), ("cols", cols)):
        if isinstance(labels, str) or not hasattr(labels, "__len__"):
            raise TypeError(f"{name} must be a list of token labels, got {labels!r}")
    if M.ndim != 2:
        raise ValueError(f"matrix must be 2-D (queries x keys), got shape {M.shape}")
    if len(rows) != M.shape[0] or len(cols) != M.shape[1]:
        raise ValueError(
            f"need one label per row and column: matrix has shape {M.shape}, "
            f"got {len(rows)} row labels and {len(cols)} column labels"
        )


def check_stack(weights, tokens, names, letter: str = "h", what: str = "head"):
    """Check a stack of attention matrices, one per panel, with its token and panel labels.

    Returns ``(W, names)``: ``W`` of shape ``(k, n, n)`` as a float array, and one name per
    matrix (``"head 1"``, ``"head 2"``, ... when ``names`` is None).
    """
    W = as_float_array(weights, "weights")
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(
            f"weights must have shape ({letter}, n, n), one matrix per {what}; got {W.shape}"
        )
    k, n, _ = W.shape
    if isinstance(tokens, str) or len(tokens) != n:
        raise ValueError(f"need one token per row: weights have shape {W.shape}, tokens {tokens!r}")
    names = [f"head {i + 1}" for i in range(k)] if names is None else list(names)
    if len(names) != k:
        raise ValueError(f"need one name per {what}: {k} {what}s, {len(names)} names")
    return W, names

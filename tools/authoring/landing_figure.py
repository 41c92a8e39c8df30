"""Draw the landing page's picture of where the course goes: the toy's attention weights.

    python tools/authoring/landing_figure.py          # writes _static/landing_attention.png
    python tools/authoring/landing_figure.py --check  # exit 1 if the PNG or intro.md's alt is stale

The weights are ``attention_lib.toy.attention()``, the ones chapter 5 computes: one row
per word attending, one column per word attended to. The cell "it" -> "cake" is outlined
(``score_heatmap``'s mark) and so is the row "it"; the colour bar marks the even share
1/8 = 0.125 that a row of 8 weights would give each word if it did not choose at all (its
ticks are all decimals). Colours are ``cividis`` (colour-blind safe). Only the two
numbers the page quotes are printed, in the row "it" (0.21 on "cake", then 0.16): 64
numbers at 8 px on a laptop were legible but strained, some white on mid-grey (review
Landp), and the colours carry the rest.

The figure is 5 inches wide and intro.md draws it at most 520 px wide (a 375 px phone
gives it 327 px), so its smallest text stays above 9 px on a laptop and 7 px on a phone;
``tests/test_intro.py`` checks it.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from attention_lib import toy  # noqa: E402
from attention_lib.plotting import score_heatmap  # noqa: E402
from attention_lib.plotting.base import smallest_text_px  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "_static" / "landing_attention.png"
INTRO = ROOT / "intro.md"
SIZE = (5.0, 4.3)  # inches
DPI = 180  # twice the course's 90 dpi: sharp on a phone's dense screen
WIDTH_PX = 520  # intro.md's :width: for the figure


def weights():
    """The toy's attention weights (8, 8), and the row of "it" and column of "cake"."""
    _, w = toy.attention()
    return w, toy.token_index("it"), toy.token_index("cake")


def alt_text() -> str:
    w, it, cake = weights()
    n = w.shape[1]
    second = sorted(w[it])[-2]
    leaning = (w.argmax(axis=-1) == cake).sum()
    assert leaning > n / 2, "the alt text says most rows lean to 'cake'"
    return (
        f"Heatmap of the toy's attention weights, {n} words by {n}; each row sums to 1. "
        f"Every cell lies between {w.min():.2f} and {w.max():.2f}, close to the even share "
        f"1/{n}. Most rows weigh 'cake' most; the outlined row 'it' gives 'cake' "
        f"{w[it, cake]:.2f}, its largest weight (next: {second:.2f})."
    )


def draw():
    """``(fig, smallest text in the PNG's pixels)``."""
    w, it, cake = weights()
    n = w.shape[1]
    fig, _ = score_heatmap(
        w,
        list(toy.TOKENS),
        title="Attention weights of the hand-set toy",
        vmin=0.0,
        vmax=0.25,
        cbar_label="attention weight",
        mark=(it, cake),
        figsize=SIZE,
    )
    ax, bar = fig.axes
    top_two = set(w[it].argsort()[-2:])
    for text in list(ax.texts):  # keep the two largest numbers of the row "it"
        x, y = text.get_position()
        if (round(y), round(x)) not in {(it, j) for j in top_two}:
            text.remove()
    # inset by 0.06 of a cell so the 2.5 pt line stays inside the axes (review Landr: it
    # ran past them into the tick labels)
    row = Rectangle((-0.44, it - 0.44), n - 0.12, 0.88, fill=False, edgecolor="#D55E00")
    row.set(linewidth=2.5, linestyle="--", zorder=2.5, clip_on=True)
    ax.add_patch(row)
    bar.axhline(1 / n, color="white", linewidth=2)
    bar.set_yticks([0, 1 / n, 0.25], ["0", f"{1 / n:.3f}", "0.25"])
    fig.set_dpi(DPI)
    fig.tight_layout()
    return fig


def png_bytes() -> tuple[bytes, float]:
    """The PNG, and the height of its smallest text in its own pixels."""
    fig = draw()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    text_px = smallest_text_px(fig, DPI)
    plt.close(fig)
    return buffer.getvalue(), text_px


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    data, text_px = png_bytes()
    if args.check:
        problems = []
        if not OUT.exists() or OUT.read_bytes() != data:
            problems.append(f"{OUT.name} is out of date: run landing_figure.py")
        if f":alt: {alt_text()}" not in INTRO.read_text():
            problems.append(f"intro.md's alt text is not:\n{alt_text()}")
        print("\n".join(problems) or "landing figure up to date")
        return 1 if problems else 0
    OUT.write_bytes(data)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(data)} bytes), smallest text {text_px:.1f} px")
    print(f"alt: {alt_text()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

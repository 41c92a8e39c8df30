"""Figures for chapter 10, learning the weights: curves, and where "it" looks.

Train and test curves differ by line style and marker as well as by colour, and the
noun "it" refers to is outlined in every attention grid, so nothing relies on colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import PercentFormatter

from ..validate import as_float_array
from ._it_grid import _draw_grid, _grid_inputs, _grid_summary
from .base import CMAP


def fills(words, template) -> bool:
    """Whether the sentence ``words`` fills ``template``, one of the pronoun task's templates."""
    return all(t in ("N1", "N2") or t == w for t, w in zip(template, words, strict=True))


def one_per_template(sentences, templates, prefer: int | None = None) -> list[int]:
    """Rows for :func:`it_attention`: the index of one of ``sentences`` per template.

    Each is the first sentence that fills its template, or ``prefer`` where it does.
    """
    fits = [[i for i, w in enumerate(sentences) if fills(w, t)] for t in templates]
    return [prefer if prefer in fit else fit[0] for fit in fits]


_TRAIN = {"color": plt.get_cmap(CMAP)(0.05), "linestyle": "-", "marker": "o"}
# Okabe-Ito vermillion: far from the train colour for every common colour vision, and
# drawn with open squares between the train markers, so it shows where the curves meet.
_TEST = {"color": "#D55E00", "linestyle": "--", "marker": "s", "markerfacecolor": "none"}
_UNIFORM = {"color": "0.45", "linestyle": ":", "marker": "^"}


def _curve(values, name: str, length: int | None = None) -> np.ndarray:
    v = as_float_array(values, name, min_ndim=1)
    if v.ndim != 1 or (length is not None and v.size != length):
        want = "1-D" if length is None else f"shape ({length},), one value per step"
        raise ValueError(f"{name} must be {want}, got shape {v.shape}")
    return v


def training_curves(
    loss,
    train_accuracy,
    test_accuracy,
    *,
    uniform_loss=None,
    uniform_accuracy=None,
    chance=None,
):
    """Loss and accuracy against the training step, in two panels.

    Parameters
    ----------
    loss, train_accuracy, test_accuracy : array_like of shape (steps + 1,)
        One value per step, step 0 (before any update) first. Accuracies are in [0, 1]
        (the axis shows them as %).
    uniform_loss, uniform_accuracy : array_like of shape (steps + 1,), optional
        Training loss and test accuracy of the same model with attention frozen at
        uniform, for comparison; drawn dotted, with triangles.
    chance : float, optional
        Accuracy of guessing, drawn as a grey line (1/8 for 8 nouns).

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        First and last value of every curve.
    """
    L = _curve(loss, "loss")
    train = _curve(train_accuracy, "train_accuracy", L.size)
    curves = [("train", train, _TRAIN)]
    curves.append(("test", _curve(test_accuracy, "test_accuracy", L.size), _TEST))
    if uniform_accuracy is not None:
        uniform = _curve(uniform_accuracy, "uniform_accuracy", L.size)
        curves.append(("test, uniform attention", uniform, _UNIFORM))
    steps = np.arange(L.size)
    every = max(1, L.size // 10)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.9))
    left.plot(steps, L, **_TRAIN, markevery=every, markersize=4, label="loss, attention learned")
    top = L.max()
    if uniform_loss is not None:
        U = _curve(uniform_loss, "uniform_loss", L.size)
        style = {**_UNIFORM, "markevery": every, "markersize": 4}
        left.plot(steps, U, **style, label="loss, uniform attention")
        top = max(top, U.max())
    left.set_ylim(0, top * 1.1)
    left.set_ylabel("training loss (cross-entropy)")
    left.set_title("The loss falls")
    for label, values, style in curves:
        offset = (every // 2, every) if label == "test" else every  # markers side by side
        right.plot(steps, values, **style, markevery=offset, markersize=4, label=label)
    if chance is not None:  # drawn last, so the legend lists it last
        right.axhline(chance, color="0.6", linewidth=1.2, label=f"chance ({chance:.1%})")
    right.set_ylim(0, 1.05)
    right.yaxis.set_major_formatter(PercentFormatter(1.0))  # as the prose says it
    right.set_ylabel("accuracy")
    right.set_title("More and more answers are right")
    for ax in (left, right):
        ax.set_xlabel("training step")
    # One legend per panel, below it, where it hides no curve: the learned model's curves
    # share a style across panels, so a shared legend would leave "which panel?" open.
    for ax in (left, right):
        below = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.2), "frameon": False}
        ax.legend(fontsize=9, ncol=2, columnspacing=1.0, handlelength=1.6, **below)
    fig.tight_layout()
    parts = [f"loss from {L[0]:.2f} to {L[-1]:.2f}"]
    if uniform_loss is not None:
        parts[0] += f" (with uniform attention to {U[-1]:.2f})"
    said = {  # the legend's labels, as the alt text says them
        "test, uniform attention": "test accuracy with uniform attention",
    }
    for label, v, _ in curves:
        start, end = f"{v[0]:.0%}", f"{v[-1]:.0%}"
        change = f"stays at {end}" if start == end else f"from {start} to {end}"
        parts.append(f"{said.get(label, label + ' accuracy')} {change}")
    alt = (
        f"Two line plots over {L.size - 1} training steps. Left: the "
        + parts[0]
        + ". Right: "
        + "; ".join(parts[1:])
        + "."
    )
    return fig, alt


def _weight_bar(bar) -> None:
    """One colour-bar style for the grid, on the page and in the slider: 0, 0.5 and 1."""
    bar.set_label("attention weight", fontsize=8)
    bar.ax.tick_params(labelsize=8)
    bar.set_ticks([0, 0.5, 1])


def it_attention(weights, tokens, referent, *, title: str, distractor=None):
    """Where "it" looks in several sentences: one row per sentence, one cell per token.

    Parameters
    ----------
    weights : array_like of shape (m, n)
        Row ``i`` is the attention of "it" over the ``n`` tokens of sentence ``i``.
    tokens : sequence of m sequences of n str
        The words, printed in the cells with their weights.
    referent : sequence of int, length m
        Position of the noun "it" refers to in each sentence; its cell is outlined and
        its word set in bold.
    title : str
    distractor : sequence of int, length m, optional
        Position of the other (plural) noun in each sentence; its cell gets a dashed outline.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The average, smallest and largest weight on the referent, and in how many
        sentences it is the top token.
    """
    W, ref, other = _grid_inputs(weights, tokens, referent, distractor)
    fig, ax = plt.subplots(figsize=(7.6, 0.9 + 0.42 * W.shape[0]), layout="constrained")
    image = _draw_grid(ax, W, tokens, ref, title, other)
    _weight_bar(fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02))
    alt = f"Grid: {title}. Rows are {W.shape[0]} sentences, cells their tokens; " + (
        _grid_summary(W, ref, other) + "."
    )
    return fig, alt


def training_frame(step: int, weights, tokens, referent, loss, test_accuracy, distractor=None):
    """One slider frame: where "it" looks at training step ``step``, beside the curves.

    Parameters
    ----------
    step : int
        The training step the weights were recorded at.
    weights, tokens, referent
        As for :func:`it_attention`, with the attention at that step.
    loss, test_accuracy : array_like of shape (steps + 1,)
        The whole histories, drawn beside the grid (accuracy on the right-hand axis, in
        %); the frame marks ``step`` on the loss curve.
    distractor : sequence of int, optional
        As for :func:`it_attention`.

    Returns
    -------
    fig : matplotlib.figure.Figure
    alt : str
        The step, loss and test accuracy there, and the summary of the grid.
    """
    W, ref, other = _grid_inputs(weights, tokens, referent, distractor)
    L = _curve(loss, "loss")
    acc = _curve(test_accuracy, "test_accuracy", L.size)
    if not 0 <= step < L.size:
        raise ValueError(f"step {step} is outside the history of {L.size - 1} steps")
    # A fixed layout instead of tight_layout keeps each slider frame quick to draw.
    fig = plt.figure(figsize=(7.7, 0.85 + 0.5 * W.shape[0]))  # the page's width at 90 dpi
    grid_ax = fig.add_axes((0.075, 0.27, 0.575, 0.61))  # room for "sentence", the legend
    bar_ax = fig.add_axes((0.665, 0.27, 0.012, 0.61))
    curve_ax = fig.add_axes((0.795, 0.27, 0.135, 0.61))
    title = f"Step {step}: loss {L[step]:.2f}, test accuracy {acc[step]:.0%}"
    image = _draw_grid(grid_ax, W, tokens, ref, title, other)
    _weight_bar(fig.colorbar(image, cax=bar_ax))  # the same 0-to-1 scale in every frame
    curve_ax.plot(np.arange(L.size), L, color=_TRAIN["color"], linewidth=1.2)
    curve_ax.plot(
        [step],
        [L[step]],
        linestyle="none",
        marker="o",
        markersize=7,
        color=_TEST["color"],
        markeredgecolor="black",
    )
    curve_ax.set_ylim(0, L.max() * 1.1)
    acc_ax = curve_ax.twinx()  # test accuracy, dashed, on its own axis in %
    acc_ax.plot(np.arange(L.size), acc, color=_TEST["color"], linestyle="--", linewidth=1.2)
    acc_ax.set_ylim(0, 1.05)
    acc_ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    acc_ax.tick_params(labelsize=8)
    acc_ax.set_ylabel("test accuracy (dashed)", fontsize=8, labelpad=1)
    curve_ax.set_ylabel("loss (solid)", fontsize=8, labelpad=1)
    curve_ax.set_xlabel("step", fontsize=8)
    curve_ax.tick_params(labelsize=8)
    alt = f"Training step {step}: loss {L[step]:.2f}, test accuracy {acc[step]:.0%}; " + (
        _grid_summary(W, ref, other) + "."
    )
    return fig, alt

"""Sliders that work with a kernel *and* on the static website.

A normal ``interact`` slider asks the kernel to redraw, so on a static page it is dead.
:func:`frame_slider` instead draws every frame up front, stacks them, and links the
slider to the stack in the browser (``jslink``). Moving the slider then only switches
which precomputed picture is visible, which works in Jupyter, in Binder and on the
offline website alike. Change the inputs and re-run the cell to recompute the frames.

The slider is an ipywidgets ``SelectionSlider``: it can be focused with Tab and moved
with the arrow keys, Home and End.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as widgets

from .plotting import figure_html


class FrameSlider(widgets.VBox):
    """A ``VBox([slider, stack])`` whose text form is one short line.

    The default widget repr would spell out every frame's image data; this one names the
    slider and its range, which is also what a notebook viewer without widgets shows.
    """

    def __repr__(self) -> str:
        slider = self.children[0]
        labels = [label for label, _ in slider.options]
        return (
            f"FrameSlider({slider.description}: {len(labels)} frames from {labels[0]} "
            f"to {labels[-1]}; run the cell to use it)"
        )


def frame_slider(
    make_figure: Callable,
    values: Sequence,
    *,
    description: str,
    initial=None,
    fmt: str = "g",
) -> FrameSlider:
    """Precompute one figure per slider value and switch between them in the browser.

    Parameters
    ----------
    make_figure : callable
        ``make_figure(value) -> (fig, alt)``, e.g. a lambda around a
        :mod:`attention_lib.plotting` helper.
    values : sequence of numbers
        The slider positions, in order. Each one becomes a frame.
    description : str
        The slider's label, e.g. ``"T"`` or ``"d"``.
    initial : optional
        The value shown first; defaults to the first of ``values``.
    fmt : str
        Format spec for the value labels on the slider.

    Returns
    -------
    FrameSlider
        A ``VBox([slider, stack of frames])``; display it as a cell's last expression.
    """
    values = list(values)
    if not values:
        raise ValueError("frame_slider needs at least one value to draw a frame for")
    start = 0 if initial is None else _index_of(initial, values)
    frames = [widgets.HTML(figure_html(*_figure_and_alt(make_figure, v))) for v in values]
    stack = widgets.Stack(frames, selected_index=start)
    slider = widgets.SelectionSlider(
        options=[(_label(v, fmt), i) for i, v in enumerate(values)],
        index=start,
        description=description,
        continuous_update=True,
        layout=widgets.Layout(width="420px"),
    )
    box = FrameSlider([slider, stack])
    # The link lives in the browser, so switching frames needs no kernel.
    box.link = widgets.jslink((slider, "index"), (stack, "selected_index"))
    return box


def _index_of(value, values: list) -> int:
    try:
        return values.index(value)
    except ValueError:
        raise ValueError(f"initial={value!r} is not one of the slider values {values}") from None


def _figure_and_alt(make_figure: Callable, value) -> tuple:
    result = make_figure(value)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str)):
        raise TypeError(
            f"make_figure({value!r}) must return (fig, alt_text), like the helpers in "
            f"attention_lib.plotting, but it returned {type(result).__name__}"
        )
    return result


def _label(value, fmt: str) -> str:
    try:
        return format(value, fmt)
    except (TypeError, ValueError):  # not a number: show it as it is
        return str(value)

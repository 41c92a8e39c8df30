"""Sliders that work with a kernel *and* on the static website.

A normal ``interact`` slider asks the kernel to redraw, so on a static page it is dead.
:func:`frame_slider` instead draws every frame up front and only switches which
precomputed picture is visible. Change the inputs and re-run the cell to recompute them.

It shows itself in two forms, and each reader gets the one that works for them:

* in Jupyter, Binder or Colab, an ipywidgets ``SelectionSlider`` linked to a ``Stack``
  of frames in the browser (``jslink``), so moving it needs no round trip to the kernel
  (ipywidgets 7, which has no ``Stack``, gets a box whose frame the kernel swaps);
* on the website, plain HTML: an ``<input type="range">``, a read-only ``<output>`` for
  the value and the frames, switched by six lines of inline script. It needs no widget
  manager (3.6 MB the reader no longer downloads), fits any width, works offline, by
  keyboard (arrows, Home, End) and by touch, and prints its current frame.
"""

from __future__ import annotations

import html
import json
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

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)  # text/plain and the widget view
        bundle["text/html"] = self.static_html()
        return bundle

    def static_html(self) -> str:
        """The slider as plain HTML and a little script, for pages without a kernel."""
        slider = self.children[0]
        labels = [label for label, _ in slider.options]
        start = slider.index
        frames = "".join(
            f'<div class="frame-slider__frame"{"" if i == start else " aria-hidden=true"}>'
            f"{frame.value}</div>"
            for i, frame in enumerate(self.frames)
        )
        name = html.escape(getattr(self, "label", None) or slider.description)
        return (
            f'<div class="frame-slider" data-labels="{html.escape(json.dumps(labels))}">'
            f'<label class="frame-slider__control"><span class="frame-slider__name">'
            f"{html.escape(slider.description)}</span>"
            f'<input type="range" min="0" max="{len(labels) - 1}" step="1" value="{start}" '
            f'aria-label="{name}" aria-valuetext="{html.escape(labels[start])}">'
            f'<output aria-hidden="true">{html.escape(labels[start])}</output></label>'
            f'<div class="frame-slider__frames">{frames}</div>'
            f'<p class="frame-slider__print-note">The picture above is one of its {len(labels)} '
            f"frames ({html.escape(slider.description)} from {html.escape(labels[0])} to "
            f"{html.escape(labels[-1])}); the slider on the website shows them all.</p></div>"
            f"<script>{_SWITCH_FRAMES}</script>"
        )


# Runs once per slider, right after its HTML: show the frame the range input points at.
_SWITCH_FRAMES = (
    "(()=>{const box=document.currentScript.previousElementSibling,"
    "input=box.querySelector('input'),out=box.querySelector('output'),"
    "labels=JSON.parse(box.dataset.labels),"
    "frames=box.querySelectorAll('.frame-slider__frame');"
    "input.addEventListener('input',()=>{const i=Number(input.value);"
    "frames.forEach((f,j)=>{if(j===i)f.removeAttribute('aria-hidden');"
    "else f.setAttribute('aria-hidden','true');});"
    "out.textContent=labels[i];input.setAttribute('aria-valuetext',labels[i]);});})();"
)


def frame_slider(
    make_figure: Callable,
    values: Sequence,
    *,
    description: str,
    label: str | None = None,
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
        The slider's short visible label, e.g. ``"T"`` or ``"d"``.
    label : str, optional
        What moving it changes, in words (``"Temperature of the softmax"``): the name a
        screen reader announces. Defaults to ``description``.
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
    slider = widgets.SelectionSlider(
        options=[(_label(v, fmt), i) for i, v in enumerate(values)],
        index=start,
        description=description,
        continuous_update=True,
        layout=widgets.Layout(width="100%", max_width="420px"),
    )
    if hasattr(widgets, "Stack"):  # ipywidgets 8: the link lives in the browser, no kernel
        stack = widgets.Stack(frames, selected_index=start)
        box = FrameSlider([slider, stack])
        box.link = widgets.jslink((slider, "index"), (stack, "selected_index"))
    else:  # ipywidgets 7 (Colab's own) has no Stack: the kernel swaps the visible frame
        view = widgets.Box([frames[start]])
        slider.observe(lambda change: setattr(view, "children", [frames[change["new"]]]), "index")
        box = FrameSlider([slider, view])
        box.link = None
    box.frames, box.label = frames, label
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

"""The stepper widget: ``render/static/stepper.js`` inside an anywidget.

The widget's ESM is the stepper module itself, unchanged (the same text the
standalone page and the notebook's static HTML ship): its ``export default
{ render }`` is anywidget's entry point.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

The whole film (layout SVG and every step's frame, see ``render/film.py``) sits
in one synced traitlet, so stepping, playing and the before/after-backward view
run in the browser with no kernel round trip; the widget state saved with a
notebook is enough to step it again with no kernel. ``step`` follows the learner
(readable from Python) and ``interval`` is the play speed, linked in the browser
to an ipywidgets slider.
"""

from __future__ import annotations

from typing import Any

import anywidget
import ipywidgets as w
import traitlets as t

from ..model import Trace
from . import assets

__all__ = ["StepperWidget", "stepper_view"]


class StepperWidget(anywidget.AnyWidget):
    """Every frame of a trace's film, stepped in the browser by stepper.js."""

    _esm = assets.widget_esm()
    _css = assets.widget_css()

    film = t.Dict().tag(sync=True)
    step = t.Int(0).tag(sync=True)
    interval = t.Int(900, min=100, max=5000).tag(sync=True)

    def __init__(self, film: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(film=film, **kwargs)

    def __repr__(self) -> str:
        return f"<gradtrace StepperWidget: {len(self.film.get('steps', ()))} steps>"


def stepper_view(trace: Trace, film: dict[str, Any]) -> Any:
    """The stepper with a play-speed slider under it (linked in the browser, no kernel needed)."""
    stepper = StepperWidget(film)
    speed = w.IntSlider(value=stepper.interval, min=200, max=3000, step=100, description="ms / step",
                        continuous_update=True, readout=True, style={"description_width": "initial"},
                        layout=w.Layout(width="320px"))
    w.jslink((speed, "value"), (stepper, "interval"))
    box = w.VBox([stepper, speed])
    box.add_class("gt-view")
    return box

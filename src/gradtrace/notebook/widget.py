"""The stepper widget: ``render/static/stepper.js`` inside an anywidget.

The widget's ESM is the stepper module itself, unchanged (the same text the
standalone page and the notebook's static HTML ship): its ``export default
{ render }`` is anywidget's entry point.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

The whole film (layout SVG and every step's frame, see ``render/film.py``) sits
in one synced traitlet, so stepping, playing and the before/after-backward view
run in the browser with no kernel round trip; the widget state saved with a
notebook is enough to step it again with no kernel. The one thing the widget asks
its kernel for is an unfolded view the film does not hold (the page keeps its size
bounded): the stepper sends ``{"kind": "unfold", "id", "step", "path"}`` and the
widget answers ``{"kind": "unfolded", "id", ...}`` with the view laid out by ``dot``
(:func:`gradtrace.render.film.unfolded_view`), or with an ``error`` sentence. ``step`` follows the learner
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

    def __init__(self, film: dict[str, Any], trace: Trace | None = None, **kwargs: Any) -> None:
        super().__init__(film=film, **kwargs)
        self._trace = trace
        self.on_msg(self._message)

    def close(self) -> None:
        """Close the widget and let go of its trace (a re-run cell closes its old widgets)."""
        self._trace = None
        super().close()

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """The stepper asks for an unfolded view its film does not hold: lay it out and send it back."""
        if not isinstance(content, dict) or content.get("kind") != "unfold":
            return
        self.send({"kind": "unfolded", "id": content.get("id"), **self.unfolded(content)})

    def unfolded(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``{"step": i, "path": [block id, ...]}``: a view, or ``{"error": sentence}``; never raises."""
        if self._trace is None:
            return {"error": "this stepper was made without its trace, so it cannot lay out more: show the trace "
                             "again with gradtrace.notebook.settings.widget = 'anywidget'."}
        try:
            from ..render.film import unfolded_view

            path = request.get("path")
            step = request.get("step")
            if not isinstance(step, int) or not isinstance(path, list):
                return {"error": "the request named no step and no folded group."}
            return unfolded_view(self._trace, step, [str(p) for p in path])
        except Exception as exc:  # a layout that fails is said in the stepper, never raised into the kernel
            return {"error": f"it could not be laid out ({type(exc).__name__}: {exc})."}

    def __repr__(self) -> str:
        return f"<gradtrace StepperWidget: {len(self.film.get('steps', ()))} steps>"


def stepper_view(trace: Trace, film: dict[str, Any]) -> Any:
    """The stepper with a play-speed slider under it (linked in the browser, no kernel needed)."""
    stepper = StepperWidget(film, trace=trace)
    speed = w.IntSlider(value=stepper.interval, min=200, max=3000, step=100, description="ms / step",
                        continuous_update=True, readout=True, style={"description_width": "initial"},
                        layout=w.Layout(width="320px"))
    w.jslink((speed, "value"), (stepper, "interval"))
    box = w.VBox([stepper, speed])
    box.add_class("gt-view")
    return box

"""The no-custom-JavaScript front end: stock ipywidgets only.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

For front ends that cannot load widget code (``settings.widget = "ipywidgets"``):
one ``HTML`` page per step (its line, the step's events in words and its SVG),
held in a ``Stack`` whose ``selected_index`` is linked in the browser
(``jslink``) to an ``IntSlider`` and a ``Play`` button. Every page is in the
browser, so stepping needs no kernel, also in a saved notebook with widget state.
"""

from __future__ import annotations

import html
from typing import Any

from ..model import Step, Trace
from ..render.graph import step_graph
from ..render.svg import LayoutError, svg_inline
from ..render.words import clean, event_words, prediction_words

__all__ = ["step_page", "plain_view"]

#: Page chrome: theme colours from JupyterLab's CSS variables, with light fallbacks.
_STYLE = (
    "font-family:var(--jp-ui-font-family,sans-serif);color:var(--jp-ui-font-color1,#1f2328);"
    "line-height:1.4"
)
_PICTURE = "background:#fff;border-radius:6px;padding:6px;overflow:auto;max-width:100%;display:inline-block"


def _line(step: Step) -> str:
    frame = "" if step.frame in ("", "<module>") else f" in {clean(step.frame)}"
    code = html.escape(clean(step.code))
    return f"<div><b>step {step.number}</b> · line {step.lineno}{html.escape(frame)}: <code>{code}</code></div>"


def _events(step: Step) -> str:
    said = [event_words(step, e) for e in step.events] + [prediction_words(step, p) for p in step.predictions]
    if not said:
        return "<div><i>nothing changed in the graph</i></div>"
    items = "".join(f"<li style='white-space:pre-line'>{html.escape(s)}</li>" for s in said)
    return f"<ul style='margin:4px 0'>{items}</ul>"


def step_page(step: Step) -> str:
    """One step as an HTML fragment: line, events in words, the picture."""
    try:
        picture = f"<div style='{_PICTURE}'>{svg_inline(step_graph(step).svg())}</div>"
    except LayoutError as exc:
        picture = f"<pre>{html.escape(str(step))}</pre><div>(no picture: {html.escape(str(exc))})</div>"
    return f"<div class='gt-plain-step' style='{_STYLE}'>{_line(step)}{_events(step)}{picture}</div>"


def _ending(trace: Trace) -> str:
    if trace.error is None:
        return ""
    e = trace.error
    where = f" at line {e.lineno}" if e.lineno is not None else ""
    return (f"<div style='color:var(--jp-error-color1,#d32f2f)'><b>stopped by {html.escape(e.type)}{where}</b>: "
            f"{html.escape(clean(e.message))}</div>")


def plain_view(trace: Trace, interval_ms: int = 1200) -> Any:
    """A ``VBox``: play button and step slider over a stack of per-step pages."""
    import ipywidgets as w

    if not trace.steps:
        return w.HTML(f"<div style='{_STYLE}'>no statement ran{_ending(trace)}</div>")
    last = len(trace.steps) - 1
    pages = w.Stack([w.HTML(step_page(s)) for s in trace.steps], selected_index=0)
    slider = w.IntSlider(value=0, min=0, max=last, description="step", continuous_update=True)
    play = w.Play(value=0, min=0, max=last, interval=interval_ms, description="play")
    w.jslink((play, "value"), (slider, "value"))
    w.jslink((slider, "value"), (pages, "selected_index"))
    children = [w.HBox([play, slider]), pages]
    if trace.error is not None:
        children.append(w.HTML(_ending(trace)))
    box = w.VBox(children)
    box.add_class("gt-plain")
    return box

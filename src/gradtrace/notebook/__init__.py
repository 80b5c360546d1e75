"""gradtrace in Jupyter: the ``%%gradtrace`` magic, trace display and the stepper widget.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

- ``%load_ext gradtrace`` then ``%%gradtrace`` on a cell: run it as usual and show
  its trace as a stepper (see :mod:`gradtrace.notebook.magic`).
- A :class:`~gradtrace.model.Trace` as the last expression of a cell shows the
  same stepper (``text/plain`` twin and a static ``text/html`` fallback included).
- ``settings.widget`` picks the front end: ``"html"`` (default: the stepper as
  self-contained HTML, which also steps saved, reopened and exported), ``"anywidget"``
  (a widget as well) or ``"ipywidgets"`` (no custom JavaScript); the
  ``GRADTRACE_WIDGET`` environment variable sets its starting value.
- ``%%gradtrace`` shows the names the cell binds or reads and what they reach;
  ``%%gradtrace --all`` the whole notebook.

IPython, anywidget and ipywidgets are imported only when used; without them a
trace still shows as text, with a line saying what to install.
"""

from __future__ import annotations

from typing import Any

from .settings import settings

__all__ = ["settings", "show", "load_ipython_extension", "trace_mimebundle"]


def trace_mimebundle(trace: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The display data of a trace (what ``Trace._repr_mimebundle_`` returns)."""
    from .display import trace_mimebundle as _bundle

    return _bundle(trace, include, exclude)


def show(trace: Any, widget: str | None = None) -> Any:
    """A stepper widget for ``trace``: ``widget`` is ``"anywidget"`` (default) or ``"ipywidgets"``."""
    from .display import widget_for

    kind = widget or (settings.widget if settings.widget != "html" else "anywidget")
    if kind == "html":
        raise ValueError("gradtrace.notebook.show makes a widget: use widget='anywidget' or 'ipywidgets' "
                         "(a trace on its own shows as HTML)")
    return widget_for(trace, kind)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gradtrace``: register the ``%%gradtrace`` cell magic."""
    from .magic import load_ipython_extension as _load

    _load(ipython)

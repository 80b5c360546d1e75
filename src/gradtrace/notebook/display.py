"""How a :class:`~gradtrace.model.Trace` shows itself in a notebook.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

``Trace._repr_mimebundle_`` lands in :func:`trace_mimebundle`, which always gives
``text/plain`` (the text twin) and, when a picture can be laid out, ``text/html``:
the self-contained stepper (:mod:`.embed`: the film once, the stepper's code and a
picture of the last step for viewers that run no script).

Which front end a live kernel adds is ``settings.widget``:

- ``"html"`` (default): nothing more. The ``text/html`` stepper steps on its own, so
  the saved notebook, a reopened one (no kernel, no saved widget state) and an
  nbconvert export all step offline, and the kernel keeps nothing per cell.
- ``"anywidget"`` / ``"ipywidgets"``: a widget view too. A saved notebook then needs
  its widget state to show it, and an nbconvert export of a notebook saved with widget
  state draws it with scripts from the network, which is why it is not the default.
  The widgets a cell made are closed when the same cell runs again, so re-running
  a cell never piles up widgets in the kernel.

Nothing in here may raise into the kernel: a missing optional piece or a failed
layout becomes a line in ``text/plain`` saying what to do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container
from typing import Any

from ..model import Trace
from ..render.text import trace_text
from .settings import settings

__all__ = ["trace_mimebundle", "widget_for", "in_kernel", "close_cell_widgets"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOTEBOOK_HINT = "pip install 'gradtrace[notebook]'"

#: cell -> (the run of it that displayed them, the widgets that run made)
_CELL_WIDGETS: dict[str, tuple[str, list[Any]]] = {}


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where widgets can talk to a front end)."""
    try:
        from ._ipython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _film(trace: Trace, title: str | None = None) -> dict[str, Any]:
    from ..render.film import film

    made = film(trace, view_bytes=settings.view_bytes)
    if title:
        made["title"] = title
    sheets = made.get("sheets")
    if sheets and made.get("svg") == sheets[0]:
        del made["svg"]  # the stepper reads the sheets; the same picture twice would double the payload
    return made


def widget_for(trace: Trace, kind: str | None = None, title: str | None = None,
               film: dict[str, Any] | None = None) -> Any:
    """The widget ``settings.widget`` (or ``kind``) asks for; ``None`` for ``"html"``."""
    kind = kind or settings.widget
    if kind == "html":
        return None
    if kind == "ipywidgets":
        from .plain import plain_view

        return plain_view(trace)
    from .widget import StepperWidget

    return StepperWidget(film if film is not None else _film(trace, title), trace=trace)


def _widget_bundle(widget: Any) -> dict[str, Any]:
    got = widget._repr_mimebundle_()
    data = got[0] if isinstance(got, tuple) else got
    return {WIDGET_MIME: data[WIDGET_MIME]} if data and WIDGET_MIME in data else {}


def _keep(mime: str, include: Container[str] | None, exclude: Container[str] | None) -> bool:
    return (include is None or mime in include) and (exclude is None or mime not in exclude)


# ------------------------------------------------------------- widget lifetime
def _instances() -> dict[str, Any]:
    try:
        from ipywidgets.widgets import widget
    except ImportError:
        return {}
    live: dict[str, Any] = widget._instances  # ipywidgets' own table of open widgets, by model id
    return live


def _cell_run() -> tuple[str, str] | None:
    """``(cell, run)`` of the request being executed: the front end's cell id (or the code), and the request id."""
    try:
        from ._ipython import get_ipython

        kernel = get_ipython().kernel
        parent = kernel.get_parent("shell") if hasattr(kernel, "get_parent") else kernel._parent_header
        header = parent.get("header") or {}
        run = str(header.get("msg_id") or "")
        cell = (parent.get("metadata") or {}).get("cellId")
        if not cell:
            code = str((parent.get("content") or {}).get("code", ""))
            cell = "code:" + hashlib.sha1(code.encode("utf-8", "surrogatepass")).hexdigest()
        return (str(cell), run) if run else None
    except Exception:  # no kernel, or one that keeps no request: nothing to tie widgets to
        return None


def close_cell_widgets(cell: str | None = None) -> int:
    """Close the widgets gradtrace made for ``cell`` (every cell when None); how many were closed."""
    keys = list(_CELL_WIDGETS) if cell is None else [cell]
    closed = 0
    for key in keys:
        _run, widgets = _CELL_WIDGETS.pop(key, ("", []))
        for widget in widgets:
            try:
                widget.close()
                closed += 1
            except Exception:  # noqa: S112 - a widget the learner already closed
                continue
    return closed


def _made_widget(trace: Trace, title: str | None, film: dict[str, Any] | None) -> Any:
    """The widget view, with every widget it made remembered under the running cell.

    A new run of a cell first closes the widgets its previous run made (the front end
    replaced their outputs already), so a cell holds one stepper's widgets at most.
    """
    where = _cell_run()
    if where is not None:
        cell, run = where
        previous = _CELL_WIDGETS.get(cell)
        if previous is not None and previous[0] != run:
            close_cell_widgets(cell)
    live = _instances()
    before = set(live)
    view = widget_for(trace, title=title, film=film)
    if view is not None and where is not None:
        made = [w for key, w in list(live.items()) if key not in before]
        _CELL_WIDGETS.setdefault(where[0], (where[1], []))[1].extend(made)
    return view


def trace_mimebundle(trace: Trace, include: Container[str] | None = None, exclude: Container[str] | None = None,
                     *, widget: bool = True, title: str | None = None) -> dict[str, Any]:
    """The display data of ``trace``: text twin, self-contained stepper and (if asked for) a widget view.

    ``title`` replaces the film's title (the file name) in the pictures, e.g. ``In [3]``.
    """
    bundle: dict[str, Any] = {"text/plain": trace_text(trace)}
    notes: list[str] = []
    made: dict[str, Any] | None = None
    try:
        from .embed import embed_html

        made = _film(trace, title)
        bundle["text/html"] = embed_html(trace, made)
    except Exception as exc:  # a picture is a bonus: the text twin must always show
        notes.append(f"(no picture: {exc})")
    if widget and settings.widget != "html" and in_kernel() and _keep(WIDGET_MIME, include, exclude):
        try:
            view = _made_widget(trace, title, made)
            if view is not None:
                bundle.update(_widget_bundle(view))
        except ImportError as exc:
            notes.append(f"(no stepper widget: {exc}; {NOTEBOOK_HINT} or set gradtrace.notebook.settings.widget "
                         "= 'html')")
        except Exception as exc:
            notes.append(f"(no stepper widget: {type(exc).__name__}: {exc})")
    if notes:
        bundle["text/plain"] += "\n" + "\n".join(notes) + "\n"
    return {m: v for m, v in bundle.items() if m == "text/plain" or _keep(m, include, exclude)}

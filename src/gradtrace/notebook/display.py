"""How a :class:`~gradtrace.model.Trace` shows itself in a notebook.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

``Trace._repr_mimebundle_`` lands in :func:`trace_mimebundle`, which always gives
``text/plain`` (the text twin) and, when a picture can be laid out, ``text/html``:
the standalone stepper (:mod:`.embed`), which is what an nbconvert export without
widget state shows. In a running kernel it adds the widget view chosen by
``settings.widget``. Nothing in here may raise into the kernel: a missing optional
piece or a failed layout becomes a line in ``text/plain`` saying what to do.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from ..model import Trace
from ..render.text import trace_text
from .settings import settings

__all__ = ["trace_mimebundle", "widget_for", "in_kernel"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOTEBOOK_HINT = "pip install 'gradtrace[notebook]'"


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where widgets can talk to a front end)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _film(trace: Trace, title: str | None = None) -> dict[str, Any]:
    from ..render.film import film

    made = film(trace)
    if title:
        made["title"] = title
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
    from .widget import stepper_view

    return stepper_view(trace, film if film is not None else _film(trace, title))


def _widget_bundle(widget: Any) -> dict[str, Any]:
    got = widget._repr_mimebundle_()
    data = got[0] if isinstance(got, tuple) else got
    return {WIDGET_MIME: data[WIDGET_MIME]} if data and WIDGET_MIME in data else {}


def _keep(mime: str, include: Container[str] | None, exclude: Container[str] | None) -> bool:
    return (include is None or mime in include) and (exclude is None or mime not in exclude)


def trace_mimebundle(trace: Trace, include: Container[str] | None = None, exclude: Container[str] | None = None,
                     *, widget: bool = True, title: str | None = None) -> dict[str, Any]:
    """The display data of ``trace``: text twin, static stepper page and (in a kernel) the widget.

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
    if widget and in_kernel() and _keep(WIDGET_MIME, include, exclude):
        try:
            view = widget_for(trace, title=title, film=made)
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

"""One switch for how a trace shows itself in a notebook.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

``gradtrace.notebook.settings.widget`` picks the front end:

``"html"`` (default)
    no widget: the self-contained stepper as ``text/html``, every frame in the
    page. It steps in the live notebook, in the saved and reopened notebook (a
    notebook saved by its user is trusted; an untrusted one shows the last step's
    picture and the text twin), and in an nbconvert export, offline. The kernel
    keeps nothing per cell.
``"anywidget"``
    the same stepper inside an anywidget, as well as the ``text/html``: ``step``
    can be read from Python. A reopened notebook needs its saved widget state to
    show it, and an nbconvert export of a notebook saved with widget state loads
    the widget library from the network.
``"ipywidgets"``
    plain ipywidgets only, no custom JavaScript: a slider and one HTML page (the
    step's SVG and text) per step, for front ends that cannot load widget code.

Widgets a cell made are closed when the same cell runs again.

``gradtrace.notebook.settings.view_bytes`` caps the bytes of the unfolded pictures of a big
(folded) graph that a stepper carries, laid out ahead of time so that a click opens them with
no kernel: ``None`` (default) allows about half the stepper's own size; ``0`` carries none,
which keeps a saved notebook small. The ``"anywidget"`` stepper asks its kernel to lay out any
group it does not carry when it is clicked.

The environment variable ``GRADTRACE_WIDGET`` sets the starting value.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["KINDS", "Settings", "settings"]

KINDS = ("html", "anywidget", "ipywidgets")


class Settings:
    """Notebook display settings; assigning an unknown ``widget`` raises ``ValueError``."""

    def __init__(self) -> None:
        self._widget = "html"
        self._view_bytes: int | None = None
        wanted = os.environ.get("GRADTRACE_WIDGET", "").strip().lower()
        if wanted:
            try:
                self.widget = wanted
            except ValueError as exc:
                warnings.warn(f"{exc}; using 'html'", stacklevel=2)

    @property
    def widget(self) -> str:
        return self._widget

    @widget.setter
    def widget(self, kind: str) -> None:
        if kind not in KINDS:
            choices = ", ".join(repr(k) for k in KINDS)
            raise ValueError(f"gradtrace.notebook.settings.widget must be one of {choices}, not {kind!r} "
                             "(the GRADTRACE_WIDGET environment variable sets it too)")
        self._widget = kind

    @property
    def view_bytes(self) -> int | None:
        return self._view_bytes

    @view_bytes.setter
    def view_bytes(self, limit: int | None) -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValueError("gradtrace.notebook.settings.view_bytes must be None (the default budget) or a "
                             f"whole number of bytes, 0 or more, not {limit!r}")
        self._view_bytes = limit

    def __repr__(self) -> str:
        return f"Settings(widget={self._widget!r}, view_bytes={self._view_bytes!r})"


settings = Settings()

"""One switch for how a trace shows itself in a notebook.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

``gradtrace.notebook.settings.widget`` picks the front end:

``"anywidget"`` (default)
    the stepper (``render/static/stepper.js``) inside an anywidget, every frame in
    the browser, plus an ipywidgets play-speed slider.
``"ipywidgets"``
    plain ipywidgets only, no custom JavaScript: a slider and one HTML page (the
    step's SVG and text) per step, for front ends that cannot load widget code.
``"html"``
    no widget at all: the standalone stepper as ``text/html`` (needs a trusted
    notebook to run its script; otherwise the last step's picture shows).

The environment variable ``GRADTRACE_WIDGET`` sets the starting value.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["KINDS", "Settings", "settings"]

KINDS = ("anywidget", "ipywidgets", "html")


class Settings:
    """Notebook display settings; assigning an unknown ``widget`` raises ``ValueError``."""

    def __init__(self) -> None:
        self._widget = "anywidget"
        wanted = os.environ.get("GRADTRACE_WIDGET", "").strip().lower()
        if wanted:
            try:
                self.widget = wanted
            except ValueError as exc:
                warnings.warn(f"{exc}; using 'anywidget'", stacklevel=2)

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

    def __repr__(self) -> str:
        return f"Settings(widget={self._widget!r})"


settings = Settings()

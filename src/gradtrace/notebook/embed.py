"""The stepper as a self-contained HTML fragment: the ``text/html`` of a trace.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

This is what a notebook shows where no widget can run: an nbconvert HTML export
of a notebook saved without widget state, ``settings.widget = "html"``, or
``%%gradtrace --no-widget``. It carries the film as JSON, the stepper's CSS and
the stepper module itself (the same text as the standalone page's and the
widget's), which mounts the film, so the page steps with no kernel and no
network. Until (or unless) the script runs, for example in an untrusted
notebook, the last step's picture and its text twin show instead.
"""

from __future__ import annotations

import hashlib
import html
import itertools
from typing import Any

from ..model import Trace
from ..render.graph import step_graph
from ..render.html import film_json, film_script
from ..render.svg import LayoutError, svg_inline
from . import assets

__all__ = ["embed_html", "script_json"]

#: JSON that is safe inside ``<script type="application/json">`` (the one helper, shared with the page).
script_json = film_json

_counter = itertools.count(1)


def _static(trace: Trace) -> str:
    last = trace.last
    if last is None:
        return "<p>no statement ran</p>"
    try:
        picture = svg_inline(step_graph(last).svg())
    except LayoutError as exc:
        picture = f"<p>(no picture: {html.escape(str(exc))})</p>"
    return (f"<p class='gt-embed-note'>The last step (the interactive stepper needs JavaScript: trust the notebook "
            f"to step through it).</p><div style='background:#fff;display:inline-block'>{picture}</div>")


def embed_html(trace: Trace, film: dict[str, Any] | None = None) -> str:
    """The stepper for ``trace`` as an HTML fragment (a ``<div>``, a ``<style>`` and two ``<script>``s)."""
    if film is None:
        from ..render.film import film as make_film

        film = make_film(trace)
    data = film_json(film)
    digest = hashlib.sha1(data.encode("utf-8")).hexdigest()[:10]
    uid = f"gt-embed-{digest}-{next(_counter)}"
    return (
        f"<div class='gt-embed gt-widget' id='{uid}'>{_static(trace)}</div>\n"
        f"<style>{assets.widget_css()}</style>\n"
        f"{film_script(data, uid, host='notebook')}\n"
        f"<script type='module'>\n{assets.stepper_js()}\n</script>\n"
    )

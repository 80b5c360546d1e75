"""The stepper as a self-contained HTML fragment: the ``text/html`` of a trace.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

This is what a notebook shows where no widget can run: an nbconvert HTML export
of a notebook saved without widget state, ``settings.widget = "html"``, or
``%%gradtrace --no-widget``. It carries the film as JSON, the stepper's CSS and
the stepper module itself (the same text as the standalone page's and the
widget's), which mounts the film, so the page steps with no kernel and no
network. Until (or unless) the script runs, for example in an untrusted
notebook, the last step's picture and its text twin show instead.

The module, the CSS and the film travel gzip-compressed in base64 (a quarter to a
third of their size, so a lesson's stepper stays small in the saved notebook), as
JSON in ``<script type="application/json">`` elements. A short inline module,
``notebook/static/boot.js`` (the same text in every output), unpacks the CSS and the
module with the browser's ``DecompressionStream`` and loads the stepper once per
page (keyed by its digest), whose ``boot()`` unpacks each film (a JSON string, see
:func:`film_of`) and mounts it.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import html
import itertools
import json
from typing import Any

from ..model import Trace
from ..render.graph import step_graph
from ..render.html import film_json, film_script
from ..render.svg import LayoutError, svg_inline
from . import assets

__all__ = ["embed_html", "script_json", "film_of"]

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


def packed(text: str) -> str:
    """``text`` gzip-compressed (deterministic: no time stamp) and base64-encoded."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 9, mtime=0)).decode("ascii")


@functools.cache
def loader() -> str:
    """The stepper's CSS and code as JSON data, and the module that unpacks them and mounts the page's films.

    The module is ``notebook/static/boot.js``, the same text for every output; only the data differs.
    """
    js, css = assets.stepper_js(), assets.widget_css()  # cached: packed once per process
    key = "gradtrace-" + hashlib.sha1((js + css).encode("utf-8")).hexdigest()[:12]
    data = film_json({"css": packed(css), "js": packed(js)})
    return (f'<script type="application/json" data-gt-stepper="{key}">{data}</script>\n'
            f"<script type='module'>{assets.boot_js()}</script>")


def embed_html(trace: Trace, film: dict[str, Any] | None = None) -> str:
    """The stepper for ``trace`` as an HTML fragment (a ``<div>`` and two ``<script>``s)."""
    if film is None:
        from ..render.film import film as make_film

        film = make_film(trace)
    data = json.dumps(packed(film_json(film)))  # a JSON string: the film's JSON, gzip + base64 (see boot())
    digest = hashlib.sha1(data.encode("utf-8")).hexdigest()[:10]
    uid = f"gt-embed-{digest}-{next(_counter)}"
    return (
        f"<div class='gt-embed gt-widget' id='{uid}'>{_static(trace)}</div>\n"
        f"{film_script(data, uid, host='notebook')}\n"
        f"{loader()}\n"
    )


def film_of(fragment: str) -> dict[str, Any]:
    """The film an :func:`embed_html` fragment carries (unpacked), e.g. to check a saved notebook."""
    import re

    found = re.search(r"<script type=[\"']application/json[\"'][^>]*data-gt-film=[^>]*>(.*?)</script>", fragment, re.S)
    if found is None:
        raise ValueError("no film in this fragment")
    data = json.loads(found[1])
    if isinstance(data, str):
        data = json.loads(gzip.decompress(base64.b64decode(data)).decode("utf-8"))
    return dict(data)

"""The stepper as a self-contained HTML fragment: the ``text/html`` of a trace.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

This is what a notebook shows where no widget can run: an nbconvert HTML export
of a notebook saved without widget state, ``settings.widget = "html"``, or
``%%gradtrace --no-widget``. It carries the film as JSON, the stepper's CSS and
one module script (stepper.js inlined) that mounts it, so the page steps with no
kernel and no network. Until (or unless) the script runs, for example in an
untrusted notebook, the last step's picture and its text twin show instead.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
from typing import Any

from ..model import Trace
from ..render.graph import step_graph
from ..render.svg import LayoutError, svg_inline
from . import assets

__all__ = ["embed_html", "script_json"]

_counter = itertools.count(1)


def script_json(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


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


_BOOT = """
const gtId = %s;
function gtStart(tries) {
  const el = document.getElementById(gtId);
  const data = document.getElementById(gtId + "-film");
  if (!el || !data) {
    if (tries < 200) requestAnimationFrame(() => gtStart(tries + 1));
    return;
  }
  if (el.dataset.gtMounted) return;
  el.dataset.gtMounted = "1";
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  el.addEventListener("keydown", (ev) => {
    if (/^(Arrow|Home$|End$| $)/.test(ev.key)) ev.stopPropagation();
  });
  mount(el, JSON.parse(data.textContent), {});
}
gtStart(0);
"""


def embed_html(trace: Trace, film: dict[str, Any] | None = None) -> str:
    """The stepper for ``trace`` as an HTML fragment (a ``<div>``, a ``<style>`` and two ``<script>``s)."""
    if film is None:
        from ..render.film import film as make_film

        film = make_film(trace)
    data = script_json(film)
    digest = hashlib.sha1(data.encode("utf-8")).hexdigest()[:10]
    uid = f"gt-embed-{digest}-{next(_counter)}"
    js = assets.module_body(assets.stepper_js()).replace("</script", "<\\/script")
    return (
        f"<div class='gt-embed gt-widget' id='{uid}'>{_static(trace)}</div>\n"
        f"<style>{assets.widget_css()}</style>\n"
        f"<script type='application/json' id='{uid}-film'>{data}</script>\n"
        f"<script type='module'>\n{js}\n{_BOOT % json.dumps(uid)}</script>\n"
    )

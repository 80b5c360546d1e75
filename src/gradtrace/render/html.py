"""One self-contained HTML file that steps through a whole trace, and a film that shows itself as one.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

The page inlines everything (the stepper's JS and CSS from ``render/static/``,
the film's SVG and JSON) and loads nothing: its Content-Security-Policy forbids
every network load and allows only its own script and style, by hash. The film
travels as JSON inside ``<script type="application/json" data-gt-film=...>``
(see :func:`film_json`: ``<``, ``>``, ``&`` and U+2028/U+2029 escaped, so no
learner text can end that element or become markup); the stepper module that
follows it, ``stepper.js`` byte for byte, finds it and mounts it. The notebook's
static HTML and its widget ship the very same module (see :func:`stepper_module`).
"""

from __future__ import annotations

import base64
import hashlib
import html as _html
import json
import re
from importlib import resources
from typing import Any

from .graph import Page

__all__ = ["Film", "film_html", "film_json", "film_script", "static_text", "stepper_module", "CSP"]

CSP = (
    "default-src 'none'; script-src {script}; style-src {style}; img-src data:; font-src 'none'; "
    "connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; worker-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)


def static_text(name: str) -> str:
    """The text of a shipped front-end file (``stepper.js``, ``stepper.css``)."""
    return (resources.files("gradtrace.render") / "static" / name).read_text(encoding="utf-8")


_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def film_json(film: Any) -> str:
    """The film (any JSON-able data) as JSON that is safe inside ``<script type="application/json">``."""
    text = json.dumps(film, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    # bidi controls and invisible marks travel as \\u escapes: the page's source reads as it runs (Trojan Source)
    text = _INVISIBLE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
    for raw, esc in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, esc)
    return text


def film_script(data: str, target: str, *, host: str) -> str:
    """The film's ``<script type="application/json">`` (``data`` from :func:`film_json`), naming the
    element the stepper mounts into. ``host`` is ``"page"`` (the stepper takes the page's keys) or
    ``"notebook"``.
    """
    ident = _html.escape(target, quote=True)
    return (f'<script type="application/json" id="{ident}-film" data-gt-film="{ident}" data-gt-host="{host}">'
            f"{data}</script>")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def stepper_module() -> str:
    """The stepper: one ES module, the same text for the page, the notebook's HTML and the widget."""
    js = static_text("stepper.js")
    if "</script" in js.lower() or "<!--" in js:
        raise ValueError("stepper.js must not contain '</script' or '<!--'")
    return js


def film_html(film: dict[str, Any], *, title: str | None = None) -> Page:
    """The standalone page for a film."""
    css = (
        "\n"
        + static_text("stepper.css")
        + "\nbody { margin: 12px 16px; background: #ffffff; }\n"
        + ".gt-root { --gt-graph-h: calc(100vh - 150px); }\n"
        + ("@media (prefers-color-scheme: dark) { body { background: #1a1b1e; } }\n")
    )
    script = stepper_module()
    policy = CSP.format(script=_sha256(script), style=_sha256(css))
    name = title if title is not None else f"gradtrace: {film.get('title', '')}"
    name = _html.escape(_INVISIBLE.sub(lambda m: f"\\u{ord(m[0]):04x}", name), quote=True)
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{name}</title>\n<style>{css}</style>\n</head>\n<body>\n"
        '<div id="gt-app"></div>\n'
        f"{film_script(film_json(film), 'gt-app', host='page')}\n"
        f'<script type="module">{script}</script>\n'
        "</body>\n</html>\n"
    )
    return Page(page)


class Film(dict[str, Any]):
    """A film (a plain ``dict``, see :mod:`gradtrace.render.film`) that shows itself in notebooks as a stepper.

    ``_repr_mimebundle_`` always carries ``text/plain``; ``text/html`` is the
    standalone stepper page in a sandboxed ``<iframe srcdoc>`` (scripts run inside
    it only, with no access to the notebook page).
    """

    def __repr__(self) -> str:
        return f"<gradtrace film of {self.get('title', '')!s}: {len(self.get('steps', []))} steps>"

    # IPython calls this with include= and exclude= by keyword, so their names stay though unused
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:  # noqa: ARG002
        page = _html.escape(film_html(self), quote=True)
        frame = (
            f'<iframe sandbox="allow-scripts" srcdoc="{page}" title="gradtrace stepper" '
            'style="width:100%;height:640px;border:0"></iframe>'
        )
        return {"text/plain": repr(self), "text/html": frame}

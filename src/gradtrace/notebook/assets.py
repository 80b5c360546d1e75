"""The front end the notebook layer ships: the stepper module, read once from the package.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

There is one front end: ``render/static/stepper.js`` (an ES module) and
``render/static/stepper.css``, owned by the render layer. The widget loads that
module as its ESM unchanged (its ``export default { render }`` is anywidget's
entry point), and the static HTML of :mod:`.embed` ships the same text after the
film's JSON; see :func:`gradtrace.render.html.stepper_module`. The static HTML starts
it with ``notebook/static/boot.js`` (:func:`boot_js`), a loader of constant text that
reads what it loads from JSON beside it.
"""

from __future__ import annotations

import functools
from importlib import resources

from ..render import html as _page

__all__ = ["stepper_js", "stepper_css", "widget_esm", "widget_css", "boot_js", "MissingAsset"]


class MissingAsset(RuntimeError):
    """A front-end file is missing from the installed package."""


def _read(name: str) -> str:
    try:
        return _page.stepper_module() if name == "stepper.js" else _page.static_text(name)
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise MissingAsset(f"gradtrace/render/static/{name} is missing: reinstall gradtrace "
                           "(`pip install --force-reinstall gradtrace`)") from exc


@functools.cache
def stepper_js() -> str:
    return _read("stepper.js")


@functools.cache
def stepper_css() -> str:
    return _read("stepper.css")


def widget_esm() -> str:
    """The widget's ES module: the stepper module itself."""
    return stepper_js()


def widget_css() -> str:
    return stepper_css()


@functools.cache
def boot_js() -> str:
    """The notebook's loader module (``notebook/static/boot.js``), checked safe to inline in ``<script>``."""
    try:
        js = (resources.files("gradtrace.notebook") / "static" / "boot.js").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise MissingAsset("gradtrace/notebook/static/boot.js is missing: reinstall gradtrace "
                           "(`pip install --force-reinstall gradtrace`)") from exc
    if "</script" in js.lower() or "<!--" in js:
        raise ValueError("boot.js must not contain '</script' or '<!--'")
    return js

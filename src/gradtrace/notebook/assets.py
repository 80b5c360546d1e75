"""The front-end files the notebook layer ships: read once from the package.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

The stepper itself lives in ``render/static/stepper.js`` (owned by the render
layer); the widget's module ``notebook/static/widget.js`` imports ``mount`` from
it. anywidget loads a widget's ESM from a single string, where a relative import
cannot resolve, so :func:`widget_esm` inlines the stepper in place of that import.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

__all__ = ["static_text", "stepper_js", "stepper_css", "widget_esm", "widget_css", "MissingAsset"]

#: The line of widget.js that :func:`widget_esm` replaces by the stepper's source.
IMPORT_LINE = re.compile(r'^import\s*\{\s*mount\s*\}\s*from\s*"[./]*(?:render/static/)?stepper\.js";\s*$', re.M)


class MissingAsset(RuntimeError):
    """A front-end file is missing from the installed package."""


@functools.cache
def static_text(package: str, name: str) -> str:
    """The text of ``gradtrace/<package>/static/<name>``."""
    try:
        return resources.files(f"gradtrace.{package}").joinpath("static").joinpath(name).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise MissingAsset(f"gradtrace/{package}/static/{name} is missing: reinstall gradtrace "
                           "(`pip install --force-reinstall gradtrace`)") from exc


def stepper_js() -> str:
    return static_text("render", "stepper.js")


def stepper_css() -> str:
    return static_text("render", "stepper.css")


def module_body(js: str) -> str:
    """``js`` with its ``export default`` turned into a constant, so it can be inlined into another module."""
    return re.sub(r"^export\s+default\s+", "const _inlinedDefault = ", js, flags=re.M)


@functools.cache
def widget_esm() -> str:
    """widget.js with the stepper inlined: one self-contained ES module for anywidget."""
    widget = static_text("notebook", "widget.js")
    if not IMPORT_LINE.search(widget):
        raise MissingAsset("notebook/static/widget.js does not import mount from stepper.js")
    stepper = f"// ---- render/static/stepper.js (inlined) ----\n{module_body(stepper_js())}\n// ---- widget ----\n"
    return IMPORT_LINE.sub(lambda _: stepper, widget, count=1)


def widget_css() -> str:
    return stepper_css() + "\n" + static_text("notebook", "widget.css")

"""gradtrace: see PyTorch autograd happen, one statement at a time.

Pipeline: tracer -> model -> explain -> render -> notebook/cli. The public API is
small: trace code, then render or explain the :class:`Trace` it returns.

Every public name is one entry of :data:`_API` (``name -> "module:attribute"``),
imported on first use, so ``import gradtrace`` imports neither torch nor graphviz.
``gradtrace.explain`` is the explain package itself; it is callable:
``gradtrace.explain(root)`` explains ``root.backward()`` node by node.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the types mypy and editors see; at run time each is imported on first use
    from . import explain as explain
    from .live import compare as compare
    from .live import quiz as quiz
    from .makedot import make_dot as make_dot
    from .makedot import show as show
    from .model import Step as Step
    from .model import Trace as Trace
    from .notebook import load_ipython_extension as load_ipython_extension
    from .run import last_trace as last_trace
    from .run import trace as trace
    from .run import trace_code as trace_code
    from .tracer import snapshot as snapshot

__version__ = "0.1.0"

#: The public API: name -> "module:attribute" ("module" alone for a module).
_API: dict[str, str] = {
    "Step": "gradtrace.model:Step",
    "Trace": "gradtrace.model:Trace",
    "trace_code": "gradtrace.run:trace_code",
    "trace": "gradtrace.run:trace",
    "snapshot": "gradtrace.tracer:snapshot",
    "last_trace": "gradtrace.run:last_trace",
    "explain": "gradtrace.explain",
    "quiz": "gradtrace.live:quiz",
    "compare": "gradtrace.live:compare",
    "make_dot": "gradtrace.makedot:make_dot",
    "show": "gradtrace.makedot:show",
    "load_ipython_extension": "gradtrace.notebook:load_ipython_extension",
}

__all__ = ["__version__", *sorted(_API)]

#: The model's conveniences, drawn by the layers above it (see :func:`gradtrace.model.register_view`):
#: registered here, so the model imports nothing above it; each module is imported on first use.
_VIEWS: dict[str, str] = {
    "step_text": "gradtrace.render.text:step_text",
    "trace_text": "gradtrace.render.text:trace_text",
    "trace_json": "gradtrace.render.json:trace_json",
    "trace_from_json": "gradtrace.render.json:trace_from_json",
    "trace_mimebundle": "gradtrace.notebook:trace_mimebundle",
    "explain_root": "gradtrace.live:walkthrough",  # gradtrace.explain(root): it runs root.backward()
    "quiz_box": "gradtrace.notebook.quizbox:answer_widget",  # a question's answer box in a kernel
}


def _register_views() -> None:
    from .model import register_view

    for name, target in _VIEWS.items():
        register_view(name, target)


_register_views()


def __getattr__(name: str) -> Any:
    """Import a public name on first use (and keep it, so the next look-up is a plain one)."""
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'gradtrace' has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    value = getattr(module, attr) if attr else module
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})

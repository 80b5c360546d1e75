"""gradtrace: see PyTorch autograd happen, one statement at a time.

Pipeline: tracer -> model -> explain -> render -> notebook/cli. The public API is
small: trace code, then render or explain the :class:`Trace` it returns.
"""

from __future__ import annotations

from typing import Any

from .model import Step, Trace

__version__ = "0.1.0"

__all__ = ["Step", "Trace", "__version__", "last_trace", "make_dot", "quiz", "show", "snapshot", "trace", "trace_code"]


def trace_code(source: str, namespace: dict[str, Any] | None = None, filename: str = "<gradtrace>",
               max_steps: int = 1000, raise_errors: bool = True) -> Trace:
    """Run ``source`` as ``exec`` would and return the :class:`Trace` of every statement."""
    from .tracer import trace_code as _trace_code

    return _trace_code(source, namespace, filename=filename, max_steps=max_steps, raise_errors=raise_errors)


def trace(fn: Any, *args: Any, **kwargs: Any) -> Trace:
    """Call ``fn(*args, **kwargs)`` and return the :class:`Trace` of its statements."""
    from .tracer import trace as _trace

    return _trace(fn, *args, **kwargs)


def snapshot(var: Any, params: Any = None) -> Step:
    """One :class:`Step` holding the whole graph behind ``var``."""
    from .tracer import snapshot as _snapshot

    return _snapshot(var, params)


def last_trace() -> Trace | None:
    """The most recent trace, also when the traced code raised."""
    from .tracer import last_trace as _last_trace

    return _last_trace()


def make_dot(var: Any, params: Any = None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50) -> Any:
    """The graph behind ``var`` as a ``graphviz.Digraph``, as ``torchviz.make_dot`` draws it."""
    from .makedot import make_dot as _make_dot

    return _make_dot(var, params, show_attrs=show_attrs, show_saved=show_saved, max_attr_chars=max_attr_chars)


def show(var: Any, params: Any = None) -> Any:
    """The picture of the graph behind ``var`` for a notebook (SVG with a text twin)."""
    from .makedot import show as _show

    return _show(var, params)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gradtrace``: register the ``%%gradtrace`` cell magic (see :mod:`gradtrace.notebook`)."""
    from .notebook import load_ipython_extension as _load

    _load(ipython)


def quiz(code: str, ask: str = "x.grad", *, line: int | str | None = None,
         namespace: dict[str, Any] | None = None, rtol: float | None = None) -> Any:
    """A question about ``code`` (predict ``ask``, or which line changes the graph, or rebinding vs mutation).

    The answer comes from running the code with torch; ``q.check("5376")`` grades a prediction and
    shows the reverse pass in numbers. See :mod:`gradtrace.explain.quiz`.
    """
    from .explain.quiz import quiz as _quiz

    return _quiz(code, ask, line=line, namespace=namespace, rtol=rtol)


def __getattr__(name: str) -> Any:
    """``gradtrace.explain(root)``: the explain package, imported on first use (it is callable)."""
    if name == "explain":
        import importlib

        return importlib.import_module(".explain", __name__)
    raise AttributeError(f"module 'gradtrace' has no attribute {name!r}")

"""gradtrace: see PyTorch autograd happen, one statement at a time.

Pipeline: tracer -> model -> explain -> render -> notebook/cli. The public API is
small: trace code, then render or explain the :class:`Trace` it returns.
"""

from __future__ import annotations

from typing import Any

from .model import Step, Trace

__version__ = "0.1.0"

__all__ = ["Step", "Trace", "__version__", "last_trace", "snapshot", "trace", "trace_code"]


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

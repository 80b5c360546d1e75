"""The tracer: runs code statement by statement and records plain-data steps.

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.
The only layer that imports torch. :mod:`gradtrace.run` is the one module that builds a
:class:`Tracer` (``trace_code``, ``trace`` and ``last_trace`` live there).
"""

from .core import DEFAULT_MAX_STEPS, Tracer
from .snapshot import snapshot

__all__ = ["DEFAULT_MAX_STEPS", "Tracer", "snapshot"]

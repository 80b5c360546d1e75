"""The tracer: runs code statement by statement and records plain-data steps.

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.
The only layer that imports torch.
"""

from .core import DEFAULT_MAX_STEPS, Tracer, last_trace, trace, trace_code
from .snapshot import snapshot

__all__ = ["DEFAULT_MAX_STEPS", "Tracer", "last_trace", "snapshot", "trace", "trace_code"]

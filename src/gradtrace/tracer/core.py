"""Running learner code one statement at a time (tracer layer): the :class:`Tracer`, re-exported.

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The tracer is composed of parts (see :mod:`.session`, which owns them); :mod:`gradtrace.run` is the
one module that builds it (``run_traced``, ``trace_code``, ``trace`` and ``last_trace`` live there).
"""

from __future__ import annotations

from ..model import DEFAULT_MAX_STEPS
from .session import Tracer

__all__ = ["DEFAULT_MAX_STEPS", "Tracer"]

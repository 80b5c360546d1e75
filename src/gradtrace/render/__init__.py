"""Renderers: pure functions from model snapshots to text, DOT, SVG, HTML and JSON.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

Imports nothing heavy at import time: each renderer lives in its own module.
"""

from __future__ import annotations

__all__ = ["step_text", "trace_text"]

from .text import step_text, trace_text

"""Renderers: pure functions from model snapshots to text, DOT, SVG, HTML and JSON.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

=====================  =====================================================
``step_text``          one step as text (the twin every picture has)
``trace_text``         every step as text
``step_dot``           DOT source of one step: names panel, tensors, nodes
``graph_dot``          compact DOT for a ``make_dot``-style graph
``dot_to_svg``         SVG through ``dot`` or ``graphviz-pure`` (``LayoutError``)
``layout_engine``      which layout binary is used
``step_graph``         a ``Graph`` (DOT + SVG + text) that displays in notebooks
``film``               a whole trace laid out once, plus per-step frames
``trace_html``         one self-contained HTML page that steps the trace
``trace_dict``         the trace as plain JSON-able data
``trace_json``         the trace as strict JSON text
=====================  =====================================================

Nothing here imports torch; only ``dot_to_svg`` runs a binary.
"""

from __future__ import annotations

from .dot import graph_dot, step_dot
from .film import film, trace_html
from .graph import Graph, Page, step_graph
from .json import trace_dict, trace_json
from .svg import LayoutError, dot_to_svg, layout_engine
from .text import step_text, trace_text

__all__ = [
    "Graph",
    "LayoutError",
    "Page",
    "dot_to_svg",
    "film",
    "graph_dot",
    "layout_engine",
    "step_dot",
    "step_graph",
    "step_text",
    "trace_dict",
    "trace_html",
    "trace_json",
    "trace_text",
]

"""Every text of the SVG ``dot`` draws for a step passes WCAG AA (4.5:1) on what it is drawn on.

The SVG is Graphviz's own (render/dot.py's DOT through the real ``dot``); each ``<text>`` is read with its
``fill`` (black when it has none) and the fill of the topmost background under it: a table cell or box
(Graphviz draws those as polygons with a transparent stroke), the names panel, or the page.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from gradtrace import trace_code
from gradtrace.render.dot import contrast, step_dot
from gradtrace.render.svg import dot_binary, dot_to_svg

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"
NAMED = {"white": "#ffffff", "black": "#000000"}

pytestmark = pytest.mark.skipif(dot_binary() is None, reason="needs Graphviz dot")


def _points(el: ET.Element) -> list[tuple[float, float]]:
    if el.tag == SVG + "polygon":
        raw = el.get("points", "").split()
    else:  # a path: its coordinates, enough for a bounding box
        raw = el.get("d", "").replace("M", " ").replace("C", " ").replace("L", " ").replace("Z", " ").split()
    return [(float(x), float(y)) for x, y in (p.split(",") for p in raw if "," in p)]


def _colour(value: str | None, default: str) -> str:
    value = NAMED.get(value or "", value) or default
    return value.lower()


def faint_texts(svg: str) -> list[str]:
    """Each text below 4.5:1 on its background, as ``'text': fg on bg = ratio``."""
    backgrounds: list[tuple[tuple[float, float, float, float], str]] = []
    out = []
    for el in ET.fromstring(svg).iter():
        fill = el.get("fill")
        shape = el.tag in (SVG + "polygon", SVG + "path") and fill not in (None, "none")
        if shape and el.get("stroke") != fill:  # a cell, box or panel (an arrowhead has its line's colour all over)
            xs, ys = zip(*_points(el), strict=True)
            backgrounds.append(((min(xs), min(ys), max(xs), max(ys)), _colour(fill, "#000000")))
        elif el.tag == SVG + "text" and (el.text or "").strip():
            x, y = float(el.get("x", 0)), float(el.get("y", 0)) - 3  # a point inside the glyphs, above the baseline
            under = [bg for (x0, y0, x1, y1), bg in backgrounds if x0 <= x <= x1 and y0 <= y <= y1]
            fg, bg = _colour(fill, "#000000"), under[-1] if under else "#ffffff"
            if contrast(fg, bg) < 4.5:
                out.append(f"{el.text.strip()!r}: {fg} on {bg} = {contrast(fg, bg):.2f}:1")
    return out


PROGRAMS = ["forum_original.py", "inplace_error.py", "temp_variables.py"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_svg_text_meets_wcag_aa(name: str) -> None:
    """Rows (``grad``, ``(freed)``, ``STALE``), glyphs, the legend's samples, on every step of real programs."""
    code = (ROOT / "examples" / name).read_text(encoding="utf-8")
    trace = trace_code(code, {"torch": torch}, filename=name, raise_errors=False)
    faint, read = [], 0
    for step in trace.steps:
        svg = dot_to_svg(step_dot(step))
        read += svg.count("<text")
        faint += [f"step {step.number}: {f}" for f in faint_texts(svg)]
    assert read > 50
    assert faint == []


def test_the_check_sees_a_faint_text() -> None:
    """The reader finds a grey text on a blue cell (3.57:1): it does read fills and cells."""
    svg = dot_to_svg('digraph { a [shape=plain label=<<TABLE BGCOLOR="#cfe2ff"><TR><TD>'
                     '<FONT COLOR="#6c757d">x</FONT></TD></TR></TABLE>>]; }')
    assert faint_texts(svg) == ["'x': #6c757d on #cfe2ff = 3.57:1"]

"""Rebuild the README's pictures from the forum example (run: python assets/make_readme_graph.py).

Each picture is drawn by gradtrace itself from a real trace, so it can be rebuilt
whenever the renderer changes.
"""

from __future__ import annotations

from pathlib import Path

import gradtrace
from gradtrace.render.dot import step_dot
from gradtrace.render.svg import dot_to_svg

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def main() -> None:
    source = (EXAMPLES / "whatif1.py").read_text(encoding="utf-8")
    trace = gradtrace.trace_code(source, {"__name__": "__main__"})
    backward = next(s for s in trace.steps if s.events_of("backward"))
    (HERE / "whatif1-after-backward.svg").write_text(dot_to_svg(step_dot(backward)), encoding="utf-8")
    source = (EXAMPLES / "forum_original.py").read_text(encoding="utf-8")
    trace = gradtrace.trace_code(source, {"__name__": "__main__"})
    backward = next(s for s in trace.steps if s.events_of("backward"))
    (HERE / "forum-after-backward.svg").write_text(dot_to_svg(step_dot(backward)), encoding="utf-8")
    print("wrote", ", ".join(p.name for p in sorted(HERE.glob("*-after-backward.svg"))))


if __name__ == "__main__":
    main()

"""Rebuild the README's pictures from the forum example (run: python assets/make_readme_graph.py).

Each picture is drawn by gradtrace itself from a real trace, so it can be rebuilt
whenever the renderer changes.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import gradtrace
from gradtrace.render.dot import step_dot
from gradtrace.render.svg import dot_to_svg

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def after_backward(example: str, picture: str) -> None:
    """Trace ``examples/<example>.py`` and draw the step of its ``backward()``."""
    source = (EXAMPLES / f"{example}.py").read_text(encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):  # the example prints its result
        trace = gradtrace.trace_code(source, {"__name__": "__main__"})
    backward = next(s for s in trace.steps if s.events_of("backward"))
    (HERE / picture).write_text(dot_to_svg(step_dot(backward)), encoding="utf-8")
    print("wrote", picture)


def main() -> None:
    after_backward("whatif1", "whatif1-after-backward.svg")
    after_backward("forum_original", "forum-after-backward.svg")


if __name__ == "__main__":
    main()

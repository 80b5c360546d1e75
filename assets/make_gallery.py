"""Rebuild the gallery's pictures of real models (run: python assets/make_gallery.py).

Traces ``examples/resnet18.py`` and ``examples/tiny_transformer.py`` and draws the
step that made ``loss`` folded and grouped by module, top to bottom, with each
module deeper than ``collapse`` path parts drawn as one box (its node and
parameter counts, and the shapes in and out): ResNet-18 by layer, the
transformer by block. Never more than ``MAX_NODES`` boxes go to ``dot``.
Writes ``<example>-folded.svg`` here, and a PNG beside it with ``--png``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import gradtrace
from gradtrace.render.fold import MAX_NODES, fold, folded_text, plan_dot
from gradtrace.render.svg import dot_to_png, dot_to_svg

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def loss_step(example: str) -> gradtrace.Step:
    """The step of ``examples/<example>.py`` that bound ``loss``, traced for real."""
    source = (EXAMPLES / f"{example}.py").read_text(encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):  # the example prints its result
        trace = gradtrace.trace_code(source, {"__name__": "__main__"})
    return next(s for s in trace.steps if s.code.startswith("loss ="))


#: example -> module depth past which modules are drawn as one box
COLLAPSE = {"resnet18": 2, "tiny_transformer": 3}


def draw(example: str, png: bool) -> None:
    step = loss_step(example)
    plan = fold(step, collapse=COLLAPSE[example], max_nodes=MAX_NODES)
    source = plan_dot(step, plan, rankdir="TB", show_attrs=False)
    path = HERE / f"{example}-folded.svg"
    path.write_text(dot_to_svg(source), encoding="utf-8")
    print("wrote", path.name, "\n" + folded_text(plan))
    if png:
        path.with_suffix(".png").write_bytes(dot_to_png(source))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--png", action="store_true", help="also write PNG files (for looking at them)")
    args = parser.parse_args()
    for example in COLLAPSE:
        draw(example, args.png)


if __name__ == "__main__":
    main()

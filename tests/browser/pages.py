"""What the stepper page tests share: lesson cells and their traces, the film's reverse-pass records,
the legibility floor of the picture's text, and the script that reads how the picture is shown.

The floor is read from stepper.js, the cells from the lesson notebooks, the reverse-pass records
from the trace itself; TEXT_PX is the graph text's size that render/dot.py sets.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch

from gradtrace import trace_code
from gradtrace.explain.reverse import reverse_lines
from gradtrace.model import Backward, Trace

ROOT = Path(__file__).resolve().parents[2]

# the least zoom stepper.js shrinks a picture to by default, and the graph text's CSS px at 100% (render/dot.py):
# graph text is never drawn smaller than their product unless the user zooms out
_FLOOR = re.search(r"^export const AUTO_FLOOR = ([0-9.]+);$",
                   (ROOT / "src/gradtrace/render/static/stepper.js").read_text(encoding="utf-8"), re.M)
assert _FLOOR is not None
FLOOR = float(_FLOOR[1])
TEXT_PX = 12.0


def lesson_cells(name: str) -> list[str]:
    """The code of each ``%%gradtrace`` cell of a lesson notebook."""
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    out = []
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and src.startswith("%%gradtrace"):
            out.append(src.split("\n", 1)[1])
    return out


def traced(code: str, filename: str = "lesson") -> Trace:
    return trace_code(code, {"torch": torch}, filename=filename)


def _txt(summary: Any) -> str:
    return "None" if summary is None else summary.text


def with_flow(trace: Trace, film: dict[str, Any]) -> dict[str, Any]:
    """``film`` with the reverse-pass sub-steps and the backward() diff, read off the trace's own records."""
    film = json.loads(json.dumps(film))
    for step, data in zip(trace.steps, film["steps"], strict=True):
        lines = reverse_lines(step)
        flow = []
        for event in step.events:
            if not isinstance(event, Backward):
                continue
            for f in event.flow:
                node = step.nodes[f.node]
                mine = _node_lines(lines, f.node)
                edges = {f"gt-e-next-{f.node}-{e.node}": _txt(f.grad_out[i])
                         for i, e in enumerate(node.inputs) if e is not None and i < len(f.grad_out)
                         and f.grad_out[i] is not None}
                grads = {f"gt-{g.tensor}": _txt(g.after) for g in event.grads if g.tensor == node.variable}
                flow.append({"node": f"gt-{f.node}", "text": " ; ".join(mine), "edges": edges, "grads": grads})
        if flow:
            data["flow"] = flow
    for pair in film["backward"]:
        step = trace.steps[pair["step"]]
        event = next(e for e in step.events if isinstance(e, Backward))
        pair["diff"] = {
            "freed": sorted({f"gt-{node}" for node, _ in event.freed}),
            "grad": {f"gt-{g.tensor}": f"{_txt(g.before)} → {_txt(g.after)}" for g in event.grads},
            "kept": [f"gt-{t.id}" for t in step.tensors.values() if t.retains_grad],
        }
    return film


def _node_lines(lines: list[str], node: str) -> list[str]:
    out, inside = [], False
    for line in lines:
        m = re.match(r"^ {2}(\S+) ", line)
        if m:
            inside = m[1] == node
        if inside:
            out.append(line.strip())
    return out


# The picture's box, the drawing's own size and its size on screen, the zoom read-out, the boxes outside the
# box's visible part (hidden boxes too: the whole sheet is fitted, not only what a step shows), the smallest
# text drawn and the scroll position; of the stepper ``root`` (a notebook widget's .gt-root), else the page's.
LOOK_JS = """(root) => {
  const within = root || document;
  const graph = within.querySelector('.gt-graph'), svg = graph.querySelector('svg');
  const g = graph.getBoundingClientRect(), cs = getComputedStyle(graph);
  const left = g.left + parseFloat(cs.borderLeftWidth), top = g.top + parseFloat(cs.borderTopWidth);
  const view = {left, top, right: left + graph.clientWidth, bottom: top + graph.clientHeight};
  const outside = [...svg.querySelectorAll('g.node')].map(n => [n.id, n.getBoundingClientRect()])
    .filter(([, r]) => r.left < view.left - 0.5 || r.right > view.right + 0.5 || r.top < view.top - 0.5
      || r.bottom > view.bottom + 0.5).map(([id]) => id);
  const texts = [...svg.querySelectorAll('text')]
    .filter(t => getComputedStyle(t).visibility !== 'hidden' && t.textContent.trim() && t.getBBox().width > 0)
    .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
  const level = within.querySelector('.gt-zoomlevel');
  return {
    boxes: svg.querySelectorAll('g.node').length, outside,
    drawing: [svg.viewBox.baseVal.width, svg.viewBox.baseVal.height],
    shown: [svg.getBoundingClientRect().width, svg.getBoundingClientRect().height],
    room: [graph.offsetWidth - parseFloat(cs.borderLeftWidth) - parseFloat(cs.borderRightWidth),
           parseFloat(cs.maxHeight) - parseFloat(cs.borderTopWidth) - parseFloat(cs.borderBottomWidth)],
    level: parseInt(level.textContent, 10), mode: level.dataset.mode, title: level.title,
    smallest: texts.length ? Math.min(...texts) : null,
    scroll: [graph.scrollLeft, graph.scrollTop],
    wide: graph.scrollWidth > graph.clientWidth || graph.scrollHeight > graph.clientHeight,
    step: (root || document.querySelector('.gt-root')).dataset.step,
  };
}"""


#: a loop of three passes between two statements, then an in-place change and backward() (the loop keys' tests)
LOOP = """x = torch.tensor(2., requires_grad=True)
y = x * 1
for i in range(3):
    y = y * x
    z = y + 1
y.add_(1)
y.backward()
done = 1
"""

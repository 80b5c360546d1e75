"""The plain-text twin of the picture: one step, or a whole trace, as text.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

A tensor is named first by the Python names that refer to it, then by its id
(``x · t1``); a tensor no name refers to by its id alone. Deterministic (ids and
bindings in the model's order, nothing from ``id()``), so
tests compare it exactly against golden files. It reads as::

    step 2, line 2: x2 = x ** 2
    names
      x  -> t1
      x2 -> t2
    tensors
      x · t1   leaf     float32 ()  v0  grad_fn None  value 42.  grad -
      x2 · t2  nonleaf  float32 ()  v0  grad_fn n1    value 1764.  grad -
    nodes
      n1  PowBackward0  inputs n2[0]  attrs exponent=2
          saved self: t1 = 42. (alive)
      n2  AccumulateGrad  variable t1
    events
      - new tensor t2 (nonleaf); new node n1 (PowBackward0), n2 (AccumulateGrad)
      - x2 now names t2 (nonleaf)
"""

from __future__ import annotations

from ..model import ALIVE, FREED, STALE, Edge, NodeInfo, SavedValue, Step, TensorInfo, Trace
from .words import FORBIDDEN, clean, event_words, op_name, prediction_words, shape_text, shown_filename, summary_text

__all__ = ["reverse_pass", "step_text", "trace_text"]


def _table(rows: list[list[str]]) -> list[str]:
    """Rows of cells, columns padded to their widest cell (the last column is not padded)."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    lines = []
    for row in rows:
        cells = [c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row)]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def _tensor_label(step: Step, t: TensorInfo) -> str:
    """``x · t1``: the names that refer to the tensor, then its id."""
    names = step.names_of(t.id)
    return f"{', '.join(clean(n) for n in names)} · {t.id}" if names else t.id


def _several(step: Step) -> set[str]:
    """The nodes of several outputs that the step's tensors come out of (one of them is output 1 or later)."""
    return {t.grad_fn for t in step.tensors.values() if t.output_nr and t.grad_fn is not None}


def _tensor_row(step: Step, t: TensorInfo, several: set[str]) -> list[str]:
    extras = []
    if t.layout != "strided":
        extras.append(f"layout {clean(t.layout)}")
    if t.device != "cpu":
        extras.append(f"device {clean(t.device)}")
    if t.base is not None:
        extras.append(f"view of {t.base}")
    if t.is_param:
        extras.append("parameter")
    if t.forbidden:
        extras.append(FORBIDDEN)
    tail = f"value {summary_text(t.value)}  grad {summary_text(t.grad)}"
    if extras:
        tail += "  " + "  ".join(extras)
    return [
        _tensor_label(step, t),
        t.kind,
        clean(t.dtype),
        shape_text(t.shape),
        f"v{t.version}",
        "grad_fn ?" if t.forbidden else f"grad_fn {t.grad_fn} (output {t.output_nr})" if t.grad_fn in several
        else f"grad_fn {t.grad_fn or 'None'}",
        tail,
    ]


def _edge_text(edge: Edge | None) -> str:
    return "None" if edge is None else f"{edge.node}[{edge.output_nr}]"


def saved_state_text(s: SavedValue) -> str:
    """``alive``, ``freed``, or ``stale: saved at version 0, now 1``."""
    if s.state == ALIVE or s.state == FREED:
        return s.state
    return f"stale: saved at version {s.saved_version}, now {s.version}"


def _saved_line(s: SavedValue) -> str:
    # a stale value's figures are the ones it was saved with: its tensor holds others now
    target = (f"{s.tensor} was " if s.state == STALE else f"{s.tensor} = ") if s.tensor else ""
    value = summary_text(s.value) if s.value is not None else "?"
    return f"      saved {clean(s.name)}: {target}{value} ({saved_state_text(s)})"


def _node_lines(n: NodeInfo) -> list[str]:
    parts = [n.id, op_name(n.name)]
    if n.inputs:
        parts.append("inputs " + ", ".join(_edge_text(e) for e in n.inputs))
    if n.attrs:
        parts.append("attrs " + ", ".join(f"{clean(k)}={clean(v)}" for k, v in n.attrs))
    if n.variable is not None:
        parts.append(f"variable {n.variable}")
    return ["  " + "  ".join(parts)] + [_saved_line(s) for s in n.saved]


def _names_lines(step: Step) -> list[str]:
    width = max((len(clean(n)) for n in step.bindings), default=0)
    return [f"  {clean(n).ljust(width)} -> {t}" for n, t in step.bindings.items()]


def step_text(step: Step) -> str:
    """One step as text: its code, names, tensors, nodes, events and predictions."""
    frame = "" if step.frame in ("", "<module>") else f" in {clean(step.frame)}"
    lines = [f"step {step.number}, line {step.lineno}{frame}: {clean(step.code)}"]
    lines += ["names"] + (_names_lines(step) or ["  (none)"])
    several = _several(step)
    lines += ["tensors"] + (_table([_tensor_row(step, t, several) for t in step.tensors.values()]) or ["  (none)"])
    lines.append("nodes")
    for node in step.nodes.values():
        lines += _node_lines(node)
    if not step.nodes:
        lines.append("  (none)")
    if step.events:
        lines += ["events"] + [f"  - {event_words(step, e)}".replace("\n", "\n    ") for e in step.events]
    if step.predictions:
        lines += ["predictions"] + [f"  - {prediction_words(step, p)}" for p in step.predictions]
    lines += [clean(line) for line in reverse_pass(step)]
    return "\n".join(lines) + "\n"


def reverse_pass(step: Step) -> list[str]:
    """The step's ``backward()`` explained node by node (see :mod:`gradtrace.explain.reverse`)."""
    if not step.events_of("backward"):
        return []
    from ..explain.reverse import reverse_lines

    return reverse_lines(step)


def _final_grads(trace: Trace) -> list[str]:
    last = trace.last
    if last is None:
        return []
    lines = []
    for name, tid in last.bindings.items():
        info = last.tensors.get(tid)
        if info is not None and info.grad is not None:
            lines.append(f"  {clean(name)}.grad = {summary_text(info.grad)}")
    return ["final grads"] + lines if lines else []


def trace_text(trace: Trace) -> str:
    """Every step of ``trace`` as text, then how the program ended."""
    plural = "" if len(trace.steps) == 1 else "s"
    parts = [f"trace of {shown_filename(trace.filename)}: {len(trace.steps)} step{plural}\n"]
    parts += [step_text(s) for s in trace.steps]
    tail = _final_grads(trace)
    if trace.steps_unrecorded:
        tail.append(f"{trace.steps_unrecorded} more steps ran but were not recorded (max_steps={trace.max_steps})")
    if trace.error is not None:
        e = trace.error
        where = f" at line {e.lineno}" if e.lineno is not None else ""
        shown = next((s.number for s in trace.steps if s.events_of("error")), None)
        if shown is None:
            tail.append(f"stopped by {clean(e.type)}{where}: {clean(e.message)}")
        else:  # the message is in that step's events: not twice
            tail.append(f"stopped by {clean(e.type)}{where} (step {shown})")
    if tail:
        parts.append("\n".join(tail) + "\n")
    return "\n".join(parts)

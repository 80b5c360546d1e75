"""The reverse pass of a traced ``backward()``, as arithmetic (explain layer).

Place in the pipeline: tracer -> model -> **explain** -> render.

The tracer watches each ``backward()`` the learner's code runs and keeps, node
by node in the order the engine ran them, the gradient that entered and the
gradients that left (``Backward.flow``). This module writes each node's share
with its own numbers (the rule filled in by :mod:`.formulas`), the sums where
paths meet, and what lands in each leaf's ``.grad``. Every figure shown is
PyTorch's own, as the tracer recorded it: the filled-in arithmetic is redone with
plain numbers only to check that the formula gives it (see :mod:`.formulas`); where
it cannot be, the recorded gradient is shown as it is.
"""

from __future__ import annotations

from ..model import Backward, Flow, NodeInfo, Step, Summary
from ._arith import Arr
from ._numbers import fmt_values, per_output, same_values
from .formulas import fill_in
from .walkthrough import _Builder, _raised_after, _shape_of, replaced_by_hook


def reverse_lines(step: Step) -> list[str]:
    """One line per node for every watched ``backward()`` of ``step`` (empty if none)."""
    lines: list[str] = []
    for event in step.events:
        if isinstance(event, Backward) and event.flow:
            lines += _one_pass(step, event)
    return lines


def _start(step: Step, tensor: str | None, node_id: str | None) -> str:
    """A tensor the pass starts from: its name and id, or the node of a tensor no name holds."""
    if tensor:
        return _who(step, tensor)
    node = step.nodes.get(node_id or "")
    return "a tensor no name holds" + (f" (its grad_fn is {node.id} ({node.name}))" if node is not None else "")


def _one_pass(step: Step, event: Backward) -> list[str]:
    root = " and ".join(_start(step, t, n) for t, n in [(event.root, event.root_node),
                                                          *((r.tensor, r.node) for r in event.others)])
    raised = _raised_after(step, event)
    stopped = f" (the statement stopped with {raised} after the last of them)" if raised else ""
    lines = [f"reverse pass from {root}, node by node in the order PyTorch ran them{stopped}:"]
    arrived: dict[str, list[tuple[int, Summary]]] = {}  # node -> (which of its outputs, the gradient sent to it)
    build = _Builder(step, event, "")
    dtype_of = build.dtype_at  # each gradient in its own dtype (float64 graphs stay float64)
    for flow in event.flow:
        dtype = dtype_of(flow.node)
        node = step.nodes.get(flow.node)
        name = node.name if node is not None else "?"
        came = arrived.get(flow.node, [])
        if len(flow.grad_in) > 1 or len({nr for nr, _g in came}) > 1:  # several outputs: one gradient each
            lines.append(f"  {flow.node} {name}: gets {_per_output(flow, came, dtype)}")
        else:
            parts = [g for _nr, g in came]
            hooked = _hook_note(step, node, flow, parts, dtype)
            if hooked:
                lines.append(f"  {flow.node} {name}: gets {_txt(flow.grad_in[0], dtype)}")
                if len(parts) > 1:  # the parts that added up to what was sent (the note gives their sum)
                    lines.append(f"      (sent: {' + '.join(_txt(p, dtype) for p in parts)}; {hooked})")
                else:  # one sender: the note already says what it sent
                    lines.append(f"      ({hooked})")
            else:
                lines.append(f"  {flow.node} {name}: gets {_incoming(flow, parts, dtype)}")
        if node is None:
            continue
        if node.variable is not None:
            lines.append(f"      {_leaf_line(step, event, node, flow, dtype)}")
            continue
        for text in _sends(node, flow, dtype, build.several):
            lines.append(f"      sends {text}")
        retained = _retained(step, event, node, flow, dtype)
        if retained:
            lines.append(f"      {retained}")
        for i, edge in enumerate(node.inputs):
            got = flow.grad_out[i] if i < len(flow.grad_out) else None
            if edge is not None and got is not None:
                arrived.setdefault(edge.node, []).append((edge.output_nr, got))
    return lines


def _txt(summary: Summary | None, dtype: str) -> str:
    if summary is None:
        return "-"
    return summary.text if summary.values is None else fmt_values(summary.values, dtype)


def _incoming(flow: Flow, parts: list[Summary], dtype: str) -> str:
    text = _txt(flow.grad_in[0] if flow.grad_in else None, dtype)
    if len(parts) > 1:
        return " + ".join(_txt(p, dtype) for p in parts) + f" = {text}   (paths meet and add up)"
    return text


def _per_output(flow: Flow, came: list[tuple[int, Summary]], dtype: str) -> str:
    """A node of several outputs: what each output got, with the gradients that added up into it."""
    by_output: dict[int, list[Summary]] = {}
    for nr, g in came:
        by_output.setdefault(nr, []).append(g)

    def one(nr: int, got: Summary) -> str:
        text = _txt(got, dtype)
        parts = by_output.get(nr, [])
        if len(parts) < 2 or got.values is None or any(p.values is None for p in parts):
            return text
        if not _same(_engine_sum(parts, dtype), got.values):  # a hook on that output changed it: what arrived
            return text
        return " + ".join(_txt(p, dtype) for p in parts) + f" = {text}"

    return per_output([None if g is None else one(nr, g) for nr, g in enumerate(flow.grad_in)], str)


def _engine_sum(parts: list[Summary], dtype: str) -> object:
    """The gradients ``parts`` summed as the engine adds them: one addition at a time, rounded to the dtype."""
    total = Arr.of(parts[0].values, dtype)
    for p in parts[1:]:
        total = total + Arr.of(p.values, dtype)
    return total.tolist()


def _hook_note(step: Step, node: NodeInfo | None, flow: Flow, parts: list[Summary], dtype: str) -> str:
    """A sentence when a tensor hook changed the gradient between the senders and this node."""
    got = flow.grad_in[0] if len(flow.grad_in) == 1 else None
    if got is None or got.values is None or not parts or any(p.values is None for p in parts):
        return ""
    sent = parts[0].values if len(parts) == 1 else _engine_sum(parts, dtype)
    if _same(sent, got.values):
        return ""
    who = flow.node if node is None else (_who(step, node.variable) if node.variable else _output_name(step, node))
    return (f"a hook changed the gradient on its way to {who}: {fmt_values(sent, dtype)} was sent, "
            f"{_txt(got, dtype)} arrived; the figures below use what arrived")


def _output_name(step: Step, node: NodeInfo) -> str:
    for tid, info in step.tensors.items():
        if info.grad_fn == node.id and step.names_of(tid):
            return _who(step, tid)
    return node.id


def _retained(step: Step, event: Backward, node: NodeInfo, flow: Flow, dtype: str) -> str:
    """The ``.grad`` a ``retain_grad()`` tensor whose grad_fn is ``node`` received, if any: added to the
    one it had, as a leaf's (a second ``backward()`` through a kept graph)."""
    for change in event.grads:
        info = step.tensors.get(change.tensor)
        if info is not None and info.grad_fn == node.id and info.retains_grad and change.after is not None:
            who, after = _who(step, change.tensor), _txt(change.after, dtype)
            got = flow.grad_in[0] if len(flow.grad_in) == 1 else None
            if change.before is not None and got is not None:
                return (f"{who}.grad = {_txt(change.before, dtype)} + {_txt(got, dtype)} = {after}"
                        "   (kept by retain_grad(); accumulates)")
            return f"{who}.grad = {after}   (kept by retain_grad())"
    return ""


def _sends(node: NodeInfo, flow: Flow, dtype: str, several: set[str]) -> list[str]:
    # (of a node of several outputs, each output's gradient; any of them stands for the incoming one)
    outputs = tuple(None if g is None else g.values for g in flow.grad_in) if len(flow.grad_in) > 1 else ()
    grad = next((g for g in flow.grad_in if g is not None and g.values is not None), None)
    if outputs and any(g is not None and g.values is None for g in flow.grad_in):
        grad = None  # one of them too large to write out: no formula with figures
    sent = tuple(None if s is None else s.values for s in flow.grad_out)
    shapes = tuple(_shape_of(s) for s in flow.grad_out)  # a broadcast input's gradient is summed back to its shape
    filled = fill_in(node, grad.values, dtype, shapes, sent, outputs) if grad is not None else None
    out = []
    for i, edge in enumerate(node.inputs):
        if edge is None:
            continue
        got = flow.grad_out[i] if i < len(flow.grad_out) else None
        part = filled.part(i) if filled is not None else None
        to = f"{edge.node} (output {edge.output_nr})" if edge.node in several else edge.node
        if part is not None and got is not None and _same(part.values, got.values):
            out.append(f"to {to}: {part.text}")
        elif got is not None:
            arrived = replaced_by_hook(node, flow, i, got)
            if arrived is not None:
                out.append(f"to {to}: {_txt(got, dtype)}   (a module's backward hook replaced "
                           f"{_txt(arrived, dtype)}, which arrived)")
            else:
                out.append(f"to {to}: {_txt(got, dtype)}")
    return out


def _leaf_line(step: Step, event: Backward, node: NodeInfo, flow: Flow, dtype: str) -> str:
    leaf = node.variable or "?"
    change = next((g for g in event.grads if g.tensor == leaf), None)
    got = _txt(flow.grad_in[0] if flow.grad_in else None, dtype)
    if change is None or change.after is None:
        return f"adds {got} to {_who(step, leaf)}.grad"
    after = _txt(change.after, dtype)
    if change.before is None:
        return f"{_who(step, leaf)}.grad = {after}"
    return f"{_who(step, leaf)}.grad = {_txt(change.before, dtype)} + {got} = {after}   (accumulates)"


def _who(step: Step, tensor: str) -> str:
    names = step.names_of(tensor)
    return f"{names[0]} ({tensor})" if names else tensor


def _same(a: object, b: object) -> bool:
    """Whether the filled-in figures are exactly the values PyTorch sent."""
    return same_values(a, b)

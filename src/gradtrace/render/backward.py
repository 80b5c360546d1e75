"""A ``backward()`` step as film data: the reverse pass node by node, and what the call changed.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

:func:`flow` turns the reverse pass the tracer watched (``Backward.flow``) into
sub-steps a stepper can walk: the node the engine ran, its arithmetic (the very
lines of :func:`~gradtrace.render.text.reverse_pass`, which is what the trace's
text twin and ``gradtrace.explain`` write), the gradient on each arrow it sent
along, and the ``.grad`` boxes it filled. :func:`diff` says what the call
changed: the saved values it freed, each ``.grad`` (old → new), and the tensors
whose ``.grad`` ``retain_grad()`` kept.

Both name drawn objects by their DOM ids (``gt-n3``, ``gt-e-next-n3-n2``); ``dom``
maps an object id to its drawn key when the film lays pictures out by place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model import Backward, Flow, NodeInfo, Step, Summary
from .text import reverse_pass
from .words import summary_text

__all__ = ["flow", "diff"]

Dom = Callable[[str], str]


def _plain(key: str) -> str:
    return "gt-" + key


def _fmt() -> Callable[[Any, str], str] | None:
    try:
        from ..explain._numbers import fmt_values
    except ImportError:  # the explain layer is absent: the numbers are written as recorded
        return None
    return fmt_values


def _number(summary: Summary | None, dtype: str) -> str:
    """A gradient as the reverse pass writes it (``5292``, not the summary's ``5292.``)."""
    if summary is None:
        return "-"
    fmt = _fmt()
    if summary.values is None or fmt is None:
        return summary.text
    return fmt(summary.values, dtype)


def _dtype(step: Step, event: Backward) -> str:
    info = step.tensors.get(event.root or "")
    return info.dtype if info is not None else "float32"


def _blocks(step: Step) -> list[str]:
    """The reverse-pass text of each watched node, in engine order (one block per flow entry)."""
    blocks: list[list[str]] = []
    for line in reverse_pass(step):
        if line.startswith("  ") and not line.startswith("   "):
            blocks.append([line.strip()])
        elif line.startswith("   ") and blocks:
            blocks[-1].append(line.strip())
    return ["\n".join(b) for b in blocks]


def flow(step: Step, dom: Dom = _plain) -> list[dict[str, Any]]:
    """The sub-steps of every watched ``backward()`` of ``step`` (empty when none was watched).

    Each is ``{"node": dom id, "text": the node's reverse-pass lines,
    "edges": {edge dom id: gradient sent along it}, "grads": {tensor dom id: .grad after}}``.
    """
    events = [e for e in step.events if isinstance(e, Backward) and e.flow]
    flows = [(e, f) for e in events for f in e.flow]
    blocks = _blocks(step)
    texts = blocks if len(blocks) == len(flows) else [""] * len(flows)
    return [_sub_step(step, e, f, text, dom) for (e, f), text in zip(flows, texts, strict=True)]


def _sub_step(step: Step, event: Backward, f: Flow, text: str, dom: Dom) -> dict[str, Any]:
    node = step.nodes.get(f.node)
    dtype = _dtype(step, event)
    edges: dict[str, list[str]] = {}
    grads: dict[str, str] = {}
    if node is not None:
        for i, edge in enumerate(node.inputs):
            got = f.grad_out[i] if i < len(f.grad_out) else None
            if edge is not None and got is not None and edge.node in step.nodes:
                edges.setdefault(f"next-{f.node}-{edge.node}", []).append(_number(got, dtype))
        _into_tensors(step, event, node, f, dtype, edges, grads, dom)
    return {
        "node": dom(f.node),
        "text": text,
        "edges": {dom_edge(key, dom): ", ".join(v) for key, v in edges.items()},
        "grads": grads,
    }


def _into_tensors(step: Step, event: Backward, node: NodeInfo, f: Flow, dtype: str,
                  edges: dict[str, list[str]], grads: dict[str, str], dom: Dom) -> None:
    """What reaches tensors at ``node``: a leaf's ``.grad`` (AccumulateGrad), a retained or root tensor's
    (the gradient of the tensor's own output: of a node of several outputs, each gets its own)."""

    def incoming(output_nr: int) -> str:
        return _number(f.grad_in[output_nr], dtype) if output_nr < len(f.grad_in) else "-"

    after = {g.tensor: g.after for g in event.grads}
    if node.variable is not None and node.variable in step.tensors:
        edges.setdefault(f"variable-{node.id}-{node.variable}", []).append(incoming(0))
        if after.get(node.variable) is not None:
            grads[dom(node.variable)] = _number(after[node.variable], dtype)
        return
    for t in step.tensors.values():
        if t.grad_fn != node.id:
            continue
        if t.id == event.root or t.retains_grad:
            edges.setdefault(f"grad_fn-{t.id}-{node.id}", []).append(incoming(t.output_nr))
        if t.retains_grad and after.get(t.id) is not None:
            grads[dom(t.id)] = _number(after[t.id], dtype)


def dom_edge(key: str, dom: Dom) -> str:
    """The DOM id of the edge ``<kind>-<tail>-<head>`` (its ends named through ``dom``)."""
    kind, tail, head = key.split("-", 2)
    return f"gt-e-{kind}-{dom(tail)[3:]}-{dom(head)[3:]}"


def diff(step: Step, dom: Dom = _plain) -> dict[str, Any]:
    """What the ``backward()`` calls of ``step`` changed, by DOM id.

    ``{"freed": [nodes whose saved values were freed, and their saved-value arrows],
    "grad": {tensor: "old → new"}, "kept": [non-leaf tensors whose .grad retain_grad() kept]}``.
    """
    freed: dict[str, None] = {}
    grad: dict[str, str] = {}
    for event in step.events:
        if not isinstance(event, Backward):
            continue
        for node_id, saved_name in event.freed:
            freed[dom(node_id)] = None
            node = step.nodes.get(node_id)
            for s in node.saved if node is not None else ():
                if s.name == saved_name and s.tensor is not None and s.tensor in step.tensors:
                    freed[dom_edge(f"saved-{node_id}-{s.tensor}", dom)] = None
        for change in event.grads:
            before = "None" if change.before is None else summary_text(change.before)
            after = "None" if change.after is None else summary_text(change.after)
            grad[dom(change.tensor)] = f"{before} → {after}"
    kept = [dom(t.id) for t in step.tensors.values() if t.retains_grad and not t.is_leaf and t.grad is not None]
    return {"freed": list(freed), "grad": grad, "kept": kept}

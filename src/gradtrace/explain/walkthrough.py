"""The reverse pass explained in numbers: what each backward node received and sent on.

Place in the pipeline: tracer -> model -> **explain** -> render.

:func:`walkthrough` runs the real ``root.backward(...)`` with a pre-hook and a
hook on every node of the graph. The hooks' closures hold only integers and a
list of plain records (never a node or a tensor, which would keep the whole graph
alive), and every handle is removed afterwards, even when ``backward()`` raises.
With hooks on every node PyTorch's results are bit-identical to a run without.

The result is plain data: for each node in the order the engine ran it, the
gradient that entered it (and, where several paths met, the parts that were
summed), its local rule filled in with its own numbers, and the gradient it sent
to each input, as torch computed it. Leaves show how ``.grad`` changed,
including accumulation across several ``backward()`` calls. For f = x² + x³ at
x = 42 the leaf reads ``1·(2·42) + 1·(3·42²) = 84 + 5292 = 5376``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import NodeInfo
from ._live import input_meta, node_info, summarize
from ._numbers import MAX_ELEMENTS, dtype_name, fmt_values, to_tensor
from .formulas import ACCUMULATE_GRAD, Filled, fill_in, formula_for

#: Graphs with more nodes are not walked (touching every node of a very deep graph
#: from Python makes freeing it later recurse on the C stack).
MAX_NODES = 20_000


class GraphTooLarge(ValueError):
    """The graph has more nodes than a walkthrough explains; backward() was not run."""


@dataclass(frozen=True)
class GradValue:
    """A gradient as plain data: every value when small, else a summary text."""

    text: str
    values: Any
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Part:
    """One path's share of a gradient that several paths sent to the same node."""

    source: str
    expr: str
    grad: GradValue


@dataclass(frozen=True)
class Output:
    """What a node sent to one of its inputs."""

    index: int
    target: str
    target_label: str
    grad: GradValue | None
    formula: str | None
    matches: bool | None


@dataclass(frozen=True)
class WalkStep:
    """One node as the engine ran it."""

    order: int
    node: str
    name: str
    label: str
    grad_in: tuple[GradValue | None, ...]
    parts: tuple[Part, ...]
    parts_sum: str | None
    rule: str
    reason: str
    outputs: tuple[Output, ...]
    note: str | None = None
    grad_before: GradValue | None = None
    grad_after: GradValue | None = None
    retained: tuple[tuple[str, GradValue], ...] = ()
    #: set when a tensor hook changed the gradient between the nodes that sent it and this node
    hook: str | None = None
    #: what the nodes sent (summed where paths meet), before any hook changed it
    sent: GradValue | None = None

    @property
    def is_accumulate(self) -> bool:
        return self.name == ACCUMULATE_GRAD


@dataclass(frozen=True)
class LeafGrad:
    """The final figure for one leaf: its ``.grad`` before and after, and how it was made."""

    label: str
    node: str
    before: GradValue | None
    incoming: GradValue | None
    after: GradValue | None
    chain: str


@dataclass(frozen=True)
class Walkthrough:
    """The whole reverse pass of one ``backward()`` call, as plain data."""

    root: str
    root_name: str
    seed: GradValue
    vjp: bool
    retain_graph: bool
    steps: tuple[WalkStep, ...]
    leaves: tuple[LeafGrad, ...]
    nodes: tuple[NodeInfo, ...]

    def leaf(self, label: str) -> LeafGrad:
        return next(leaf for leaf in self.leaves if leaf.label == label)

    def to_text(self, max_steps: int = 200) -> str:
        from ._walktext import walkthrough_text

        return walkthrough_text(self, max_steps)

    def __str__(self) -> str:
        return self.to_text()


# --------------------------------------------------------------------------- running


def _grad_value(t: Any) -> GradValue | None:
    if t is None:
        return None
    summary = summarize(t)
    return GradValue(summary.text, summary.values, dtype_name(t.dtype), tuple(t.shape))


def _grad_values(grads: Any) -> tuple[GradValue | None, ...]:
    """Summaries for a hook; a gradient that cannot be read is None (a hook must never raise)."""
    out: list[GradValue | None] = []
    for g in grads:
        try:
            out.append(_grad_value(g))
        except Exception:
            out.append(None)
    return tuple(out)


class _Graph:
    """The nodes under a root, walked iteratively, numbered in creation order."""

    def __init__(self, root_fn: Any) -> None:
        self.nodes: list[Any] = []
        self.index: dict[int, int] = {}
        stack = [root_fn]
        while stack:
            node = stack.pop()
            if id(node) in self.index:
                continue
            if len(self.nodes) >= MAX_NODES:
                raise GraphTooLarge(
                    f"the graph has more than {MAX_NODES} nodes: too many to explain one by one; "
                    "backward() was not run")
            self.index[id(node)] = len(self.nodes)
            self.nodes.append(node)
            stack.extend(nxt for nxt, _ in reversed(node.next_functions) if nxt is not None)
        self.edges = [[(i, self.index[id(nxt)], nr) for i, (nxt, nr) in enumerate(n.next_functions)
                       if nxt is not None] for n in self.nodes]
        self.ids = self._number()

    def _number(self) -> list[str]:
        consumers: dict[int, list[int]] = {}
        for k, edges in enumerate(self.edges):
            for _i, m, _nr in edges:
                consumers.setdefault(m, []).append(k)
        seq = [self._seq(n) for n in self.nodes]
        keys = []
        for k, node in enumerate(self.nodes):
            if node.name() == ACCUMULATE_GRAD:
                first = min((seq[c] for c in consumers.get(k, [])), default=-1)
                keys.append((first, 0, k))
            else:
                keys.append((seq[k], 1, k))
        ids = [""] * len(self.nodes)
        for rank, (_s, _a, k) in enumerate(sorted(keys), start=1):
            ids[k] = f"n{rank}"
        return ids

    @staticmethod
    def _seq(node: Any) -> int:
        try:
            return int(node._sequence_nr())
        except (AttributeError, RuntimeError):
            return -1


def _labels(graph: _Graph, root: Any, names: Mapping[str, Any] | None) -> tuple[list[str], list[Any]]:
    """A readable label per node, and the (label, tensor) pairs of retained non-leaves."""
    import torch

    labels = [""] * len(graph.nodes)
    retained: list[Any] = []
    by_leaf: dict[int, str] = {}
    by_fn: dict[tuple[int, int], str] = {}
    for name, value in (names or {}).items():
        if not isinstance(value, torch.Tensor) or not value.requires_grad:
            continue
        if value.grad_fn is None:
            by_leaf.setdefault(id(value), name)
        else:
            by_fn.setdefault((id(value.grad_fn), value.output_nr), name)
            if value.retains_grad:
                retained.append((name, value))
    for k, node in enumerate(graph.nodes):
        if node.name() == ACCUMULATE_GRAD:
            labels[k] = by_leaf.get(id(node.variable), f"<leaf {graph.ids[k]}>")
        else:
            labels[k] = by_fn.get((id(node), 0), "")
    return labels, retained


def walkthrough(root: Any, gradient: Any = None, retain_graph: bool = False, inputs: Any = None, *,
                names: Mapping[str, Any] | None = None, root_name: str | None = None) -> Walkthrough:
    """Run ``root.backward(gradient, retain_graph, inputs=inputs)`` and explain it node by node.

    ``names`` (for example ``globals()``) maps Python names to tensors so that
    leaves and retained intermediates are called by their names. Raises what
    ``backward()`` raises (every hook removed first), and :class:`GraphTooLarge`
    (before running anything) for graphs of more than :data:`MAX_NODES` nodes.
    """
    import torch

    if not isinstance(root, torch.Tensor):
        raise TypeError(f"walkthrough() needs a tensor, got {type(root).__name__}")
    if root_name is None:
        root_name = next((n for n, v in (names or {}).items() if v is root), "output")
    if root.grad_fn is None:
        root.backward(gradient, retain_graph=retain_graph, inputs=inputs)
        return _leaf_only(root, root_name, gradient)
    graph = _Graph(root.grad_fn)
    labels, retained = _labels(graph, root, names)
    labels[0] = labels[0] or root_name
    infos = [_info(graph, k) for k in range(len(graph.nodes))]
    metas = [input_meta(node) for node in graph.nodes]
    leaf_before = {k: _grad_value(n.variable.grad) for k, n in enumerate(graph.nodes)
                   if n.name() == ACCUMULATE_GRAD}
    events = _run(graph, root, gradient, retain_graph, inputs)
    leaf_after = {k: _grad_value(graph.nodes[k].variable.grad) for k in leaf_before}
    kept = [(label, graph.index.get(id(t.grad_fn)), t.output_nr, _grad_value(t.grad)) for label, t in retained]
    seed = _grad_value(gradient if gradient is not None else torch.ones_like(root))
    assert seed is not None
    build = _Builder(graph, labels, infos, metas, events)
    steps = build.steps(leaf_before, leaf_after, kept)
    leaves = tuple(_leaf_grad(s) for s in steps if s.is_accumulate)
    return Walkthrough(graph.ids[0], root_name, seed, gradient is not None and root.numel() > 1,
                       retain_graph, steps, leaves, tuple(infos))


def _info(graph: _Graph, k: int) -> NodeInfo:
    ids = {id(n): graph.ids[j] for j, n in enumerate(graph.nodes)}
    return node_info(graph.nodes[k], graph.ids[k], ids)


def _run(graph: _Graph, root: Any, gradient: Any, retain_graph: bool, inputs: Any,
         events: list[tuple] | None = None) -> list[tuple]:
    """Run backward with hooks that record plain values into ``events``, then remove every hook."""
    events = [] if events is None else events

    def pre(k: int) -> Any:
        def hook(grad_outputs: Any) -> None:
            events.append(("in", k, _grad_values(grad_outputs)))
        return hook

    def post(k: int) -> Any:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            events.append(("out", k, _grad_values(grad_inputs)))
        return hook

    handles = []
    try:
        for k, node in enumerate(graph.nodes):
            handles.append(node.register_prehook(pre(k)))
            handles.append(node.register_hook(post(k)))
        root.backward(gradient, retain_graph=retain_graph, inputs=inputs)
    finally:
        for handle in handles:
            handle.remove()
    return events


def _leaf_only(root: Any, name: str, gradient: Any) -> Walkthrough:
    import torch

    seed = _grad_value(gradient if gradient is not None else torch.ones_like(root))
    assert seed is not None
    after = _grad_value(root.grad)
    leaf = LeafGrad(name, "", None, seed, after, after.text if after else "None")
    return Walkthrough("", name, seed, gradient is not None and root.numel() > 1, False, (), (leaf,), ())


# --------------------------------------------------------------------------- building


def _sum_parts(parts: Sequence[GradValue]) -> Any:
    """The parts added in the order the engine added them, in their dtype, with torch."""
    total = None
    for p in parts:
        t = to_tensor(p.values, p.dtype, p.shape)
        total = t if total is None else total + t
    return total


def _compact(expr: str) -> str:
    return expr.replace(" · ", "·")


class _Builder:
    def __init__(self, graph: _Graph, labels: list[str], infos: list[NodeInfo], metas: list[Any],
                 events: list[tuple]) -> None:
        self.graph, self.labels, self.infos, self.metas = graph, labels, infos, metas
        self.grad_in: dict[int, tuple[GradValue | None, ...]] = {}
        self.grad_out: dict[int, tuple[GradValue | None, ...]] = {}
        self.order: list[int] = []
        for kind, k, grads in events:
            if kind == "in":
                self.grad_in[k] = grads
                self.order.append(k)
            else:
                self.grad_out[k] = grads
        self.filled: dict[int, Filled] = {}
        self.arrivals: dict[int, list[tuple[int, int]]] = {}
        for k in self.order:
            for i, m, _nr in graph.edges[k]:
                self.arrivals.setdefault(m, []).append((k, i))

    def steps(self, before: dict[int, GradValue | None], after: dict[int, GradValue | None],
              kept: list[tuple[str, int | None, int, GradValue | None]]) -> tuple[WalkStep, ...]:
        out = []
        for order, k in enumerate(self.order, start=1):
            retained = tuple((label, g) for label, idx, _nr, g in kept if idx == k and g is not None)
            out.append(self._step(order, k, before.get(k), after.get(k), retained))
        return tuple(out)

    def _fill(self, k: int) -> Filled | None:
        if k in self.filled:
            return self.filled[k]
        grads = self.grad_in.get(k, ())
        if len(grads) != 1 or grads[0] is None or grads[0].values is None:
            return None
        shapes = tuple(None if m is None else m[0] for m in self.metas[k])
        g = grads[0]
        filled = fill_in(self.infos[k], to_tensor(g.values, g.dtype, g.shape), g.dtype, shapes)
        self.filled[k] = filled
        return filled

    def _parts(self, k: int) -> tuple[tuple[Part, ...], str | None]:
        parts = []
        for src, i in self.arrivals.get(k, []):
            sent = self.grad_out.get(src, ())
            g = sent[i] if i < len(sent) else None
            if g is None:
                continue
            filled = self._fill(src)
            piece = filled.part(i) if filled else None
            expr = piece.expr if piece is not None and piece.values == g.values else g.text
            parts.append(Part(self.graph.ids[src], expr, g))
        if len(parts) < 2:
            return tuple(parts), None
        if len(parts) == 2:  # a + b == b + a exactly: show them in creation order
            parts.sort(key=lambda p: int(p.source[1:]))
        if any(p.grad.values is None for p in parts):
            return tuple(parts), None
        total = _sum_parts([p.grad for p in parts])
        text = " + ".join(fmt_values(p.grad.values, p.grad.dtype) for p in parts)
        return tuple(parts), f"{text} = {fmt_values(total.tolist(), dtype_name(total.dtype))}"

    def _step(self, order: int, k: int, before: GradValue | None, after: GradValue | None,
              retained: tuple[tuple[str, GradValue], ...]) -> WalkStep:
        node = self.graph.nodes[k]
        name = node.name()
        formula = formula_for(name)
        filled = self._fill(k)
        parts, parts_sum = self._parts(k)
        outputs = []
        sent = self.grad_out.get(k, ())
        for i, m, _nr in self.graph.edges[k]:
            g = sent[i] if i < len(sent) else None
            piece = filled.part(i) if filled else None
            matches = None if piece is None or g is None or g.values is None else piece.values == g.values
            outputs.append(Output(i, self.graph.ids[m], self.labels[m], g,
                                  piece.text if piece else None, matches))
        rule = "; ".join(r.local for r in formula.rules) if formula else f"no formula recorded for {name}"
        note = filled.note if filled is not None else None
        grad_in = self.grad_in.get(k, ())
        sent, hook = self._hooked(k, parts, grad_in)
        return WalkStep(order, self.graph.ids[k], name, self.labels[k], grad_in, parts,
                        parts_sum, rule, formula.reason if formula else "", tuple(outputs), note,
                        before, after, retained, hook, sent)

    def _hooked(self, k: int, parts: tuple[Part, ...],
                grad_in: tuple[GradValue | None, ...]) -> tuple[GradValue | None, str | None]:
        """What was sent to node ``k``, and a sentence when a tensor hook changed it on the way in."""
        if len(grad_in) != 1 or grad_in[0] is None or grad_in[0].values is None or not parts:
            return None, None
        if any(p.grad.values is None for p in parts):
            return None, None
        if len(parts) == 1:
            sent = parts[0].grad
        else:
            total = _sum_parts([p.grad for p in parts])
            sent = GradValue(fmt_values(total.tolist(), dtype_name(total.dtype)), total.tolist(),
                             dtype_name(total.dtype), tuple(total.shape))
        got = grad_in[0]
        if sent.values == got.values:
            return sent, None
        who = self.labels[k] or self.graph.ids[k]
        return sent, (f"a hook changed the gradient on its way to {who}: {sent.text} was sent, "
                      f"{got.text} arrived")


def _leaf_grad(step: WalkStep) -> LeafGrad:
    incoming = step.grad_in[0] if step.grad_in else None
    if step.hook is not None and step.sent is not None and incoming is not None:
        exprs = " + ".join(_compact(p.expr) for p in step.parts)
        chain = f"{exprs} = {step.sent.text}, which a hook changed to {incoming.text}"
        if step.grad_before is not None and step.grad_after is not None:
            chain = f"{step.grad_before.text} (already in .grad) + ({chain})"
        after = step.grad_after.text if step.grad_after is not None else incoming.text
        return LeafGrad(step.label, step.node, step.grad_before, incoming, step.grad_after, f"{chain} = {after}"
                        if step.grad_before is not None or after != incoming.text else chain)
    if step.parts and all(p.grad.values is not None for p in step.parts):
        exprs = " + ".join(_compact(p.expr) for p in step.parts)
        chain = exprs
        if step.parts_sum:
            chain += f" = {step.parts_sum}"
        elif incoming is not None:
            chain += f" = {incoming.text}"
    else:
        chain = incoming.text if incoming is not None else "None"
    if incoming is not None and chain == f"{incoming.text} = {incoming.text}":
        chain = incoming.text
    if step.grad_before is not None and incoming is not None and step.grad_after is not None:
        chain = f"{step.grad_before.text} (already in .grad) + {incoming.text} = {step.grad_after.text}"
        if incoming.values is not None and step.grad_before.values is not None:
            chain = f"{step.grad_before.text} (already in .grad) + ({_chain_of(step)}) = {step.grad_after.text}"
    return LeafGrad(step.label, step.node, step.grad_before, incoming, step.grad_after, chain)


def _chain_of(step: WalkStep) -> str:
    if step.parts:
        return " + ".join(_compact(p.expr) for p in step.parts)
    return step.grad_in[0].text if step.grad_in and step.grad_in[0] else "None"


__all__ = ["MAX_ELEMENTS", "GradValue", "GraphTooLarge", "LeafGrad", "Output", "Part", "WalkStep",
           "Walkthrough", "walkthrough"]

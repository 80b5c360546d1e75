"""The reverse pass explained in numbers: what each backward node received and sent on.

Place in the pipeline: tracer -> model -> **explain** -> render.

:func:`walkthrough_of` is a pure function of a trace: it reads one recorded
``backward()`` (a :class:`~gradtrace.model.Backward` event, whose ``flow`` the
tracer recorded node by node in the order the engine ran them) and the step's
nodes. ``gradtrace.explain(root)`` (:func:`gradtrace.live.walkthrough`) runs the real
``root.backward(...)`` under the tracer first and hands the record to it; explain itself
never runs code or touches a live node.

The result is plain data: for each node in the order the engine ran it, the
gradient that entered it (and, where several paths met, the parts that were
summed), its local rule filled in with its own numbers, and the gradient it sent
to each input, as torch computed it. Leaves show how ``.grad`` changed,
including accumulation across several ``backward()`` calls. For f = x² + x³ at
x = 42 the leaf reads ``1·(3·42²) + 1·(2·42) = 5292 + 84 = 5376``: parts are
summed in the order they reached the node (x³'s node ran first), as the engine
summed them and as the stepper's reverse pass writes them. Where a tensor
hook changed a gradient between the node that sent it and the node that received
it, the step says so, with both figures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Backward, Error, Flow, NodeInfo, Root, Step, Summary
from ._arith import Arr
from ._numbers import MAX_ELEMENTS, fmt_values, same_values
from .formulas import HOOK_NODE, Filled, fill_in, formula_for, no_formula_text


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
    #: a module's backward hook replaced the gradient here: what arrived before it did (None: it did not)
    replaced: GradValue | None = None


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
    #: of :attr:`retained`, those whose ``.grad`` was there before this pass (a second ``backward()``
    #: through a kept graph adds to it): their labels and that ``.grad``
    retained_before: tuple[tuple[str, GradValue], ...] = ()

    @property
    def is_accumulate(self) -> bool:
        return self.name.endswith("AccumulateGrad")


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
    #: what the stepper calls the root: its name, its tensor id when no name holds it, "" for a temporary
    root_name: str
    seed: GradValue
    vjp: bool
    retain_graph: bool
    steps: tuple[WalkStep, ...]
    leaves: tuple[LeafGrad, ...]
    nodes: tuple[NodeInfo, ...]
    note: str | None = None
    #: the root's tensor id ("" when the trace holds no record of it: a temporary such as ``y.sum()``)
    root_tensor: str = ""
    #: ``backward``, ``autograd.backward`` or ``autograd.grad`` (which returns gradients instead of filling ``.grad``)
    call: str = "backward"
    #: the exception type the statement raised after these nodes ran ("" when it ran to its end)
    raised: str = ""
    #: the other tensors the call starts from (``torch.autograd.backward([l1, l2])``): ``(label, seed text)``
    others: tuple[tuple[str, str], ...] = ()

    def leaf(self, label: str) -> LeafGrad:
        return next(leaf for leaf in self.leaves if leaf.label == label)

    def to_text(self, max_steps: int = 200) -> str:
        from ._walktext import walkthrough_text

        return walkthrough_text(self, max_steps)

    def __str__(self) -> str:
        return self.to_text()


# --------------------------------------------------------------------------- running


def replaced_by_hook(node: NodeInfo, flow: Flow, index: int, sent: Summary | None) -> Summary | None:
    """What arrived at a module's backward-hook node for input ``index``, when the hook sent on something
    else (``sent``); None when it passed the gradient on unchanged (output i passes on to input i)."""
    if node.name != HOOK_NODE or sent is None or sent.values is None or index >= len(flow.grad_in):
        return None
    arrived = flow.grad_in[index]
    if arrived is None or arrived.values is None or same_values(arrived.values, sent.values):
        return None
    return arrived


# --------------------------------------------------------------------------- building


def _sum_parts(parts: Sequence[GradValue]) -> Arr | None:
    """The parts added one by one in the order the engine added them, rounded to their dtype as PyTorch
    rounds each addition (the engine adds the gradients that meet at a node one at a time)."""
    total = None
    for p in parts:
        t = Arr.of(p.values, p.dtype, p.shape)
        total = t if total is None else total + t
    return total


def _compact(expr: str) -> str:
    return expr.replace(" · ", "·")


#: How wide each dtype is under type promotion (a gradient takes its forward output's dtype).
_WIDTH = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "bfloat16": 5,
          "float32": 6, "float64": 7, "complex32": 8, "complex64": 9, "complex128": 10}


def _shape_of(summary: Summary | None) -> tuple[int, ...] | None:
    """The shape of a recorded gradient: from its values, or from a ``shape (2, 3)`` text."""
    if summary is None:
        return None
    if summary.values is not None:
        shape: list[int] = []
        v = summary.values
        while isinstance(v, list):
            shape.append(len(v))
            v = v[0] if v else None
        return tuple(shape)
    m = re.search(r"shape \(([\d, ]*)\)", summary.text) or re.search(r"\[([\d, ]+)\]", summary.text)
    if m is None:
        return None
    return tuple(int(d) for d in m.group(1).replace(" ", "").split(",") if d)


class _Builder:
    """A :class:`Walkthrough` from one recorded ``backward()``: the step's nodes and the event's flow."""

    def __init__(self, step: Step, event: Backward, root_name: str) -> None:
        self.step, self.event = step, event
        root = step.tensors.get(event.root or "")
        self.default_dtype = root.dtype if root is not None else "float32"
        self.root_node = event.root_node or (root.grad_fn if root is not None else None)
        self._dtypes: dict[str, str] = {}
        if root is None and self.root_node is not None:  # a temporary root: its dtype from its graph
            self.default_dtype = self.dtype_at(self.root_node)
            self._dtypes.clear()
        self.labels = self._labels(root_name)
        self.seed: GradValue | None = None  # set once known: what backward() starts from
        self.flow = [f for f in event.flow if f.node in step.nodes]
        self.filled: dict[str, Filled | None] = {}
        #: node -> (sender, its input number, the gradient sent); gradients sent to another output of the
        #: same node go in its own slot and never add up (``several`` notes the nodes where that happens)
        self.arrivals: dict[str, list[tuple[str, int, GradValue]]] = {}
        self.several: set[str] = {f.node for f in self.flow if len(f.grad_in) > 1}
        slots: dict[str, int] = {}
        for f in self.flow:
            for i, edge in enumerate(step.nodes[f.node].inputs):
                g = self.value(f.grad_out[i] if i < len(f.grad_out) else None, edge.node if edge else None)
                if edge is not None and g is not None:
                    self.arrivals.setdefault(edge.node, []).append((f.node, i, g))
                    if slots.setdefault(edge.node, edge.output_nr) != edge.output_nr:
                        self.several.add(edge.node)

    # ---------------------------------------------------------------- reading the record
    def _labels(self, root_name: str) -> dict[str, str]:
        step = self.step
        labels: dict[str, str] = {}
        made: dict[str, set[str]] = {}  # node -> the named tensors it is the grad_fn of
        for name, tid in step.bindings.items():
            info = step.tensors.get(tid)
            if info is not None and info.grad_fn is not None:
                if tid not in made.setdefault(info.grad_fn, set()):
                    made[info.grad_fn].add(tid)
                    # a node of several outputs goes by the names of all those shown (``a, b``), not the first
                    labels[info.grad_fn] = f"{labels[info.grad_fn]}, {name}" if info.grad_fn in labels else name
        for nid, node in step.nodes.items():
            if node.variable is not None:
                names = step.names_of(node.variable)
                labels[nid] = names[0] if names else node.variable  # an unnamed leaf goes by its tensor id
        if self.root_node is not None and self.root_node not in labels and root_name:
            labels[self.root_node] = root_name
        return labels

    def dtype_at(self, nid: str | None) -> str:
        """The dtype of the gradient that flows into node ``nid``: its forward output's dtype.

        When the output is not in the step (a temporary, or a tensor since rebound), the widest
        dtype among the nearest inputs that are, as type promotion would make it.
        """
        found = self._dtypes.get(nid or "")
        if found is not None:
            return found
        level, seen = [nid or ""], set()
        while level:
            dtypes = [d for d in (self._own_dtype(n) for n in level) if d is not None]
            if dtypes:
                found = max(dtypes, key=lambda d: _WIDTH.get(d, 0))
                break
            seen.update(level)
            nxt = []
            for n in level:
                edges = self.step.nodes[n].inputs if n in self.step.nodes else ()
                nxt += [e.node for e in edges if e is not None and e.node not in seen]
            level = list(dict.fromkeys(nxt))
        self._dtypes[nid or ""] = found or self.default_dtype
        return self._dtypes[nid or ""]

    def _own_dtype(self, nid: str) -> str | None:
        node = self.step.nodes.get(nid)
        tid = None if node is None else (node.variable or node.output)
        info = self.step.tensors.get(tid or "")
        return info.dtype if info is not None else None

    def value(self, summary: Summary | None, nid: str | None) -> GradValue | None:
        if summary is None:
            return None
        dtype = self.dtype_at(nid)
        text = summary.text if summary.values is None else fmt_values(summary.values, dtype)
        return GradValue(text, summary.values, dtype, _shape_of(summary) or ())

    def _fill(self, f: Flow) -> Filled | None:
        if f.node in self.filled:
            return self.filled[f.node]
        filled = None
        several = len(f.grad_in) > 1  # a node of several outputs: each output's gradient
        got = [s for s in f.grad_in if s is not None]
        g = self.value(got[0], f.node) if got and (several or len(f.grad_in) == 1) else None
        if several and any(s.values is None for s in got):
            g = None  # one of them too large to write out
        if g is not None and g.values is not None:
            shapes = tuple(_shape_of(s) for s in f.grad_out)
            node = self.step.nodes[f.node]
            sent = tuple(None if s is None else s.values for s in f.grad_out)
            outputs = tuple(None if s is None else s.values for s in f.grad_in) if several else ()
            filled = fill_in(node, g.values, g.dtype, shapes, sent, outputs)
        self.filled[f.node] = filled
        return filled

    # ---------------------------------------------------------------- building
    def steps(self) -> tuple[WalkStep, ...]:
        before, after = self._leaf_grads()
        retained, kept_before = self._retained()
        by_node = {f.node: f for f in self.flow}
        out = []
        for order, f in enumerate(self.flow, start=1):
            node = self.step.nodes[f.node]
            var = node.variable
            out.append(self._step(order, f, by_node, before.get(var or ""), after.get(var or ""),
                                  tuple(retained.get(f.node, ())), tuple(kept_before.get(f.node, ()))))
        return tuple(out)

    def _leaf_grads(self) -> tuple[dict[str, GradValue | None], dict[str, GradValue | None]]:
        before: dict[str, GradValue | None] = {}
        after: dict[str, GradValue | None] = {}
        for change in self.event.grads:
            acc = next((n.id for n in self.step.nodes.values() if n.variable == change.tensor), None)
            before[change.tensor] = self.value(change.before, acc)
            after[change.tensor] = self.value(change.after, acc)
        for node in self.step.nodes.values():  # a leaf whose .grad did not change still has one
            if node.variable is not None and node.variable not in after:
                info = self.step.tensors.get(node.variable)
                grad = None if info is None else self.value(info.grad, node.id)
                before[node.variable] = after[node.variable] = grad
        return before, after

    def _retained(self) -> tuple[dict[str, list[tuple[str, GradValue]]], dict[str, list[tuple[str, GradValue]]]]:
        """Per node, the ``.grad`` of each ``retain_grad()`` tensor it made: after this pass, and before it
        where it had one."""
        out: dict[str, list[tuple[str, GradValue]]] = {}
        before: dict[str, list[tuple[str, GradValue]]] = {}
        for change in self.event.grads:
            info = self.step.tensors.get(change.tensor)
            if info is None or info.is_leaf or not info.retains_grad or info.grad_fn is None:
                continue
            g = self.value(change.after, info.grad_fn)
            names = self.step.names_of(change.tensor)
            label = names[0] if names else change.tensor
            if g is not None:
                out.setdefault(info.grad_fn, []).append((label, g))
                old = self.value(change.before, info.grad_fn)
                if old is not None:
                    before.setdefault(info.grad_fn, []).append((label, old))
        return out, before

    def _parts(self, nid: str, by_node: Mapping[str, Flow]) -> tuple[tuple[Part, ...], str | None]:
        if nid in self.several:  # one gradient per output: nothing adds up (the step lists them)
            return (), None
        parts = []
        for src, i, g in self.arrivals.get(nid, []):
            filled = self._fill(by_node[src])
            piece = filled.part(i) if filled else None
            expr = piece.expr if piece is not None and same_values(piece.values, g.values) else g.text
            parts.append(Part(src, expr, g))
        if len(parts) < 2:
            return tuple(parts), None
        if any(p.grad.values is None for p in parts):
            return tuple(parts), None
        total = _sum_parts([p.grad for p in parts])
        if total is None:
            return tuple(parts), None
        text = " + ".join(fmt_values(p.grad.values, p.grad.dtype) for p in parts)
        return tuple(parts), f"{text} = {fmt_values(total.tolist(), parts[0].grad.dtype)}"

    def _step(self, order: int, f: Flow, by_node: Mapping[str, Flow], before: GradValue | None,
              after: GradValue | None, retained: tuple[tuple[str, GradValue], ...],
              kept_before: tuple[tuple[str, GradValue], ...] = ()) -> WalkStep:
        node = self.step.nodes[f.node]
        formula = formula_for(node.name)
        filled = self._fill(f)
        parts, parts_sum = self._parts(f.node, by_node)
        outputs = []
        for i, edge in enumerate(node.inputs):
            if edge is None:
                continue
            g = self.value(f.grad_out[i] if i < len(f.grad_out) else None, edge.node)
            piece = filled.part(i) if filled else None
            matches = None if piece is None or g is None or g.values is None else same_values(piece.values, g.values)
            # (into a node of several outputs, the output it goes to: each output is a tensor of its own)
            target = f"output {edge.output_nr}" if edge.node in self.several else self.labels.get(edge.node, "")
            replaced = self.value(replaced_by_hook(node, f, i, f.grad_out[i] if i < len(f.grad_out) else None),
                                  f.node)
            outputs.append(Output(i, edge.node, target, g,
                                  piece.text if piece else None, matches, replaced))
        rule = "; ".join(r.local for r in formula.rules) if formula else no_formula_text(node.name)
        note = filled.note if filled is not None else None
        grad_in = tuple(self.value(g, f.node) for g in f.grad_in)
        sent, hook = self._hooked(f.node, parts, grad_in)
        return WalkStep(order, f.node, node.name, self.labels.get(f.node, ""), grad_in, parts, parts_sum, rule,
                        formula.reason if formula else "", tuple(outputs), note, before, after, retained, hook, sent,
                        kept_before)

    def _hooked(self, nid: str, parts: tuple[Part, ...],
                grad_in: tuple[GradValue | None, ...]) -> tuple[GradValue | None, str | None]:
        """What was sent to node ``nid``, and a sentence when a tensor hook changed it on the way in."""
        if nid == self.root_node and not parts and self.seed is not None and self.seed.values is not None:
            parts = (Part("", self.seed.text, self.seed),)  # the root's own hook changes the seed
        if len(grad_in) != 1 or grad_in[0] is None or grad_in[0].values is None or not parts:
            return None, None
        if any(p.grad.values is None for p in parts):
            return None, None
        if len(parts) == 1:
            sent = parts[0].grad
        else:
            total = _sum_parts([p.grad for p in parts])
            if total is None:
                return None, None
            dtype = parts[0].grad.dtype
            sent = GradValue(fmt_values(total.tolist(), dtype), total.tolist(), dtype, tuple(total.shape))
        got = grad_in[0]
        if same_values(sent.values, got.values):
            return sent, None
        who = self.labels.get(nid) or nid
        return sent, (f"a hook changed the gradient on its way to {who}: {sent.text} was sent, "
                      f"{got.text} arrived")


def walkthrough_of(step: Step, event: Backward, root_name: str | None = None) -> Walkthrough:
    """The walkthrough of one recorded ``backward()``: a pure function of the trace.

    ``step`` is the step whose events hold ``event`` (a :class:`~gradtrace.model.Backward`
    with its ``flow``); ids are the trace's own.
    """
    root = step.tensors.get(event.root or "")
    if root_name is None:  # named as the stepper and the text twin name it: its name, else its tensor id
        names = step.names_of(event.root) if event.root else []
        root_name = names[0] if names else (event.root or "")  # "": a tensor no name holds
    build = _Builder(step, event, root_name)
    seed = build.value(event.gradient, build.root_node)
    if seed is None and root is not None and not root.shape:  # backward() of a number starts from 1
        seed = GradValue(fmt_values(1.0, root.dtype), 1.0, root.dtype, ())
    if seed is None and build.flow and build.flow[0].grad_in:
        seed = build.value(build.flow[0].grad_in[0], build.root_node)
    if seed is None:
        seed = GradValue("1", 1, build.default_dtype, ())
    build.seed = seed
    vjp = event.gradient is not None and root is not None and math.prod(root.shape) > 1
    if root is not None and root.grad_fn is None:  # backward() on a leaf: nothing to walk
        after = build.value(root.grad, None)
        leaf = LeafGrad(root_name, "", None, seed, after, after.text if after else "None")
        return Walkthrough("", root_name, seed, vjp, event.retain_graph, (), (leaf,), (),
                           root_tensor=event.root or "", call=event.call, raised=_raised_after(step, event))
    steps = build.steps()
    leaves = tuple(_leaf_grad(s) for s in steps if s.is_accumulate)
    nodes = tuple(step.nodes[f.node] for f in build.flow)
    others = tuple(_other_root(step, build, r) for r in event.others)
    note = None
    if not event.flow:
        note = ("backward() ran, but its nodes were not watched one by one (the graph is too large, or "
                "the trace had already watched its first backward() calls)")
    return Walkthrough(build.root_node or "", root_name, seed, vjp, event.retain_graph, steps, leaves, nodes,
                       note, event.root or "", event.call, _raised_after(step, event), others)


def _other_root(step: Step, build: _Builder, r: Root) -> tuple[str, str]:
    """``(label, seed text)`` of a tensor the call starts from besides its first."""
    names = step.names_of(r.tensor) if r.tensor else []
    if r.tensor:
        label = f"{names[0]} ({r.tensor})" if names else r.tensor
    else:
        label = "a tensor no name holds" + (f" (its grad_fn is {r.node})" if r.node else "")
    seed = build.value(r.gradient, r.node)
    return label, seed.text if seed is not None else "1"


def _raised_after(step: Step, event: Backward) -> str:
    """The type of the error the statement raised after ``event`` (its last backward call), else ""."""
    events = list(step.events)
    at = next((i for i, e in enumerate(events) if e is event), None)
    if at is None or any(isinstance(e, Backward) for e in events[at + 1:]):
        return ""
    return next((e.type for e in events[at + 1:] if isinstance(e, Error)), "")


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
    elif incoming is not None and incoming.values is None and step.grad_before is None and step.grad_after:
        # too large to list: the figures recorded for the new .grad, not a bare "shape (8, 3)"
        chain = step.grad_after.text + (f" (shape {incoming.shape})" if step.grad_after.text != incoming.text
                                         and incoming.shape else "")
    else:
        chain = incoming.text if incoming is not None else "None"
    if incoming is not None and chain == f"{incoming.text} = {incoming.text}":
        chain = incoming.text
    if step.grad_before is not None and incoming is not None and step.grad_after is not None:
        chain = f"{step.grad_before.text} (already in .grad) + {incoming.text} = {step.grad_after.text}"
        if incoming.values is not None and step.grad_before.values is not None:
            chain = f"{step.grad_before.text} (already in .grad) + ({_chain_of(step)}) = {step.grad_after.text}"
    if step.grad_before is None and step.grad_after is None and incoming is not None:
        from ._walktext import CLEARED

        chain = f"None: {chain} arrived, then {CLEARED}"
    return LeafGrad(step.label, step.node, step.grad_before, incoming, step.grad_after, chain)


def _chain_of(step: WalkStep) -> str:
    if step.parts:
        return " + ".join(_compact(p.expr) for p in step.parts)
    return step.grad_in[0].text if step.grad_in and step.grad_in[0] else "None"


__all__ = ["MAX_ELEMENTS", "GradValue", "LeafGrad", "Output", "Part", "WalkStep",
           "Walkthrough", "walkthrough_of"]

"""Do two programs build the same autograd graph? If not, where do they first differ?

Place in the pipeline: tracer -> model -> **explain** -> render.

The graph behind one output (by default the tensor each program last assigned
to a name) is written in a canonical form: nodes numbered in the order a walk
from the output meets them (inputs in order), each with its operation, its
attributes (exponent, alpha, dim, ...) and which numbered nodes feed it; leaves
are described by shape, dtype and value. Names play no part, so ``x = x ** 2``
and ``y = x ** 2`` give the same form, while ``x ** 3`` of the leaf and ``x ** 3``
of ``x ** 2`` do not.

This module compares what two programs recorded (Traces or Steps); it runs nothing.
``gradtrace.compare`` (:func:`gradtrace.live.compare`) also takes source code: it
runs each program under the tracer, giving a name both programs read but neither
defines (``x`` in ``x = x ** 2``) to both as the same leaf, ``GIVEN_LEAF``, unless
``setup`` code defines it; the comparison says so. Bad input (an output no program
names) raises ``ValueError`` with a one-line message.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..model import FREED, STALE, Bind, Rebind, Step, Trace

#: What a name both programs read but neither defines stands for.
GIVEN_LEAF = "torch.tensor(2., requires_grad=True)"


@dataclass(frozen=True)
class CanonicalNode:
    """One node of the canonical form; ``inputs`` are ``(index, output_nr)`` or ``None``.

    ``index`` is the node's place in the walk from the output (what is compared);
    ``node`` is its id in the program's trace (``n3``, or the tensor id of an output
    that is a leaf), the name every view of that trace gives it, and what the text shows.
    """

    index: int
    op: str
    attrs: tuple[tuple[str, str], ...]
    inputs: tuple[tuple[int, int] | None, ...]
    node: str
    names: tuple[str, ...]
    #: the trace id of each input's node (None where the input needs no gradient)
    input_ids: tuple[str | None, ...] = ()
    #: ``(saved name, state)`` of each saved value that backward() can no longer use (stale or freed)
    unusable: tuple[tuple[str, str], ...] = ()

    def key(self) -> tuple[Any, ...]:
        return (self.op, self.attrs, self.inputs)

    def describe(self) -> str:
        attrs = ", ".join(f"{k}={v}" for k, v in self.attrs)
        ids = self.input_ids or tuple(None for _ in self.inputs)
        ins = ", ".join("-" if i is None else (nid or "?") + (f".{i[1]}" if i[1] else "")
                        for i, nid in zip(self.inputs, ids, strict=True))
        named = f"  [{', '.join(self.names)}]" if self.names else ""
        op = self.op if self.op.startswith("leaf") else f"{self.op}({attrs})"
        states = "".join(f"  (saved {name} {state})" for name, state in self.unusable)
        return f"{self.node} {op}" + (f" <- {ins}" if ins else "") + named + states


@dataclass(frozen=True)
class Comparison:
    """Whether two programs' graphs for ``output`` are the same, and the first difference.

    ``output`` names A's output; ``output_b`` B's when it has another name. ``given``
    lists the names neither program defined, which both got as the same leaf.
    """

    same: bool
    output: str
    a: tuple[CanonicalNode, ...]
    b: tuple[CanonicalNode, ...]
    difference: str | None
    output_b: str | None = None
    given: tuple[str, ...] = ()

    def to_text(self) -> str:
        what = self.output if self.output_b in (None, self.output) else f"{self.output} (A) and {self.output_b} (B)"
        head = (f"Same graph for {what}: the same operations, wired the same way from the same leaves."
                if self.same else f"Different graphs for {what}: {self.difference}")
        lines = [head] + _state_notes(self.a, self.b)
        if self.given:
            lines.append(f"  ({', '.join(self.given)} defined by neither program: both got "
                         f"{' and '.join(f'{n} = {GIVEN_LEAF}' for n in self.given)})")
        lines += ["  A:"] + [f"    {n.describe()}" for n in self.a]
        lines += ["  B:"] + [f"    {n.describe()}" for n in self.b]
        return "\n".join(lines)

    __str__ = to_text


def _as_step(program: Trace | Step, which: str) -> Step:
    if isinstance(program, Step):
        return program
    if not isinstance(program, Trace):
        raise TypeError(f"compare: program {which} is a {type(program).__name__}; this compare reads Traces and "
                        "Steps (for source code use gradtrace.compare, which runs it)")
    step = program.last
    if step is None:
        raise ValueError(f"compare: program {which} recorded no step")
    return step


def last_assigned(program: Trace | Step) -> str | None:
    """The name the program assigned a tensor to last (the default output), if it still names one."""
    steps = program.steps if isinstance(program, Trace) else (program,)
    final = program.last if isinstance(program, Trace) else program
    for step in reversed(steps):
        for event in reversed(step.events):
            if isinstance(event, (Bind, Rebind)) and final is not None and event.name in final.bindings:
                return event.name
    if final is not None and final.bindings:
        return list(final.bindings)[-1]
    return None


def canonical(step: Step, output: str) -> tuple[CanonicalNode, ...]:
    """The canonical form of the graph behind the tensor named ``output`` at ``step``."""
    if output not in step.bindings or step.bindings[output] not in step.tensors:
        named = ", ".join(list(step.bindings)[:10]) or "none"
        raise ValueError(f"no tensor named {output!r} at the end of the program (its tensors: {named})")
    info = step.tensors[step.bindings[output]]
    if info.grad_fn is None:
        return (CanonicalNode(0, _leaf_op(step, info.id), (), (), info.id, tuple(step.names_of(info.id))),)
    order: dict[str, int] = {}
    visit = [info.grad_fn]
    while visit:  # pre-order, inputs in order, without recursion
        nid = visit.pop()
        if nid in order or nid not in step.nodes:
            continue
        order[nid] = len(order)
        edges = [e.node for e in step.nodes[nid].inputs if e is not None]
        visit.extend(reversed(edges))
    names = _names_by_node(step)
    out = []
    for nid, index in order.items():
        node = step.nodes[nid]
        op = _leaf_op(step, node.variable) if node.variable is not None else node.name
        inputs = tuple(None if e is None else (order.get(e.node, -1), e.output_nr) for e in node.inputs)
        ids = tuple(None if e is None else e.node for e in node.inputs)
        unusable = tuple((sv.name, sv.state) for sv in node.saved if sv.state in (STALE, FREED))
        out.append(CanonicalNode(index, op, tuple(node.attrs), inputs, nid, names.get(nid, ()), ids, unusable))
    return tuple(out)


def _state_notes(a: tuple[CanonicalNode, ...], b: tuple[CanonicalNode, ...]) -> list[str]:
    """Where one graph holds a saved value backward() cannot use and the other does not."""
    notes = []
    for x, y in zip(a, b, strict=False):
        if x.key() != y.key() or x.unusable == y.unusable:
            continue
        for node, other, which, them in ((x, y, "A", "B"), (y, x, "B", "A")):
            lost = [(n, st) for n, st in node.unusable if (n, st) not in other.unusable]
            for name, state in lost:
                why = ("was changed in place after it was saved" if state == STALE
                       else "was freed by an earlier backward()")
                notes.append(f"  but in {which}, {node.node} {node.op} saved {name}, which {why}: "
                             f"a backward() through it fails in {which}, not in {them}")
    return notes


def _leaf_op(step: Step, tensor_id: str) -> str:
    t = step.tensors.get(tensor_id)
    if t is None:
        return "leaf"
    return f"leaf {t.dtype} shape {tuple(t.shape)} = {t.value.text}"  # shapes as Python prints them: (), (2,)


def _names_by_node(step: Step) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for name, tid in step.bindings.items():
        t = step.tensors.get(tid)
        if t is None:
            continue
        if t.grad_fn is not None:
            found.setdefault(t.grad_fn, []).append(name)
    for nid, node in step.nodes.items():
        if node.variable is not None:
            found.setdefault(nid, []).extend(step.names_of(node.variable))
    return {k: tuple(v) for k, v in found.items()}


def _first_difference(a: tuple[CanonicalNode, ...], b: tuple[CanonicalNode, ...]) -> str | None:
    for x, y in zip(a, b, strict=False):
        if (x.op, x.attrs) == (y.op, y.attrs) and x.inputs != y.inputs:
            return _wiring(a, b, x, y)
        if x.key() != y.key():
            return (f"A's {x.node} and B's {y.node} differ: A has {x.describe()}, B has {y.describe()}"
                    + _feeds(a, x.index))
    if len(a) != len(b):
        longer, which = (a, "A") if len(a) > len(b) else (b, "B")
        extra = longer[min(len(a), len(b))]
        return f"{which} has more nodes: {extra.describe()}"
    return None


def _wiring(a: tuple[CanonicalNode, ...], b: tuple[CanonicalNode, ...], x: CanonicalNode,
            y: CanonicalNode) -> str:
    for k, (i, j) in enumerate(zip(x.inputs, y.inputs, strict=False)):
        if i != j:
            src_a = "nothing" if i is None or i[0] < 0 else a[i[0]].describe()
            src_b = "nothing" if j is None or j[0] < 0 else b[j[0]].describe()
            return (f"the same operation {x.describe().split(' <-')[0]} takes input {k} from {src_a} in A, "
                    f"but from {src_b} in B")
    return f"A's {x.node} has {len(x.inputs)} inputs and B's {y.node} {len(y.inputs)}"


def _feeds(nodes: tuple[CanonicalNode, ...], index: int) -> str:
    users = [n for n in nodes if any(i is not None and i[0] == index for i in n.inputs)]
    return f" (it feeds {users[0].node} {users[0].op})" if users else " (the output's own node)"


def compare(a: Trace | Step, b: Trace | Step, output: str | None = None, *, given: tuple[str, ...] = (),
            sources: tuple[str | None, str | None] = (None, None)) -> Comparison:
    """Compare the graphs two recorded programs build for their outputs.

    ``a`` and ``b`` are Traces or Steps. ``output`` names the tensor to compare in both;
    by default each program's own output, the tensor it assigned to a name last (``x`` in
    ``x = x ** 2``, ``y`` in ``y = x ** 2``: names play no part, those two build the same
    graph); ``sources`` (the programs' code, when known) settle that default by their
    assignment statements. ``given`` lists the names the run gave both programs as
    :data:`GIVEN_LEAF`. Raises ``ValueError`` (one line) for an output a program does not name.
    """
    step_a, step_b = _as_step(a, "A"), _as_step(b, "B")
    out_a = output or _default_output(sources[0] or a, step_a, "A")
    out_b = output or _default_output(sources[1] or b, step_b, "B")
    form_a, form_b = canonical(step_a, out_a), canonical(step_b, out_b)
    difference = _first_difference(form_a, form_b)
    return Comparison(difference is None, out_a, form_a, form_b, difference,
                      None if out_b == out_a else out_b, given)


def _default_output(program: str | Trace | Step, step: Step, which: str) -> str:
    name = last_assigned(program if isinstance(program, (Trace, Step)) else step)
    if isinstance(program, str):
        trace_name = _last_tensor_assigned_in_source(program, step)
        name = trace_name or name
    if name is None:
        raise ValueError(f"compare: program {which} names no tensor at its end: nothing to compare "
                         "(assign the output to a name, or pass output=)")
    return name


def _last_tensor_assigned_in_source(source: str, step: Step) -> str | None:
    """The last name an assignment statement of ``source`` binds that names a tensor at the end."""
    name = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in step.bindings:
                    name = target.id
    return name

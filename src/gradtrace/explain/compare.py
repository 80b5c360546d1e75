"""Do two programs build the same autograd graph? If not, where do they first differ?

Place in the pipeline: tracer -> model -> **explain** -> render.

The graph behind one output (by default the tensor the program last assigned
to a name) is written in a canonical form: nodes numbered in the order a walk
from the output meets them (inputs in order), each with its operation, its
attributes (exponent, alpha, dim, ...) and which numbered nodes feed it; leaves
are described by shape, dtype and value. Names play no part, so ``x = x ** 2``
and ``y = x ** 2`` give the same form, while ``x ** 3`` of the leaf and ``x ** 3``
of ``x ** 2`` do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model import Bind, Rebind, Step, Trace


@dataclass(frozen=True)
class CanonicalNode:
    """One node of the canonical form; ``inputs`` are ``(index, output_nr)`` or ``None``."""

    index: int
    op: str
    attrs: tuple[tuple[str, str], ...]
    inputs: tuple[tuple[int, int] | None, ...]
    node: str
    names: tuple[str, ...]

    def key(self) -> tuple[Any, ...]:
        return (self.op, self.attrs, self.inputs)

    def describe(self) -> str:
        attrs = ", ".join(f"{k}={v}" for k, v in self.attrs)
        ins = ", ".join("-" if i is None else f"#{i[0]}" + (f".{i[1]}" if i[1] else "") for i in self.inputs)
        named = f"  [{', '.join(self.names)}]" if self.names else ""
        op = self.op if self.op.startswith("leaf") else f"{self.op}({attrs})"
        return f"#{self.index} {op}" + (f" <- {ins}" if ins else "") + named


@dataclass(frozen=True)
class Comparison:
    """Whether two programs' graphs for ``output`` are the same, and the first difference."""

    same: bool
    output: str
    a: tuple[CanonicalNode, ...]
    b: tuple[CanonicalNode, ...]
    difference: str | None

    def to_text(self) -> str:
        head = (f"Same graph for {self.output}: the same operations, wired the same way from the same leaves."
                if self.same else f"Different graphs for {self.output}: {self.difference}")
        lines = [head, "  A:"] + [f"    {n.describe()}" for n in self.a]
        lines += ["  B:"] + [f"    {n.describe()}" for n in self.b]
        return "\n".join(lines)

    __str__ = to_text


def _as_trace(program: str | Trace | Step) -> Step:
    if isinstance(program, Step):
        return program
    if isinstance(program, str):
        from .. import trace_code  # runs the code: the tracer does, explain only reads the result

        program = trace_code(program)
    step = program.last
    if step is None:
        raise ValueError("the program recorded no step")
    return step


def last_assigned(program: Trace | Step) -> str | None:
    """The name the program assigned a tensor to last (the default output)."""
    steps = program.steps if isinstance(program, Trace) else (program,)
    for step in reversed(steps):
        for event in reversed(step.events):
            if isinstance(event, (Bind, Rebind)):
                return event.name
    return None


def canonical(step: Step, output: str) -> tuple[CanonicalNode, ...]:
    """The canonical form of the graph behind the tensor named ``output`` at ``step``."""
    if output not in step.bindings:
        raise KeyError(f"no tensor named {output!r} at the end of the program")
    info = step.tensors[step.bindings[output]]
    if info.grad_fn is None:
        return (CanonicalNode(0, _leaf_op(step, info.id), (), (), "", tuple(step.names_of(info.id))),)
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
        out.append(CanonicalNode(index, op, tuple(node.attrs), inputs, nid, names.get(nid, ())))
    return tuple(out)


def _leaf_op(step: Step, tensor_id: str) -> str:
    t = step.tensors.get(tensor_id)
    if t is None:
        return "leaf"
    return f"leaf {t.dtype}{list(t.shape)} = {t.value.text}"


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
            return (f"node #{x.index} differs: A has {x.describe()}, B has {y.describe()}"
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
    return f"node #{x.index} has {len(x.inputs)} inputs in A and {len(y.inputs)} in B"


def _feeds(nodes: tuple[CanonicalNode, ...], index: int) -> str:
    users = [n for n in nodes if any(i is not None and i[0] == index for i in n.inputs)]
    return f" (it feeds #{users[0].index} {users[0].op})" if users else " (the output's own node)"


def compare(a: str | Trace | Step, b: str | Trace | Step, output: str | None = None) -> Comparison:
    """Compare the graphs two programs build for ``output``.

    ``a`` and ``b`` are source code (traced with :func:`gradtrace.trace_code`),
    Traces or Steps. ``output`` names the tensor to compare; by default the name
    the first program assigned last (``f`` in ``f = x + x3``).
    """
    step_a, step_b = _as_trace(a), _as_trace(b)
    if output is None:
        output = last_assigned(a if isinstance(a, (Trace, Step)) else step_a) or "output"
        if isinstance(a, str):
            output = _last_name_in_source(a) or output
    form_a, form_b = canonical(step_a, output), canonical(step_b, output)
    difference = _first_difference(form_a, form_b)
    return Comparison(difference is None, output, form_a, form_b, difference)


def _last_name_in_source(source: str) -> str | None:
    import ast

    name = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    name = target.id
    return name

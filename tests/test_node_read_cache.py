"""Reading new nodes cheaply changes nothing they show (issue 9, Speed).

A node's saved sizes and scalars are put in words once per distinct set of values and
reused; its input edges are one record per (node, output). Values that compare equal
in Python but read differently (``2`` and ``2.0``, ``0.0`` and ``-0.0``, ``1`` and
``True``) must still read as their own node saved them. Every expected text comes from
the plain node PyTorch made, read in the test.
"""

from __future__ import annotations

from typing import Any

import torch

import gradtrace
from gradtrace.tracer.core import Tracer
from gradtrace.tracer.graph import attr_text

EXPRS = {
    "a": "x.pow(2)",
    "b": "x.pow(2.0)",
    "c": "x.pow(0.0)",
    "d": "x.pow(-0.0)",
    "e": "torch.add(x, x, alpha=2)",
    "f": "torch.add(x, x, alpha=2.0)",
    "g": "x.pow(True)",
    "h": "x.pow(1)",
    "i": "x.sum((0,), keepdim=True)",
    "j": "x.sum((0,), keepdim=False)",
}


def _plain_attrs(expr: str) -> tuple[tuple[str, str], ...]:
    x = torch.ones(3, requires_grad=True)
    fn = eval(expr, {"torch": torch, "x": x}).grad_fn
    out = []
    for name in sorted(n for n in dir(fn) if n.startswith("_saved_")):
        value = getattr(fn, name)
        if not isinstance(value, torch.Tensor) and value is not None:
            out.append((name[len("_saved_"):], attr_text(value)))
    return tuple(out)


def test_equal_but_different_saved_scalars_read_as_saved() -> None:
    source = "import torch\nx = torch.ones(3, requires_grad=True)\n" + "".join(
        f"{name} = {expr}\n" for name, expr in EXPRS.items()) * 2  # twice: the second round reads from the cache
    trace = gradtrace.trace_code(source, {})
    last = trace[-1]
    for name, expr in EXPRS.items():
        node = last.nodes[last.tensors[last.bindings[name]].grad_fn]
        shown = tuple(sorted((k, v) for k, v in node.attrs if v != "None"))
        assert shown == _plain_attrs(expr), (name, expr)


def test_each_new_node_of_a_training_loop_is_read_once() -> None:
    def run(iterations: int) -> dict[str, int]:
        source = (
            "import torch\ntorch.manual_seed(0)\n"
            "model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))\n"
            "x = torch.randn(5, 4)\n"
            f"for i in range({iterations}):\n"
            "    loss = model(x).sum()\n"
            "    loss.backward()\n"
        )
        ns: dict[str, Any] = {}
        tracer = Tracer(source, "<reads>", 10**9, globals_ns=ns)
        code = compile(source, "<reads>", "exec")
        tracer.run(lambda: exec(code, ns))
        assert tracer.exception is None
        return dict(tracer.book.work) | {"module reads": tracer.recorder.node_reads}

    one, five = run(1), run(5)
    # the same nodes each iteration, made by PyTorch plainly: count them in a plain run of one forward
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    fn = model(torch.randn(5, 4)).sum().grad_fn
    made, stack, seen = 0, [fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        made += type(node).__name__ != "AccumulateGrad"
        stack += [n for n, _ in node.next_functions]
    assert five["nodes"] - one["nodes"] == 4 * made  # every new node read once, however many steps show it
    assert five["module reads"] - one["module reads"] == 4 * 3  # one read per module that made a node


def test_the_shared_edges_of_a_long_chain_stay_bounded() -> None:
    from gradtrace.tracer import graph
    from gradtrace.tracer.ids import Ids

    n = graph._MAX_EDGES + 500
    h = torch.ones(1, requires_grad=True)
    for _ in range(n):
        h = h * 1.0001
    book = graph.GraphBook(Ids())
    new = book.walk(h.grad_fn, output=h)
    assert len(new) == n + 1  # the chain's nodes and the leaf's accumulator
    assert len(book._edges_made) <= graph._MAX_EDGES
    # every node's input edge still leads where PyTorch's does
    fn, ids = h.grad_fn, book.ids
    for _ in range(n):
        (nxt, nr), *_rest = fn.next_functions
        edge = book.nodes[ids.node(fn)].inputs[0]
        assert edge is not None and (edge.node, edge.output_nr) == (ids.node(nxt), nr)
        fn = nxt

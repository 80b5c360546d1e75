"""``snapshot`` and ``show`` of graphs built by plain (untraced) code.

A snapshot numbers nodes as a trace of the same code does (in creation order), also
where one call makes several nodes; ``show`` of a huge graph reads the details of
the nodes its folded picture draws, not of every node.
"""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.render.fold import MAX_NODES
from gradtrace.tracer.snapshot import Sketch, SketchNodes, snapshot

#: programs whose last line makes ``f``; each has calls that make several nodes at once
PROGRAMS = [
    "import torch\ntorch.manual_seed(0)\nlin = torch.nn.Linear(3, 2)\nxs = torch.randn(4, 3)\n"
    "f = lin(xs).tanh().sum()\n",
    "import torch\ntorch.manual_seed(0)\nlogits = torch.randn(4, 5, requires_grad=True)\n"
    "f = torch.nn.functional.cross_entropy(logits * 2, torch.tensor([1, 0, 4, 2]))\n",
    "import torch\ntorch.manual_seed(0)\na = torch.randn(2, 3, 4, requires_grad=True)\n"
    "b = torch.randn(4, 5, requires_grad=True)\n"
    "f = (a @ b).relu().mean()\n",
    "import torch\ntorch.manual_seed(0)\n"
    "net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))\n"
    "f = net(torch.randn(2, 3)).sigmoid().pow(2).mean()\n",
    "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x * 3\nf = (y * x + x.exp() * y).sum()\n",
]


def _shape_of(nodes) -> dict[str, tuple[str, tuple[str | None, ...]]]:
    return {nid: (n.name, tuple(None if e is None else e.node for e in n.inputs)) for nid, n in nodes.items()}


@pytest.mark.parametrize("source", PROGRAMS)
def test_a_snapshot_numbers_nodes_as_a_trace_of_the_code(source):
    traced = gradtrace.trace_code(source, {}).last
    ns: dict = {}
    exec(source, ns)
    snap = gradtrace.snapshot(ns["f"])
    assert _shape_of(snap.nodes) == _shape_of(traced.nodes)


# ------------------------------------------------------------------ show() of a huge graph
def _long_chain(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.full((2,), 1.0001, requires_grad=True)
    h = torch.ones(2, requires_grad=True)
    for _ in range(n):
        h = h * w  # each MulBackward0 saves h and w: reading every node would read 2n saved values
    return h.exp().sin().sum(), w  # three nodes drawn as themselves after the folded run


def accumulators(t: torch.Tensor) -> int:
    """How many AccumulateGrad nodes the graph behind ``t`` has (walked plainly)."""
    seen, todo, count = set(), [t.grad_fn], 0
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        count += node.name().endswith("AccumulateGrad")
        todo += [n for n, _ in node.next_functions]
    return count


def test_show_of_a_long_untraced_chain_reads_only_the_nodes_it_draws():
    from gradtrace.render.graph import step_graph

    h, w = _long_chain(20_000)
    sketch = Sketch(h, {"w": w})
    graph = step_graph(sketch.step, fill=sketch.fill)  # what gradtrace.show(h, {"w": w}) does
    assert len(sketch.step.nodes) > 20_000
    drawn = graph.source.count("[id=")  # one id per box (tensors, nodes, folded blocks, names, note)
    assert 0 < sketch.work["nodes"] <= drawn <= MAX_NODES, (sketch.work["nodes"], drawn)
    # a record is made only for a node looked at: those drawn, the accumulators, the output's node
    nodes = sketch.step.nodes
    assert isinstance(nodes, SketchNodes)
    assert nodes.made <= drawn + accumulators(h) + 1, (nodes.made, drawn)
    whole = snapshot(h, {"w": w})  # every node read in full: the same picture
    assert graph.source == step_graph(whole).source == gradtrace.show(h, {"w": w}).source
    assert graph.text == step_graph(whole).text


def test_a_sketch_filled_in_is_the_snapshot():
    """Sketch(...).fill(every node) gives the step snapshot() gives, on graphs with views, in-place
    changes, custom functions, several outputs, named parameters and freed saved values."""
    from gradtrace.render.dot import step_dot
    from gradtrace.render.text import step_text

    for source in SKETCHED:
        ns: dict = {}
        exec(source, ns)
        outputs, params = ns["outputs"], ns.get("params")
        whole = snapshot(outputs, params)
        sketch = Sketch(outputs, params)
        assert list(sketch.step.nodes) == list(whole.nodes) and list(sketch.step.tensors) == list(whole.tensors)
        filled = sketch.fill(list(whole.nodes))
        assert step_text(filled) == step_text(whole), source
        assert step_dot(filled) == step_dot(whole), source
        assert filled.nodes == whole.nodes and filled.tensors == whole.tensors


SKETCHED = [
    "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\nv = y[1:]\nv.mul_(2)\n"
    "outputs = [v, y]\n",
    "import torch\nx = torch.randn(3, requires_grad=True)\nf = (x.sin() * x.cos()).sum()\nf.backward()\n"
    "outputs = f\n",
    "import torch\nclass Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n"
    "        ctx.save_for_backward(a)\n        return a * a\n    @staticmethod\n    def backward(ctx, g):\n"
    "        (a,) = ctx.saved_tensors\n        return 2 * a * g\nx = torch.randn(2, requires_grad=True)\n"
    "outputs = Sq.apply(x.tanh()).sum()\n",
    "import torch\ntorch.manual_seed(0)\nnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), "
    "torch.nn.ReLU(), torch.nn.Linear(4, 1))\nfor p in net[0].parameters():\n    p.requires_grad_(False)\n"
    "outputs = net(torch.randn(5, 3)).pow(2).mean()\nparams = dict(net.named_parameters())\n",
    "import torch\nx = torch.ones(2, 2, requires_grad=True)\nt = x.t()\ny = (t @ x).relu()\nz = y.clone()\n"
    "z[0] = 0\noutputs = (z * t).sum(), y\n",
]


def test_a_snapshot_of_a_view_shows_its_base():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    v = y[1:]
    step = snapshot(v)
    view = step.tensors[step.bindings["output"]]
    assert v._base is y and view.base is not None
    base = step.tensors[view.base]
    assert base.shape == tuple(y.shape) and base.grad_fn == step.nodes[view.grad_fn].inputs[0].node
    assert f"view of {base.id}" in gradtrace.show(v).text

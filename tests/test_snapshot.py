"""``snapshot`` and ``show`` of graphs built by plain (untraced) code.

A snapshot numbers nodes as a trace of the same code does (in creation order), also
where one call makes several nodes; ``show`` of a huge graph reads the details of
the nodes its folded picture draws, not of every node.
"""

from __future__ import annotations

import pytest

import gradtrace

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

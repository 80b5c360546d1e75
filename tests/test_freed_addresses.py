"""Objects that die leave nothing the next object at their address is taken for (issue 9, invariant 2).

CPython hands a freed object's address to the next object of its size. Tables the tracer keys by
``id()`` must check that the entry is still the object's: a module made after another one died is
its own module, and its nodes are credited to it.

(The graph walks key the nodes they meet by ``id()`` too; each node met there is held by the walk
itself (its list of found nodes and their ``next_functions``) until the walk ends, so no address is
freed during one: the case below is about what outlives a call.)
"""

from __future__ import annotations

import torch

import gradtrace

#: anonymous modules of four classes, each dead once its statement ends: their addresses are reused
ANONYMOUS = """\
import torch
from torch import nn
x = torch.ones(2, requires_grad=True)
ys = []
for i in range(24):
    ys.append([nn.Tanh, nn.Sigmoid, nn.Softplus, nn.ReLU][i % 4]()(x))
"""


def _module_of_node(name: str) -> str:
    """The module class whose forward makes a node of this name (``SigmoidBackward0`` -> ``Sigmoid``)."""
    made = {torch.nn.Tanh: "Tanh", torch.nn.Sigmoid: "Sigmoid", torch.nn.Softplus: "Softplus", torch.nn.ReLU: "ReLU"}
    x = torch.ones(2, requires_grad=True)
    for cls, label in made.items():
        fn = cls()(x).grad_fn
        assert fn is not None
        if fn.name() == name:
            return label
    raise AssertionError(name)


def test_a_module_at_a_dead_modules_address_is_its_own() -> None:
    trace = gradtrace.trace_code(ANONYMOUS, {})
    nodes = [n for n in trace.last.nodes.values() if not n.is_accumulate]
    assert len(nodes) == 24
    assert [(n.name, n.module) for n in nodes] == [(n.name, _module_of_node(n.name)) for n in nodes]


def test_a_named_module_keeps_its_name_after_another_died() -> None:
    source = (
        "import torch\nfrom torch import nn\nx = torch.ones(2, requires_grad=True)\n"
        "for i in range(8):\n    y = nn.Sigmoid()(x)\n"
        "act = nn.Tanh()\nz = act(x)\n"
    )
    step = gradtrace.trace_code(source, {}).last
    (tanh,) = (n for n in step.nodes.values() if n.name == "TanhBackward0")
    assert tanh.module == "act"

"""The model's shared words: ``id_order`` (sorting ids), ``op_name`` (a node's short name) and ``reachable``
(what a backward() walks), checked against traces of real programs and the names PyTorch itself gives."""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.model import id_order, op_name, reachable

MANY = "import torch\nx = torch.ones(2, requires_grad=True)\n" + "".join(
    f"h{i} = x * {i + 2}\n" for i in range(11)) + "loss = sum(h.sum() for h in [h0, h9, h10])\n"

TWO_GRAPHS = """import torch
x = torch.ones(3, requires_grad=True)
y = torch.ones(3, requires_grad=True)
a = (x * 2).exp()
b = y + 1
loss = a.sum()
"""


def test_id_order_sorts_ids_as_the_tracer_made_them():
    step = gradtrace.trace_code(MANY, {}).last
    assert step is not None
    made = list(step.tensors)
    assert len(made) > 10 and sorted(made, key=id_order) == made
    assert sorted(made) != made  # a string sort puts t10 before t2
    assert [id_order(t) for t in made] == sorted(id_order(t) for t in made)
    assert id_order("t12") == 12 and id_order("n7") == 7


@pytest.mark.parametrize("bad", ["", "t", "x", "tx1", "t-1", "t٣"])
def test_id_order_refuses_what_is_not_an_id(bad):
    with pytest.raises(ValueError, match="not a tensor or node id"):
        id_order(bad)


def test_op_name_drops_torchs_namespace_from_its_own_nodes():
    x = torch.ones(2, requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    y = x.clone()
    y[0] = 5.0
    names = [acc.name(), y.grad_fn.name(), (x * 2).grad_fn.name()]
    assert names[:2] == ["torch::autograd::AccumulateGrad", "torch::autograd::CopySlices"]
    assert [op_name(n) for n in names] == ["AccumulateGrad", "CopySlices", "MulBackward0"]
    assert op_name("torch::autograd::CppNode<ns::Scale>") == "CppNode<ns::Scale>"


def test_reachable_is_what_torch_walks_from_the_root():
    step = gradtrace.trace_code(TWO_GRAPHS, {}).last
    assert step is not None
    root = step.tensors[step.bindings["loss"]].grad_fn
    reached = step.reachable([root])
    assert reached == reachable(step.nodes, [root, None])
    got = sorted(op_name(step.nodes[n].name) for n in reached)

    scope: dict[str, object] = {}
    exec(TWO_GRAPHS, scope)
    walked, todo = [], [scope["loss"].grad_fn]  # type: ignore[attr-defined]
    while todo:
        fn = todo.pop()
        walked.append(op_name(fn.name()))
        todo += [f for f, _ in fn.next_functions if f is not None]
    assert got == sorted(walked) == ["AccumulateGrad", "ExpBackward0", "MulBackward0", "SumBackward0"]
    b_node = step.tensors[step.bindings["b"]].grad_fn
    assert b_node is not None and b_node not in reached and step.reachable([None]) == set()

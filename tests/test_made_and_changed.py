"""A statement that makes a tensor and changes it in place tells both (issue 9, invariant 2).

``y = nn.ReLU(inplace=True)(x * 2)``, ``h = F.relu_(lin(x))`` and ``y = x.exp().add_(1)``
show a new tensor at a version past 0 and with the in-place call's node: the step says it was
changed in place, from the version and node it had as it was made, and which saved values that
made stale. Every expected figure comes from PyTorch: the same statement run plainly, once whole
and once without its in-place part.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from regressions.fidelity import check_fidelity

import gradtrace
from gradtrace.model import STALE

HEAD = (
    "import torch\nfrom torch import nn\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
    "x = torch.randn(2, 3, requires_grad=True)\nlin = nn.Linear(3, 3)\nact = nn.ReLU(inplace=True)\n"
)

#: the name, the statement, and the expression that makes the tensor before the in-place part
CASES = [
    ("y", "y = nn.ReLU(inplace=True)(x * 2)", "x * 2"),
    ("z", "z = act(x * 3)", "x * 3"),  # no in-place word in the statement: heard from the module's hooks
    ("z", "z = act(input=x * 3)", "x * 3"),
    ("h", "h = F.relu_(lin(x))", "lin(x)"),
    ("g", "g = F.relu(lin(x), inplace=True)", "lin(x)"),
    ("k", "k = torch.sigmoid(x).mul_(2)", "torch.sigmoid(x)"),
    ("s", "s = x.exp().add_(1).mul_(2)", "x.exp()"),  # two in-place calls: one change, from the first
    ("o", "o = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.ReLU(inplace=True))(x)", None),
]


def _plain(source: str) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    exec(compile(source, "<plain>", "exec"), ns)
    return ns


def _node_name(t: torch.Tensor) -> str | None:
    return None if t.grad_fn is None else t.grad_fn.name().removeprefix("torch::autograd::")


@pytest.mark.parametrize(("name", "stmt", "made"), CASES, ids=[c[1] for c in CASES])
def test_a_tensor_made_and_changed_in_one_statement_is_told_changed(name: str, stmt: str, made: str | None) -> None:
    source = HEAD + stmt + "\n"
    trace = gradtrace.trace_code(source, {})
    step = trace.steps[-1]
    tid = step.bindings[name]
    now = _plain(source)[name]
    mutates = [e for e in step.events_of("mutate") if e.tensor == tid]
    assert len(mutates) == 1, f"{stmt}: {step.events}"
    (m,) = mutates
    assert m.version_after == now._version == step.tensors[tid].version
    assert m.grad_fn_after == step.tensors[tid].grad_fn
    assert step.nodes[m.grad_fn_after].name == _node_name(now)
    if made is not None:  # as the tensor was made: PyTorch's version and node of the out-of-place part
        then = _plain(HEAD + f"{name} = {made}\n")[name]
        assert m.version_before == then._version
        assert m.grad_fn_before is not None and step.nodes[m.grad_fn_before].name == _node_name(then)
        assert m.op
    # the saved values the change made stale are the ones the step shows stale, and only those
    shown_stale = {(n.id, s.name) for n in step.nodes.values() for s in n.saved if s.state == STALE and s.tensor == tid}
    assert set(m.stale) == shown_stale


def test_the_stale_value_of_the_same_statement_is_named_by_its_change() -> None:
    # Sigmoid saved its result, ReLU(inplace=True) changed it in the same forward: backward fails on it
    source = HEAD + "o = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.ReLU(inplace=True))(x)\n"
    step = gradtrace.trace_code(source, {}).steps[-1]
    ns = _plain(source)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ns["o"].sum().backward()
    (m,) = step.events_of("mutate")
    assert [step.nodes[n].name for n, _saved in m.stale] == ["SigmoidBackward0"]


def test_a_tensor_made_in_place_with_no_change_is_not_told_changed() -> None:
    # requires_grad_() on a tensor the statement made changes a flag, not the values: nothing to tell
    step = gradtrace.trace_code(HEAD + "w = torch.zeros(3).requires_grad_()\n", {}).steps[-1]
    assert not step.events_of("mutate")


@pytest.mark.parametrize(("name", "stmt", "made"), CASES, ids=[c[1] for c in CASES])
def test_made_and_changed_programs_keep_the_invariants(
        name: str, stmt: str, made: str | None,  # noqa: ARG001  (a CASES column the other tests read)
) -> None:
    check_fidelity(HEAD + stmt + "\n" + f"{name}.sum().backward()\n" if "Sigmoid" not in stmt else HEAD + stmt + "\n")


def test_an_in_place_change_is_told_by_one_op_name_however_it_was_heard() -> None:
    # heard from the mode (the statement's text says inplace), from a module's hooks, or as the in-place call
    calls = ["nn.ReLU(inplace=True)(h)", "act(h)", "F.relu(h, inplace=True)", "F.relu_(h)", "h.relu_()"]
    ops = set()
    for call in calls:
        step = gradtrace.trace_code(HEAD + "h = x * 2\n" + call + "\n", {}).steps[-1]
        (m,) = step.events_of("mutate")
        ops.add(m.op)
    assert len(ops) == 1

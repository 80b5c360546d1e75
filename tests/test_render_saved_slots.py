"""The slot names of saved values in a node's box: never cut where a learner needs them.

A ``CopySlices`` node (an in-place call on a view) lists what its inner node saved as
``<inner node>.<slot>``; the slot is the part that says which input was saved.
"""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.render.scene import node_rows, slot_text

VIEW_INPLACE = """\
import torch
b = torch.ones(2, 3, requires_grad=True).clone()
c = torch.full((6,), 2.0, requires_grad=True)
a = b.view(-1)
a.mul_(c)
r = b[0]
r.sigmoid_()
"""


def _inner_slots(op: str) -> tuple[str, ...]:
    # the slots PyTorch's own node of that op saves, read from a node made plainly
    x = torch.ones(3, requires_grad=True).clone()
    y = torch.full((3,), 2.0, requires_grad=True)
    out = x.mul(y) if op == "mul" else x.sigmoid()
    fn = out.grad_fn
    saved = [k for k in dir(fn) if k.startswith("_saved_") and isinstance(getattr(fn, k), torch.Tensor)]
    return tuple(k.removeprefix("_saved_") for k in saved)


def test_a_copyslices_row_keeps_the_inner_slot_whole() -> None:
    trace = gradtrace.trace_code(VIEW_INPLACE, {})
    step = trace.steps[-1]
    copies = [n for n in step.nodes.values() if n.name == "CopySlices" and n.saved]
    assert len(copies) == 2
    seen = set()
    for node in copies:
        rows = [r.text for r in node_rows(node)][1:]
        for s, row in zip(node.saved, rows, strict=True):
            inner, slot = s.name.rsplit(".", 1)
            assert inner.endswith("Backward0")
            head = row.split(" = ", 1)[0]
            assert head.endswith("." + slot) and "…" not in head, (s.name, row)
            assert head.startswith(inner.removesuffix("Backward0")), (s.name, row)
            seen.add((inner.removesuffix("Backward0").lower(), slot))
    assert {("mul", k) for k in _inner_slots("mul")} & seen
    assert {("sigmoid", k) for k in _inner_slots("sigmoid")} & seen


@pytest.mark.parametrize("name, limit, want", [
    ("self", 16, "self"),
    ("MulBackward0.other", 16, "Mul.other"),
    ("SigmoidBackward0.result", 16, "Sigmoid.result"),
    ("UpsampleBilinear2DBackward0.self", 16, "UpsampleBi….self"),
])
def test_slot_text_shortens_the_node_before_the_slot(name: str, limit: int, want: str) -> None:
    got = slot_text(name, limit)
    assert len(got) <= limit
    assert got == want

"""A view made under ``no_grad`` whose base is then changed in place with grad on.

Reading such a view's ``grad_fn`` or ``is_leaf`` raises ``RuntimeError`` in
PyTorch; plain code that never reads them runs fine. The tracer read them at
every step, so the error surfaced in the learner's code (a failure plain
``exec`` does not have), wrong values followed, and in one shape the learner's
``with torch.no_grad():`` block never restored grad mode. Found by test_fuzz.
"""

from __future__ import annotations

import torch

from .differential import check_program


def test_base_changed_after_no_grad_view() -> None:
    check_program(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "c = torch.randn(2, 3, requires_grad=True)\n"
        "b = c.sum()\n"
        "with torch.no_grad():\n"
        "    f = b.reshape(-1)\n"
        "b.add_(1)\n"
    )


def test_slice_assignment_after_no_grad_view_then_more_code() -> None:
    check_program(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "a = torch.randn(2, 3, requires_grad=True)\n"
        "a = torch.exp(a)\n"
        "with torch.no_grad():\n"
        "    b = a.reshape(-1)\n"
        "a[0] = 1.5\n"
        "with torch.no_grad():\n"
        "    a = torch.exp(a)\n"
        "for i in range(1):\n"
        "    a = torch.exp(a)\n"
    )


def test_grad_mode_restored_after_no_grad_block() -> None:
    check_program(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "a = torch.randn(2, 3, requires_grad=True)\n"
        "a = torch.exp(a)\n"
        "with torch.no_grad():\n"
        "    a = a.reshape(-1)\n"
        "with torch.no_grad():\n"
        "    a[0] = 1.5\n"
    )
    assert torch.is_grad_enabled()


def test_the_view_is_drawn_without_a_grad_fn() -> None:
    trace = check_program(
        "import torch\n"
        "c = torch.ones(3, requires_grad=True)\n"
        "b = c * 2\n"
        "with torch.no_grad():\n"
        "    f = b[:2]\n"
        "b.mul_(3)\n"
        "g = f + 1\n"
    )
    last = trace.last
    assert last is not None
    info = last.tensors[last.bindings["f"]]
    assert info.grad_fn is None and info.base == last.bindings["b"]

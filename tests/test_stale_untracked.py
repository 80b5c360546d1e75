"""A saved value no tensor id follows (an object's attribute, a nested list item, a list's
65th item, a temporary view) that goes stale is predicted exactly when PyTorch's backward fails."""

from __future__ import annotations

import pytest
from regressions.fidelity import check_fidelity

from gradtrace.run import trace_code

CASES = {
    "attribute": (
        "import torch\nclass Box:\n    pass\nbox = Box()\nx = torch.tensor([1., 2.], requires_grad=True)\n"
        "box.h = x * 1\ny = box.h * box.h\nbox.h.add_(1)\ns = y.sum()\ns.backward()\n"
    ),
    "nested_list": (
        "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nL = [[x * 1]]\ny = L[0][0].exp()\n"
        "L[0][0].mul_(2)\ns = y.sum()\ns.backward()\n"
    ),
    "list_65th": (
        "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nL = [x * 1 for _ in range(70)]\n"
        "y = L[66] * L[66]\nL[66].add_(1)\ns = y.sum()\ns.backward()\n"
    ),
    "temp_view": (
        "import torch\na = torch.tensor([1., 2., 3.], requires_grad=True)\nb = a * 1\nc = b[1:] * b[1:]\n"
        "b.mul_(3)\nd = c.sum()\nd.backward()\n"
    ),
    # negative: other memory changes in place, the saved value stays alive and backward runs
    "other_storage": (
        "import torch\nclass Box:\n    pass\nbox = Box()\nx = torch.tensor([1., 2.], requires_grad=True)\n"
        "box.h = x * 1\ny = box.h * box.h\nz = x * 2\nz.add_(1)\ns = y.sum()\ns.backward()\n"
    ),
    # negative: the change comes after backward (no version moved before it)
    "after_backward": (
        "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nL = [[x * 1]]\ny = L[0][0] * L[0][0]\n"
        "s = y.sum()\ns.backward()\nL[0][0].add_(1)\n"
    ),
}


def _plain_fails(source: str) -> bool:
    try:
        exec(compile(source, "<plain>", "exec"), {})
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e)
        return True
    return False


@pytest.mark.parametrize("name", sorted(CASES))
def test_predicted_exactly_when_backward_fails(name: str) -> None:
    source = CASES[name]
    fails = _plain_fails(source)
    check_fidelity(source)  # predictions and saved states match PyTorch at every step
    trace = trace_code(source.rsplit("\n", 2)[0] + "\n" if fails else source)  # up to the failing backward
    last = trace.steps[-1]
    stale = [s for n in last.nodes.values() for s in n.saved if s.state == "stale"]
    assert bool(last.predictions) == fails
    assert bool(stale) == fails


"""The text twin's reverse pass where a tensor hook changed a gradient on its way: each figure once."""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.explain._numbers import fmt_values
from gradtrace.render.text import reverse_pass

SOURCE = (
    "import torch\n"
    "x = torch.tensor([1., 2.], requires_grad=True)\n"
    "y = x * x\n"
    "z = y * 3\n"
    "y.register_hook(lambda g: g * 5)\n"
    "x.register_hook(lambda g: g + 1)\n"
    "z.sum().backward()\n"
)


def _plain() -> tuple[torch.Tensor, torch.Tensor]:
    """What PyTorch sends to y's node (no hook) and what reaches x with both hooks."""
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * x
    y.retain_grad()
    (y * 3).sum().backward()
    sent = y.grad
    assert sent is not None
    x2 = torch.tensor([1., 2.], requires_grad=True)
    y2 = x2 * x2
    y2.register_hook(lambda g: g * 5)
    x2.register_hook(lambda g: g + 1)
    (y2 * 3).sum().backward()
    assert x2.grad is not None
    return sent, x2.grad


def test_one_sender_hook_note_names_the_sent_value_once() -> None:
    trace = gradtrace.trace_code(SOURCE, {})
    lines = reverse_pass(trace.steps[-1])
    sent, final = _plain()
    sent_text = fmt_values(sent.tolist(), "float32")
    notes = [ln for ln in lines if "a hook changed the gradient on its way to y" in ln]
    assert len(notes) == 1
    # one sender: its value is said once ("... [3, 3] was sent"), not also as "(sent: [3, 3]; ..."
    assert notes[0].count(sent_text) == 1, notes[0]
    assert "(sent:" not in notes[0]
    # two senders meeting at x's AccumulateGrad: their parts are listed, then the hook's change
    at_x = [ln for ln in lines if "a hook changed the gradient on its way to x" in ln]
    assert len(at_x) == 1 and at_x[0].lstrip().startswith("(sent: ") and " + " in at_x[0]
    assert fmt_values(final.tolist(), "float32") in at_x[0]

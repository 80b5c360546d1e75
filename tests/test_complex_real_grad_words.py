"""A complex node that sends a real gradient (``torch.polar``'s to its float32 inputs) writes it as float32.

Before, the reverse pass wrote ``sends to n8: [0.8775825500488281, 0.9689124226570129]``: float32 values in
float64's digits, because the figures were formatted in the node's dtype, complex64."""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.explain._numbers import fmt_number, fmt_values

SRC = """\
import torch
r = torch.tensor([2.0, 1.0], requires_grad=True)
th = torch.tensor([0.5, -0.25], requires_grad=True)
p = torch.polar(r, th)
torch.view_as_real(p)[:, 0].sum().backward()
"""


def test_polar_sends_float32_figures() -> None:
    r = torch.tensor([2.0, 1.0], requires_grad=True)
    th = torch.tensor([0.5, -0.25], requires_grad=True)
    torch.view_as_real(torch.polar(r, th))[:, 0].sum().backward()
    assert r.grad is not None and th.grad is not None
    text = gradtrace.trace_code(SRC, {}).to_text()
    polar = text[text.index("PolarBackward0: gets"):]
    polar = polar[:polar.index("AccumulateGrad")]
    assert fmt_values(r.grad.tolist(), "float32") in polar
    assert fmt_values(th.grad.tolist(), "float32") in polar
    assert repr(r.grad.tolist()[0]) not in polar  # not float64's 17 digits


def test_real_number_in_a_complex64_context_has_float32_digits() -> None:
    v = torch.tensor(0.1, dtype=torch.float32).item()
    assert fmt_number(v, "complex64") == fmt_number(v, "float32") == "0.1"
    w = torch.tensor(0.1, dtype=torch.float64).item()
    assert fmt_number(w, "complex128") == fmt_number(w, "float64") == "0.1"

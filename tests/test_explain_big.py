"""The reverse pass in numbers over big tensors: its plain-number arithmetic does not grow with their size.

A figure of more elements than can be written out is never computed: the Python calls into
``explain/_arith.py`` are counted (not timed) for the same program at two sizes. The figures the text
does show are checked against PyTorch's own ``.grad``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import torch

import gradtrace
from gradtrace.explain import _arith
from gradtrace.explain._numbers import fmt_number, fmt_values
from gradtrace.explain.walkthrough import walkthrough_of
from gradtrace.model import Backward

ARITH = str(Path(_arith.__file__).resolve())

#: sums, a mean, a slice, a picked element and a max over all of x, whose gradients are copies or zeros of
#: x's size made from a few numbers; w's gradient is small and written out
PROGRAM = """import torch
x = torch.linspace(0.5, 1.5, {n}, requires_grad=True)
w = torch.tensor([0.5, -1.25], requires_grad=True)
y = (x * 2).sin().sum() * w[0] + x.mean() * w[1] + (x[:3] * x[5]).sum() + x.max()
y.backward()
"""


def _traced(n: int) -> Any:
    return gradtrace.trace_code(PROGRAM.format(n=n), {})


def _walk_text(trace: Any) -> str:
    step = trace.last
    (event,) = [e for e in step.events if isinstance(e, Backward)]
    return walkthrough_of(step, event).to_text()


def _arith_calls(work: Any) -> int:
    """How many Python functions of ``explain/_arith.py`` ``work()`` calls (generators count once per resume)."""
    count = 0

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal count
        if event == "call" and frame.f_code.co_filename == ARITH:
            count += 1

    old = sys.getprofile()
    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(old)
    return count


@pytest.mark.parametrize("view", ["walkthrough", "text twin"])
def test_arithmetic_does_not_grow_with_the_size_of_the_tensors(view):
    small, big = _traced(1_000), _traced(100_000)

    def calls(trace: Any) -> int:
        return _arith_calls(lambda: _walk_text(trace) if view == "walkthrough" else trace.to_text())

    few, many = calls(small), calls(big)
    assert few > 0  # the counter sees the arithmetic: w's gradient is computed there
    assert many == few


def test_a_big_tensor_shows_pytorchs_figures():
    n = 100_000
    text = _walk_text(_traced(n))
    x = torch.linspace(0.5, 1.5, n, requires_grad=True)
    w = torch.tensor([0.5, -1.25], requires_grad=True)
    y = (x * 2).sin().sum() * w[0] + x.mean() * w[1] + (x[:3] * x[5]).sum() + x.max()
    y.backward()
    assert w.grad is not None and x.grad is not None
    assert f"w.grad = {fmt_values(w.grad.tolist())}" in text
    assert f"1 · {fmt_number((x * 2).sin().sum().item())} = {fmt_number(w.grad[0].item())}" in text
    assert f"1 · {fmt_number(x.mean().item())} = {fmt_number(w.grad[1].item())}" in text
    leaf = next(line for line in text.splitlines() if line.strip().startswith("x.grad ="))
    assert f"min {fmt_number(x.grad.min().item())}" in leaf and f"max {fmt_number(x.grad.max().item())}" in leaf
    assert "grad_self: the (100000,) result is too large to write out" in text


def test_the_bound_stops_only_arrays_beyond_it():
    one = _arith.Arr.of([2.5], "float32")
    with _arith.bounded(16):
        assert one.expand((16,)).data == [2.5] * 16
        with pytest.raises(_arith.TooLarge) as big:
            one.expand((4, 5))
        assert big.value.shape == (4, 5)
        with pytest.raises(_arith.TooLarge):
            _arith.zeros((17,), "float32")
    assert _arith.zeros((17,), "float32").numel() == 17  # no bound outside

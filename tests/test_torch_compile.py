"""A program that uses torch.compile traces as it runs plainly.

The compiler's own tracing (Dynamo's frames, AOTAutograd's autograd.grad on fake tensors) is not the
program's: it is no step, no backward() event, and the compiled function gives the values it gives
when run plainly.
"""

from __future__ import annotations

import warnings

import pytest
import torch

import gradtrace
from gradtrace.tracer.summary import format_values

pytestmark = pytest.mark.slow  # compiling takes seconds

SOURCE = (
    "import torch\n"
    "f = torch.compile(lambda t: (t * 2).sin())\n"
    "x = torch.tensor([0.5, 1.0], requires_grad=True)\n"
    "y = f(x)\n"
    "\n"
    "@torch.compile\n"
    "def g(t):\n"
    "    return (t * 3).cos()\n"
    "\n"
    "z = g(x).sum()\n"
    "z.backward()\n"
)


def test_compiled_functions_trace_as_they_run() -> None:
    plain: dict = {}
    exec(compile(SOURCE, "<plain>", "exec"), plain)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = gradtrace.trace_code(SOURCE, {})
    assert trace.error is None, trace.error
    # one step per statement the program runs: none on `def g(t):` for the compiled call
    assert [s.lineno for s in trace.steps] == [1, 2, 3, 4, 7, 10, 11]
    assert all(s.frame == "<module>" for s in trace.steps)
    last = trace.last
    assert last is not None
    y, x = last.tensors[last.bindings["y"]], last.tensors[last.bindings["x"]]
    assert y.value.text == format_values(plain["y"].tolist(), torch.float32)
    assert x.grad is not None and x.grad.text == format_values(plain["x"].grad.tolist(), torch.float32)
    assert len(trace.events("backward")) == 1  # the program's z.backward() only
    said = [str(w.message) for w in caught]
    assert not any("gc." in m or "gradtrace" in m for m in said), said

"""Per-statement work proportional to what changed (issue 9, Speed), and the truths it must keep.

Work is counted, never timed: the tracer's ``work`` counter says how many scopes' names were made
again from scratch and how many names were brought up to date one by one. Every figure checked
comes from PyTorch run plainly here.
"""

from __future__ import annotations

from typing import Any

import torch

import gradtrace
from gradtrace.tracer.core import Tracer

LOOP = """import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
x = torch.randn(5, 3)
for i in range({n}):
    pred = model(x)
    loss = pred.pow(2).mean()
    loss.backward()
"""


def _run(source: str) -> tuple[Tracer, Any, dict[str, Any]]:
    ns: dict[str, Any] = {}
    tracer = Tracer(source, "<delta>", 10**9, globals_ns=ns)
    code = compile(source, "<delta>", "exec")
    trace = tracer.run(lambda: exec(code, ns))
    assert tracer.exception is None
    return tracer, trace, ns


def test_rebinding_a_tensor_name_updates_the_names_in_place() -> None:
    """``pred = model(x)`` gives ``pred`` another tensor: the module's names are not made again."""
    small, _, _ = _run(LOOP.format(n=3))
    big, trace, ns = _run(LOOP.format(n=12))
    assert big.work["names made"] == small.work["names made"]  # the same few, made before the loop
    assert big.work["names rebound"] - small.work["names rebound"] == 2 * 9  # pred and loss, each iteration
    last = trace[-1]
    for name in ("pred", "loss", "x", "model.0.weight", "model.2.bias"):
        live = ns[name] if "." not in name else dict(ns["model"].named_parameters())[name.split(".", 1)[1]]
        info = last.tensors[last.bindings[name]]
        assert info.shape == tuple(live.shape) and info.version == live._version
    # every step names exactly what plain Python names then (here: at the end)
    plain = {k for k, v in ns.items() if isinstance(v, torch.Tensor) and not k.startswith("_")}
    plain |= {f"model.{k}" for k, _ in ns["model"].named_parameters()}
    assert set(last.bindings) == plain


def test_a_data_view_of_another_dtype_shows_the_new_dtype_and_values() -> None:
    """``x.data = x.data.view(torch.int32)`` keeps the memory and the version: the step shows the new dtype."""
    source = "import torch\nx = torch.tensor([1.0, 2.0])\nx.data = x.data.view(torch.int32)\ny = 1\n"
    ns: dict[str, Any] = {}
    exec(compile(source, "<plain>", "exec"), ns)
    trace = gradtrace.trace_code(source, {})
    for step in list(trace)[2:]:
        info = step.tensors[step.bindings["x"]]
        assert info.dtype == str(ns["x"].dtype).replace("torch.", "")
        assert info.value.values == ns["x"].tolist()

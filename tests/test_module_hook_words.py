"""A module's full backward hook that replaces a gradient is said to, with what arrived and what went on.

``register_full_backward_hook`` runs in a BackwardHookFunctionBackward node, whose rule is "passes the
gradient on unchanged". With a hook doubling the gradient, the reverse pass said "gets [[1, 1]]",
then "sends to n2: [[2, 2]]", with no word of why. The figures come from PyTorch (the hook's own
arguments and ``x.grad``).
"""

from __future__ import annotations

import pytest

import gradtrace
from gradtrace.render.text import reverse_pass


def _source(hook: str) -> str:
    return ("import torch\nimport torch.nn as nn\nlin = nn.Linear(2, 1)\nwith torch.no_grad():\n"
            "    lin.weight.copy_(torch.tensor([[3.0, -1.0]]))\n    lin.bias.zero_()\n"
            f"lin.register_full_backward_hook({hook})\n"
            "x = torch.tensor([[1.0, 2.0]], requires_grad=True)\ny = lin(x).sum()\n")


def _plain(hook: str) -> tuple[list, list]:
    """What arrived at the hook for x, and x.grad: PyTorch's figures."""
    ns: dict = {}
    exec(_source("lambda m, gin, gout: seen.append(gin[0].tolist()) or " + hook).replace(
        "lin = nn", "seen = []\nlin = nn") + "y.backward()\n", ns)
    return ns["seen"][0], ns["x"].grad.tolist()


def _fmt(values: list) -> str:
    return str([[int(v) if float(v).is_integer() else v for v in row] for row in values])


@pytest.mark.parametrize("hook", ["(gin[0] * 2,)", "None"], ids=["doubles", "keeps"])
def test_a_module_hook_that_replaces_the_gradient_is_said_to(hook: str) -> None:
    arrived, got = _plain(hook)
    changed = arrived != got
    assert changed is (hook != "None")
    source = _source("lambda m, gin, gout: " + hook)
    trace = gradtrace.trace_code(source + "y.backward()\n", {})
    step = next(s for s in trace.steps if s.events_of("backward"))
    (line,) = [ln for ln in reverse_pass(step) if "sends to" in ln and _fmt(got) in ln and "n2" in ln]
    ns: dict = {}
    exec(source, ns)
    walk = str(gradtrace.explain(ns["y"]))
    (arrow,) = [ln for ln in walk.splitlines() if "→" in ln and f": {_fmt(got)}" in ln]
    for text in (line, arrow):
        if changed:
            assert f"{_fmt(got)}   (a module's backward hook replaced {_fmt(arrived)}, which arrived)" in text, text
        else:
            assert "replaced" not in text, text

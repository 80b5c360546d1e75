"""Where two paths meet, every view adds their gradients in the order PyTorch's engine delivered them.

f = x² + x³ at x = 42: the engine runs x³'s PowBackward0 first (it was made later), so AccumulateGrad gets
5292 before 84 and computes 5292 + 84. Node hooks on the two PowBackward0 nodes see that order in plain
PyTorch; the stepper's reverse pass, ``explain()`` and the quiz must write the sum in the same order.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

import gradtrace
from gradtrace.render.film import film

ROOT = Path(__file__).resolve().parents[1]
CODE = "x = torch.tensor(42., requires_grad=True)\nf = x ** 2 + x ** 3\nf.backward()\n"


def engine_order() -> list[str]:
    """What reached x's AccumulateGrad, in the order the engine ran the nodes that sent it (their hooks)."""
    x = torch.tensor(42.0, requires_grad=True)
    f = x**2 + x**3
    sent: list[str] = []
    for node, _ in f.grad_fn.next_functions:
        node.register_hook(lambda grad_in, _grad_out, sent=sent: sent.append(f"{grad_in[0].item():g}"))
    f.backward()
    assert f"{x.grad.item():g}" == "5376"
    return sent


def _sum_in(text: str, where: str) -> list[str]:
    """The addends of the ``A + B = total`` written on the line that contains ``where``."""
    line = next(line for line in text.splitlines() if where in line)
    found = re.search(r"([0-9.]+(?: \+ [0-9.]+)+) = ", line)
    assert found, line
    return found[1].split(" + ")


def test_the_order_is_the_engines() -> None:
    assert engine_order() == ["5292", "84"]  # x³'s node ran first


def test_stepper_explain_and_quiz_write_the_engines_order() -> None:
    order = engine_order()
    trace = gradtrace.trace_code(CODE, {"torch": torch})
    reverse = "\n".join(next(s["reverse"] for s in film(trace)["steps"] if s["reverse"]))
    stepper = _sum_in(reverse, "AccumulateGrad: gets")
    x = torch.tensor(42.0, requires_grad=True)
    walk = str(gradtrace.explain(x**2 + x**3))
    explained = _sum_in(walk, "paths meet here")
    result = _sum_in(walk.split("Result:", 1)[1], "x.grad =")
    answer = str(gradtrace.quiz(CODE, ask="x.grad").check("1"))  # a wrong answer: the quiz shows the walk
    quizzed = _sum_in(answer, "paths meet")
    assert stepper == order
    assert explained == order
    assert result == order
    assert quizzed == order

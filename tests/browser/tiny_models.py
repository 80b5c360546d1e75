"""The tiny GPT-2-style model of ``examples/tiny_transformer.py``, for the unfolding tests: groups inside
groups (``model.h.0`` holds ``attn`` and ``mlp``).

``MODEL`` is the example's source up to its training step (a notebook cell runs it as it is;
:func:`namespace` runs it here), ``PROGRAM`` that step, traced by the tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny_transformer.py"
MODEL, _, _STEP = EXAMPLE.read_text(encoding="utf-8").partition("\ntorch.manual_seed(0)\n")
#: the example's training step, up to ``loss.backward()`` (the example prints a line after it)
PROGRAM = "torch.manual_seed(0)\n" + _STEP.split("loss.backward()\n", 1)[0] + "loss.backward()\n"


def namespace() -> dict[str, Any]:
    """The model's classes (and torch), as a notebook cell running ``MODEL`` leaves them."""
    ns: dict[str, Any] = {}
    exec(compile(MODEL, str(EXAMPLE), "exec"), ns)  # noqa: S102 - the project's own example
    return ns


def ops_of(module: torch.nn.Module, ns: dict[str, Any]) -> set[str]:
    """The backward ops ``module`` makes, as PyTorch names them (iterative walk, leaves left out), on an input
    of the shape the traced program (its ``tokens`` and ``model`` in ``ns``) feeds the blocks."""
    tokens = ns["tokens"]
    x = torch.randn(tokens.shape[0], tokens.shape[1] - 1, ns["model"].wte.weight.shape[1], requires_grad=True)
    out, seen, todo = set(), set(), [module(x).grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen or node.name().endswith("AccumulateGrad"):
            continue
        seen.add(node)
        out.add(node.name())
        todo += [n for n, _ in node.next_functions]
    return out

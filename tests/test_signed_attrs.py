"""A node's int attributes as the program gave them: ``dim=-1``, not ``dim=18446744073709551615``.

PyTorch's Python getters read a saved int64 as unsigned (``x.softmax(-1).grad_fn._saved_dim`` is
2**64 - 1). The expected text is PyTorch's own value read back as the signed 64-bit int it stores.
"""

from __future__ import annotations

import struct

import pytest

import gradtrace

CASES = {
    "softmax": ("y = x.softmax(-1)", "dim"),
    "cumsum": ("y = x.cumsum(-1)", "dim"),
    "topk": ("y = x.topk(2).values", "dim"),
    "cross_entropy": ("y = torch.nn.functional.cross_entropy(x.unsqueeze(0), torch.tensor([1]), "
                      "ignore_index=-100)", "ignore_index"),
}


def _signed(value: int) -> int:
    return int(struct.unpack("<q", struct.pack("<Q", value))[0])


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_negative_saved_int_is_shown_signed(case: str) -> None:
    line, attr = CASES[case]
    ns: dict = {}
    source = f"import torch\nx = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)\n{line}\n"
    exec(source, ns)
    raw = getattr(ns["y"].grad_fn, f"_saved_{attr}")
    assert raw >= 2**63  # PyTorch's getter reads it unsigned: the case this is about
    trace = gradtrace.trace_code(source, {})
    step = trace.steps[-1]
    node = step.nodes[step.tensors[step.bindings["y"]].grad_fn]
    assert dict(node.attrs)[attr] == str(_signed(raw))
    assert _signed(raw) < 0

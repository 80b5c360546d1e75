"""Efficient zero tensors (``torch._efficientzerotensor``) own no memory: their values are read as zeros.

``torch.func.hessian`` and forward AD save such tensors in the graph; a summary that copied the
bytes at their data pointer (0) showed whatever ``string_at(NULL, n)`` left there (``[1e-45]``)."""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.tracer.summary import summarize


def test_zero_tensor_summarised_as_its_values() -> None:
    for shape in [(3,), (2, 3), (40,)]:
        z = torch._efficientzerotensor(shape)
        assert z._is_zerotensor()
        want = torch.zeros(shape)
        shown = summarize(z)
        if want.numel() <= 16:
            assert shown.values == want.tolist()
        else:
            assert shown.stats == (0.0, 0.0, 0.0)


def test_hessian_saved_zero_shown_as_pytorch_reads_it() -> None:
    src = ("import torch\nfrom torch.func import hessian\n"
           "def f(w):\n    return (w[0] ** 2 * w[1] + w[1].exp()).sum()\n"
           "w = torch.tensor([1.5, 0.5], requires_grad=True)\nH = hessian(f)(w)\n")
    ns: dict[str, object] = {}
    trace = gradtrace.trace_code(src, ns)
    H = ns["H"]
    assert isinstance(H, torch.Tensor)
    live: list[list[float]] = []  # PyTorch's own reading of every saved zero tensor in H's graph
    seen, todo = set(), [H.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        saved = getattr(node, "_saved_self", None)
        if isinstance(saved, torch.Tensor) and saved._is_zerotensor():
            live.append(saved.clone().tolist())
        todo += [n for n, _ in node.next_functions]
    assert live  # the program does save zero tensors
    shown = [sv.value.values for node in trace.last.nodes.values() for sv in node.saved
             if node.name == "MulBackward0" and sv.name == "self" and sv.value is not None]
    for values in live:
        assert values in shown


"""A traced custom ``autograd.Function`` kept the learner's whole namespace alive.

The tracer cached the saved-field names of each node class in a plain dict keyed
by the class. A custom Function's node class reaches the learner's namespace
(its methods' ``__globals__``), so every traced cell that defined one kept all its
tensors and graphs alive for the life of the kernel. Found by test_leaks.
"""

from __future__ import annotations

import gc
import weakref

import gradtrace

SOURCE = (
    "import torch\n"
    "class Twice(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, t):\n"
    "        ctx.save_for_backward(t)\n"
    "        return t * 2\n"
    "    @staticmethod\n"
    "    def backward(ctx, g):\n"
    "        return g * 2\n"
    "x = torch.ones(3, requires_grad=True)\n"
    "y = Twice.apply(x)\n"
    "y.sum().backward()\n"
)


def test_namespace_of_a_traced_custom_function_is_freed() -> None:
    ns: dict = {}
    trace = gradtrace.trace_code(SOURCE, ns)
    refs = [weakref.ref(ns["x"]), weakref.ref(ns["y"]), weakref.ref(ns["Twice"])]
    ns.clear()
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    assert "TwiceBackward" in trace.to_text()

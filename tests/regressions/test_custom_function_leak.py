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

from programs import CUSTOM_FUNCTION as SOURCE


def test_namespace_of_a_traced_custom_function_is_freed() -> None:
    ns: dict = {}
    trace = gradtrace.trace_code(SOURCE, ns)
    refs = [weakref.ref(ns["x"]), weakref.ref(ns["y"]), weakref.ref(ns["Twice"])]
    ns.clear()
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    assert "TwiceBackward" in trace.to_text()

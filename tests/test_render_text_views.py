"""The text twin (and the stepper, which says the same words) tells a base from its view.

A change made on a base that also bumps its view is "through its base", one made on a view that
changes the base is "through its view"; which tensor is the view comes from PyTorch's ``_base``.
"""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.model import Mutate
from gradtrace.render.words import event_words

SRC = ("import torch\n"
       "x = torch.tensor([1., 2., 3., 4.], requires_grad=True)\n"
       "y = x * 1\n"
       "v = y[1:3]\n"
       "v.mul_(10)\n"
       "y[0] = 7.\n")


def _said(trace, line: int) -> dict[str, str]:
    step = next(s for s in trace.steps if s.lineno == line)
    return {e.tensor: event_words(step, e) for e in step.events if isinstance(e, Mutate)}


def test_base_and_view_are_named_for_what_they_are():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    v = y[1:3]
    assert v._base is y and y._base is None  # v is the view, y its base
    trace = gradtrace.trace_code(SRC)
    t = trace.last.bindings
    on_view = _said(trace, 5)  # v.mul_(10) changes y through its view v
    assert f"through its view {t['v']}" in on_view[t["y"]]
    on_base = _said(trace, 6)  # y[0] = 7. bumps v's version through its base y; v's own values stay
    assert f"its base {t['y']}" in on_base[t["v"]]
    assert "through view" not in on_base[t["v"]]
    v.mul_(10)
    kept = v.clone()
    y[0] = 7.0
    assert torch.equal(v, kept) and "keeps its values" in on_base[t["v"]]  # PyTorch: v's values stay
    assert f"its base {t['y']}" in trace.to_text()

"""A namedtuple's tensors are named by their fields, as the learner reads them (``p.w``, not ``p[0]``)."""

from __future__ import annotations

from collections import namedtuple

import torch

import gradtrace

SRC = """\
from collections import namedtuple
import torch
Params = namedtuple("Params", ["w", "b"])
class Sub(Params):
    pass
p = Params(torch.tensor([2.0], requires_grad=True), torch.tensor([0.5], requires_grad=True))
q = Sub(torch.ones(1), 3)
pair = (torch.zeros(1), torch.ones(1))
loss = (p.w * p.b).sum()
loss.backward()
"""


def test_namedtuple_fields_are_names() -> None:
    ns: dict[str, object] = {}
    trace = gradtrace.trace_code(SRC, ns)
    b = trace.last.bindings
    assert {"p.w", "p.b", "q.w", "pair[0]", "pair[1]"} <= set(b)
    assert not {"p[0]", "p[1]", "q[0]"} & set(b)
    p = ns["p"]
    assert isinstance(p, tuple) and hasattr(p, "_fields")
    assert trace.grad("p.w") == p.w.grad.tolist()  # type: ignore[attr-defined]
    assert trace.grad("p.b") == p.b.grad.tolist()  # type: ignore[attr-defined]
    assert namedtuple("T", ["a"])._fields == ("a",)  # what the names are read from
    assert isinstance(ns["q"], tuple) and torch.equal(ns["q"].w, torch.ones(1))  # type: ignore[attr-defined]

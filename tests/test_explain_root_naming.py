"""A root no name holds (``y.sum().backward()``) is named the same way by every view (issue 9).

The stepper's event words, the text twin's reverse pass, ``explain()`` and a quiz's walkthrough all say
"a tensor no name holds (its grad_fn is nK (SumBackward0))", with the trace's node id.
"""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.explain.reverse import reverse_lines
from gradtrace.explain.walkthrough import walkthrough_of
from gradtrace.model import Backward
from gradtrace.render.words import event_words

SRC = "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x * x\ny.sum().backward()\n"


def _plain_root_op() -> str:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return (x * x).sum().grad_fn.name()


def test_every_view_names_a_temporary_root_alike():
    op = _plain_root_op()
    trace = gradtrace.trace_code(SRC)
    step = trace.last
    (event,) = [e for e in step.events if isinstance(e, Backward)]
    assert event.root is None and step.nodes[event.root_node].name == op
    said = f"a tensor no name holds (its grad_fn is {event.root_node} ({op}))"
    assert said in event_words(step, event)  # the stepper (and the text twin's events)
    assert said in reverse_lines(step)[0]  # the text twin's reverse pass
    walk = walkthrough_of(step, event).to_text()  # what a quiz shows
    assert said in walk.splitlines()[0]
    assert said in trace.to_text()
    assert "output" not in walk.splitlines()[0]


def test_explain_of_a_temporary_names_it_as_the_stepper_does():
    op = _plain_root_op()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    w = gradtrace.explain(y.sum())
    assert torch.equal(x.grad, 2 * x.detach())  # explain ran the real backward()
    head = w.to_text().splitlines()
    assert head[0].startswith(f"Reverse pass from a tensor no name holds (its grad_fn is {w.root} ({op}))")
    assert "output" not in head[0] + head[1] and w.root_name == ""
    assert not any(s.label for s in w.steps if s.node == w.root)


def test_quiz_walkthrough_names_the_temporary_root_alike():
    op = _plain_root_op()
    q = gradtrace.quiz(SRC, ask="x.grad")
    text = q.check("[2, 4]").to_text()
    trace = gradtrace.trace_code(SRC)
    root_node = next(e for e in trace.last.events if isinstance(e, Backward)).root_node
    assert f"a tensor no name holds (its grad_fn is {root_node} ({op}))" in text


def test_named_root_is_its_name_and_tensor_id():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    f = (x * x).sum()
    w = gradtrace.explain(f)
    first = w.to_text().splitlines()[0]
    assert first.startswith(f"Reverse pass from f ({w.root_tensor}),")
    assert w.root_tensor.startswith("t") and w.root_name == "f"

"""A name given to a tensor that already existed is not said to make a new tensor.

Defect a learner's program showed (``tests/corpus/clip_grad_value.py``): ``after = model.weight.grad``
read "new tensor t6 (const)", but PyTorch made nothing there: ``after is model.weight.grad``, the
``.grad`` that ``backward()`` made (and ``clip_grad_value_`` clipped) before. Every expected fact comes
from PyTorch in the test.
"""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.model import Create, Step
from gradtrace.render.words import event_words

SOURCE = """\
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
(w * 2).sum().backward()
g = w.grad
w.grad = torch.zeros(2)
z = w.grad
w.grad = q = torch.zeros(2)
h = w.grad * 2
"""


def _created(step: Step) -> tuple[list[str], list[str]]:
    made = [e for e in step.events if isinstance(e, Create)]
    return [t for e in made for t in e.tensors], [event_words(step, e) for e in made]


def _at(trace: gradtrace.Trace, code: str) -> Step:
    return next(s for s in trace.steps if s.code.strip() == code)


def test_naming_an_existing_grad_makes_no_new_tensor() -> None:
    ns: dict[str, object] = {}
    exec(compile(SOURCE.split("w.grad = q")[0], "<plain>", "exec"), ns)
    w, z = ns["w"], ns["z"]
    assert isinstance(w, torch.Tensor) and z is w.grad  # PyTorch: z names the .grad that was already there
    trace = gradtrace.trace_code(SOURCE, {})
    for code, name in (("g = w.grad", "g"), ("z = w.grad", "z")):
        step = _at(trace, code)
        tid = step.bindings[name]
        made, words = _created(step)
        assert tid not in made, words
        assert any(f"{tid} is the .grad of {step.bindings['w']} (w)" in said and "no new tensor" in said
                   for said in words), words
    for code, name in (("w.grad = q = torch.zeros(2)", "q"), ("h = w.grad * 2", "h")):  # made by the statement
        step = _at(trace, code)
        made, words = _created(step)
        assert step.bindings[name] in made and any("new tensor" in said for said in words), words


def test_the_json_keeps_what_the_step_said() -> None:
    # an existing .grad and a view that kept its values read back from JSON as they were said
    from gradtrace.render.json import trace_from_json, trace_json

    source = SOURCE + "base = torch.zeros(4)\np, q = base.view(2, 2)\np += 1\n"
    trace = gradtrace.trace_code(source, {})
    back = trace_from_json(trace_json(trace))
    for step, again in zip(trace.steps, back.steps, strict=True):
        assert [event_words(step, e) for e in step.events] == [event_words(again, e) for e in again.events]
    said = "\n".join(event_words(s, e) for s in back.steps for e in s.events)
    assert "no new tensor" in said and "keeps its values" in said

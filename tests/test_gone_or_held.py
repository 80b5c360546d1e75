"""A tensor a name let go: gone, or still held by something the step does not show.

Each program keeps a weak reference to the tensor it lets go and prints whether it still exists:
the trace's word must be that answer, printed by the program itself as it runs traced.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

import gradtrace
from gradtrace.render.json import trace_from_json
from gradtrace.render.words import event_words


def _run(source: str):
    out = io.StringIO()
    with redirect_stdout(out):
        trace = gradtrace.trace_code(source, {"__name__": "__main__"}, raise_errors=False)
    return trace, out.getvalue().split()


def _let_go(trace, code: str):
    step = next(s for s in trace.steps if s.code == code)
    (event,) = [e for e in step.events if e.kind in ("rebind", "unbind")]
    return step, event


LOOP = (
    "import torch, weakref\n"
    "x = torch.tensor([1., 4., 2.], requires_grad=True)\n"
    "refs = []\n"
    "for v in x:\n"
    "    refs.append(weakref.ref(v))\n"
    "    print(refs[0]() is not None)\n"
)


def test_a_tensor_the_loop_still_holds_is_not_said_gone() -> None:
    trace, printed = _run(LOOP)
    assert printed == ["True"] * 3  # `for v in x:` walks the tuple x.unbind(0) made: the first v lives on in it
    loop_steps = [s for s in trace.steps if s.code == "for v in x:"]
    step = loop_steps[1]
    (event,) = [e for e in step.events if e.kind == "rebind"]
    assert (event.held_by_names, event.held_by_nodes, event.held_elsewhere) == ((), (), True)
    words = event_words(step, event)
    assert "not gone" in words and "is gone" not in words
    again = trace_from_json(trace.to_json())
    assert again.steps[step.index].events == step.events


def test_a_tensor_nothing_holds_is_said_gone() -> None:
    trace, printed = _run(
        "import torch, weakref\n"
        "a = torch.ones(2) * 3\n"
        "ref = weakref.ref(a)\n"
        "a = a + 1\n"
        "print(ref() is None)\n"
    )
    assert printed == ["True"]
    step, event = _let_go(trace, "a = a + 1")
    assert event.held_elsewhere is False
    assert event_words(step, event).endswith("is no longer held by anything and is gone")
    assert '"held_elsewhere"' not in trace.to_json()  # written only when true


# where a deleted name's tensor stays: a slot of the program's own object is a name (box.t), an object of
# a library's class is not looked into (the tensor is held out of sight, not gone)
HOLDERS = {
    "own_slot": ("class Box:\n    __slots__ = ('t',)\nbox = Box()\n", ("box.t",), False),
    "library_object": ("import types\nbox = types.SimpleNamespace()\n", (), True),
}


@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_a_tensor_a_deleted_name_left_in_an_object_is_held(holder: str) -> None:
    make, names, elsewhere = HOLDERS[holder]
    trace, printed = _run("import torch\n" + make + "a = torch.ones(2) * 3\nbox.t = a\ndel a\n"
                          "print(box.t is not None)\n")
    assert printed == ["True"]
    step, event = _let_go(trace, "del a")
    assert (event.kind, event.held_by_names, event.held_elsewhere) == ("unbind", names, elsewhere)


def test_a_caught_error_does_not_keep_its_frames_alive() -> None:
    # the tensors the failed call's frames hold go when the handler ends, as they do plainly
    trace, printed = _run(
        "import torch, weakref\n"
        "w = torch.tensor([0.5, -0.5], requires_grad=True)\n"
        "h = w * 3\n"
        "out = h.sin()\n"
        "h.add_(1)\n"
        "loss = out.sum()\n"
        "ref = weakref.ref(loss)\n"
        "try:\n"
        "    loss.backward()\n"
        "except RuntimeError:\n"
        "    loss = None\n"
        "print(ref() is None)\n"
    )
    assert printed == ["True"]

"""What the tracer shows is what is (issue 9): explicit checks beside the corpus in test_fidelity.

Every expected figure is read from PyTorch in the test itself.
"""

from __future__ import annotations

import warnings

import torch

import gradtrace
from gradtrace.tracer.graph import PACKED


def traced(source: str):
    ns: dict = {}
    return gradtrace.trace_code("import torch\n" + source, ns, raise_errors=False), ns


def step_at(trace, code: str):
    return next(s for s in trace.steps if s.code == code)


def test_a_save_and_an_in_place_change_in_one_statement_show_the_saved_value_stale():
    trace, ns = traced("x = torch.tensor([1., 2.], requires_grad=True)\ny = x.exp().add_(1)\n")
    step = step_at(trace, "y = x.exp().add_(1)")
    exp = next(n for n in step.nodes.values() if n.name == "ExpBackward0")
    (saved,) = exp.saved
    assert saved.tensor == step.bindings["y"]
    assert (saved.state, saved.saved_version, saved.version) == ("stale", 0, ns["y"]._version)
    assert [p.root for p in step.predictions] == ["y"]


def test_values_packed_by_saved_tensors_hooks_are_never_unpacked():
    trace, ns = traced(
        "calls = []\n"
        "def unpack(t):\n"
        "    calls.append(1)\n"
        "    return t\n"
        "x = torch.tensor([1., 2.], requires_grad=True)\n"
        "with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), unpack):\n"
        "    y = x * x\n"
        "n = len(calls)\n"
    )
    assert ns["n"] == 0  # the program itself never unpacked: neither may the tracer
    step = trace.steps[-1]
    mul = next(n for n in step.nodes.values() if n.name == "MulBackward0")
    assert mul.saved and all(s.value is not None and s.value.text == PACKED and s.tensor is None for s in mul.saved)
    assert not step.predictions


def test_module_buffers_are_named_and_their_updates_are_events():
    trace, ns = traced(
        "class Scaled(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.register_buffer('scale', torch.ones(2))\n"
        "m = Scaled()\n"
        "m.scale.mul_(3)\n"
    )
    step = step_at(trace, "m.scale.mul_(3)")
    tid = step.bindings["m.scale"]
    (mutate,) = step.events_of("mutate")
    assert mutate.tensor == tid and mutate.version_after == ns["m"].scale._version
    assert step.tensors[tid].value.values == ns["m"].scale.tolist()


def test_data_assignment_shows_the_new_values():
    trace, ns = traced("w = torch.tensor([1., 2.], requires_grad=True)\nw.data = w.data * 3\n")
    step = step_at(trace, "w.data = w.data * 3")
    assert step.tensors[step.bindings["w"]].value.values == ns["w"].tolist()


def test_numpy_writes_show_in_the_tensor_that_shares_the_memory():
    trace, ns = traced(
        "import numpy as np\n"
        "a = np.array([1., 2.])\n"
        "b = torch.from_numpy(a)\n"
        "a += 5\n"
    )
    step = step_at(trace, "a += 5")
    assert step.tensors[step.bindings["b"]].value.values == ns["b"].tolist()


def test_detach_and_requires_grad_in_place_are_events():
    trace, ns = traced(
        "x = torch.tensor([1., 2.], requires_grad=True)\n"
        "y = x * 2\n"
        "y.detach_()\n"
        "z = torch.zeros(2)\n"
        "z.requires_grad_()\n"
    )
    (detach,) = step_at(trace, "y.detach_()").events_of("mutate")
    assert detach.op == "detach_" and detach.grad_fn_after is None and detach.grad_fn_before is not None
    (flag,) = step_at(trace, "z.requires_grad_()").events_of("mutate")
    assert flag.op == "requires_grad_" and flag.version_before == flag.version_after == ns["z"]._version


def test_recursive_calls_have_their_own_names():
    trace, _ = traced(
        "def down(n, t):\n"
        "    if n == 0:\n"
        "        return t\n"
        "    u = t * 2\n"
        "    return down(n - 1, u)\n"
        "y = down(2, torch.ones(1))\n"
    )
    names = {n for s in trace.steps for n in s.bindings}
    assert {"down().u", "down()#2.u", "down()#3.t"} <= names
    assert not any(n.startswith("<") for n in names)


def test_trace_of_a_lambda_records_its_step():
    x = torch.tensor([1., 2.], requires_grad=True)
    trace = gradtrace.trace(lambda: (x * 2).sum())
    assert [s.code for s in trace.steps] == ["(x * 2).sum()"]


def test_a_program_that_replaces_the_trace_function_is_told_where_following_stopped(monkeypatch):
    monkeypatch.setenv("GRADTRACE_LINE_EVENTS", "settrace")  # only this path is blinded (test_tracer_paths.py)
    import sys

    settrace = sys.settrace  # taken before the run: the interpreter's own, not the stand-in a run puts in sys

    def program():
        a = torch.ones(1) * 2
        settrace(None)
        b = a * 3
        return b

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradtrace.trace(program)
    assert any("sys.settrace" in str(w.message) for w in caught)


def test_a_write_autograd_does_not_see_is_an_event_with_the_new_values():
    """``.data =`` and a NumPy write leave the version alone: the step says so, and shows PyTorch's values."""
    import numpy as np

    from gradtrace.model import Mutate
    from gradtrace.render.words import event_words

    code = ("a = np.zeros(3)\nb = torch.from_numpy(a)\nnp.add(a, 1, out=a)\n"
            "w = torch.ones(2, requires_grad=True)\nw.data = w.data * 3\nv = w * 2\n")
    ns = {"torch": torch, "np": np}
    trace = gradtrace.trace_code(code, ns)
    plain: dict = {"torch": torch, "np": np}
    exec(code, plain)
    unseen = {s.code: [e for e in s.events if isinstance(e, Mutate) and e.unseen] for s in trace.steps}
    assert [c for c, es in unseen.items() if es] == ["np.add(a, 1, out=a)", "w.data = w.data * 3"]
    for line, name in (("np.add(a, 1, out=a)", "b"), ("w.data = w.data * 3", "w")):
        step = next(s for s in trace.steps if s.code == line)
        (event,) = unseen[line]
        assert event.tensor == step.bindings[name] and event.version_before == event.version_after
        assert event.version_after == plain[name]._version
        assert "same version" in event_words(step, event) and f"({name})" in event_words(step, event)
        assert step.tensors[event.tensor].value.values == plain[name].tolist()
    assert not [e for s in trace.steps if s.code == "v = w * 2" for e in s.events if isinstance(e, Mutate)]

"""In-place calls whose statement's text names no in-place method (issue 9, invariants 2 and 4).

Most statements run with no torch function mode; the mode goes on where a statement's text can
change a value (``a.mul_(c)``). The same call can be made with no such text: ``getattr(a, "mul_")(c)``,
``f = a.mul_`` then ``f(c)``, a partial, a one-line lambda, a module whose ``forward`` is one. On a
view, the node such a call makes is hidden inside ``CopySlices``, and what it saved is learned only
when the mode sees the call. Each way is checked here against PyTorch run plainly: the value the
hidden node saved is shown alive after the call, stale after it is changed, and the failure of
``backward()`` is predicted iff PyTorch fails.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
import torch

import gradtrace
from gradtrace.tracer.core import Tracer
from gradtrace.tracer.driver import HAS_MONITORING
from gradtrace.tracer.statement_text import called_names, calls_in_place, held_calls

PATHS = ["settrace", *(["monitoring"] if HAS_MONITORING else [])]
STALE = "modified by an inplace operation"
HEAD = ("import functools\nimport torch\ntorch.manual_seed(0)\nw = torch.randn(2, 3, requires_grad=True)\n"
        "b = w * 2\na = b.reshape(-1)\nc = torch.randn(6)\n")

#: name -> the statements that multiply the view ``a`` by ``c`` in place (the last one makes the call)
WAYS = {
    "method": "a.mul_(c)\n",
    "getattr": 'getattr(a, "mul_")(c)\n',
    "bound method in a name": "f = a.mul_\nf(c)\n",
    "descriptor in a name": "op = torch.Tensor.mul_\nop(a, c)\n",
    "partial": "p = functools.partial(torch.Tensor.mul_, a)\np(c)\n",
    "lambda": "bump = lambda t, o: t.mul_(o)\nbump(a, c)\n",
    "module with a lambda forward": ("class Bump(torch.nn.Module):\n    pass\n"
                                     "Bump.forward = lambda self, t, o: t.mul_(o)\nm = Bump()\nm(a, c)\n"),
}


def _trace(source: str, path: str) -> tuple[Tracer, Any]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    tracer = Tracer(source, "<unnamed>", 10**6, globals_ns=ns, line_events=path)
    code = compile(source, "<unnamed>", "exec")
    return tracer, tracer.run(lambda: exec(code, ns))


def _fails(source: str) -> bool:
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(source, "<plain>", "exec"), ns)
    try:
        ns["b"].sum().backward()
    except RuntimeError as exc:
        assert STALE in str(exc)
        return True
    return False


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("changed", [True, False], ids=["c changed", "c kept"])
def test_an_unnamed_inplace_call_on_a_view_is_seen(way: str, changed: bool, path: str) -> None:
    source = HEAD + WAYS[way] + ("c.add_(1)\n" if changed else "w2 = w * 1\n")
    assert _fails(source) == changed  # PyTorch's truth: MulBackward0 inside CopySlices saved c
    _tracer, trace = _trace(source, path)
    call, last = trace.steps[-2], trace.steps[-1]
    c_id = last.bindings["c"]

    def shown(step: Any) -> list[tuple[str, str]]:
        return [(s.name, s.state) for n in step.nodes.values() if n.name == "CopySlices" for s in n.saved
                if s.tensor == c_id]

    assert shown(call) == [("MulBackward0.other", "alive")]
    assert shown(last) == [("MulBackward0.other", "stale" if changed else "alive")]
    assert ("b" in {p.root for p in last.predictions}) == changed


def test_a_saved_result_changed_through_getattr_in_its_own_statement_shows_stale() -> None:
    source = "import torch\nx = torch.tensor([0.5, 1.0], requires_grad=True)\ny = getattr(x.exp(), 'add_')(1)\n"
    ns: dict[str, Any] = {}
    exec(compile(source, "<plain>", "exec"), ns)
    with pytest.raises(RuntimeError, match=STALE):
        ns["y"].sum().backward()
    trace = gradtrace.trace_code(source, {})
    (exp,) = [n for n in trace.last.nodes.values() if n.name == "ExpBackward0"]
    (saved,) = exp.saved
    assert (saved.name, saved.state, saved.saved_version, saved.version) == ("result", "stale", 0, 1)
    assert any(p.root == "y" for p in trace.last.predictions)


@pytest.mark.parametrize("holder", ["[{}, b]", "({}, b)", "{{'x': {}, 'b': b}}"])
def test_a_module_input_in_a_container_is_read_as_the_forward_begins(holder: str) -> None:
    # the sigmoid's node is made in the calling statement; the forward (one lambda line: no step of its own)
    # doubles its result in place. Read on the way out, the node would show the new version as the saved one.
    source = ("import torch\nclass M(torch.nn.Module):\n    pass\n"
              "M.forward = lambda self, xs: next(iter(xs.values() if isinstance(xs, dict) else xs)).mul_(2)\n"
              "m = M()\nx = torch.tensor([0.5, 1.0], requires_grad=True)\nb = torch.ones(2)\n"
              f"y = m({holder.format('x.sigmoid()')})\n")
    ns: dict[str, Any] = {}
    exec(compile(source, "<plain>", "exec"), ns)
    with pytest.raises(RuntimeError, match=STALE):
        ns["y"].sum().backward()
    trace = gradtrace.trace_code(source, {})
    (sig,) = [n for n in trace.last.nodes.values() if n.name == "SigmoidBackward0"]
    assert [(s.name, s.state, s.saved_version) for s in sig.saved] == [("result", "stale", 0)]
    assert any(p.root == "y" for p in trace.last.predictions)


def test_called_names_are_the_bare_callees() -> None:
    assert called_names("y = f(c) + g (d) * h.k(e)") == ("f", "g")
    assert called_names("if ok(x) and not (y):") == ("ok",)
    assert called_names("z = model(x).sum()") == ("model",)


def test_looking_at_callees_runs_no_program_code() -> None:
    ran: list[str] = []

    class Loud:
        def __getattribute__(self, name: str) -> Any:
            ran.append(name)
            raise AssertionError("program code ran")

    class Meta(type):
        def __getattr__(cls, name: str) -> Any:
            ran.append(name)
            raise AssertionError("program code ran")

    class Quiet(torch.nn.Module, metaclass=type(torch.nn.Module)):
        @property
        def forward(self) -> Any:  # type: ignore[override]
            ran.append("forward")
            raise AssertionError("program code ran")

    frame = types.SimpleNamespace(f_globals={"loud": Loud(), "meta": Meta("M", (), {}), "quiet": Quiet()},
                                  f_code=compile("0", "<x>", "eval"))
    assert not calls_in_place(frame, ("loud", "meta", "quiet", "absent"))  # type: ignore[arg-type]
    assert ran == []


@pytest.mark.parametrize("path", PATHS)
def test_calls_of_the_programs_functions_run_without_the_mode(path: str) -> None:
    # bare-name calls of what writes nothing in place cost no mode: a function of the program's (its own
    # lines are steps, each asking for what it needs), a module, torch's out-of-place functions
    source = ("import torch\ndef double(t):\n    return t * 2\nlin = torch.nn.Linear(2, 2)\nrelu = torch.relu\n"
              "x = torch.ones(2, requires_grad=True)\ny = double(x)\nz = lin(y)\nr = relu(z)\nprint(len(r))\n")
    tracer, _trace_ = _trace(source, path)
    assert tracer.recorder.mode_statements == 0


SETTRACE_VIEW = HEAD + """import sys
calls = []
def watch(frame, event, arg):
    if {local} is not None or event == "call":
        calls.append((event, frame.f_code.co_name, frame.f_lineno))
    return {local}
old = sys.gettrace()
sys.settrace(watch)
a.mul_(c)
c.add_(1)
sys.settrace(old)
del old
"""


@pytest.mark.parametrize("path", PATHS)
def test_an_inplace_call_on_a_view_is_seen_under_the_programs_trace_function(path: str) -> None:
    # the program's trace function hears only its own calls; the mode, hidden from it, still sees a.mul_(c)
    source = SETTRACE_VIEW.format(local="None")
    assert _fails(source)
    tracer, trace = _trace(source, path)
    plain: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(source, "<unnamed>", "exec"), plain)
    assert tracer.recorder.mode_statements >= 2
    step = next(s for s in trace.steps if s.code == "c.add_(1)")
    c_id = step.bindings["c"]
    assert [(s.name, s.state) for n in step.nodes.values() for s in n.saved if s.tensor == c_id] == \
        [("MulBackward0.other", "stale")]
    assert "b" in {p.root for p in step.predictions}


def test_the_mode_leaves_when_the_programs_trace_function_follows_torch_lines() -> None:
    # a local trace function for every frame would hear torch's Python functions take their dispatching
    # branch under the mode: the mode goes off before such a frame runs, and stays off
    source = SETTRACE_VIEW.format(local="watch").replace("a.mul_(c)\n", "torch.nn.functional.relu(a, inplace=True)\n")
    plain: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(source, "<unnamed>", "exec"), plain)
    ns: dict[str, Any] = {"__name__": "__main__"}
    trace = gradtrace.trace_code(source, ns)
    assert ns["calls"] == plain["calls"]
    assert trace.steps


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("call", ["import operator\noperator.imul(a, c)\n", "from operator import imul\nimul(a, c)\n",
                                  "import operator\noperator.__imul__(a, c)\n"])
def test_an_operator_modules_inplace_call_on_a_view_is_seen(call: str, path: str) -> None:
    source = HEAD + call + "c.add_(1)\n"
    assert _fails(source)
    _tracer, trace = _trace(source, path)
    last = trace.steps[-1]
    assert [(s.name, s.state) for n in last.nodes.values() for s in n.saved if s.tensor == last.bindings["c"]] == \
        [("MulBackward0.other", "stale")]
    assert "b" in {p.root for p in last.predictions}


def test_held_calls_are_items_and_attributes_called() -> None:
    assert held_calls("ops[0](c); ops [ -1 ] (c)") == (("ops", 0), ("ops", -1))
    assert held_calls("y = box.f(c) + model(x).sum()") == (("box", "f"),)
    assert held_calls("z = a.b.c(x) + d[i](x) + (e).f(x)") == ()  # only a name's own item or attribute, called


def test_an_inplace_method_kept_in_a_list_or_an_attribute_is_seen() -> None:
    # ``ops[0](c)`` and ``box.f(c)`` call a view's in-place method with no in-place name in the text: the
    # node inside CopySlices saved c, and PyTorch fails once c changes
    w = torch.ones(2, 3, requires_grad=True)
    b = w * 2

    class Box:
        pass

    box = Box()
    box.f = b[1].mul_  # type: ignore[attr-defined]
    frame = types.SimpleNamespace(f_globals={"ops": [b[0].mul_], "box": box, "ns": types.SimpleNamespace(g=b[0].add_),
                                             "t": (torch.relu,)},
                                  f_code=compile("0", "<x>", "eval"))
    for held in ((("ops", 0),), (("ops", -1),), (("box", "f"),), (("ns", "g"),)):
        assert calls_in_place(frame, (), held), held  # type: ignore[arg-type]
    for held in ((("ops", 1),), (("box", "g"),), (("t", 0),), (("b", "mul_"),), (("absent", "f"),)):
        assert not calls_in_place(frame, (), held), held  # type: ignore[arg-type]


def test_looking_at_held_callees_runs_no_program_code() -> None:
    ran: list[str] = []

    class Loud:
        def __getattribute__(self, name: str) -> Any:
            ran.append(name)
            raise AssertionError("program code ran")

    class OddDict:
        @property
        def __dict__(self) -> Any:  # type: ignore[override]
            ran.append("__dict__")
            raise AssertionError("program code ran")

    class Items(list):
        def __getitem__(self, i: Any) -> Any:
            ran.append("getitem")
            raise AssertionError("program code ran")

    frame = types.SimpleNamespace(f_globals={"loud": Loud(), "odd": OddDict(), "items": Items([1])},
                                  f_code=compile("0", "<x>", "eval"))
    held = (("loud", "f"), ("odd", "f"), ("items", 0))
    assert not calls_in_place(frame, (), held)  # type: ignore[arg-type]
    assert ran == []


@pytest.mark.parametrize("path", PATHS)
def test_method_calls_that_write_nothing_in_place_run_without_the_mode(path: str) -> None:
    source = ("import torch\nlin = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(lin.parameters(), lr=0.1)\n"
              "x = torch.ones(2)\nloss = lin(x).sum()\nloss.backward()\nopt.step()\nprint(loss.item())\n")
    tracer, _trace_ = _trace(source, path)
    assert tracer.recorder.mode_statements == 0

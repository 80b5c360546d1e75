"""What the recorder hears without a torch function mode (issue 9: the mode only where a statement needs it).

Ordinary statements run with no torch function mode: ``backward()`` and ``autograd.grad`` are
heard from their frames, modules from global forward hooks, new nodes from the names at the
statement's end. These tests count the statements run with the mode, and check that what the
mode used to give still arrives, on each line-event path this Python has. Every expected number
comes from PyTorch run plainly here.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import torch

from gradtrace.model import Backward, Mutate
from gradtrace.tracer.core import Tracer
from gradtrace.tracer.driver import HAS_MONITORING
from gradtrace.tracer.statement_text import needs_mode
from gradtrace.tracer.watch import BACKWARD_CODES

PATHS = ["settrace", *(["monitoring"] if HAS_MONITORING else [])]


def _trace(source: str, path: str) -> tuple[Tracer, Any, dict[str, Any]]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    tracer = Tracer(source, "<rec>", 10**6, globals_ns=ns, line_events=path)
    code = compile(source, "<rec>", "exec")
    trace = tracer.run(lambda: exec(code, ns))
    return tracer, trace, ns


def _plain(source: str) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(source, "<rec>", "exec"), ns)
    return ns


MLP = """\
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 3)
y = torch.randn(5, 1)
for i in range(3):
    opt.zero_grad()
    pred = model(x)
    loss = torch.nn.functional.mse_loss(pred, y)
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize("path", PATHS)
def test_a_training_loop_runs_with_no_torch_function_mode(path: str) -> None:
    tracer, trace, ns = _trace(MLP, path)
    plain = _plain(MLP)
    assert tracer.recorder.mode_statements == 0
    assert torch.equal(ns["model"][0].weight, plain["model"][0].weight)
    backwards = [e for s in trace.steps for e in s.events if isinstance(e, Backward)]
    assert len(backwards) == 3 and all(b.call == "backward" and b.flow for b in backwards)
    # module paths come from the forward hooks
    modules = {n.module for n in trace.steps[-1].nodes.values() if n.name == "AddmmBackward0"}
    assert modules == {"model.0", "model.2"}
    # the optimizer's in-place steps still show as mutations of the parameters
    assert any(isinstance(e, Mutate) for s in trace.steps if s.code == "opt.step()" for e in s.events)


@pytest.mark.parametrize("path", PATHS)
def test_same_statement_in_place_runs_with_the_mode_and_is_predicted(path: str) -> None:
    source = "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.exp().add_(1)\ns = y.sum()\n"
    tracer, trace, _ns = _trace(source, path)
    assert tracer.recorder.mode_statements == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        plain = _plain(source)
        plain["s"].backward()
    assert any(p.root == "s" for p in trace.steps[-1].predictions)


@pytest.mark.parametrize("path", PATHS)
def test_a_backward_that_raises_ends_its_watch(path: str) -> None:
    """The frame's end (an exception) ends the watch: the statements after it are steps again."""
    source = ("import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x * 2\n"
              "try:\n    y.backward()\nexcept RuntimeError as e:\n    msg = str(e)\nz = y + 1\n")
    tracer, trace, ns = _trace(source, path)
    plain = _plain(source)
    assert ns["msg"] == plain["msg"]
    assert [s.code for s in trace.steps][-2:] == ["msg = str(e)", "z = y + 1"]
    assert tracer.recorder.in_backward == 0
    assert [e.call for s in trace.steps for e in s.events if isinstance(e, Backward)] == ["backward"]


@pytest.mark.parametrize("path", PATHS)
def test_autograd_grad_and_a_wrapped_backward_are_heard_once(path: str) -> None:
    source = (
        "import torch\ncalls = []\norig = torch.Tensor.backward\n"
        "def wrapped(self, *a, **k):\n    calls.append(1)\n    return orig(self * 2, *a, **k)\n"
        "torch.Tensor.backward = wrapped\n"
        "x = torch.tensor([1., 2.], requires_grad=True)\n"
        "try:\n    (x * x).sum().backward()\nfinally:\n    torch.Tensor.backward = orig\n"
        "g, = torch.autograd.grad((x ** 3).sum(), x)\n"
    )
    _tracer, trace, ns = _trace(source, path)
    plain = _plain(source)
    assert ns["calls"] == plain["calls"] == [1]
    assert torch.equal(ns["x"].grad, plain["x"].grad) and torch.equal(ns["g"], plain["g"])
    calls = [e.call for s in trace.steps for e in s.events if isinstance(e, Backward)]
    assert calls == ["backward", "autograd.grad"]


@pytest.mark.parametrize("path", PATHS)
def test_a_learner_torch_function_mode_sees_only_its_own_calls(path: str) -> None:
    source = (
        "import torch\nfrom torch.overrides import TorchFunctionMode\nseen = []\n"
        "class Log(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        seen.append(getattr(func, '__name__', str(func)))\n"
        "        return func(*args, **(kwargs or {}))\n"
        "x = torch.tensor([1., 2.], requires_grad=True)\n"
        "with Log():\n    y = (x * 3).sum()\n    y.backward()\n"
    )
    _tracer, _trace_, ns = _trace(source, path)
    assert ns["seen"] == _plain(source)["seen"]


@pytest.mark.parametrize("path", PATHS)
def test_under_a_learner_mode_the_recorder_goes_below_it_and_sees_what_its_handler_passes_on(path: str) -> None:
    """The program's mode sees each call first, as without tracing; the recorder, below it, still
    sees the in-place call on a view, so the value its hidden node saved is known and predicted."""
    source = (
        "import torch\nfrom torch.overrides import TorchFunctionMode\nseen = []\n"
        "class Log(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        seen.append(getattr(func, '__name__', str(func)))\n"
        "        return func(*args, **(kwargs or {}))\n"
        "w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)\nc = torch.tensor([5., 6., 7., 8.])\n"
        "a = (w * 2).reshape(-1)\n"
        "with Log():\n    a.mul_(c)\n"
        "c.add_(1)\ns = a.sum()\n"
    )
    tracer, trace, ns = _trace(source, path)
    plain = _plain(source)
    assert ns["seen"] == plain["seen"]
    assert torch.equal(ns["a"], plain["a"])
    assert tracer.recorder.mode_statements >= 1
    assert torch._C._len_torch_function_stack() == 0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        plain["s"].backward()
    assert any(p.root == "s" for p in trace.steps[-1].predictions)


def test_which_statements_need_the_mode() -> None:
    """The text decides: in-place calls, ``out=``, ``inplace=``, augmented and item assignment,
    flags and ``.grad``/``.data`` writes, NumPy, ``detach``, checkpoints and saved-tensor hooks."""
    needs = ["y = x.exp().add_(1)", "torch.relu_(x)", "w.grad.zero_()", "x += 1", "x[0] = 2",
             "y = F.relu(x, inplace=True)", "torch.add(a, b, out=c)", "w.data = w.data - 1",
             "w.grad = None", "w.requires_grad = False", "x.requires_grad_()", "a = t.numpy()",
             "d = y.detach()", "y = checkpoint(f, x)", "y = F.batch_norm(x, rm, rv, training=True)"]
    plain = ["pred = model(x)", "loss.backward()", "opt.step()", "opt.zero_grad()", "out = model(x)",
             "y = x.__add__(1)", "ok = a <= b", "x = torch.ones(2, requires_grad=True)",
             "loss = F.mse_loss(pred, y)", "_private_(x)"]
    assert [c for c in needs if not needs_mode(c)] == []
    assert [c for c in plain if needs_mode(c)] == []


@pytest.mark.parametrize("path", PATHS)
def test_nodes_of_one_statement_are_numbered_in_creation_order_and_the_output_is_the_roots(path: str) -> None:
    """Found from the name at the statement's end, the nodes still get creation-order ids, and the
    tensor the name holds is the output of the node it hangs from (not of the first node made)."""
    source = "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = (x * 2).sin().exp()\n"
    _tracer, trace, ns = _trace(source, path)
    step = trace.steps[-1]
    made = sorted((n for n in step.nodes.values() if not n.is_accumulate), key=lambda n: int(n.id[1:]))
    fn = ns["y"].grad_fn
    plain = [fn.name(), fn.next_functions[0][0].name(), fn.next_functions[0][0].next_functions[0][0].name()]
    assert [n.name for n in made] == plain[::-1]
    y = step.bindings["y"]
    assert [n.output for n in made] == [None, None, y]


def test_the_backward_codes_are_torchs_own() -> None:
    assert set(BACKWARD_CODES) == {torch.Tensor.backward.__code__, torch.autograd.backward.__code__,
                                   torch.autograd.grad.__code__}


@pytest.mark.skipif(not HAS_MONITORING, reason="sys.monitoring needs Python 3.12+")
def test_monitoring_leaves_no_events_on_the_backward_codes() -> None:
    _trace(MLP, "monitoring")
    mon = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    for tool in range(6):
        for code in BACKWARD_CODES:
            assert mon.get_local_events(tool, code) == 0


MODULES = """\
import torch
class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
    def forward(self, x):
        return self.lin(x).tanh()
class Parent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()
        self.out = torch.nn.Linear(3, 1)
    def forward(self, x):
        h = (x * 2 + 1).exp()
        h = self.child(h) * h
        return self.out(h).sum()
torch.manual_seed(0)
model = Parent()
x = torch.randn(4, 3, requires_grad=True)
loss = model(x)
"""


class _WhoMade(torch.overrides.TorchFunctionMode):
    """The test's own record of which module was running when each node was made."""

    def __init__(self, names: dict[torch.nn.Module, str]) -> None:
        super().__init__()
        self.names = names
        self.stack: list[str] = []
        self.made: list[tuple[str, str]] = []
        self.seen: set[Any] = set()

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for o in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(o, torch.Tensor) and o.grad_fn is not None:
                todo = [o.grad_fn]  # the call's nodes: those it reaches that no earlier call made
                while todo:
                    node = todo.pop()
                    if node is None or node in self.seen:
                        continue
                    self.seen.add(node)
                    self.made.append((node.name(), self.stack[-1] if self.stack else ""))
                    todo.extend(n for n, _ in node.next_functions)
        return out


#: modules that hand their input back (Identity, Dropout in eval mode), one called twice on different
#: inputs, an in-place module after one that saved its output, a caller's ops between calls
PASS_THROUGH = """\
import torch
class Parent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Identity(), torch.nn.Sigmoid(),
                                        torch.nn.Dropout(0.5), torch.nn.ReLU(inplace=True))
        self.skip = torch.nn.Identity()
        self.out = torch.nn.Linear(3, 1)
    def forward(self, x):
        h = self.body(x * 3)
        h = self.skip(h) + self.skip(x.exp())
        return self.out(self.skip(h)).sum()
torch.manual_seed(0)
model = Parent().eval()
x = torch.randn(4, 3, requires_grad=True)
loss = model(x)
"""


@pytest.mark.parametrize("source", [MODULES, PASS_THROUGH], ids=["nested", "pass-through"])
@pytest.mark.parametrize("path", PATHS)
def test_a_node_belongs_to_the_module_that_was_running_when_it_was_made(path: str, source: str) -> None:
    """Nodes a module's caller made before the call are the caller's, not the called module's, although a
    walk from the called module's output reaches them (the tiny GPT's attention ops were told as c_proj's)."""
    from torch.nn.modules import module as mod

    ns = _plain(source.split("torch.manual_seed")[0])
    torch.manual_seed(0)
    model = ns["Parent"]()
    if ".eval()" in source:
        model.eval()
    names = {m: ("model." + n if n else "model") for n, m in model.named_modules()}
    who = _WhoMade(names)
    def leave(_m: torch.nn.Module, _a: Any, _o: Any) -> None:
        who.stack.pop()

    handles = [mod.register_module_forward_pre_hook(lambda m, _a: who.stack.append(names[m])),
               mod.register_module_forward_hook(leave)]
    try:
        with who:
            model(torch.randn(4, 3, requires_grad=True))
    finally:
        for h in handles:
            h.remove()
    want = sorted({(n.split("::")[-1], m) for n, m in who.made})
    assert {m for _n, m in want} >= {"model", "model.out"}

    _tracer, trace, _ns = _trace(source, path)
    nodes = trace.steps[-1].nodes.values()
    got = sorted({(n.name, n.module) for n in nodes})
    assert got == want, (got, want)


@pytest.mark.parametrize("path", PATHS)
def test_module_hooks_read_each_new_node_once_per_forward(path: str) -> None:
    """A node read (what the hooks ask the tracer to walk) costs more than the forward of a small layer:
    the hooks ask only for the nodes no read has met. In the MLP, each forward makes one new node at each
    distinct output its modules return (the Sequential's output is its last Linear's); the node behind a
    module's input is the previous module's output, read on the way out of that module."""
    from torch.nn.modules import module as mod

    plain = _plain(MLP.split("for i in")[0])
    outputs: list[Any] = []  # the nodes at module outputs, kept alive so that their ids are theirs
    handle = mod.register_module_forward_hook(lambda _m, _a, o: outputs.append(o.grad_fn))
    try:
        plain["model"](plain["x"])
    finally:
        handle.remove()
    new_per_forward = len({id(fn) for fn in outputs})
    assert 0 < new_per_forward < len(outputs)

    ns: dict[str, Any] = {"__name__": "__main__"}
    tracer = Tracer(MLP, "<rec>", 10**6, globals_ns=ns, line_events=path)
    reads: list[str] = []
    read = tracer.recorder.on_node
    assert read is not None

    def counted(out: torch.Tensor, module: str) -> None:
        reads.append(module)
        read(out, module)

    tracer.recorder.on_node = counted
    code = compile(MLP, "<rec>", "exec")
    trace = tracer.run(lambda: exec(code, ns))
    forwards = sum(1 for s in trace.steps if s.code == "pred = model(x)")
    assert forwards > 1
    assert len(reads) == forwards * new_per_forward
    assert tracer.recorder.node_reads == len(reads)
    # each read under the module that made the node
    assert reads[:new_per_forward] == ["model." + n for n, _m in plain["model"].named_children()]

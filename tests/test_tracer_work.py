"""A step costs what it changed (issue 9, Speed): the tracer's work, counted, grows linearly.

No timings: the tracer counts what it does (frames read, tensors read, nodes added,
nodes searched, summaries made) and these tests compare the counts of a program at
two sizes. Linear work gives about 4x the count for 4x the size; work per step that
grows with the graph (the old full re-walk) gives about 16x.
"""

from __future__ import annotations

from typing import Any

import torch

import gradtrace
from gradtrace.tracer.core import Tracer
from gradtrace.tracer.layers import Layered
from gradtrace.tracer.snapshot import snapshot


def _work(source: str) -> tuple[Any, dict[str, int], dict[str, Any]]:
    ns: dict[str, Any] = {}
    tracer = Tracer(source, "<work>", 10**9, globals_ns=ns)
    code = compile(source, "<work>", "exec")
    trace = tracer.run(lambda: exec(code, ns))
    assert tracer.exception is None
    work = dict(tracer.work)
    work.update({"book " + k: v for k, v in tracer.book.work.items()})
    return trace, work, ns


CHAIN = "import torch\nh = torch.ones(1, requires_grad=True)\nfor _ in range({n}):\n    h = h * 1.0001\n"
SAVING_CHAIN = "import torch\nh = torch.ones(2, requires_grad=True)\nfor _ in range({n}):\n    h = h.sin()\n"
RECURSION = (
    "import torch\n"
    "def f(n, x):\n"
    "    if n == 0:\n"
    "        return x\n"
    "    y = x * 1.0\n"
    "    return f(n - 1, y)\n"
    "out = f({n}, torch.ones(1, requires_grad=True))\n"
)


def _linear(small: dict[str, int], big: dict[str, int], keys: list[str]) -> None:
    for key in keys:
        assert small[key] > 0, key
        ratio = big[key] / small[key]
        assert ratio <= 4.5, f"{key}: {small[key]} -> {big[key]} ({ratio:.1f}x for 4x the size)"


def test_a_chain_walks_each_node_once_in_total():
    (t1, small, _), (t4, big, _) = _work(CHAIN.format(n=100)), _work(CHAIN.format(n=400))
    # the trace still shows the whole chain at its last step: the work is incremental, not the picture
    assert len(t4.steps[-1].nodes) == 401 and len(t1.steps[-1].nodes) == 101
    _linear(small, big, ["tensors", "nodes", "searched", "scanned", "frames", "book nodes", "book summaries"])


def test_recording_a_chain_copies_no_step_whole():
    (_t1, small, _), (t4, big, _) = _work(CHAIN.format(n=100)), _work(CHAIN.format(n=400))
    # each step's tensors and nodes are the step before's plus its changes (built when read):
    # (a few small ones are copied whole); a copy per step would copy about 16x as many entries for 4x the length
    _linear(small, big, ["copied"])
    assert sum(isinstance(s.nodes, Layered) and s.nodes.built for s in t4.steps) < 10
    assert [len(s.nodes) for s in t4.steps[-3:]] == [400, 401, 401]
    assert list(t4.steps[-1].nodes) == sorted(t4.steps[-1].nodes, key=lambda n: int(n[1:]))


def test_a_chain_that_saves_its_inputs_stays_linear():
    (_t1, small, _), (t4, big, _) = _work(SAVING_CHAIN.format(n=100)), _work(SAVING_CHAIN.format(n=400))
    last = t4.steps[-1]
    assert len(last.nodes) == 401
    # every SinBackward0 saved its input; all of them still alive, so all shown
    assert sum(1 for n in last.nodes.values() for s in n.saved if s.tensor is not None) == 400
    _linear(small, big, ["nodes", "searched", "frames", "book nodes"])


def test_recursion_reads_each_frame_a_constant_number_of_times():
    (_t1, small, _), (t4, big, ns4) = _work(RECURSION.format(n=100)), _work(RECURSION.format(n=400))
    assert torch.equal(ns4["out"], torch.ones(1) * 1.0)
    deepest = max(t4.steps, key=lambda s: len(s.bindings))
    assert sum(1 for name in deepest.bindings if name.endswith(".x")) == 401  # every frame's x is shown
    _linear(small, big, ["frames", "tensors", "nodes", "searched", "book nodes"])


def test_an_outer_local_rebound_through_nonlocal_is_shown_at_once():
    source = (
        "import torch\n"
        "def outer():\n"
        "    a = torch.zeros(1)\n"
        "    def inner():\n"
        "        nonlocal a\n"
        "        b = torch.zeros(2)\n"
        "        a = torch.ones(1)\n"
        "        b = a + 1\n"
        "        return b\n"
        "    c = inner()\n"
        "    return c\n"
        "r = outer()\n"
    )
    trace = gradtrace.trace_code(source, {})
    step = next(s for s in trace.steps if s.code == "b = a + 1")
    t_inner, t_outer = step.tensors[step.bindings["inner().a"]], step.tensors[step.bindings["outer().a"]]
    # the closure's cell is one variable in both frames: both names show the new tensor
    assert step.bindings["outer().a"] == step.bindings["inner().a"]
    assert t_inner.value.values == [1.0] and t_outer.value.values == [1.0]


def test_an_outer_local_bound_in_the_statement_that_calls_is_shown_inside_the_call():
    source = (
        "import torch\n"
        "def g(t):\n"
        "    u = t * 2\n"
        "    return u\n"
        "def f():\n"
        "    x = torch.ones(1)\n"
        "    y = g(z := x + 1)\n"
        "    return y\n"
        "r = f()\n"
    )
    trace = gradtrace.trace_code(source, {})
    step = next(s for s in trace.steps if s.code == "u = t * 2")
    assert "f().z" in step.bindings  # bound by the calling statement before the call began
    assert step.bindings["f().z"] == step.bindings["g().t"]


def test_a_tensor_changed_through_an_alias_nobody_names_is_shown_changed():
    source = (
        "import torch\n"
        "x = torch.zeros(3)\n"
        "def poke():\n"
        "    x.data.add_(1)  # .data: its own version counter, x's stays at 0\n"
        "poke()\n"
        "y = 1\n"
    )
    trace = gradtrace.trace_code(source, {})
    step = next(s for s in trace.steps if s.code == "poke()")
    info = step.tensors[step.bindings["x"]]
    assert info.value.values == [1.0, 1.0, 1.0] and info.version == 0


def test_a_grad_set_by_a_hook_and_zeroed_in_place_is_shown():
    source = (
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "w.register_hook(lambda g: g * 3)\n"
        "(w * w).sum().backward()\n"
        "g = w.grad\n"
        "w.grad.zero_()\n"
        "w.grad = None\n"
    )
    trace = gradtrace.trace_code(source, {})
    ns: dict[str, Any] = {}
    exec(source.replace("w.grad.zero_()\nw.grad = None\n", ""), ns)
    after = {s.code: s for s in trace.steps}
    w = after["(w * w).sum().backward()"].bindings["w"]
    assert after["(w * w).sum().backward()"].tensors[w].grad.values == ns["w"].grad.tolist()
    assert after["w.grad.zero_()"].tensors[w].grad.values == [0.0, 0.0]
    assert after["w.grad = None"].tensors[w].grad is None


def test_a_freed_saved_value_is_shown_freed_and_what_it_held_goes():
    source = (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = x * 2\n"
        "z = y.sin().sum()\n"
        "del y\n"
        "z.backward()\n"
    )
    trace = gradtrace.trace_code(source, {})
    before, after = trace.steps[-2], trace.steps[-1]
    sin = next(n for n in before.nodes.values() if n.name == "SinBackward0")
    (saved,) = sin.saved
    assert saved.state == "alive" and saved.tensor in before.tensors  # no name: held by the node only
    assert "y" not in before.bindings
    (saved,) = after.nodes[sin.id].saved
    assert saved.state == "freed"
    assert saved.tensor not in after.tensors  # nothing holds it now: gone from the picture


def test_show_of_a_huge_untraced_graph_summarizes_only_what_it_draws():
    from gradtrace.render.graph import step_graph

    x = torch.ones(3, requires_grad=True)
    total = torch.stack([(x * i).sum() for i in range(2000)]).sum()
    step = snapshot(total)
    assert len(step.nodes) > 4000
    graph = step_graph(step)
    assert graph.source
    made = [v for v in _summaries(step) if "_summary" in v.__dict__]
    assert len(made) <= 200, f"{len(made)} values read for a picture of at most 150 boxes"
    # and a value read is the live one
    out = step.tensors[step.bindings["output"]]
    assert out.value.values == total.item()


def _summaries(step: Any) -> list[Any]:
    out = []
    for t in step.tensors.values():
        out += [t.value] + ([t.grad] if t.grad is not None else [])
    for n in step.nodes.values():
        out += [n.value] if n.value is not None else []
        out += [s.value for s in n.saved if s.value is not None]
    return [v for v in out if hasattr(v, "_real")]


def test_reading_values_leaves_the_learners_storage_resizable():
    source = (
        "import torch\n"
        "x = torch.randn(40)\n"
        "y = x * 2\n"
        "y.resize_(100)\n"
        "n = y.numel()\n"
    )
    ns: dict[str, Any] = {}
    trace = gradtrace.trace_code(source, ns)
    assert trace.error is None and ns["n"] == 100


def test_threads_running_before_the_trace_keep_the_work_linear():
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)  # as a notebook kernel's own threads
    other.start()
    try:
        (_t1, small, _), (_t4, big, _) = _work(CHAIN.format(n=100)), _work(CHAIN.format(n=400))
    finally:
        stop.set()
        other.join()
    _linear(small, big, ["tensors", "nodes", "searched", "frames"])


def test_a_thread_the_program_starts_is_followed_by_reading_every_tensor():
    source = (
        "import threading, torch\n"
        "x = torch.zeros(2, requires_grad=True)\n"
        "go = threading.Event()\n"
        "def work():\n"
        "    go.wait()\n"
        "    x.grad = torch.ones(2)  # no version bump, and no torch function mode in this thread\n"
        "t = threading.Thread(target=work, daemon=True)\n"
        "t.start()\n"
        "go.set()\n"
        "t.join()\n"
        "n = 1\n"
    )
    trace = gradtrace.trace_code(source, {})
    step = next(s for s in trace.steps if s.code == "t.join()")  # the thread has ended: what it did is shown
    assert step.tensors[step.bindings["x"]].grad.values == [1.0, 1.0]


def test_show_reads_a_saved_value_that_has_no_name_at_once():
    h = torch.ones(1, requires_grad=True)
    out = (h * 1.5) * 2.5  # each MulBackward0 saved its scalar as a tensor nobody else holds
    step = snapshot(out)
    saved = sorted(s.value.values for n in step.nodes.values() for s in n.saved)
    assert saved == [1.5, 2.5]


def test_recording_a_training_loop_writes_no_value_as_text() -> None:
    # a value is summarised once per version, as copied bytes; its numbers and text are made only
    # when something shows them (here: nothing, until the test reads them)
    source = (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(8, 3)\n"
        "for i in range(3):\n"
        "    opt.zero_grad()\n"
        "    loss = model(x).pow(2).mean()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    ns: dict[str, Any] = {}
    trace = gradtrace.trace_code(source, ns)
    summaries = [s for step in trace.steps for info in step.tensors.values() for s in (info.value, info.grad)
                 if s is not None]
    assert len(summaries) > 50
    made = [s for s in summaries if "_summary" in vars(s)]
    assert made == []
    last = trace.steps[-1]
    weight = last.tensors[last.bindings["model.0.weight"]]
    assert weight.value.values == ns["model"][0].weight.tolist()  # made now, when read
    assert "_summary" in vars(weight.value)

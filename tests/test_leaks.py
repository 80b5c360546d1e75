"""No leaks: memory stays flat, everything installed is removed, freed tensors stay freed.

A tutor runs in a long-lived kernel: tracing a cell a hundred times must not grow
it, no trace function, torch function mode or module hook may outlive a trace
(also when the code raises), and neither the tracer nor the returned ``Trace``
may keep the learner's tensors (or graphs) alive.
"""

from __future__ import annotations

import gc
import sys
import weakref
from typing import Any

import psutil
import pytest
import torch
from regressions.differential import run_plain

import gradtrace

from programs import CUSTOM_FUNCTION as CUSTOM

PROGRAM = (
    "import torch\n"
    "torch.manual_seed(0)\n"
    "w = torch.randn(64, 32, requires_grad=True)\n"
    "x = torch.randn(8, 64)\n"
    "h = (x @ w).tanh()\n"
    "h.retain_grad()\n"
    "y = h * 2\n"
    "y.add_(1)\n"
    "loss = y.pow(2).mean()\n"
    "loss.backward()\n"
    "for i in range(3):\n"
    "    h = h * 0.5\n"
    "with torch.no_grad():\n"
    "    w -= 0.1 * w.grad\n"
    "del x\n"
)

def _hooks() -> tuple[Any, ...]:
    from torch.nn.modules import module as m

    return (
        sys.gettrace(),
        torch._C._len_torch_function_stack(),
        torch.is_grad_enabled(),
        len(m._global_forward_pre_hooks),
        len(m._global_forward_hooks),
        len(m._global_backward_hooks),
        len(m._global_backward_pre_hooks),
        len(getattr(m, "_global_forward_hooks_always_called", {})),
    )


def _objects() -> int:
    gc.collect()
    return len(gc.get_objects())


def _rss() -> int:
    gc.collect()
    return psutil.Process().memory_info().rss


@pytest.mark.slow
@pytest.mark.parametrize("source", [PROGRAM, CUSTOM], ids=["program", "custom_function"])
def test_tracing_100_times_keeps_memory_flat(source: str) -> None:
    for _ in range(10):  # warm up caches (node classes, linecache, torch's own) and the renderers' imports
        gradtrace.trace_code(source, {}).to_text()
    rss0, objs0 = _rss(), _objects()
    for _ in range(100):
        trace = gradtrace.trace_code(source, {})
        trace.to_text()
    del trace
    rss1, objs1 = _rss(), _objects()
    assert rss1 - rss0 < 40 * 2**20, f"RSS grew by {(rss1 - rss0) / 2**20:.1f} MiB over 100 traces"
    assert objs1 - objs0 < 1000, f"{objs1 - objs0} more live objects after 100 traces"


@pytest.mark.parametrize(
    "source",
    [
        PROGRAM,
        PROGRAM + "raise ValueError('late')\n",
        "import torch\nx = torch.ones(2, requires_grad=True)\nx.add_(1)\n",
        "import torch\nm = torch.nn.Linear(2, 2)\ndef bad(mod, inp):\n    raise RuntimeError('pre-hook')\n"
        "hk = m.register_forward_pre_hook(bad)\ny = m(torch.ones(2))\n",
        "import torch\nm = torch.nn.Linear(2, 2)\ny = m(torch.ones(2))\nraise KeyboardInterrupt\n",
    ],
    ids=["ok", "raises_late", "leaf_in_place", "module_hook_raises", "interrupt"],
)
def test_everything_installed_is_removed(source: str) -> None:
    before = _hooks()
    try:
        gradtrace.trace_code(source, {})
    except BaseException:  # noqa: BLE001 - the code's own failure
        pass
    assert _hooks() == before


def _live_tensor_refs(ns: dict[str, Any]) -> list[weakref.ref[Any]]:
    refs = []
    for v in ns.values():
        if isinstance(v, torch.Tensor):
            refs.append(weakref.ref(v))
        elif isinstance(v, torch.nn.Module):
            refs += [weakref.ref(p) for p in v.parameters()]
    return refs


@pytest.mark.parametrize("raises", [False, True])
def test_the_trace_keeps_no_tensor_alive(raises: bool) -> None:
    source = PROGRAM + "model = torch.nn.Linear(4, 2)\nout = model(torch.ones(4)).sum()\nout.backward()\n"
    if raises:
        source += "out.backward()\n"  # second backward: fails
    ns: dict[str, Any] = {}
    try:
        trace = gradtrace.trace_code(source, ns)
    except RuntimeError:
        trace = gradtrace.last_trace()
    assert trace is not None and (trace.error is not None) == raises
    refs = _live_tensor_refs(ns)
    # tensors only the graph held: saved by nodes, reachable from names
    graph_refs = [weakref.ref(ns["h"]._base)] if ns["h"]._base is not None else []
    assert len(refs) >= 5
    ns.clear()
    gc.collect()
    alive = [r() for r in refs + graph_refs if r() is not None]
    assert not alive, f"{len(alive)} tensors kept alive by the trace: {[tuple(t.shape) for t in alive]}"
    assert len(trace.steps) > 5  # the trace itself is alive and whole
    assert trace.to_text()


def test_freed_tensors_are_freed_while_the_code_runs() -> None:
    """``del`` frees a tensor at once under tracing too: checked from inside the code."""
    source = (
        "import gc, weakref, torch\n"
        "x = torch.ones(1000, requires_grad=True)\n"
        "y = x * 2\n"
        "z = y.exp()\n"
        "y.add_(1)\n"
        "ry, rz = weakref.ref(y), weakref.ref(z)\n"
        "s = z.sum()\n"
        "s.backward()\n"
        "del z, s\n"
        "z_alive = rz() is not None\n"
        "del y\n"
        "y_alive = ry() is not None\n"
        "a = torch.ones(3, requires_grad=True)\n"
        "for i in range(5):\n"
        "    a = a * 2\n"
        "    if i == 0:\n"
        "        ra = weakref.ref(a)\n"
        "b = a.sum()\n"
        "del a\n"
        "first_alive_while_graph_holds = ra() is not None\n"
        "del b\n"
        "first_alive_after = ra() is not None\n"
    )
    plain = run_plain(source)
    ns: dict[str, Any] = {}
    gradtrace.trace_code(source, ns)
    for name in ("z_alive", "y_alive", "first_alive_while_graph_holds", "first_alive_after"):
        assert ns[name] == plain.namespace[name], name
    assert plain.namespace["y_alive"] is False


def test_last_trace_holds_plain_data_only() -> None:
    try:
        gradtrace.trace_code("import torch\nbig = torch.ones(1000, 1000, requires_grad=True)\nbig.mul_(2)\n", {})
    except RuntimeError as e:
        del e
    gc.collect()
    trace = gradtrace.last_trace()
    assert trace is not None and trace.error is not None
    big = [o for o in gc.get_referents(*gc.get_referents(trace)) if isinstance(o, torch.Tensor)]
    assert not big
    import pickle

    assert pickle.loads(pickle.dumps(trace)).to_text() == trace.to_text()

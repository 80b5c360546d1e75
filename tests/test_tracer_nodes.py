"""Reading backward nodes: who a node's output is, what it saved and when, and how much reading it costs.

Every expectation comes from PyTorch run plainly in the test (grad_fns, versions, saved values as
PyTorch unpacks them); the costs are counted (nodes visited), never timed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from gradtrace.model import ALIVE, FREED, STALE, Trace
from gradtrace.tracer.core import Tracer
from gradtrace.tracer.graph import kind_of, read_attrs, saved_fields

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))


def _trace(source: str) -> tuple[Trace, Tracer, dict[str, Any]]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    tracer = Tracer(source, "<nodes>", 10**6, globals_ns=ns)
    code = compile(source, "<nodes>", "exec")
    trace = tracer.run(lambda: exec(code, ns))
    return trace, tracer, ns


def _outputs_are_their_tensors(trace: Trace) -> list[str]:
    """Where a named tensor's grad_fn is shown, its output is that tensor (or another of its outputs)."""
    wrong = []
    for step in trace.steps:
        holders: dict[str, set[str]] = {}
        for tid, info in step.tensors.items():
            if info.grad_fn is not None and info.grad_fn in step.nodes:
                holders.setdefault(info.grad_fn, set()).add(tid)
        named = set(step.bindings.values())
        holders = {nid: tids for nid, tids in holders.items() if tids & named}
        for nid, tids in holders.items():
            if step.nodes[nid].output not in tids:
                wrong.append(f"step {step.index} {step.code!r}: {nid} ({step.nodes[nid].name}) is the grad_fn of "
                             f"{sorted(tids)}, its output is shown as {step.nodes[nid].output}")
    return wrong


#: programs whose steps still show a node's output as a tensor the step does not hold, with why
OUTPUT_KNOWN: dict[str, str] = {}


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.xfail(reason=OUTPUT_KNOWN[p.stem], strict=True)) if p.stem in OUTPUT_KNOWN
     else p for p in CORPUS],
    ids=[p.stem for p in CORPUS],
)
def test_a_shown_grad_fn_has_its_tensor_as_output(path: Path) -> None:
    # whatever order the tensors of a step are read in (a set's order changes from run to run)
    trace, _tracer, _ns = _trace(path.read_text())
    assert _outputs_are_their_tensors(trace) == []


@pytest.mark.slow  # over 10 s on two loaded cores
def test_copy_slices_output_is_the_base_in_every_process() -> None:
    # the base's CopySlices once told its output or not depending on the string hashes of one process
    source = (Path(__file__).parent / "corpus" / "views_copyslices.py").read_text()
    script = (
        "import sys, gradtrace\n"
        "t = gradtrace.trace_code(sys.stdin.read(), {'__name__': '__main__'}, raise_errors=False)\n"
        "print(t.to_json())\n"
    )
    texts = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", script], input=source, capture_output=True, text=True,
                             env=env, timeout=120, check=True)
        texts.add(run.stdout)
    assert len(texts) == 1


def test_an_inplace_call_that_saved_its_target_shows_it_stale_at_once() -> None:
    trace, _tracer, ns = _trace(
        "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\na = x * 1\na.mul_(a)\n")
    a = ns["a"]
    with pytest.raises(RuntimeError) as failed:
        _ = a.grad_fn._saved_other  # PyTorch's own word on the value MulBackward0 saved as other
    said = re.search(r"is at version (\d+); expected version (\d+)", str(failed.value))
    assert said is not None
    now, then = int(said.group(1)), int(said.group(2))
    last = trace.steps[-1]
    node = last.nodes[last.tensors[last.bindings["a"]].grad_fn]
    other = next(s for s in node.saved if s.name == "other")
    assert (other.state, other.saved_version, other.version) == (STALE, then, now)
    assert [p.root for p in last.predictions] == ["a"]
    # the saved self is a copy PyTorch made before the call: alive, and shown with its numbers
    self_value = next(s for s in node.saved if s.name == "self")
    assert self_value.state == ALIVE
    assert self_value.value.values == a.grad_fn._saved_self.tolist()


def test_a_saved_value_written_behind_the_version_counter_shows_its_numbers() -> None:
    trace, _tracer, ns = _trace(
        "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.exp()\ny.data.mul_(3)\n"
        "bn = torch.nn.BatchNorm1d(2)\nout = bn(torch.tensor([[1., 2.], [3., 5.]]))\n")
    last = trace.steps[-1]
    exp = last.nodes[last.tensors[last.bindings["y"]].grad_fn]
    assert [s.value.values for s in exp.saved] == [ns["y"].grad_fn._saved_result.tolist()]
    bn = ns["out"].grad_fn
    node = last.nodes[last.tensors[last.bindings["out"]].grad_fn]
    for s in node.saved:
        if s.state == ALIVE and s.name.startswith("running_"):
            assert s.value.values == getattr(bn, "_saved_" + s.name).tolist(), s.name


def test_a_node_class_is_read_once() -> None:
    x = torch.ones(2, requires_grad=True)
    a, b = x.pow(2), (x + 1).pow(3)
    assert kind_of(a.grad_fn) is kind_of(b.grad_fn)
    assert saved_fields(a.grad_fn) == (("self",), ("exponent",))
    assert read_attrs(a.grad_fn) == (("exponent", "2"),) and read_attrs(b.grad_fn) == (("exponent", "3"),)


CHAIN = ("import torch\nh = torch.ones(2, requires_grad=True)\nfor _ in range({n}):\n    h = h.sin()\n"
         "h.sum().backward()\n")


def test_a_backward_reads_the_nodes_it_freed_once() -> None:
    _t1, small, _ = _trace(CHAIN.format(n=50))
    _t4, big, ns = _trace(CHAIN.format(n=200))
    assert big.book.work["rechecked"] <= 4.5 * small.book.work["rechecked"]
    assert big.book.work["rechecked"] <= 2 * 200 + 10  # the chain's nodes and leaf, not the chain per node
    last = _t4.steps[-1]
    assert sum(s.state == FREED for n in last.nodes.values() for s in n.saved) == 200
    assert not big.book.untracked  # nothing left that a later write could change


def test_a_training_loop_does_not_read_old_graphs_again() -> None:
    loop = ("import torch\ntorch.manual_seed(0)\nw = torch.randn(4, 4, requires_grad=True)\nx = torch.randn(3, 4)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range({n}):\n    opt.zero_grad()\n"
            "    loss = (x @ w.t()).relu().sum()\n    loss.backward()\n    opt.step()\n")
    _t4, big, _ = _trace(loop.format(n=40))
    # each backward visits its own iteration's graph (5 nodes) at most once, whatever ran before
    assert 0 < big.book.work["rechecked"] <= 6 * 40
    assert big.book.work["untracked"] <= 6 * 40
    assert len(big.book.untracked) <= 2  # the freed graphs of the iterations before are no longer filed

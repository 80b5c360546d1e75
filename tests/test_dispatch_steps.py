"""Steps inside a learner's ``__torch_dispatch__`` handler (issue 9, invariants 2 and 3).

A dispatch handler runs below autograd, inside the op: the kernel it calls writes the
tensor's memory, and autograd bumps the version and sets the new ``grad_fn`` only once
the handler has returned. Each step must show the memory as it is, and credit the
write to the handler's statement that ran the kernel. Every expected figure is read
from PyTorch in the test itself.
"""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.model import IN_OP_WRITE, Mutate

HANDLER = (
    "import torch\n"
    "from torch.utils._python_dispatch import TorchDispatchMode\n"
    "class Trace(TorchDispatchMode):\n"
    "    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n"
    "        name = func.__name__\n"
    "        out = func(*args, **(kwargs or {}))\n"
    "        return out\n"
    "x = torch.tensor([1., 2.], requires_grad=True)\n"
    "y = x * 2\n"
    "with Trace():\n"
    "    y.mul_(3)\n"
)


def _mutates(step, tid):
    return [e for e in step.events if isinstance(e, Mutate) and e.tensor == tid]


def test_the_kernel_write_is_credited_to_the_handler_statement_that_ran_it():
    trace = gradtrace.trace_code(HANDLER, {"__name__": "__main__"})
    before = (torch.tensor([1., 2.]) * 2)
    after = before * 3
    steps = [s for s in trace.steps if s.frame == "__torch_dispatch__"]
    assert [s.code for s in steps] == ["name = func.__name__", "out = func(*args, **(kwargs or {}))", "return out"]
    first, kernel, ret = steps
    tid = kernel.bindings["y"]
    # before the kernel: the old values, nothing changed
    assert first.tensors[tid].value.values == before.tolist()
    assert not _mutates(first, tid)
    # the kernel ran: new values, the version autograd bumps only when the op returns
    (event,) = _mutates(kernel, tid)
    assert event.op == IN_OP_WRITE and event.version_before == event.version_after == 0
    assert kernel.tensors[tid].value.values == after.tolist()
    assert kernel.tensors[tid].version == 0
    assert ret.tensors[tid].value.values == after.tolist() and not _mutates(ret, tid)
    # the statement's own step: the version bump and the new node, as PyTorch has them
    w = torch.tensor([1., 2.], requires_grad=True) * 2
    w.mul_(3)
    outer = next(s for s in trace.steps if s.code == "y.mul_(3)")
    (bump,) = _mutates(outer, tid)
    assert (bump.version_before, bump.version_after) == (0, w._version)
    assert outer.nodes[outer.tensors[tid].grad_fn].name == w.grad_fn.name()


def test_a_write_the_handler_makes_itself_shows_at_its_statement():
    source = (
        "import torch\n"
        "from torch.utils._python_dispatch import TorchDispatchMode\n"
        "count = torch.zeros(())\n"
        "class Count(TorchDispatchMode):\n"
        "    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n"
        "        count.add_(1)\n"
        "        return func(*args, **(kwargs or {}))\n"
        "x = torch.tensor([1., 2.], requires_grad=True)\n"
        "with Count():\n"
        "    y = (x * x).sum()\n"
        "    y.backward()\n"
    )
    ns: dict = {"__name__": "__main__"}
    trace = gradtrace.trace_code(source, ns)
    plain: dict = {"__name__": "__main__", "seen": []}  # the count after each of its writes, run plainly
    exec(source.replace("count.add_(1)\n", "count.add_(1); seen.append(count.item())\n"), plain)
    counts = [s.tensors[s.bindings["count"]].value.values for s in trace.steps if "count" in s.bindings]
    # the handler's steps (those of the forward ops: backward runs its calls within its own step)
    adds = [s for s in trace.steps if s.code == "count.add_(1)"]
    assert [s.tensors[s.bindings["count"]].value.values for s in adds] == plain["seen"][:len(adds)]
    # and the backward step shows the count the handler reached while backward ran it (no step of its own)
    last = next(s for s in trace.steps if s.code == "y.backward()")
    assert last.tensors[last.bindings["count"]].value.values == ns["count"].item()
    assert counts[-1] == ns["count"].item()
    assert ns["count"]._version == 0  # written below autograd only: PyTorch never bumped it

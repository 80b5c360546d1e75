"""A run that an interrupt cut short (Ctrl-C in a notebook, a signal handler's exception) leaves nothing behind.

An interrupt can land anywhere, also inside the tracer's own set-up or clean-up. Global module hooks it left on
would make every later trace in that kernel hear each module twice, and show nodes PyTorch does not have.
"""

from __future__ import annotations

import torch
from torch.nn.modules import module as torch_module

import gradtrace
from gradtrace.tracer import Tracer

MODEL = """\
import torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
loss = net(torch.ones(2, 3)).sum()
loss.backward()
"""


def _global_hooks() -> tuple[int, int, int]:
    return (len(torch_module._global_forward_pre_hooks), len(torch_module._global_forward_hooks),
            len(torch_module._global_forward_hooks_always_called))


def test_hooks_a_cut_short_run_left_on_are_taken_off_by_the_next_run():
    before = _global_hooks()
    cut_short = Tracer(MODEL, "<cut short>")
    cut_short.recorder.watch_modules()  # on, as when an interrupt landed before its run could take them off
    assert _global_hooks() == (before[0] + 1, before[1] + 1, before[2] + 1)
    trace = gradtrace.trace_code(MODEL, {})
    assert _global_hooks() == before
    # the next trace is PyTorch's: its nodes are the ones a plain run builds
    ns: dict = {}
    exec(MODEL, ns)
    shown = trace.last
    assert shown is not None
    node = shown.nodes[shown.tensors[shown.bindings["loss"]].grad_fn]
    assert node.name == ns["loss"].grad_fn.name()
    assert torch.equal(ns["net"][0].weight.grad, ns["net"][0].weight.grad)


def test_a_run_takes_its_own_hooks_off_even_without_their_handles():
    before = _global_hooks()
    run = Tracer(MODEL, "<lost handles>")
    run.recorder.watch_modules()
    run.recorder._handles = []  # an interrupt between registering a hook and keeping its handle
    run.recorder.unwatch_modules()
    assert _global_hooks() == before

"""A generator that resumes is not said to bind its names again.

Defect a learner's program showed (``tests/corpus/generator_minibatch_sgd.py``): each time the ``for`` loop
resumed ``batches()``, the step read "batches().X now names t1", "batches().perm now names t5", ... for names
the paused generator had held all along (the same objects: Python's frame kept them).
"""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.model import Bind, Rebind

SOURCE = """\
import torch
X = torch.arange(6.0)
def batches(X, size):
    perm = torch.arange(X.shape[0])
    for i in range(0, X.shape[0], size):
        idx = perm[i:i + size]
        yield X[idx]
for xb in batches(X, 2):
    total = xb.sum()
"""


def test_a_resumed_generator_binds_only_what_it_assigns() -> None:
    ns: dict[str, object] = {}
    exec(compile(SOURCE.split("for xb")[0], "<plain>", "exec"), ns)
    gen = ns["batches"](ns["X"], 2)  # type: ignore[operator]
    first = next(gen)
    held = dict(gen.gi_frame.f_locals)
    second = next(gen)
    assert isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor)
    assert gen.gi_frame.f_locals["perm"] is held["perm"] and gen.gi_frame.f_locals["X"] is held["X"]
    trace = gradtrace.trace_code(SOURCE, {})
    resumed = [s for s in trace.steps if s.frame != "<module>" and s.code.strip().startswith("for i in")]
    assert len(resumed) >= 3, [s.code for s in trace.steps]
    for step in resumed[1:]:  # the first one starts the loop; later ones resume a paused generator
        said = [e.name for e in step.events if isinstance(e, Bind | Rebind)]
        assert not any(n.endswith((".X", ".perm", ".idx")) for n in said), said


SENT = """\
import torch
def running():
    total = torch.zeros(1)
    while True:
        x = yield total
        total = total + x
gen = running()
next(gen)
out = gen.send(torch.ones(1))
out = gen.send(torch.ones(1))
"""


def test_a_value_sent_into_a_resumed_generator_is_still_said_to_be_bound() -> None:
    # ``x = yield total`` binds x when the generator resumes: that one binding is told, total is not told again
    ns: dict[str, object] = {}
    exec(compile(SENT, "<plain>", "exec"), ns)
    assert isinstance(ns["out"], torch.Tensor) and float(ns["out"]) == 2.0
    trace = gradtrace.trace_code(SENT, {})
    at = [s for s in trace.steps if s.frame != "<module>" and s.code.strip() == "total = total + x"]
    assert len(at) == 2
    for step in at:
        said = [e.name for e in step.events if isinstance(e, Bind | Rebind)]
        assert said.count("running().x") <= 1 and "running().total" in said, said

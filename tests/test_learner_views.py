"""What a learner reads in the text twin and in ``explain()``, checked against PyTorch run plainly.

Each test is a defect a learner's program showed: the words or figures a view gave that were
not what PyTorch did. Every expected figure comes from PyTorch in the test.
"""

from __future__ import annotations

import json

import pytest
import torch

import gradtrace
from gradtrace.render.text import reverse_pass, step_text

BROADCAST = """\
import torch
x = torch.tensor([-1., 0., 1.])
c = torch.tensor(0.5, requires_grad=True)
d = torch.tensor(0.3, requires_grad=True)
y = (c + d * x).exp()
loss = y.sum()
loss.backward()
"""


def _plain(source: str) -> dict[str, object]:
    ns: dict[str, object] = {}
    exec(compile(source, "<plain>", "exec"), ns)
    return ns


def _last_number(line: str) -> float:
    return float(line.rsplit("= ", 1)[1].split()[0])


def test_a_broadcast_input_is_said_to_get_the_sum_of_its_gradient() -> None:
    # ``c + d * x`` with scalar c, d and a vector x: each of c and d gets the vector's gradient summed to
    # shape (). The reverse pass showed the sum with no formula, explain() as "[1.22, 1.65, 2.23] = 5.09"
    plain = _plain(BROADCAST)
    trace = gradtrace.trace_code(BROADCAST, {})
    step = trace.steps[-1]
    acc = {step.nodes[n].variable: n for n in step.nodes if step.nodes[n].variable}
    for name in ("c", "d"):
        leaf = plain[name]
        assert isinstance(leaf, torch.Tensor) and leaf.grad is not None
        want = torch.tensor(leaf.grad.item(), dtype=torch.float32)
        node = acc[step.bindings[name]]
        sent = [line for line in reverse_pass(step) if line.strip().startswith(f"sends to {node}:")]
        assert len(sent) == 1 and "summed to shape ()" in sent[0], sent
        assert torch.equal(torch.tensor(_last_number(sent[0]), dtype=torch.float32), want), sent
    ns: dict[str, object] = {}
    exec(compile(BROADCAST.replace("loss.backward()\n", ""), "<explained>", "exec"), ns)
    text = gradtrace.explain(ns["loss"], names=ns).to_text()
    to_leaf = [line for line in text.splitlines() if line.strip().startswith("→") and ("(c)" in line or "(d)" in line)]
    assert len(to_leaf) == 2 and all("summed to shape ()" in line for line in to_leaf), to_leaf


BATCH_NORM = """\
import torch
torch.manual_seed(0)
bn = torch.nn.BatchNorm1d(2)
x = torch.randn(4, 2)
out = bn(x)
"""


def test_running_statistics_updated_by_batch_norm_are_not_blamed_on_the_learner() -> None:
    # train-mode BatchNorm updates running_mean/var inside its kernel, with no version bump: the step said
    # "written behind autograd's back (.data =, set_, NumPy or another alias)", none of which the program did
    plain = _plain(BATCH_NORM)
    bn = plain["bn"]
    assert isinstance(bn, torch.nn.BatchNorm1d) and bn.running_mean is not None
    assert not torch.equal(bn.running_mean, torch.zeros(2))  # PyTorch did update them, version unchanged
    trace = gradtrace.trace_code(BATCH_NORM, {})
    step = trace.steps[-1]
    said = [line for line in step_text(step).splitlines() if "bn.running_mean" in line and "new values" in line]
    assert len(said) == 1 and "batch norm" in said[0], said
    assert "behind autograd's back" not in said[0]


ROWS = """\
import torch
W = torch.ones(3, 2, requires_grad=True)
with torch.no_grad():
    for row in W:
        row.div_(2)
"""


def test_a_view_pytorch_refuses_to_describe_is_said_to_be_forbidden() -> None:
    # ``for row in W: row.div_(2)`` under no_grad: the rows not yet changed are views made under no_grad
    # whose base changed in place, and PyTorch raises when asked their grad_fn or is_leaf. The trace showed
    # them as "nonleaf, grad_fn None", a contradiction a learner cannot resolve; it now says PyTorch forbids them
    plain = _plain(ROWS)
    W = plain["W"]
    assert isinstance(W, torch.Tensor)
    with torch.no_grad():
        views = list(torch.ones(3, 2, requires_grad=True))
        views[0].div_(2)
        with pytest.raises(RuntimeError, match="view was created in no_grad mode"):
            _ = views[1].grad_fn  # PyTorch refuses to tell
    trace = gradtrace.trace_code(ROWS, {})
    said = 0
    for step in trace.steps:
        for tid, info in step.tensors.items():
            assert not (info.kind == "nonleaf" and info.grad_fn is None), (step.index, step.code, tid)
            if info.forbidden:
                said += 1
                assert info.kind == "forbidden" and info.grad_fn is None and info.requires_grad
                line = next(ln for ln in step_text(step).splitlines() if f" {tid} " in f" {ln} " and "->" not in ln)
                assert "forbidden" in line and "PyTorch refuses to tell" in line, line
    assert said > 0
    back = gradtrace.Trace.from_json(trace.to_json())
    assert [s.tensors for s in back.steps] == [s.tensors for s in trace.steps]
    rows = json.loads(trace.to_json())["tensors"]
    assert any(r.get("forbidden") is True and r["kind"] == "forbidden" for r in rows)
    assert all("forbidden" not in r for r in rows if r["kind"] != "forbidden")


def test_forbidden_is_read_from_pytorch_at_every_step() -> None:
    # the flag is PyTorch's own answer: set exactly while reading grad_fn raises, for each name at each step
    source = """\
import torch
W = torch.ones(3, 2, requires_grad=True)
with torch.no_grad():
    a, b, c = W
    a.mul_(2)
d = W * 3
"""
    trace = gradtrace.trace_code(source, {})
    ns: dict[str, object] = {}
    exec(compile(source, "<plain>", "exec"), ns)
    last = trace.steps[-1]
    for name in ("a", "b", "c", "d", "W"):
        t = ns[name]
        assert isinstance(t, torch.Tensor)
        try:
            _ = t.grad_fn
            raises = False
        except RuntimeError:
            raises = True
        assert last.tensors[last.bindings[name]].forbidden is raises, name
    assert last.tensors[last.bindings["b"]].forbidden and not last.tensors[last.bindings["d"]].forbidden


@pytest.mark.parametrize("source, name, said", [
    ("import torch\nw = torch.tensor([1., 2.], requires_grad=True)\n(w * w).sum().backward()\n"
     "w.data = w.data - 0.1 * w.grad\n", "w", "writes through .data"),
    ("import torch\nw = torch.tensor([1., 2.], requires_grad=True)\n(w * w).sum().backward()\n"
     "w.data.sub_(0.1 * w.grad)\n", "w", "writes through .data"),
    ("import numpy as np\nimport torch\na = np.ones(3, dtype=np.float32)\nb = torch.from_numpy(a)\n"
     "np.add(a, 1, out=a)\n", "b", "NumPy"),
])
def test_a_write_the_version_counter_missed_says_how_the_statement_made_it(source: str, name: str,
                                                                           said: str) -> None:
    # the classic `w.data = w.data - lr * w.grad` step: the event listed every possible cause
    # (".data =, set_, NumPy, another alias, a dispatch mode's handler, or an op's own kernel")
    ns = _plain(source)
    t = ns[name]
    assert isinstance(t, torch.Tensor)
    trace = gradtrace.trace_code(source, {})
    step = trace.steps[-1]
    before = trace.steps[-2].tensors[step.bindings[name]]
    assert before.version == t._version  # PyTorch did not count the write
    lines = [ln for ln in step_text(step).splitlines() if "has new values but the same version" in ln]
    assert len(lines) == 1 and f"({name})" in lines[0] and said in lines[0], lines
    assert "a dispatch mode's handler" not in lines[0]


def test_a_picture_of_live_tensors_says_forbidden_too() -> None:
    # ``gradtrace.show`` reads live tensors through the snapshot, not the tracer: the same flag, from PyTorch
    from gradtrace.tracer.snapshot import snapshot

    W = torch.ones(3, 2, requires_grad=True)
    with torch.no_grad():
        rows = list(W)
        rows[0].div_(2)
    y = W * 2
    step = snapshot([rows[1], y], params={"W": W})
    for t, tid in ((rows[1], "t1"), (y, "t2"), (W, "t3")):
        try:
            _ = t.grad_fn
            raises = False
        except RuntimeError:
            raises = True
        assert step.tensors[tid].forbidden is raises and (step.tensors[tid].kind == "forbidden") is raises

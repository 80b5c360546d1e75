"""A node of several outputs gets one gradient per output; they do not add up.

``for v in x:`` unbinds ``x`` once: UnbindBackward0 has one output per ``v``, and the reverse pass
hands it one gradient for each. The reverse-pass text and ``explain()`` said "4 + 8 + 2 = 2 (paths
meet and add up)". Every number checked comes from PyTorch in the test (a pre-hook on the node).
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest
import torch

import gradtrace
from gradtrace.render.text import reverse_pass

SOURCE = (
    "import torch\n"
    "x = torch.tensor([1.0, 4.0, 2.0], requires_grad=True)\n"
    "total = 0\n"
    "for v in x:\n"
    "    total = total + v ** 2\n"
    "total.backward()\n"
)


def _per_output() -> list[float]:
    """What PyTorch hands UnbindBackward0 for each of its outputs."""
    x = torch.tensor([1.0, 4.0, 2.0], requires_grad=True)
    parts = x.unbind(0)
    seen: list[list[float]] = []
    parts[0].grad_fn.register_prehook(lambda grads: seen.append([float(g) for g in grads]))
    total = 0
    for v in parts:
        total = total + v ** 2
    total.backward()
    (got,) = seen
    return got


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def test_the_reverse_pass_says_one_gradient_per_output() -> None:
    want = _per_output()
    trace = gradtrace.trace_code(SOURCE, {})
    step = next(s for s in trace.steps if s.events_of("backward"))
    lines = reverse_pass(step)
    (line,) = [ln for ln in lines if "UnbindBackward0" in ln]
    assert "add up" not in line, line
    for i, g in enumerate(want):
        assert f"output {i}: {_num(g)}" in line, line


def test_explain_says_one_gradient_per_output() -> None:
    want = _per_output()
    ns: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(SOURCE.replace("total.backward()\n", ""), ns)
    text = str(gradtrace.explain(ns["total"]))
    block = text[text.index("UnbindBackward0"):]
    block = block[:block.index("AccumulateGrad")]
    assert "add up" not in block and "paths meet" not in block, block
    for i, g in enumerate(want):
        assert f"output {i}: {_num(g)}" in block, block
    assert ns["x"].grad.tolist() == want  # (the pass itself: x.grad is the per-output gradients, stacked)


HOOKED = (
    "import torch\n"
    "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "h = w * 3\n"
    "a, b = h.unbind(0)\n"
    "loss = a * b + a\n"
    "loss.backward()\n"
)


def test_an_output_two_paths_reach_shows_its_sum() -> None:
    # output 0 (a) gets a gradient from both terms of a * b + a; output 1 (b) from one
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    a, b = (w * 3).unbind(0)
    (from_product,) = torch.autograd.grad(a * b, a, retain_graph=True)
    (from_sum,) = torch.autograd.grad(a + 0 * b, a, retain_graph=True)
    seen: list[list[float]] = []
    a.grad_fn.register_prehook(lambda grads: seen.append([float(g) for g in grads]))
    (a * b + a).backward()
    ((first, second),) = seen
    trace = gradtrace.trace_code(HOOKED, {})
    step = next(s for s in trace.steps if s.events_of("backward"))
    (line,) = [ln for ln in reverse_pass(step) if "UnbindBackward0: gets" in ln]
    parts = sorted([_num(float(from_product)), _num(float(from_sum))])
    said = line.split("output 0: ")[1].split(";")[0]
    assert said.endswith(f" = {_num(first)}") and sorted(said.split(" = ")[0].split(" + ")) == parts, line
    assert line.endswith(f"output 1: {_num(second)}"), line


def test_gradients_sent_into_a_node_of_several_outputs_name_the_output() -> None:
    # a * b + a with a, b, c = x.unbind(0): into n1 go gradients for a (output 0) and b (output 1);
    # each line said "→ n1 (a)", b's too
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a, b, _c = x.unbind(0)
    nr = {"a": a.output_nr, "b": b.output_nr}
    (to_a, to_b) = torch.autograd.grad(a * b, (a, b))
    ns: dict = {}
    exec("import torch\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\na, b, c = x.unbind(0)\n"
         "y = a * b + a\n", ns)
    text = str(gradtrace.explain(ns["y"]))
    mul = text[text.index("MulBackward0"):]
    mul = mul[:mul.index("UnbindBackward0")]
    assert f"(output {nr['a']}): 1 · {_num(float(b))} = {_num(float(to_a))}" in mul, mul
    assert f"(output {nr['b']}): 1 · {_num(float(a))} = {_num(float(to_b))}" in mul, mul
    title = [ln for ln in text.splitlines() if "UnbindBackward0 (" in ln]
    assert title and all(f"['{n}']" in title[0] for n in "abc"), title  # all its outputs' names (here ns['a'], ...)


RETAINED = (
    "import torch\n"
    "h = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
    "a, b = h.unbind(0)\n"
    "a.retain_grad()\n"
    "b.retain_grad()\n"
    "loss = (a * 2 + b * 3).sum()\n"
    "loss.backward()\n"
)


def test_each_retained_output_is_sent_its_own_gradient_in_the_walk() -> None:
    # the stepper's reverse-pass walk drew [2, 2] on the arrow from b to UnbindBackward0: the gradient of
    # output 0 (a's) on every output's arrow
    h = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = h.unbind(0)
    seen: list[list[list[float]]] = []
    assert a.grad_fn is not None
    a.grad_fn.register_prehook(lambda grads: seen.append([g.tolist() for g in grads]))
    (a * 2 + b * 3).sum().backward()
    (want,) = seen
    from gradtrace.render.backward import flow

    trace = gradtrace.trace_code(RETAINED, {})
    step = next(s for s in trace.steps if s.events_of("backward"))
    by_name = {n: tid for n, tid in step.bindings.items() if n in ("a", "b")}
    assert {step.tensors[by_name[n]].output_nr for n in ("a", "b")} == {0, 1}
    unbind = next(sub for sub in flow(step) if step.nodes[sub["node"][3:]].name == "UnbindBackward0")
    for n in ("a", "b"):
        tid = by_name[n]  # (the walk names boxes and arrows by their DOM ids: gt-t3, gt-e-grad_fn-t3-n1)
        sent = unbind["edges"][f"gt-e-grad_fn-{tid}-{unbind['node'][3:]}"]
        assert sent == str([int(v) for v in want[step.tensors[tid].output_nr]]), (n, sent, want)
        assert unbind["grads"][f"gt-{tid}"] == sent


SPLITS = {
    # statement making the outputs, the outputs used (others get no gradient: zeros), the words of the rule
    "unbind_dim1": ("a, b, c = h.unbind(1)", "a * 2 + c * 5", "stacked along dim 1"),
    "split_uneven": ("a, b = h.split(2, dim=1)", "a.sum(1) * 3 + b.squeeze(1) * 7", "joined along dim 1"),
    "chunk_rows": ("a, b = h.chunk(2)", "(a * b).sum(0)", "joined along dim 0"),
    "split_sizes": ("a, b = h.split([1, 2], dim=1)", "b.sum(1) * 4", "joined along dim 1"),
    "unbind_one_used": ("a, b = h.unbind(0)", "b * 10", "stacked along dim 0"),
}


@pytest.mark.parametrize("case", sorted(SPLITS))
def test_a_node_of_several_outputs_puts_their_gradients_back_in_place(case: str) -> None:
    # the rule said "no formula recorded for UnbindBackward0"; the figure it gives is checked against h.grad
    make, use, words = SPLITS[case]
    source = (f"import torch\nh = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)\n{make}\n"
              f"loss = ({use}).sum()\n")
    ns: dict = {}
    exec(source + "loss.backward()\n", ns)
    want = ns["h"].grad.tolist()
    ns = {}
    exec(source, ns)
    text = str(gradtrace.explain(ns["loss"]))
    (line,) = [ln for ln in text.splitlines() if "→" in ln and "outputs' gradients" in ln]
    assert words in line and "no formula" not in text, text
    assert line.endswith("= " + str([[_num(v) for v in row] for row in want]).replace("'", "")), (line, want)

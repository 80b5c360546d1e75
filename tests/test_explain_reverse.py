"""The reverse pass of a traced backward(), in numbers: every figure is PyTorch's."""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.explain._numbers import fmt_values
from gradtrace.explain.reverse import reverse_lines

from programs import BLOG_FIXED, BLOG_INDEX, BLOG_VECTOR, FORUM_ORIGINAL, TEMP_VARIABLES, WHATIF1, WHATIF2, run_plain

SEEDS = [FORUM_ORIGINAL, WHATIF1, WHATIF2, TEMP_VARIABLES, BLOG_VECTOR, BLOG_INDEX, BLOG_FIXED]


def backward_step(source: str):
    trace = gradtrace.trace_code(source, {})
    index, event = trace.events("backward")[0]
    return trace.steps[index], event


@pytest.mark.parametrize("source", SEEDS)
def test_each_leaf_line_states_torchs_grad(source):
    plain, _ = run_plain(source)
    step, event = backward_step(source)
    lines = reverse_lines(step)
    assert lines[0].startswith("reverse pass from")
    for change in event.grads:
        info = step.tensors[change.tensor]
        if not info.is_leaf:
            continue
        names = step.names_of(change.tensor)
        who = f"{names[0]} ({change.tensor})" if names else change.tensor
        if names and isinstance(plain.get(names[0]), torch.Tensor):
            expected = plain[names[0]].grad
            dtype = str(expected.dtype).replace("torch.", "")
            assert f"{who}.grad = {fmt_values(expected.tolist(), dtype)}" in "\n".join(lines)


def test_forum_fan_in_sum_is_the_sum_of_both_paths():
    step, event = backward_step(FORUM_ORIGINAL)
    text = "\n".join(reverse_lines(step))
    x = torch.tensor(42.0)
    parts = [fmt_values((3 * x**2).item()), fmt_values((2 * x).item())]
    total = fmt_values((3 * x**2 + 2 * x).item())
    assert f"gets {parts[0]} + {parts[1]} = {total}" in text
    assert f"1 · (2 · 42) = {parts[1]}" in text


def test_retained_nonleaf_grad_is_shown_where_it_arrives():
    plain, _ = run_plain(WHATIF1)
    step, _ = backward_step(WHATIF1)
    text = "\n".join(reverse_lines(step))
    assert f"x ({step.bindings['x']}).grad = {fmt_values(plain['x'].grad.item())}   (kept by retain_grad())" in text


def test_temporary_root_is_named_by_its_node():
    step, event = backward_step(BLOG_INDEX)
    assert event.root is None
    root = step.nodes[event.root_node]
    expected = f"reverse pass from a tensor no name holds (its grad_fn is {root.id} ({root.name}))"
    assert reverse_lines(step)[0].startswith(expected)


def test_step_without_backward_has_no_reverse_pass():
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {})
    assert all(reverse_lines(s) == [] for s in trace.steps if not s.events_of("backward"))


HOOKED = """import torch
x = torch.tensor([7., 13.], requires_grad=True)
y = x * 3
h = {on}.register_hook(lambda g: g * 10)
f = (y * x).sum()
f.backward()
"""


@pytest.mark.parametrize("on", ["x", "y"])
def test_a_hook_that_changes_a_gradient_is_said(on):
    source = HOOKED.format(on=on)
    plain, _ = run_plain(source)
    step, _event = backward_step(source)
    text = "\n".join(reverse_lines(step))
    assert "hook" in text
    assert f"= {fmt_values(plain['x'].grad.tolist())}" in text
    # what was sent before the hook changed it, as PyTorch computes it without the hook
    unhooked, _ = run_plain(source.replace("h = ", "# "))
    if on == "x":
        assert fmt_values(unhooked["x"].grad.tolist()) in text
    else:
        assert fmt_values(unhooked["x"].detach().tolist()) in text


def test_float64_behind_a_temporary_root_is_written_in_float64():
    source = ("import torch\ntorch.manual_seed(0)\nx = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)\n"
              "a = x @ x.t()\na = torch.exp(a)\na.sum().backward()\n")
    plain, _ = run_plain(source)
    step, _event = backward_step(source)
    text = "\n".join(reverse_lines(step))
    assert f"x (t1).grad = {fmt_values(plain['x'].grad.tolist(), 'float64')}" in text

"""Renderers on real traces of real programs (the tracer runs real torch)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import torch

from gradtrace.render.dot import graph_dot, step_dot
from gradtrace.render.svg import dot_to_svg
from gradtrace.render.text import trace_text

from real_traces import PROGRAMS, traced
from render_cases import check_golden

SVG = "{http://www.w3.org/2000/svg}"


def torch_grad(name: str, var: str) -> list[float] | float:
    """Run the program with plain exec and read ``var.grad`` from torch itself."""
    ns: dict[str, object] = {}
    try:
        exec(compile(PROGRAMS[name], f"{name}.py", "exec"), ns)
    except RuntimeError:
        pass
    grad = ns[var].grad  # type: ignore[attr-defined]
    return grad.tolist()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_trace_text_golden(request, name):
    check_golden(request, f"{name}.txt", trace_text(traced(name)))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_last_step_dot_golden(request, name):
    trace = traced(name)
    check_golden(request, f"{name}_last.dot", step_dot(trace[-1]))


@pytest.mark.parametrize("name,var", [("forum", "x"), ("rebind", "x"), ("vector", "x")])
def test_rendered_grad_is_torch_grad(name, var):
    expected = torch_grad(name, var)
    trace = traced(name)
    assert trace.grad(var) == expected
    last = trace.last
    assert last is not None
    info = last.tensors[last.bindings[var]]
    assert info.grad is not None
    shown = [t.text or "" for t in ET.fromstring(dot_to_svg(step_dot(last))).iter(f"{SVG}text")]
    assert f"grad {info.grad.text}" in shown
    assert f"{var}.grad = {info.grad.text}" in trace_text(trace)


def test_forum_grad_is_5376_not_53376():
    assert torch_grad("forum", "x") == 5376.0
    assert "x.grad = 5376." in trace_text(traced("forum"))


def test_rebind_keeps_old_object_in_picture():
    trace = traced("rebind")
    step = next(s for s in trace if s.events_of("rebind"))
    svg = ET.fromstring(dot_to_svg(step_dot(step)))
    ids = {g.get("id") for g in svg.iter(f"{SVG}g")}
    old = step.events_of("rebind")[0].old  # type: ignore[union-attr]
    assert f"gt-{old}" in ids  # the old tensor is still drawn (held by the graph)
    assert "gt-e-saved-n1-" + old in ids


def test_mutation_marks_object_and_stale_saved_value():
    trace = traced("mutate")
    step = next(s for s in trace if s.events_of("mutate"))
    mutate = step.events_of("mutate")[0]
    svg = ET.fromstring(dot_to_svg(step_dot(step)))
    classes = {g.get("id"): g.get("class", "") for g in svg.iter(f"{SVG}g")}
    assert "gt-m-mutated" in classes[f"gt-{mutate.tensor}"]  # type: ignore[union-attr]
    for node, _ in mutate.stale:  # type: ignore[union-attr]
        assert "gt-m-stale" in classes[f"gt-{node}"]
    assert trace.error is not None and trace.error.type == "RuntimeError"


def test_graph_dot_for_make_dot():
    from gradtrace import snapshot

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).sum()
    step = snapshot(y, params={"x": x, "w": w})
    svg = ET.fromstring(dot_to_svg(graph_dot(step)))
    shown = [t.text or "" for t in svg.iter(f"{SVG}text")]
    assert any(s.startswith("x · t") for s in shown) and any(s.startswith("w · t") for s in shown)
    assert any("SumBackward0" in s for s in shown) and any("MulBackward0" in s for s in shown)

"""The seeds' examples through the tracer: PyTorch's numbers, the forum's typo corrected."""

from __future__ import annotations

import pytest
import torch

import gradtrace

from programs import BLOG_TYPO, FORUM_ORIGINAL, SEEDS, WHATIF1, WHATIF2, run_plain


def traced(source: str):
    ns: dict = {}
    trace = gradtrace.trace_code(source, ns, raise_errors=False)
    return trace, ns


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_traced_grads_equal_plain_grads(name):
    source = SEEDS[name]
    plain, plain_exc = run_plain(source)
    trace, ns = traced(source)
    assert (trace.error is None) == (plain_exc is None)
    if plain_exc is not None:
        assert trace.error is not None
        assert trace.error.type == type(plain_exc).__name__
        assert trace.error.message == str(plain_exc)
    x = plain.get("x")
    if isinstance(x, torch.Tensor) and (x.is_leaf or x.retains_grad) and x.grad is not None:
        assert torch.equal(ns["x"].grad, plain["x"].grad)
        assert trace.grad("x") == plain["x"].grad.tolist()


def test_forum_original_is_5376_not_53376():
    trace, ns = traced(FORUM_ORIGINAL)
    expected = run_plain(FORUM_ORIGINAL)[0]["x"].grad.item()
    assert trace.grad("x") == expected
    assert expected != 53376  # the forum post's figure is a typo
    # 2·42 + 3·42² from PyTorch's own arithmetic
    x = torch.tensor(42.0)
    assert expected == (2 * x + 3 * x**2).item()


@pytest.mark.parametrize("source", [WHATIF1, WHATIF2])
def test_whatifs_rebind_x_and_mutate_nothing(source):
    trace, _ = traced(source)
    rebinds = [e for _, e in trace.events("rebind")]
    assert [e.name for e in rebinds] == ["x"]
    assert trace.events("mutate") == []
    old = rebinds[0].old
    # the old tensor is unchanged and still held by the graph
    assert rebinds[0].held_by_nodes
    step = trace.steps[-1]
    assert old in step.tensors


def test_whatif1_leaf_stays_in_graph_with_its_own_grad():
    trace, ns = traced(WHATIF1)
    plain = run_plain(WHATIF1)[0]
    final = trace.steps[-1]
    leaf = final.tensors["t1"]
    assert leaf.is_leaf and leaf.requires_grad
    # the original leaf is not named any more, but backward still filled its grad
    assert final.names_of("t1") == []
    x0 = torch.tensor(42.0)
    assert leaf.grad.values == (2 * x0 + 6 * x0**5).item()
    assert trace.grad("x") == plain["x"].grad.item()


def test_blog_typo_is_a_clear_error_recorded_on_its_line():
    trace, _ = traced(BLOG_TYPO)
    _, exc = run_plain(BLOG_TYPO)
    assert isinstance(exc, TypeError)
    assert trace.error.type == "TypeError"
    assert trace.error.lineno == 3
    failing = trace.steps[-1]
    assert failing.lineno == 3
    assert [e.kind for e in failing.events][-1] == "error"


def test_error_is_reraised_by_default_and_trace_kept():
    with pytest.raises(TypeError) as info:
        gradtrace.trace_code(BLOG_TYPO, {})
    _, exc = run_plain(BLOG_TYPO)
    assert str(info.value) == str(exc)
    last = gradtrace.last_trace()
    assert last is not None and last.error.type == "TypeError"

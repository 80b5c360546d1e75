"""explain_error's why names the node that really saved the stale value, and says what it saved.

Each program is run plainly first: the node name, and whether the node saved one of its inputs or its
own output, come from PyTorch's grad_fn there; the traced run must then say the same.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

import gradtrace
from gradtrace.explain.errors import explain_error

# name -> (program, name of the tensor the node saved, the statement whose node saved it, "input"/"output")
PROGRAMS = {
    "mul": ("""
        import torch
        a = torch.tensor([1., 2.], requires_grad=True)
        b = a * 2
        c = b * b
        b.add_(1)
        c.sum().backward()
        """, "b", "c", "input"),
    "sigmoid": ("""
        import torch
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x.sigmoid()
        y.add_(1)
        y.sum().backward()
        """, "y", "y", "output"),
    "exp": ("""
        import torch
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        y.mul_(2)
        y.sum().backward()
        """, "y", "y", "output"),
    "tanh": ("""
        import torch
        x = torch.tensor([1., 2.], requires_grad=True)
        y = torch.tanh(x)
        y += 1
        y.sum().backward()
        """, "y", "y", "output"),
    "pow": ("""
        import torch
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x * 1
        y = h ** 3
        h.zero_()
        y.sum().backward()
        """, "h", "y", "input"),
    "copyslices": ("""
        import torch
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        y = h.sin()
        h[0] = 5
        y.sum().backward()
        """, "h", "y", "input"),
    "through_view": ("""
        import torch
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x.exp()
        v = h[:2]
        v.mul_(2)
        h.sum().backward()
        """, "h", "h", "output"),
    "custom_function": ("""
        import torch
        class Sq(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x
            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x * 1
        y = Sq.apply(h)
        h.add_(1)
        y.sum().backward()
        """, "h", "y", "input"),
}


def _torch_says(src: str, saved: str, holder: str) -> tuple[str, str]:
    """The saving node's name and whether PyTorch saved the holder's input or its output, from plain PyTorch."""
    lines = textwrap.dedent(src).strip("\n").splitlines()
    cut = next(i for i, line in enumerate(lines) if line.startswith(f"{holder} = ")) + 1
    ns: dict = {}
    exec("\n".join(lines[:cut]), ns)
    node = ns[holder].grad_fn
    values = [getattr(node, a) for a in dir(node) if a.startswith("_saved_")]
    values += list(getattr(node, "saved_tensors", ()))
    stored = [v for v in values if isinstance(v, torch.Tensor)]
    assert any(v.data_ptr() == ns[saved].data_ptr() for v in stored)
    role = "output" if saved == holder else "input"
    return node.name(), role


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_why_names_the_node_that_saved_the_stale_value(name):
    src, saved, holder, role = PROGRAMS[name]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        exec(textwrap.dedent(src), {})
    op, torch_role = _torch_says(src, saved, holder)
    assert torch_role == role
    trace = gradtrace.trace_code(textwrap.dedent(src), raise_errors=False)
    e = explain_error(trace)
    tid = trace.last.bindings[saved]
    node = next(c for c in e.culprits if c.startswith("n"))
    assert trace.last.nodes[node].name == op
    words = "its own output" if role == "output" else "its input"
    assert f"{node} {op} saved {words} {tid} ({saved})" in e.why
    assert f"Why: {e.why}" in e.to_text()
    if op != "MulBackward0":
        assert "MulBackward0" not in e.why


def test_module_relu_inplace_after_sigmoid_names_sigmoid_and_the_call():
    src = ("import torch\n"
           "torch.manual_seed(0)\n"
           "net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sigmoid(), torch.nn.ReLU(inplace=True))\n"
           "x = torch.ones(1, 2)\n"
           "out = net(x)\n"
           "out.sum().backward()\n")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        exec(src, {})
    torch.manual_seed(0)
    plain = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sigmoid())(torch.ones(1, 2))
    op = plain.grad_fn.name()
    assert plain.grad_fn._saved_result.data_ptr() == plain.data_ptr()  # it saved its own output
    trace = gradtrace.trace_code(src, raise_errors=False)
    e = explain_error(trace)
    node = next(c for c in e.culprits if c.startswith("n"))
    assert trace.last.nodes[node].name == op
    assert f"{node} {op} saved its own output {trace.last.bindings['out']} (out)" in e.why
    # the ReLU changed it inside the call that made it: that statement is named
    assert e.code == "out = net(x)" and e.line == 5


def test_why_without_a_trace_does_not_blame_mul():
    src, *_ = PROGRAMS["sigmoid"]
    with pytest.raises(RuntimeError) as info:
        exec(textwrap.dedent(src), {})
    e = explain_error(info.value)
    assert "Nodes such as MulBackward0" not in e.why
    assert "their own output" in e.why and "their inputs" in e.why


def _stale_error(x: torch.Tensor) -> RuntimeError:
    h = x * 1
    y = h.sin()
    h.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    return info.value


@pytest.mark.parametrize("shape", [(), (2,), (2, 3)], ids=str)
def test_shape_detail_is_spelt_as_python_prints_it(shape):
    x = torch.ones(shape, requires_grad=True)
    e = explain_error(_stale_error(x))
    assert e.detail("shape") == str(tuple(x.shape))  # (), (2,), (2, 3): Python's spelling
    assert f"of shape {tuple(x.shape)}" in e.what
    assert str(x.shape) == f"torch.Size({list(x.shape)})"  # what PyTorch's message shows in brackets


def test_gradient_shape_details_are_python_tuples():
    x = torch.ones(3, requires_grad=True)
    v = torch.ones(1)
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward(v)
    e = explain_error(info.value)
    assert e.detail("gradient_shape") == str(tuple(v.shape))
    assert e.detail("output_shape") == str(tuple(x.shape))
    assert f"The gradient has shape {tuple(v.shape)}, the output {tuple(x.shape)}." in e.what


def test_involved_names_match_the_text_twin():
    src, saved, holder, _ = PROGRAMS["mul"]
    op, _ = _torch_says(src, saved, holder)
    trace = gradtrace.trace_code(textwrap.dedent(src), raise_errors=False)
    e = explain_error(trace)
    ours = next(line for line in e.to_text().splitlines() if line.startswith("  Involved: "))
    twin = next(line for line in trace.to_text().splitlines() if line.strip().startswith("involved: "))
    assert ours.split(": ", 1)[1] == twin.split(": ", 1)[1]
    node = next(c for c in e.culprits if c.startswith("n"))
    assert f"{node} ({op})" in ours and f"{trace.last.bindings[saved]} ({saved})" in ours

"""Each autograd error is provoked for real and explained; culprits come from a real trace."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import gradtrace
from gradtrace.explain.errors import explain_error


def _raise(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def backward_twice():
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    y.backward()


def inplace_leaf():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.add_(1)


def inplace_leaf_view():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x[0] = 3.0


def inplace_modified():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x + 1
    b = a * a
    a.add_(1)
    b.sum().backward()


def nonscalar():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward()


def gradient_shape():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).backward(torch.ones(2))


def no_grad_fn():
    x = torch.tensor([1.0, 2.0])
    (x * 2).sum().backward()


def int_requires_grad():
    torch.tensor([1, 2], requires_grad=True)


def int_requires_grad_():
    torch.tensor([1, 2]).requires_grad_()


def nonleaf_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).requires_grad_(False)


def inference_saved():
    with torch.inference_mode():
        t = torch.tensor([1.0, 2.0])
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * t).sum().backward()


def numpy_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.numpy()


def resize_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.resize_(1)


def deepcopy_nonleaf():
    import copy

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    copy.deepcopy(x * 2)


def bool_ambiguous():
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    if x > 0:
        pass


def blog_list():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return 2 * x[0] * x[0] + 4 * x[1] * [1]


CASES = {
    backward_twice: "backward_twice",
    inplace_leaf: "inplace_leaf",
    inplace_leaf_view: "inplace_leaf_view",
    inplace_modified: "inplace_modified",
    nonscalar: "nonscalar_backward",
    gradient_shape: "gradient_shape",
    no_grad_fn: "no_grad_fn",
    int_requires_grad: "int_requires_grad",
    int_requires_grad_: "int_requires_grad",
    nonleaf_requires_grad: "nonleaf_requires_grad",
    inference_saved: "inference_saved",
    numpy_requires_grad: "numpy_requires_grad",
    blog_list: "list_index",
    resize_requires_grad: "resize_requires_grad",
    deepcopy_nonleaf: "deepcopy_nonleaf",
    bool_ambiguous: "bool_ambiguous",
}


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_each_error_is_recognised(fn):
    exc = _raise(fn)
    e = explain_error(exc)
    assert e.kind == CASES[fn] and e.recognised
    assert e.message == str(exc) and e.error_type == type(exc).__name__
    text = e.to_text()
    for piece in (e.title, e.what, e.why, e.fix):
        assert piece and piece in text


def test_nonleaf_grad_warning_is_recognised():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert y.grad is None
    (w,) = caught
    for source in (w, w.message):
        e = explain_error(source)
        assert e.kind == "nonleaf_grad" and "retain_grad" in e.fix


def test_inplace_message_is_parsed():
    exc = _raise(inplace_modified)
    e = explain_error(exc)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x + 1
    op = a.grad_fn.name().replace("Backward0", "")
    assert e.detail("op") == op
    assert e.detail("version") == "1" and e.detail("expected_version") == "0"
    assert e.detail("shape") == str(tuple(a.shape)) and e.detail("output_nr") == "0"


def test_inplace_message_through_a_view_is_parsed():
    # a saved value changed through a view is "output 0 of torch::autograd::CopySlices" in PyTorch's message
    def through_view():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        c = h ** 3
        h[0].mul_(10)
        c.sum().backward()

    exc = _raise(through_view)
    said = re.search(r"is at version (\d+); expected version (\d+)", str(exc))
    assert said is not None and "torch::autograd::CopySlices" in str(exc)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    h[0].mul_(10)
    e = explain_error(exc)
    assert e.detail("op") == h.grad_fn.name().replace("torch::autograd::", "")
    assert (e.detail("version"), e.detail("expected_version")) == (said[1], said[2])
    assert f"was saved at version {said[2]}, but is now at version {said[1]}" in e.what
    assert "torch::" not in e.what


def test_inplace_culprits_from_a_trace():
    src = (
        "import torch\n"
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "a = x + 1\n"
        "b = a * a\n"
        "a.add_(1)\n"
        "b.sum().backward()\n"
    )
    trace = gradtrace.trace_code(src, raise_errors=False)
    assert trace.error is not None
    e = explain_error(trace.error, trace)
    last = trace.last
    a_id = last.bindings["a"]
    mul = next(n for n in last.nodes.values() if n.name == "MulBackward0")
    assert e.culprits[:2] == (mul.id, a_id)
    assert e.line == 5 and e.code == "a.add_(1)"
    assert "a.add_(1)" in e.to_text()


def test_leaf_culprit_from_a_trace():
    trace = gradtrace.trace_code("import torch\nw = torch.ones(2, requires_grad=True)\nw.add_(1)\n",
                                 raise_errors=False)
    e = explain_error(trace.error, trace)
    assert e.kind == "inplace_leaf"
    assert e.culprits == (trace.last.bindings["w"],)


def test_numpy_culprit_from_a_trace():
    trace = gradtrace.trace_code("import torch\nw = torch.ones(2, requires_grad=True)\nk = torch.ones(2)\n"
                                 "a = k.numpy()\nb = w.numpy()\n", raise_errors=False)
    e = explain_error(trace.error, trace)
    assert e.kind == "numpy_requires_grad"
    assert e.culprits == (trace.last.bindings["w"],)


def test_backward_twice_names_freed_nodes():
    trace = gradtrace.trace_code("import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x\n"
                                 "y.backward()\ny.backward()\n", raise_errors=False)
    e = explain_error(trace.error, trace)
    mul = next(n.id for n in trace.last.nodes.values() if n.name == "MulBackward0")
    assert e.kind == "backward_twice" and e.culprits == (mul,)


def test_unknown_error_keeps_torchs_message():
    exc = _raise(lambda: torch.ones(2) @ torch.ones(3))
    e = explain_error(exc)
    assert not e.recognised and e.message == str(exc)
    assert str(exc).splitlines()[0] in e.to_text()


def test_blog_program_error_is_the_list():
    x = torch.from_numpy(np.array([1.0, 2.0])).requires_grad_()
    exc = _raise(lambda: 4 * x[1] * [1])
    assert explain_error(exc).fix.endswith("4 * x[1] * x[1].")


def _lines_whose_removal_fixes(src: str, candidates: list[int]) -> list[int]:
    """The in-place lines PyTorch's failure depends on: without them the plain program runs."""
    lines = src.splitlines()
    needed = []
    for n in candidates:
        try:
            exec("\n".join(line for i, line in enumerate(lines, start=1) if i != n), {})
        except RuntimeError:
            continue
        needed.append(n)
    return needed


TWO_STALE = (
    "import torch\n"
    "a = torch.rand(3, requires_grad=True) * 1\n"
    "b = torch.rand(3, requires_grad=True) * 1\n"
    "c = a * a\n"
    "d = b * b\n"
    "a.add_(1)\n"
    "b.add_(1)\n"
    "c.sum().backward()\n"
)


@pytest.mark.parametrize("src", [TWO_STALE, TWO_STALE.replace("c.sum().backward()", "d.sum().backward()"),
                                 TWO_STALE.replace("a.add_(1)\nb.add_(1)", "b.add_(1)\na.add_(1)")])
def test_inplace_culprit_is_the_value_the_failing_backward_reads(src):
    trace = gradtrace.trace_code(src, raise_errors=False)
    assert trace.error is not None
    needed = _lines_whose_removal_fixes(src, [6, 7])
    assert len(needed) == 1
    e = explain_error(trace.error, trace)
    assert e.line == needed[0]
    assert e.code == src.splitlines()[needed[0] - 1]
    changed = e.code.split(".")[0]
    other = "b" if changed == "a" else "a"
    last = trace.last
    tensors = [c for c in e.culprits if c.startswith("t")]
    assert tensors == [last.bindings[changed]]
    assert last.bindings[other] not in e.culprits
    saved_by = [v for k, v in e.details if k == "saved_by"]
    assert saved_by and all(last.nodes[v.split()[0]].inputs for v in saved_by)
    # the step is named as the text twin (and the stepper) number it: from 1 (e.step is its position)
    assert f"step {trace.steps[e.step].number}, line {e.line}: {e.code}" in trace.to_text()
    assert f"Changed at step {trace.steps[e.step].number}, line {e.line}" in e.to_text()

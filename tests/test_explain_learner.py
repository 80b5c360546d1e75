"""Explanations read as a learner reads them: every figure checked against PyTorch run plainly here."""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.explain import explain_error

STALE_TWO = """\
import torch
x = torch.tensor([1., 2.], requires_grad=True)
a = x * 1
b = x * 2
c = a * a
d = b * b
a.add_(1)
b.add_(1)
loss = c.sum()
loss.backward()
"""


def _numbers(text: str) -> list[float]:
    return [float(v) for v in text.strip("[]").split(",")]


@pytest.mark.parametrize("bounds", [{"min": 0.0}, {"max": 1.5}, {"min": -0.5, "max": 1.5}])
def test_a_clamp_with_one_bound_names_only_that_bound(bounds):
    a = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    walk = gradtrace.explain(a.clamp(**bounds).sum())
    text = walk.to_text()
    assert "≤ None" not in text and "None ≤" not in text
    line = next(x for x in text.splitlines() if "where" in x and "→" in x)
    for bound in bounds.values():
        assert f"{bound:g}" in line.split("where", 1)[1]
    expected = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    expected.clamp(**bounds).sum().backward()
    assert _numbers(line.rsplit("=", 1)[1].strip()) == expected.grad.tolist()
    assert a.grad.tolist() == expected.grad.tolist()


def test_explain_error_of_a_whole_trace_explains_the_error_it_stopped_on():
    trace = gradtrace.trace_code(STALE_TWO, {}, raise_errors=False)
    plain: dict = {}
    with pytest.raises(RuntimeError) as caught:
        exec(STALE_TWO, plain)
    assert trace.error is not None and trace.error.message == str(caught.value)
    whole = explain_error(trace).to_text()
    assert whole == explain_error(trace.error, trace).to_text()
    assert "Trace(" not in whole and "a.add_(1)" in whole and "b.add_(1)" not in whole


def test_explain_error_of_a_trace_without_error_says_so_in_one_line():
    trace = gradtrace.trace_code("import torch\nx = torch.ones(2)\n", {})
    with pytest.raises(ValueError, match="without an error") as caught:
        explain_error(trace)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_python_number_times_a_half_precision_gradient_is_figured_as_pytorch_does(dtype):
    x = torch.tensor([0.1, 0.7, 3.3], dtype=dtype, requires_grad=True)
    text = gradtrace.explain((x * x * 1.7).exp().sum()).to_text()
    assert "torch computed" not in text  # the formula's figures and PyTorch's agree
    e = (torch.tensor([0.1, 0.7, 3.3], dtype=dtype) * torch.tensor([0.1, 0.7, 3.3], dtype=dtype) * 1.7).exp()
    line = next(x for x in text.splitlines() if "· 1.7 =" in x)
    shown = torch.tensor(_numbers(line.rsplit("=", 1)[1].strip()), dtype=dtype)
    assert shown.tolist() == (e * 1.7).tolist()


INPLACE_A = "import torch\nt = torch.tensor([1., 2.], requires_grad=True)\nu = t.exp()\nu.add_(1)\n"
OUTOFPLACE_B = "import torch\nt = torch.tensor([1., 2.], requires_grad=True)\nu = t.exp() + 1\n"


def test_compare_says_which_of_two_same_shaped_graphs_cannot_run_backward():
    from gradtrace import compare

    def backward_fails(source: str) -> bool:
        ns: dict = {}
        exec(source, ns)
        try:
            ns["u"].sum().backward()
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            return True
        return False

    assert backward_fails(INPLACE_A) and not backward_fails(OUTOFPLACE_B)
    result = compare(INPLACE_A, OUTOFPLACE_B)
    assert result.same  # the same operations, wired the same way
    notes = [x for x in result.to_text().splitlines() if x.startswith("  but ")]
    assert len(notes) == 1 and "in A" in notes[0] and "fails in A, not in B" in notes[0]
    assert compare(OUTOFPLACE_B, OUTOFPLACE_B).to_text().count("  but ") == 0

"""compare() on the forum's programs, traced for real."""

from __future__ import annotations

import pytest

import gradtrace
from gradtrace.explain.compare import canonical, compare

HEAD = "import torch\nx = torch.tensor(42., requires_grad=True)\n"
ORIGINAL = HEAD + "x2 = x ** 2\nx3 = x ** 3\nf = x2 + x3\n"
EXAMPLE1 = HEAD + "x = x ** 2\nx3 = x ** 3\nf = x + x3\n"
EXAMPLE2 = HEAD + "y = x ** 2\nx = y ** 3\nf = y + x\n"
WHATIF1 = EXAMPLE1 + "x.retain_grad()\nf.backward(retain_graph=False)\ng = x.grad\n"
TEMPS = HEAD + "x = temp0 = torch.tensor(42., requires_grad=True)\nx = temp1 = temp0 ** 2\nx3 = temp0 ** 3\n" \
    "f = temp1 + x3\n"


def test_forum_examples_1_and_2_build_the_same_graph():
    result = compare(EXAMPLE1, EXAMPLE2)
    assert result.same and result.difference is None and result.output == "f"
    assert "Same graph for f" in str(result)


def test_original_and_whatif1_differ_and_the_difference_is_named():
    result = compare(ORIGINAL, WHATIF1, output="f")
    assert not result.same
    assert "PowBackward0(exponent=3)" in result.difference
    assert "takes input 0 from" in result.difference
    assert "leaf" in result.difference and "PowBackward0(exponent=2)" in result.difference


def test_temporaries_rebuild_the_original_graph():
    assert compare(ORIGINAL, TEMPS).same


def test_traces_and_an_output_name_are_accepted():
    a, b = gradtrace.trace_code(EXAMPLE1), gradtrace.trace_code(EXAMPLE2)
    assert compare(a, b).same
    result = compare(a, gradtrace.trace_code(ORIGINAL), output="x3")
    assert not result.same


def test_canonical_form_ignores_names_and_ids():
    a = canonical(gradtrace.trace_code(EXAMPLE1).last, "f")
    b = canonical(gradtrace.trace_code(EXAMPLE2).last, "f")
    assert [n.key() for n in a] == [n.key() for n in b]
    assert [n.op for n in a][:2] == ["AddBackward0", "PowBackward0"]


def test_unknown_output_is_a_clear_error():
    with pytest.raises(KeyError, match="no tensor named 'zzz'"):
        compare(EXAMPLE1, EXAMPLE2, output="zzz")


def test_different_exponent_is_named():
    result = compare(EXAMPLE1, EXAMPLE1.replace("x ** 3", "x ** 4"))
    assert not result.same and "exponent=3" in result.difference and "exponent=4" in result.difference

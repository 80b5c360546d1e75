"""compare() on the forum's programs, traced for real."""

from __future__ import annotations

import pytest

import gradtrace
from gradtrace.explain.compare import GIVEN_LEAF, canonical
from gradtrace.live import compare

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
    with pytest.raises(ValueError, match="no tensor named 'zzz'"):
        compare(EXAMPLE1, EXAMPLE2, output="zzz")


def test_different_exponent_is_named():
    result = compare(EXAMPLE1, EXAMPLE1.replace("x ** 3", "x ** 4"))
    assert not result.same and "exponent=3" in result.difference and "exponent=4" in result.difference


def test_the_docstrings_promise_names_play_no_part():
    result = compare("x = x ** 2", "y = x ** 2")
    assert result.same and result.output == "x" and result.output_b == "y"
    assert result.given == ("x",) and "defined by neither program" in str(result)
    assert not compare("x = x ** 2", "y = x ** 3").same
    ns: dict = {}
    exec("import torch\nx = " + GIVEN_LEAF + "\nx = x ** 2\ny = x ** 3", ns)
    assert ns["y"].grad_fn.next_functions[0][0] is ns["x"].grad_fn  # x ** 3 of x ** 2: a different graph
    assert not compare("x = x ** 2\nx = x ** 3", "y = x ** 3").same


def test_setup_defines_what_the_programs_read():
    result = compare("x = x ** 2", "y = x ** 2", setup="x = torch.tensor(42., requires_grad=True)")
    assert result.same and not result.given
    assert "42" in result.a[-1].op


PROGRAMS = [
    "", "a = 1", "x = 1\ny = 2", "import torch\nx = torch.ones(2)", "x = x ** 2", "y = x ** 2", "x = x * x",
    "y = z + 1", "raise ValueError('no')", "del x", "x = [torch.ones(2, requires_grad=True)]",
    "import torch\nw = torch.ones(2, requires_grad=True)\nw2 = w * 2\ndel w2", "x = x.detach()",
    "x += 1", "t = torch.zeros(3)\nt[0] = 1", "def f(v):\n    return v * 2\nout = f(x)", "x.sum().backward()",
    "for i in range(2):\n    x = x * 2", "x = (x, x)", "x = {'k': x * 3}",
]


@pytest.mark.parametrize("a", PROGRAMS)
def test_compare_never_raises_anything_but_a_clear_value_error(a):
    for b in PROGRAMS:
        for output in (None, "x", "zzz"):
            try:
                result = compare(a, b, output=output)
            except ValueError as exc:
                assert str(exc) and "\n" not in str(exc)
                continue
            assert isinstance(result.same, bool) and str(result)

"""Every formula, filled in with a node's own numbers and no torch, gives PyTorch's gradient (bit for bit where
the arithmetic is +, −, ×, ÷; within a few units in the last place where it takes exp, cos or longer sums)."""

from __future__ import annotations

import pytest
import torch

from gradtrace.explain.formulas import ACCUMULATE_GRAD, COPY_SLICES, FORMULAS, fill_in, formula_for, rule_text

from formula_cases import CASES, _mat, _torch_grads, input_shapes, node_info

DTYPES = [torch.float32, torch.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_filled_in_numbers_equal_torch(case, dtype):
    built = CASES[case](dtype)
    node = built.grad_fn
    assert node.name() == case.split("/")[0]
    gen = torch.Generator().manual_seed(7)
    grad = torch.randn(built.shape, generator=gen, dtype=torch.float64).to(dtype)
    info = node_info(built)
    shapes = input_shapes(node)
    filled = fill_in(info, grad.tolist(), str(dtype), shapes)
    assert filled.known and filled.note is None, filled.note
    expected = _torch_grads(built, grad)
    wanted = [i for i, (n, _) in enumerate(node.next_functions) if n is not None]
    assert [p.index for p in filled.parts] == wanted
    _check_parts(filled, expected, dtype)
    # given what the node really sent (as the tracer records it), every figure is PyTorch's own
    sent = tuple(None if g is None else g.tolist() for g in expected)
    filled = fill_in(info, grad.tolist(), str(dtype), shapes, sent)
    for part in filled.parts:
        assert part.exact and torch.equal(torch.tensor(part.values, dtype=dtype), expected[part.index]), part.text


#: formulas whose figures take a function (exp, log, cos, pow, erf) or a sum whose order PyTorch's kernel picks
INEXACT = {"PowBackward0/half", "PowBackward0/-1.5", "PowBackward1", "PowBackward2", "PowBackward2/e",
           "Exp2Backward0", "SinBackward0", "CosBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0",
           "GeluBackward0", "SoftplusBackward0", "LogBackward0/none", "MmBackward0", "MvBackward0",
           "AddmmBackward0", "AddmmBackward0/linear", "AddmmBackward0/scaled", "ExpandBackward0",
           "ExpandBackward0/2d", "AddBackward0/broadcast", "MulBackward0/broadcast", "IndexBackward0"}


def _check_parts(filled, expected, dtype):
    """Bit for bit where the plain arithmetic is exact; within a few units in the last place elsewhere."""
    from gradtrace.explain._arith import ULPS

    for part in filled.parts:
        got = torch.tensor(part.values, dtype=dtype)
        want = expected[part.index]
        if part.exact:
            assert torch.equal(got, want), (part.text, want)
        else:
            eps = torch.finfo(dtype).eps
            assert torch.allclose(got, want, rtol=ULPS * eps, atol=0), (part.text, want)


def test_most_formulas_are_exact():
    """The exact flag is not given away: a formula of sums and products is recomputed bit for bit."""
    for case in sorted(set(CASES) - INEXACT):
        built = CASES[case](torch.float32)
        grad = torch.randn(built.shape, generator=torch.Generator().manual_seed(5))
        filled = fill_in(node_info(built), grad.tolist(), "float32", input_shapes(built.grad_fn))
        assert all(p.exact for p in filled.parts), case


# nodes of several outputs: name -> builder(dtype) returning all the outputs; the last output of each gets no
# gradient (PyTorch counts it as zeros)
SEVERAL = {
    "UnbindBackward0": lambda d: _mat(d).unbind(1),
    "UnbindBackward0/rows": lambda d: _mat(d).unbind(0),
    "SplitBackward0": lambda d: _mat(d).split(2, dim=1),
    "SplitBackward0/chunk": lambda d: torch.cat([_mat(d), _mat(d, 1)]).chunk(3),
    "SplitWithSizesBackward0": lambda d: _mat(d).split([1, 2], dim=1),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", sorted(SEVERAL))
def test_a_node_of_several_outputs_joins_their_gradients_as_torch(case, dtype):
    outs = SEVERAL[case](dtype)
    node = outs[0].grad_fn
    assert node.name() == case.split("/")[0] and all(o.grad_fn is node for o in outs)
    gen = torch.Generator().manual_seed(11)
    grads = [torch.randn(o.shape, generator=gen, dtype=torch.float64).to(dtype) for o in outs[:-1]]
    seen = {}
    handle = node.register_hook(lambda gi, _go: seen.setdefault("gi", gi))
    try:
        torch.autograd.backward(list(outs[:-1]), grads, retain_graph=True)
    finally:
        handle.remove()
    outputs = tuple(g.tolist() for g in grads) + (None,)
    filled = fill_in(node_info(outs[0]), grads[0].tolist(), str(dtype), input_shapes(node), outputs=outputs)
    assert filled.known and filled.note is None, filled.note
    (part,) = filled.parts
    assert part.exact and torch.equal(torch.tensor(part.values, dtype=dtype), seen["gi"][0]), part.text


def test_every_formula_has_a_case():
    tested = {name.split("/")[0] for name in [*CASES, *SEVERAL]}
    assert set(FORMULAS) - tested == {ACCUMULATE_GRAD, COPY_SLICES}
    assert len(FORMULAS) >= 40


def test_special_node_names_are_torchs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    assert y.grad_fn.next_functions[0][0].name() == ACCUMULATE_GRAD
    y[0] = 5.0
    assert y.grad_fn.name() == COPY_SLICES
    assert formula_for(COPY_SLICES) is not None


def test_unknown_node_is_said_honestly():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = torch.special.erfcx(x)
    node = out.grad_fn
    assert formula_for(node.name()) is None
    filled = fill_in(node_info(out), [1.0, 1.0])
    assert not filled.known and not filled.parts
    assert filled.note == f"no formula recorded for {node.name()}"
    assert rule_text(node.name()) == f"no formula recorded for {node.name()}"


def _scalar_text(out):
    return fill_in(node_info(out), 1.0).parts[0]


def test_power_rule_at_42_reads_as_arithmetic():
    x = torch.tensor(42.0, requires_grad=True)
    for exponent in (2, 3):
        (grad,) = torch.autograd.grad(x ** exponent, x)
        part = _scalar_text(x ** exponent)
        assert part.values == grad.item()
        assert part.text.endswith(f"= {int(grad.item())}")
        assert part.rule == "∂out/∂self = exponent · self^(exponent−1)"
    assert _scalar_text(x ** 2).expr == "1 · (2 · 42)"
    assert _scalar_text(x ** 3).expr == "1 · (3 · 42²)"


def test_rules_say_where_they_come_from():
    for formula in FORMULAS.values():
        assert formula.reason and formula.forward and formula.rules
        assert all(rule.local and rule.vjp for rule in formula.rules)
        assert formula.name in formula.to_text()


def test_large_tensors_are_not_written_out():
    x = torch.arange(20.0, requires_grad=True)
    filled = fill_in(node_info(x * x), torch.ones(20))
    assert filled.known and not filled.parts
    assert "16" in (filled.note or "")


def test_freed_saved_values_are_reported_not_guessed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    filled = fill_in(node_info(y), [1.0, 1.0])
    assert not filled.parts and "freed" in (filled.note or "")


@pytest.mark.parametrize("case", sorted(CASES))
def test_filled_in_from_the_tracers_snapshot(case):
    """The same check, reading the node as the tracer records it (gradtrace.snapshot)."""
    import gradtrace

    built = CASES[case](torch.float32)
    step = gradtrace.snapshot(built)
    root_id = step.tensors[step.bindings["output"]].grad_fn
    info = step.nodes[root_id]
    assert info.name == built.grad_fn.name()
    grad = torch.randn(built.shape, generator=torch.Generator().manual_seed(3))
    shapes = input_shapes(built.grad_fn)
    filled = fill_in(info, grad.tolist(), "float32", shapes)
    assert filled.known and filled.note is None, filled.note
    expected = _torch_grads(built, grad)
    _check_parts(filled, expected, torch.float32)

"""Every formula, filled in with a node's own numbers and no torch, gives PyTorch's gradient (bit for bit where
the arithmetic is +, −, ×, ÷; within a few units in the last place where it takes exp, cos or longer sums)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from gradtrace.explain.formulas import ACCUMULATE_GRAD, COPY_SLICES, FORMULAS, fill_in, formula_for, rule_text

DTYPES = [torch.float32, torch.float64]


def _leaf(values, dtype):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


def _vec(dtype, seed=0, n=3, low=-2.0, high=2.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype).requires_grad_()


def _mat(dtype, seed=0, shape=(2, 3)):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype).requires_grad_()


def _pos(dtype, seed=0, n=3):
    return _vec(dtype, seed, n, 0.25, 3.0)


# name -> builder(dtype) returning the output whose grad_fn is the node under test
CASES = {
    "AddBackward0": lambda d: _vec(d) + _vec(d, 1),
    "AddBackward0/alpha": lambda d: torch.add(_vec(d), _vec(d, 1), alpha=3),
    "AddBackward0/const": lambda d: _vec(d) + 2,
    "AddBackward0/broadcast": lambda d: _mat(d) + _vec(d, 1),
    "AddBackward1": lambda d: torch.ops.aten.add.Scalar(_vec(d), 2.5),
    "SubBackward0": lambda d: _vec(d) - _vec(d, 1),
    "SubBackward0/alpha": lambda d: torch.sub(_vec(d), _vec(d, 1), alpha=0.5),
    "SubBackward1": lambda d: torch.ops.aten.sub.Scalar(_vec(d), 2.5),
    "RsubBackward0": lambda d: torch.rsub(_vec(d), _vec(d, 1)),
    "RsubBackward1": lambda d: 2 - _vec(d),
    "NegBackward0": lambda d: -_vec(d),
    "MulBackward0": lambda d: _vec(d) * _vec(d, 1),
    "MulBackward0/const": lambda d: _vec(d) * 3.7,
    "MulBackward0/broadcast": lambda d: _mat(d) * _vec(d, 1),
    "MulBackward1": lambda d: torch.ops.aten.mul.Scalar(_vec(d), 0.3),
    "DivBackward0": lambda d: _vec(d) / _pos(d, 1),
    "DivBackward1": lambda d: torch.ops.aten.div.Scalar(_vec(d), 0.7),
    "ReciprocalBackward0": lambda d: _pos(d).reciprocal(),
    "PowBackward0": lambda d: _vec(d) ** 2,
    "PowBackward0/3": lambda d: _vec(d) ** 3,
    "PowBackward0/half": lambda d: _pos(d) ** 0.5,
    "PowBackward0/-1.5": lambda d: _pos(d) ** -1.5,
    "PowBackward0/0": lambda d: _vec(d) ** 0,
    "PowBackward1": lambda d: _pos(d) ** _vec(d, 1),
    "PowBackward2": lambda d: 2 ** _vec(d),
    "PowBackward2/e": lambda d: 2.5 ** _vec(d),
    "ExpBackward0": lambda d: _vec(d).exp(),
    "Exp2Backward0": lambda d: _vec(d).exp2(),
    "LogBackward0": lambda d: _pos(d).log(),
    "Log1PBackward0": lambda d: _pos(d).log1p(),
    "SinBackward0": lambda d: _vec(d).sin(),
    "CosBackward0": lambda d: _vec(d).cos(),
    "TanBackward0": lambda d: _vec(d, 0, 3, -1, 1).tan(),
    "AtanBackward0": lambda d: _vec(d).atan(),
    "TanhBackward0": lambda d: _vec(d).tanh(),
    "SigmoidBackward0": lambda d: _vec(d).sigmoid(),
    "SqrtBackward0": lambda d: _pos(d).sqrt(),
    "ReluBackward0": lambda d: _vec(d, 3, 6).relu(),
    "LeakyReluBackward0": lambda d: F.leaky_relu(_vec(d, 3, 6), 0.1),
    "AbsBackward0": lambda d: _vec(d, 3, 6).abs(),
    "ClampBackward1": lambda d: _vec(d, 3, 6).clamp(-1, 1),
    "ClampBackward1/min": lambda d: _vec(d, 3, 6).clamp(min=0.5),
    "ClampMinBackward0": lambda d: _vec(d, 3, 6).clamp_min(0),
    "MaximumBackward0": lambda d: torch.maximum(_leaf([1.0, 2.0, 3.0], d), _leaf([3.0, 2.0, 1.0], d)),
    "MinimumBackward0": lambda d: torch.minimum(_leaf([1.0, 2.0, 3.0], d), _leaf([3.0, 2.0, 1.0], d)),
    "MaxBackward1": lambda d: _leaf([1.0, 3.0, 3.0, -1.0], d).max(),
    "MinBackward1": lambda d: _leaf([1.0, -3.0, 3.0, -1.0], d).min(),
    "MaxBackward0": lambda d: _mat(d).max(1)[0],
    "MinBackward0": lambda d: _mat(d).min(0, keepdim=True)[0],
    "WhereBackward0": lambda d: torch.where(torch.tensor([True, False, True]), _vec(d), _vec(d, 1)),
    "MmBackward0": lambda d: _mat(d) @ _mat(d, 1, (3, 2)),
    "MvBackward0": lambda d: _mat(d) @ _vec(d, 1),
    "DotBackward0": lambda d: _vec(d) @ _vec(d, 1),
    "AddmmBackward0": lambda d: torch.addmm(_mat(d, 2, (2, 2)), _mat(d), _mat(d, 1, (3, 2))),
    "AddmmBackward0/linear": lambda d: F.linear(_mat(d), _mat(d, 1, (2, 3)), _vec(d, 2, 2)),
    "AddmmBackward0/scaled": lambda d: torch.addmm(_mat(d, 2, (2, 2)), _mat(d), _mat(d, 1, (3, 2)),
                                                   beta=0.5, alpha=3),
    "SumBackward0": lambda d: _mat(d).sum(),
    "SumBackward1": lambda d: _mat(d).sum(0),
    "SumBackward1/keepdim": lambda d: _mat(d).sum(-1, keepdim=True),
    "MeanBackward0": lambda d: _mat(d).mean(),
    "MeanBackward1": lambda d: _mat(d).mean(1),
    "MeanBackward1/two": lambda d: _mat(d, 0, (2, 2, 3)).mean((0, 2)),
    "SelectBackward0": lambda d: _mat(d)[1],
    "SliceBackward0": lambda d: _vec(d, 0, 5)[1:4:2],
    "IndexBackward0": lambda d: _vec(d, 0, 4)[[0, 2, 0]],
    "IndexBackward0/bool": lambda d: _vec(d, 0, 4)[torch.tensor([True, False, True, True])],
    "IndexBackward0/mask2d": lambda d: _mat(d)[torch.tensor([[False, True, False], [True, True, False]])],
    "ExpandBackward0": lambda d: _leaf(3.0, d).expand(3),
    "ExpandBackward0/2d": lambda d: _mat(d, 0, (1, 3)).expand(2, 3),
    "ViewBackward0": lambda d: _mat(d).view(6),
    "ViewBackward0/reshape": lambda d: _mat(d).reshape(3, 2),
    "UnsafeViewBackward0": lambda d: torch.ops.aten._unsafe_view(_mat(d), (3, 2)),
    "TBackward0": lambda d: _mat(d).t(),
    "TransposeBackward0": lambda d: _mat(d).transpose(0, 1),
    "PermuteBackward0": lambda d: _mat(d, 0, (2, 1, 3)).permute(2, 0, 1),
    "UnsqueezeBackward0": lambda d: _vec(d).unsqueeze(1),
    "SqueezeBackward0": lambda d: _mat(d, 0, (1, 3)).squeeze(),
    "SqueezeBackward1": lambda d: _mat(d, 0, (1, 3)).squeeze(0),
    "SqueezeBackward2": lambda d: _mat(d, 0, (1, 3)).squeeze((0,)),
    "SqueezeBackward4": lambda d: _vec(d, 0, 2) @ _mat(d, 1, (2, 2)),
    "CloneBackward0": lambda d: _vec(d).clone(),
    "AliasBackward0": lambda d: torch.ops.aten.alias(_vec(d)),
    "CatBackward0": lambda d: torch.cat([_vec(d, 0, 2), _vec(d, 1, 3)]),
    "StackBackward0": lambda d: torch.stack([_vec(d), _vec(d, 1)], 1),
    "SoftmaxBackward0": lambda d: _vec(d, 0, 4).softmax(0),
    "LogSoftmaxBackward0": lambda d: _mat(d).log_softmax(1),
    "MseLossBackward0": lambda d: F.mse_loss(_vec(d), _vec(d, 1)),
    "MseLossBackward0/sum": lambda d: F.mse_loss(_vec(d), _vec(d, 1), reduction="sum"),
    "NllLossBackward0": lambda d: F.nll_loss(_mat(d), torch.tensor([2, 0])),
    "NllLossBackward0/weight": lambda d: F.nll_loss(_mat(d), torch.tensor([2, 0]),
                                                    weight=torch.tensor([1.0, 2.0, 0.5], dtype=d)),
    "BinaryCrossEntropyBackward0": lambda d: F.binary_cross_entropy(_vec(d, 0, 3, 0.1, 0.9),
                                                                     torch.tensor([1.0, 0.0, 1.0], dtype=d)),
    "GeluBackward0": lambda d: F.gelu(_vec(d)),
    "SoftplusBackward0": lambda d: F.softplus(_vec(d), beta=2),
}


def node_info(out):
    """The plain record of ``out.grad_fn`` as the tracer takes it (gradtrace.snapshot)."""
    import gradtrace

    step = gradtrace.snapshot(out)
    return step.nodes[step.tensors[step.bindings["output"]].grad_fn]


def input_shapes(node):
    """The shape of each input of ``node`` (read from the nodes it feeds)."""
    out = []
    for nxt, nr in node.next_functions:
        out.append(None if nxt is None else tuple(nxt._input_metadata[nr].shape))
    return tuple(out)


def _torch_grads(out, grad):
    """What torch's own backward of ``out.grad_fn`` sends to each input (after broadcast reduction)."""
    seen = {}
    handle = out.grad_fn.register_hook(lambda gi, _go: seen.setdefault("gi", gi))
    try:
        torch.autograd.backward(out, grad)
    finally:
        handle.remove()
    return seen["gi"]


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

"""Every printed formula, read back and evaluated with its printed numbers in the node's dtype, gives PyTorch's
gradient: the left side of ``expr = result`` is arithmetic a learner can redo, not decoration.

The node's own backward (seen by a hook on it) gives the gradient; :mod:`formula_eval` reads the printed
expression and evaluates it with torch, one operation at a time, in the node's dtype.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from formula_eval import Unreadable, evaluate

from gradtrace.explain.formulas import fill_in

from formula_cases import CASES, _torch_grads, input_shapes, node_info

DTYPES = [torch.float32, torch.float64]


def _x(dtype, shape=(2, 3), seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype).requires_grad_()


def _p(dtype, n=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=g, dtype=torch.float64) * 0.8 + 0.1).to(dtype).requires_grad_()


_T = torch.tensor([2, 0])
_W = [3.0, 1.0, 0.5]

#: the attributes that change a rule, swept: name -> builder(dtype)
ATTRS = {
    "nll/mean": lambda d: F.nll_loss(_x(d), _T),
    "nll/sum": lambda d: F.nll_loss(_x(d), _T, reduction="sum"),
    "nll/none": lambda d: F.nll_loss(_x(d), _T, reduction="none"),
    "nll/weight": lambda d: F.nll_loss(_x(d), _T, weight=torch.tensor(_W, dtype=d)),
    "nll/weight-sum": lambda d: F.nll_loss(_x(d), _T, weight=torch.tensor(_W, dtype=d), reduction="sum"),
    "nll/weight-none": lambda d: F.nll_loss(_x(d), _T, weight=torch.tensor(_W, dtype=d), reduction="none"),
    "nll/ignore": lambda d: F.nll_loss(_x(d), _T, ignore_index=2),
    "nll/ignore-sum": lambda d: F.nll_loss(_x(d), _T, ignore_index=0, reduction="sum"),
    "nll/ignore-none": lambda d: F.nll_loss(_x(d), _T, ignore_index=0, reduction="none"),
    "nll/ignore-weight": lambda d: F.nll_loss(_x(d, (3, 3)), torch.tensor([2, 0, 1]), ignore_index=0,
                                              weight=torch.tensor(_W, dtype=d)),
    "nll/1d": lambda d: F.nll_loss(_x(d, (3,)), torch.tensor(1)),
    "nll/1d-weight": lambda d: F.nll_loss(_x(d, (3,)), torch.tensor(1), weight=torch.tensor(_W, dtype=d)),
    "bce/mean": lambda d: F.binary_cross_entropy(_p(d), torch.tensor([1.0, 0.0, 1.0], dtype=d)),
    "bce/sum": lambda d: F.binary_cross_entropy(_p(d), torch.tensor([1.0, 0.0, 1.0], dtype=d), reduction="sum"),
    "bce/none": lambda d: F.binary_cross_entropy(_p(d), torch.tensor([1.0, 0.0, 1.0], dtype=d), reduction="none"),
    "bce/weight": lambda d: F.binary_cross_entropy(_p(d), torch.tensor([1.0, 0.0, 0.3], dtype=d),
                                                   weight=torch.tensor(_W, dtype=d)),
    "bce/weight-sum": lambda d: F.binary_cross_entropy(_p(d), torch.tensor([1.0, 0.0, 0.3], dtype=d),
                                                       weight=torch.tensor(_W, dtype=d), reduction="sum"),
    "gelu/none": lambda d: F.gelu(_x(d)),
    "gelu/tanh": lambda d: F.gelu(_x(d), approximate="tanh"),
    "softplus/1": lambda d: F.softplus(_x(d)),
    "softplus/beta2": lambda d: F.softplus(_x(d), beta=2),
    "softplus/threshold": lambda d: F.softplus(_x(d, (6,)) * 3, beta=2, threshold=1.5),
    "softplus/beta-half": lambda d: F.softplus(_x(d, (6,)) * 4, beta=0.5, threshold=1),
    "pow1/base0": lambda d: torch.tensor([0.0, 2.0, 0.0], dtype=d, requires_grad=True)
    ** torch.tensor([0.5, 3.0, 2.0], dtype=d, requires_grad=True),
    "pow1/base0-exp0": lambda d: torch.tensor([0.0, 2.0, 0.0, 0.0], dtype=d, requires_grad=True)
    ** torch.tensor([0.0, 3.0, -1.0, -2.0], dtype=d, requires_grad=True),
}

#: node types whose printed text places numbers (a select, a scatter, a join) rather than computing them
STRUCTURAL = {"MaxBackward0", "MinBackward0", "SliceBackward0", "IndexBackward0", "CatBackward0"}


def _check(built, dtype, with_sent):
    node = built.grad_fn
    grad = torch.randn(built.shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64).to(dtype)
    info, shapes = node_info(built), input_shapes(node)
    expected = _torch_grads(built, grad)
    sent = tuple(None if g is None else g.tolist() for g in expected) if with_sent else None
    filled = fill_in(info, grad.tolist(), str(dtype), shapes, sent)
    assert filled.parts, filled.note
    classes = built.grad_fn.next_functions[0][0] and shapes[0][-1] if shapes and shapes[0] else 0
    for part in filled.parts:
        want = expected[part.index]
        try:
            got = evaluate(part.expr, dtype, classes, tuple(expected[part.index].shape))
        except Unreadable:
            if node.name() in STRUCTURAL:
                continue
            raise
        assert got.dtype == want.dtype or got.shape == want.shape, part.text
        got = got.to(want.dtype).reshape(want.shape)
        eps = torch.finfo(dtype).eps
        ulps = 2 if dtype in (torch.float16, torch.bfloat16) else 16  # a few are a wide margin in half precision
        scale = float(want.abs().nan_to_num(0, 0, 0).max()) if want.numel() else 0.0
        assert torch.allclose(got, want, rtol=ulps * eps, atol=ulps * eps * scale, equal_nan=True), (
            f"{part.text}\n  the left side evaluates to {got.tolist()}\n  PyTorch: {want.tolist()}")


@pytest.mark.parametrize("dtype", [*DTYPES, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_table_formulas_read_back_to_torch(case, dtype):
    _check(CASES[case](dtype), dtype, with_sent=True)


#: cases still printed wrong: each must fail (strict), until its fix lands
WRONG: set[str] = set()


def _marked(case):
    return pytest.param(case, marks=pytest.mark.xfail(strict=True)) if case in WRONG else case


@pytest.mark.parametrize("with_sent", [True, False], ids=["sent", "alone"])
@pytest.mark.parametrize("dtype", [*DTYPES, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", [_marked(c) for c in sorted(ATTRS)])
def test_attribute_sweep_reads_back_to_torch(case, dtype, with_sent):
    _check(ATTRS[case](dtype), dtype, with_sent)


def _reverse_text(source):
    import gradtrace
    from gradtrace.explain.reverse import reverse_lines

    trace = gradtrace.trace_code(source, {}, raise_errors=True)
    return "\n".join(line for step in trace.steps for line in reverse_lines(step))


def test_a_product_float32_rounds_says_so():
    """The forum's re-bound x: 9335089 · (2 · 42) is 784147476 by hand; float32 holds 784147456, and says so."""
    from gradtrace.explain._numbers import fmt_number

    from programs import WHATIF1

    x = torch.tensor(42.0, requires_grad=True)
    x2 = x ** 2
    x2.retain_grad()
    (x2 + x2 ** 3).backward()
    by_hand = int(x2.grad.double().item() * 2 * 42)  # float64 holds these integers exactly
    assert by_hand != x.grad.item()
    text = _reverse_text(WHATIF1)
    assert (f"{fmt_number(x2.grad.item())} · (2 · 42) = {fmt_number(x.grad.item())}   "
            f"(float32 rounds {by_hand})") in text


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_rounding_note_only_where_the_hand_differs(case, dtype):
    """Small integers everywhere: a note appears exactly where the printed arithmetic, done exactly, is not the
    printed figure (and never in float64, whose integers here are exact)."""
    from fractions import Fraction

    built = CASES[case](dtype)
    node = built.grad_fn
    grad = torch.full(built.shape, 3.0, dtype=dtype)
    expected = _torch_grads(built, grad)
    sent = tuple(None if g is None else g.tolist() for g in expected)
    filled = fill_in(node_info(built), grad.tolist(), str(dtype), input_shapes(node), sent)
    for part in filled.parts:
        if dtype == torch.float64 or not part.exact:
            assert "rounds" not in part.note, part.text
            continue
        try:
            hand = evaluate(part.expr, torch.float64, 0, tuple(expected[part.index].shape))
        except Unreadable:
            continue
        exact = all(Fraction(v).limit_denominator(10**6) == Fraction(v) for v in hand.reshape(-1).tolist()
                    if v == v and abs(v) != float("inf"))
        differs = not torch.equal(hand.reshape(expected[part.index].shape).to(dtype), hand.reshape(
            expected[part.index].shape)) if exact else False
        assert ("rounds" in part.note) == differs, part.text


def _f16_float_mean():
    x = torch.tensor([1.1, 2.3, -0.7], dtype=torch.float16, requires_grad=True)
    return (x.float() ** 2).mean(), None


def _f16_float_cube():
    x = torch.tensor([1.1, 2.3, -0.7], dtype=torch.float16, requires_grad=True)
    return x.float() ** 3, torch.tensor([0.3, 1.7, 2.1])


def _f16_times_bf16():
    a = torch.tensor([1.1, 2.3], dtype=torch.float16, requires_grad=True)
    b = torch.tensor([1.7, 3.1], dtype=torch.bfloat16, requires_grad=True)
    return (a * b).sum() / 1.3, None


def _bf16_autocast():
    w = torch.tensor([[1.1, 2.3], [0.7, -1.3]], requires_grad=True)
    x = torch.tensor([[0.3, 1.9]])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = (x @ w).sum() * 1.37
    return out, None


def _graph_nodes(root):
    found, todo = [], [root.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or any(node is n for n in found):
            continue
        found.append(node)
        todo += [n for n, _ in node.next_functions]
    found = [n for n in found if "AccumulateGrad" not in n.name()]
    return {n.name(): n for n in found}, len(found)


@pytest.mark.parametrize("make", [_f16_float_mean, _f16_float_cube, _f16_times_bf16, _bf16_autocast],
                         ids=lambda f: f.__name__)
def test_casts_and_promotions_are_computed_in_the_nodes_dtype(make):
    """After a cast, a promotion or autocast, each printed formula evaluates, in the dtype PyTorch ran its node
    in (the dtype of the gradient the node got), to the gradient the node sent; no 'torch computed' remains."""
    from formula_eval import split_result

    import gradtrace

    root, gradient = make()
    nodes, count = _graph_nodes(root)
    assert len(nodes) == count, "the program's node names must be unique"
    seen = {}
    for name, node in nodes.items():
        node.register_hook(lambda gi, go, name=name: seen.update({name: (gi, go)}))
    walk = gradtrace.explain(root, gradient)
    text = walk.to_text()
    assert "torch computed" not in text, text
    checked = 0
    for step in walk.steps:
        for out in step.outputs:
            if out.formula is None or step.name not in seen:
                continue
            sent, got = seen[step.name]
            dtype = got[0].dtype
            expr, _ = split_result(out.formula.split("   (")[0])
            want = sent[out.index]
            value = evaluate(expr, dtype, 0).to(want.dtype).reshape(want.shape)
            eps = torch.finfo(dtype).eps
            assert torch.allclose(value, want, rtol=4 * eps, atol=0), (out.formula, want.tolist(), value.tolist())
            checked += 1
    assert checked >= 1

"""explain's plain-number arithmetic (no torch) against PyTorch's own kernels, over random small arrays.

Every expected figure comes from PyTorch run in the test; the arithmetic under test never imports torch.
"""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.explain import _kernels as K
from gradtrace.explain._arith import ULPS, Arr, agree, where
from gradtrace.explain._numbers import fmt_values

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _name(dtype: torch.dtype) -> str:
    return str(dtype).split(".")[-1]


def _rand(shape, dtype, seed, low=-3.0, high=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)


def _arr(t: torch.Tensor) -> Arr:
    return Arr.of(t.tolist(), _name(t.dtype))


def _same(a: Arr, t: torch.Tensor) -> None:
    assert a.shape == tuple(t.shape)
    got = torch.tensor(a.tolist(), dtype=t.dtype)
    assert torch.equal(got, t) and torch.equal(torch.signbit(got), torch.signbit(t)), (a.tolist(), t.tolist())


def _close(a: Arr, t: torch.Tensor) -> None:
    assert a.shape == tuple(t.shape)
    got = torch.tensor(a.tolist(), dtype=torch.float64)
    eps = ULPS * torch.finfo(t.dtype).eps  # relative to each value, or to the largest term where terms cancel
    assert torch.allclose(got, t.double(), rtol=eps, atol=eps * a.scale), (a.tolist(), t.tolist())
    assert agree(a, t.tolist())


BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "rsub_scalar": (lambda a, b: 1 - a * b, lambda a, b: 1 - a * b),
    "scalar_mul": (lambda a, b: a * 0.3 + b, lambda a, b: a * 0.3 + b),
    "scalar_div": (lambda a, b: a / 0.7 - b / 3, lambda a, b: a / 0.7 - b / 3),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((), (2, 2))], ids=str)
def test_elementwise_arithmetic_is_bit_for_bit(op, dtype, shapes):
    ours, theirs = BINARY[op]
    for seed in range(5):
        a, b = _rand(shapes[0], dtype, seed), _rand(shapes[1], dtype, seed + 100)
        result = ours(_arr(a), _arr(b))
        assert result.exact
        _same(result, theirs(a, b))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_name)
def test_powers_and_roots(dtype):
    x = _rand((16,), dtype, 1, 0.01, 5.0)
    for exponent in (1, 2, 3, -1, -2, -0.5):
        got = _arr(x).pow(exponent)
        assert got.exact
        _same(got, x.pow(exponent))
    for exponent in (0.5, 1.5, -1.5, 2.5):
        _close(_arr(x).pow(exponent), x.pow(exponent))
    _close(_arr(x).sqrt(), x.sqrt())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_name)
def test_functions_are_within_a_few_units_in_the_last_place(dtype):
    x = _rand((16,), dtype, 2)
    for name in ("exp", "cos", "sin"):
        got = getattr(_arr(x), name)()
        assert not got.exact
        _close(got, getattr(x, name)())
    _close(_arr(x.abs() + 0.1).log(), (x.abs() + 0.1).log())


def test_shapes_move_numbers_as_torch_does():
    t = _rand((2, 3, 2), torch.float32, 3)
    a = _arr(t)
    _same(a.permute([2, 0, 1]), t.permute(2, 0, 1))
    _same(a.transpose(0, 2), t.transpose(0, 2))
    _same(a.reshape([3, -1]), t.reshape(3, -1))
    _same(a.select(1, 2), t.select(1, 2))
    _same(a.narrow(1, 1, 2), t.narrow(1, 1, 2))
    _same(a.unsqueeze(0).squeeze(0), t)
    _same(a.sum([1], keepdim=True), t.sum(1, keepdim=True))  # three terms: compared to the bit anyway
    _same(_arr(t[:, :1, :]).expand([2, 3, 2]), t[:, :1, :].expand(2, 3, 2))
    _same(_arr(t[0]).t(), t[0].t())
    m, n = _rand((2, 1), torch.float32, 4), _rand((1, 3), torch.float32, 5)
    _same(_arr(m).mm(_arr(n)), m.mm(n))  # one product per element: exact
    cond = t > 0
    _same(where(_arr(cond), _arr(t), 0), torch.where(cond, t, torch.zeros(())))
    idx = torch.tensor([0, 2, 0])
    zeros = torch.zeros(3, 2)
    _same(Arr.of(zeros.tolist(), "float32").index_put_accumulate([_arr(idx)], _arr(t[0, :, :])),
          zeros.index_put((idx,), t[0], accumulate=True))


def _aten():
    return torch.ops.aten


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("seed", range(4))
def test_backward_kernels_equal_atens(dtype, seed):
    g, y = _rand((2, 4), dtype, seed), _rand((2, 4), dtype, seed + 10, -0.99, 0.99)
    x, t = _rand((2, 4), dtype, seed + 20), _rand((2, 4), dtype, seed + 30)
    p = _rand((2, 4), dtype, seed + 40, 0.05, 0.95)
    exact = [
        (K.tanh_backward(_arr(g), _arr(y)), _aten().tanh_backward(g, y)),
        (K.sigmoid_backward(_arr(g), _arr(y)), _aten().sigmoid_backward(g, y)),
        (K.threshold_backward(_arr(g), _arr(x), 0), _aten().threshold_backward(g, x, 0)),
        (K.leaky_relu_backward(_arr(g), _arr(x), 0.1), _aten().leaky_relu_backward(g, x, 0.1, False)),
        (K.mse_loss_backward(_arr(g[0, 0]), _arr(x), _arr(t), 1), _aten().mse_loss_backward(g[0, 0], x, t, 1)),
        (K.mse_loss_backward(_arr(g[0, 0]), _arr(x), _arr(t), 2), _aten().mse_loss_backward(g[0, 0], x, t, 2)),
        (K.binary_cross_entropy_backward(_arr(g[0, 0]), _arr(p), _arr(t.sigmoid()), None, 1),
         _aten().binary_cross_entropy_backward(g[0, 0], p, t.sigmoid(), None, 1)),
        (K.select_backward(_arr(g[0]), [3, 4], 0, 1), _aten().select_backward(g[0], [3, 4], 0, 1)),
        (K.slice_backward(_arr(g), [2, 9], 1, 1, 9, 2), _aten().slice_backward(g, [2, 9], 1, 1, 9, 2)),
    ]
    for ours, theirs in exact:
        assert ours.exact
        _same(ours, theirs)
    target = torch.tensor([3, 0])
    logp = x.log_softmax(1)
    weight = _rand((4,), dtype, seed + 50, 0.5, 2.0)
    for w in (None, weight):
        for reduction in (0, 1, 2):
            tw = (w[target].sum() if w is not None else torch.tensor(2.0, dtype=dtype)).to(dtype)
            go = g[:, 0].contiguous() if reduction == 0 else g[0, 0]
            ours = K.nll_loss_backward(_arr(go), _arr(logp), _arr(target), None if w is None else _arr(w),
                                       reduction, -100, _arr(tw))
            _same(ours, _aten().nll_loss_backward(go, logp, target, w, reduction, -100, tw))
    soft = x.softmax(1)
    _close(K.softmax_backward(_arr(g), _arr(soft), 1), _aten()._softmax_backward_data(g, soft, 1, dtype))
    _close(K.log_softmax_backward(_arr(g), _arr(logp), 1), _aten()._log_softmax_backward_data(g, logp, 1, dtype))
    _close(K.gelu_backward(_arr(g), _arr(x), "none"), _aten().gelu_backward(g, x))
    _close(K.gelu_backward(_arr(g), _arr(x), "tanh"), _aten().gelu_backward(g, x, approximate="tanh"))
    _close(K.softplus_backward(_arr(g), _arr(x), 2, 20), _aten().softplus_backward(g, x, 2, 20))


def test_agree_is_exact_for_exact_arithmetic_and_loose_only_for_functions():
    a = Arr.of([1.0, 2.0], "float32")
    one_ulp = torch.tensor([1.0, 2.0]).nextafter(torch.tensor(3.0)).tolist()
    assert agree(a, [1.0, 2.0]) and not agree(a, one_ulp)
    assert agree(a.exp(), torch.tensor([1.0, 2.0]).exp().nextafter(torch.tensor(9.0)).tolist())
    assert not agree(a.exp(), (torch.tensor([1.0, 2.0]).exp() * 1.001).tolist())


@pytest.mark.parametrize("source", [
    "x = torch.tensor([1., 2.], requires_grad=True)\n(x ** 0).backward(torch.tensor([-1.5, -2.5]))\n",
    "x = torch.tensor([1., 3., 2.], requires_grad=True)\nx.max().backward(torch.tensor(-1.5))\n",
])
def test_a_zero_gradient_is_shown_with_pytorchs_sign(source):
    """Fixed: the filled-in figure was the formula's -0 where PyTorch's gradient is +0."""
    trace = gradtrace.trace_code("import torch\n" + source)
    ns: dict = {}
    exec("import torch\n" + source, ns)
    step = trace.steps[-1]
    event = next(e for e in step.events if e.kind == "backward")
    text = gradtrace.explain.walkthrough_of(step, event).to_text()
    want = fmt_values(ns["x"].grad.tolist())
    assert f"x.grad = {want}" in text.split("Result:")[0]
    assert f"= {want}" in text.split("Result:")[1]

"""Autograd nodes built by real torch for each formula, and reading their record and torch's own backward,
shared by the formula tests: every case's expected gradient is what torch's backward of the node sends.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


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

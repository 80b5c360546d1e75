"""PyTorch's backward kernels that a formula names, written again over plain numbers.

Place in the pipeline: tracer -> model -> **explain** -> render.

Each function follows the order of operations of the ATen CPU kernel of the same
name (``tanh_backward`` is ``grad · (1 − out · out)``), on :class:`~._arith.Arr`
arrays; results that take exp, erf or a sum over a dimension are marked inexact
(see :func:`~._arith.agree`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, TypeVar

from ._arith import REDUCED, Arr, rounder, where, zeros

_F = TypeVar("_F", bound=Callable[..., Arr])


def _opmath(dtypes: frozenset[str] = REDUCED) -> Callable[[_F], _F]:
    """A kernel that, on arrays of ``dtypes``, computes in float32 and rounds to the dtype once, as the ATen
    kernel does (others round after each operation: measured against PyTorch in tests/test_explain_arith.py)."""

    def wrap(fn: _F) -> _F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Arr:
            dtype = next((a.dtype for a in args if isinstance(a, Arr) and a.is_floating_point()), None)
            if dtype not in dtypes:
                return fn(*args, **kwargs)
            wide = [a.to("float32") if isinstance(a, Arr) and a.dtype in REDUCED else a for a in args]
            out = fn(*wide, **kwargs)
            return out.to(dtype) if out.is_floating_point() else out

        return run  # type: ignore[return-value]

    return wrap


@_opmath()
def tanh_backward(grad: Arr, result: Arr) -> Arr:
    """``grad · (1 − out²)``; PyTorch's kernel computes ``1 − out²`` as one fused multiply-add (one rounding)."""
    rnd = rounder(result.dtype)
    inner = result.like([rnd(float(1 - Fraction(v) * Fraction(v))) if math.isfinite(v) else rnd(1 - v * v)
                         for v in result.data])
    return grad * inner


@_opmath(frozenset({"bfloat16"}))
def sigmoid_backward(grad: Arr, result: Arr) -> Arr:
    return grad * (1 - result) * result


def threshold_backward(grad: Arr, result: Arr, threshold: float) -> Arr:
    return where(result <= threshold, 0, grad)


def leaky_relu_backward(grad: Arr, x: Arr, negative_slope: float) -> Arr:
    return where(x > 0, grad, grad * negative_slope)


def inexact(a: Arr) -> Arr:
    """``a``, marked as a result that may differ from PyTorch's in the last bit (``exact=False``)."""
    a.exact = False
    return a


@_opmath()
def softmax_backward(grad: Arr, result: Arr, dim: int) -> Arr:
    dot = (grad * result).sum([dim], keepdim=True)
    return inexact(result * (grad - dot))


@_opmath()
def log_softmax_backward(grad: Arr, result: Arr, dim: int) -> Arr:
    total = grad.sum([dim], keepdim=True)
    return inexact(grad - result.exp() * total)


def mse_loss_backward(grad: Arr, x: Arr, target: Arr, reduction: int) -> Arr:
    norm = 2.0 / x.numel() if reduction == 1 else 2.0  # held in the tensor's own dtype by the kernel
    return (x - target) * Arr.of(norm, x.dtype) * grad


def nll_loss_backward(grad: Arr, x: Arr, target: Arr, weight: Arr | None, reduction: int, ignore_index: int,
                      total_weight: Arr) -> Arr:
    rnd = rounder(x.dtype)
    rows = x.shape[0] if x.dim() == 2 else 1
    classes = x.shape[-1]
    data = [rnd(0)] * x.numel()
    shared = None
    if reduction != 0 or x.dim() < 2:
        g = grad.data[0]
        shared = rnd(-rnd(g / total_weight.data[0])) if reduction == 1 else -g
    for i in range(rows):
        t = int(target.data[i])
        if t == ignore_index:
            continue
        w = weight.data[t] if weight is not None else None
        if shared is None:
            value = -grad.data[i] if w is None else rnd(-w * grad.data[i])
        else:
            value = shared if w is None else rnd(w * shared)
        data[i * classes + t] = value
    return Arr(data, x.shape, x.dtype, grad.exact and total_weight.exact)


def binary_cross_entropy_backward(grad: Arr, x: Arr, target: Arr, weight: Arr | None, reduction: int) -> Arr:
    rnd = rounder(x.dtype)
    g = grad.expand(x.shape) if grad.shape != x.shape else grad
    eps = rnd(1e-12)
    data = []
    for gv, xv, tv in zip(g.data, x.data, target.data, strict=True):
        denom = max(rnd((rnd(1 - xv)) * xv), eps)
        data.append(rnd(rnd(gv * rnd(xv - tv)) / denom))
    out = Arr(data, x.shape, x.dtype, grad.exact and x.exact and target.exact)
    if weight is not None:
        out = out * weight
    if reduction == 1:
        out = out / float(x.numel())
    return out


@_opmath()
def gelu_backward(grad: Arr, x: Arr, approximate: str) -> Arr:
    if approximate == "tanh":
        beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        kappa = 0.044715

        def one(g: float, v: float) -> float:
            inner = beta * (v + kappa * v * v * v)
            t = math.tanh(inner)
            left = 0.5 * v
            right = 1 + t
            left_d = 0.5 * right
            tanh_d = 1 - t * t
            inner_d = beta * (1 + 3 * kappa * v * v)
            right_d = left * tanh_d * inner_d
            return g * (left_d + right_d)
    else:
        alpha = math.sqrt(0.5)
        beta = (2.0 / math.sqrt(math.pi)) * alpha * 0.5

        def one(g: float, v: float) -> float:
            cdf = 0.5 * (1 + math.erf(v * alpha))
            pdf = math.exp(-0.5 * v * v) * beta
            return g * (cdf + v * pdf)

    return _pairwise(grad, x, one)


@_opmath()
def softplus_backward(grad: Arr, x: Arr, beta: float, threshold: float) -> Arr:
    def one(g: float, v: float) -> float:
        z = math.exp(v * beta) if v * beta < 700 else math.inf
        return g if v * beta > threshold else g * z / (z + 1)

    return _pairwise(grad, x, one)


def _pairwise(grad: Arr, x: Arr, fn: Any) -> Arr:
    from ._arith import _broadcast, _magnitude, promote

    dt = promote(grad.dtype, x.dtype)
    shape, ia, ib = _broadcast(grad.shape, x.shape)
    rnd = rounder(dt)
    data = [rnd(fn(grad.data[i], x.data[j])) for i, j in zip(ia, ib, strict=True)]
    return Arr(data, shape, dt, False, max(_magnitude(grad.data), _magnitude(x.data), _magnitude(data)))


def select_backward(grad: Arr, sizes: Sequence[int], dim: int, index: int) -> Arr:
    out = zeros(sizes, grad.dtype)
    dim %= len(sizes)
    index %= sizes[dim]
    return _write(out, grad.unsqueeze(dim), dim, [index])


def slice_backward(grad: Arr, sizes: Sequence[int], dim: int, start: int | None, end: int | None,
                   step: int) -> Arr:
    out = zeros(sizes, grad.dtype)
    dim %= len(sizes)
    positions = list(range(sizes[dim]))[slice(start, end, step)]
    return _write(out, grad, dim, positions)


def _write(out: Arr, src: Arr, dim: int, positions: list[int]) -> Arr:
    """``out`` with ``src`` written at ``positions`` along ``dim`` (``src`` has len(positions) there)."""
    from ._arith import _indices, _strides

    strides = _strides(out.shape)
    data = list(out.data)
    for idx, v in zip(_indices(src.shape), src.data, strict=True):
        target = idx[:dim] + (positions[idx[dim]],) + idx[dim + 1:]
        data[sum(i * s for i, s in zip(target, strides, strict=True))] = v
    return Arr(data, out.shape, out.dtype, src.exact)

"""Derivative rules of PyTorch's backward nodes, written out and filled in with numbers.

Place in the pipeline: tracer -> model -> **explain** -> render.

Every entry of :data:`FORMULAS` is keyed by the name a backward node reports
(``y.grad_fn.name()`` on torch 2.13) and says, for each input of the node (in
``next_functions`` order), the local rule in plain notation (``∂out/∂self``), the
vector-Jacobian product the node actually computes from the incoming gradient,
and where the rule comes from. :func:`fill_in` writes the rule again with a
node's own numbers, e.g. for ``PowBackward0`` at self = 42, exponent = 2 and an
incoming gradient of 1: ``1 · (2 · 42) = 84``.

The figures are computed with plain Python numbers (no torch), rounded to the
gradient's dtype after each operation and in the order PyTorch's own backward
formula uses (:mod:`._arith`, :mod:`._kernels`); given the gradients the tracer
recorded, every figure shown is PyTorch's own.
A node without an entry gets "no formula recorded for <name>", never a guess.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import AUTOGRAD_PREFIX, NodeInfo
from . import _kernels as K
from ._arith import Arr, TooLarge, agree, bounded, dtype_of, is_float, where, zeros
from ._env import Env, Unavailable
from ._numbers import MAX_ELEMENTS, fmt_number, fmt_power, fmt_values, same_values

Tensor = Any
GradFn = Callable[[Env], Tensor]
ExprFn = Callable[[Env], str]

ACCUMULATE_GRAD = AUTOGRAD_PREFIX + "AccumulateGrad"
#: what separates a filled-in expression from a remark on it (``expr + NOTE + "remark)"``)
NOTE = "   ("
COPY_SLICES = AUTOGRAD_PREFIX + "CopySlices"


@dataclass(frozen=True)
class Rule:
    """How the gradient reaching one input of a node is made from the incoming one."""

    input: str
    local: str
    vjp: str


@dataclass(frozen=True)
class Formula:
    """The derivative rules of one backward node type."""

    name: str
    forward: str
    reason: str
    rules: tuple[Rule, ...]
    grads: Mapping[str, GradFn] = field(default_factory=dict, compare=False, repr=False)
    exprs: Mapping[str, ExprFn] = field(default_factory=dict, compare=False, repr=False)

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(r.input for r in self.rules)

    def rule(self, input: str) -> Rule:
        return next(r for r in self.rules if r.input == input)

    def to_text(self) -> str:
        lines = [f"{self.name}: {self.forward}  ({self.reason})"]
        lines += [f"  {r.local}    grad_{r.input} = {r.vjp}" for r in self.rules]
        return "\n".join(lines)

    __str__ = to_text


@dataclass(frozen=True)
class FilledPart:
    """One input's gradient, as arithmetic with the node's numbers and as values."""

    input: str
    index: int
    rule: str
    expr: str
    values: Any
    dtype: str
    #: whether ``values`` are PyTorch's to the last bit (exact arithmetic, or the recorded gradient it agrees with)
    exact: bool = True
    #: a remark on the arithmetic (a rounding, a masked element), said after the result
    note: str = ""
    #: whether the arithmetic gave PyTorch's figure to the last bit (not only within a few units in the last place)
    bitwise: bool = field(default=True, compare=False)

    @property
    def result(self) -> str:
        return fmt_values(self.values, self.dtype)

    @property
    def text(self) -> str:
        text = self.expr if self.expr == self.result else f"{self.expr} = {self.result}"
        return f"{text}   ({self.note})" if self.note else text


@dataclass(frozen=True)
class Filled:
    """A node's rule filled in with its numbers; ``note`` says what could not be filled in."""

    node: str
    name: str
    known: bool
    parts: tuple[FilledPart, ...] = ()
    note: str | None = None

    def part(self, index: int) -> FilledPart | None:
        return next((p for p in self.parts if p.index == index), None)

    def to_text(self) -> str:
        lines = [f"{self.node} {self.name}"]
        lines += [f"  grad_{p.input} = {p.text}" for p in self.parts]
        if self.note:
            lines.append(f"  ({self.note})")
        return "\n".join(lines)

    __str__ = to_text


# ---------------------------------------------------------------- building the table

FORMULAS: dict[str, Formula] = {}

_Spec = tuple[str, str, str, GradFn, ExprFn]


def _add(name: str, forward: str, reason: str, *specs: _Spec) -> None:
    rules = tuple(Rule(inp, local, vjp) for inp, local, vjp, _g, _e in specs)
    grads = {inp: g for inp, _l, _v, g, _e in specs}
    exprs = {inp: e for inp, _l, _v, _g, e in specs}
    FORMULAS[name] = Formula(name, forward, reason, rules, grads, exprs)


def _alpha_times(env: Env, t: Tensor) -> Tensor:
    alpha = env.attr("alpha", 1)
    return t if alpha == 1 else t * alpha


def _alpha_text(env: Env, text: str) -> str:
    alpha = env.attr("alpha", 1)
    return text if alpha == 1 else f"{text} · {env.fa('alpha')}"


def _neg(env: Env) -> str:
    return f"-({env.fg})" if env.g.numel() > 1 else f"-{env.fg}".replace("--", "")


# ---- sums and differences ------------------------------------------------------
_add("AddBackward0", "out = self + alpha · other", "sum rule: each addend passes the gradient on",
     ("self", "∂out/∂self = 1", "grad", lambda e: e.g, lambda e: e.fg),
     ("other", "∂out/∂other = alpha", "grad · alpha", lambda e: _alpha_times(e, e.g),
      lambda e: _alpha_text(e, e.fg)))
_add("AddBackward1", "out = self + other (a number)", "sum rule: a constant addend has derivative 0",
     ("self", "∂out/∂self = 1", "grad", lambda e: e.g, lambda e: e.fg))
_add("SubBackward0", "out = self − alpha · other", "difference rule",
     ("self", "∂out/∂self = 1", "grad", lambda e: e.g, lambda e: e.fg),
     ("other", "∂out/∂other = −alpha", "−grad · alpha", lambda e: _alpha_times(e, -e.g),
      lambda e: _alpha_text(e, _neg(e))))
_add("SubBackward1", "out = self − other (a number)", "difference rule: a constant has derivative 0",
     ("self", "∂out/∂self = 1", "grad", lambda e: e.g, lambda e: e.fg))
_add("RsubBackward0", "out = other − alpha · self", "difference rule (reversed operands)",
     ("self", "∂out/∂self = −alpha", "−grad · alpha", lambda e: _alpha_times(e, -e.g),
      lambda e: _alpha_text(e, _neg(e))),
     ("other", "∂out/∂other = 1", "grad", lambda e: e.g, lambda e: e.fg))
_add("RsubBackward1", "out = other − alpha · self (other a number, as in 2 - x)",
     "difference rule: the constant has derivative 0",
     ("self", "∂out/∂self = −alpha", "−grad · alpha", lambda e: _alpha_times(e, -e.g),
      lambda e: _alpha_text(e, _neg(e))))
_add("NegBackward0", "out = −self", "constant factor −1",
     ("self", "∂out/∂self = −1", "−grad", lambda e: e.g.neg(), _neg))

# ---- products and quotients ------------------------------------------------------
_add("MulBackward0", "out = self · other", "product rule: each factor's derivative is the other factor",
     ("self", "∂out/∂self = other", "grad · other", lambda e: e.g * e.saved("other"),
      lambda e: f"{e.fg} · {e.fs('other')}"),
     ("other", "∂out/∂other = self", "grad · self", lambda e: e.g * e.saved("self"),
      lambda e: f"{e.fg} · {e.fs('self')}"))
_add("MulBackward1", "out = self · other (a number)", "constant factor rule",
     ("self", "∂out/∂self = other", "grad · other", lambda e: e.g * e.attr("other"),
      lambda e: f"{e.fg} · {e.fa('other')}"))
_add("DivBackward0", "out = self / other", "quotient rule",
     ("self", "∂out/∂self = 1 / other", "grad / other", lambda e: e.g / e.saved("other"),
      lambda e: f"{e.fg} / {e.fs('other')}"),
     ("other", "∂out/∂other = −self / other²", "−grad · ((self / other) / other)",
      lambda e: -e.g * ((e.saved("self") / e.saved("other")) / e.saved("other")),
      lambda e: f"{_neg(e)} · (({e.fs('self')} / {e.fs('other')}) / {e.fs('other')})"))
_add("DivBackward1", "out = self / other (a number)", "constant factor 1/other",
     ("self", "∂out/∂self = 1 / other", "grad / other", lambda e: e.g / e.attr("other"),
      lambda e: f"{e.fg} / {e.fa('other')}"))
_add("ReciprocalBackward0", "out = 1 / self", "power rule with exponent −1: −1/self² = −out²",
     ("self", "∂out/∂self = −out²", "−grad · (out · out)",
      lambda e: -e.g * (e.saved("result") * e.saved("result")),
      lambda e: f"{_neg(e)} · ({e.fs('result')} · {e.fs('result')})"))


def _pow0(e: Env) -> Tensor:
    exponent = e.attr("exponent")
    if exponent == 0:
        return e.g * 0
    return e.g * (exponent * e.saved("self").pow(exponent - 1))


def _pow0_text(e: Env) -> str:
    exponent = e.attr("exponent")
    if exponent == 0:
        return f"{e.fg} · 0"
    return f"{e.fg} · ({e.fa('exponent')} · {fmt_power(e.fs('self'), exponent - 1)})"


_add("PowBackward0", "out = self ** exponent (exponent a number)", "power rule",
     ("self", "∂out/∂self = exponent · self^(exponent−1)", "grad · (exponent · self^(exponent−1))",
      _pow0, _pow0_text))


def _pow1_self(e: Env) -> Tensor:
    exponent = e.saved("exponent")
    return where(exponent == 0.0, 0, e.g * (exponent * e.saved("self").pow(exponent - 1)))


def _pow1_exponent(e: Env) -> Tensor:
    base, exponent = e.saved("self"), e.saved("exponent")
    cond = (base == 0) & (exponent >= 0)
    return e.g * where(cond, 0, e.saved("result") * base.log())


def _pow1_self_text(e: Env) -> str:
    exponent = e.fs("exponent")
    text = f"{e.fg} · ({exponent} · {e.fs('self')}^({exponent} − 1))"
    if any(v == 0 for v in e.saved("exponent").data):  # PyTorch's rule: d(x⁰)/dx is 0, even at x = 0
        text += f" where {exponent} ≠ 0{NOTE}an exponent of 0 gives 0: self⁰ is constant)"
    return text


def _pow1_exponent_text(e: Env) -> str:
    base, exponent = e.saved("self"), e.saved("exponent")
    text = f"{e.fg} · ({e.fs('result')} · ln({e.fs('self')}))"
    if any(b == 0 and x >= 0 for b, x in zip(base.data, exponent.data, strict=False)):
        # ln 0 = −inf, and 0 · −inf is NaN: PyTorch masks those elements to 0
        text += (f" where {e.fs('self')} ≠ 0 or {e.fs('exponent')} < 0{NOTE}at a base of 0, out · ln 0 is "
                 "0 · −inf, which PyTorch takes as 0)")
    return text


_add("PowBackward1", "out = self ** exponent (both tensors)",
     "power rule for self, exponential rule for exponent",
     ("self", "∂out/∂self = exponent · self^(exponent−1)", "grad · (exponent · self^(exponent−1))",
      _pow1_self, _pow1_self_text),
     ("exponent", "∂out/∂exponent = out · ln(self) (0 where self = 0 and exponent ≥ 0)", "grad · (out · ln(self))",
      _pow1_exponent, _pow1_exponent_text))


def _pow2_exponent(e: Env) -> Tensor:
    base = float(e.attr("self"))
    result = e.saved("result")
    if base == 0:
        exponent = e.saved("exponent")
        return e.g * where(exponent >= 0, 0, result * -math.inf)
    return K.inexact(e.g * (result * math.log(base)))


_add("PowBackward2", "out = self ** exponent (self a number, as in 2 ** x)",
     "exponential rule: d(aˣ)/dx = aˣ · ln a",
     ("exponent", "∂out/∂exponent = out · ln(self)", "grad · (out · ln(self))",
      _pow2_exponent, lambda e: f"{e.fg} · ({e.fs('result')} · ln {e.fa('self')})"))

# ---- elementwise functions -------------------------------------------------------
_add("ExpBackward0", "out = exp(self)", "exp is its own derivative",
     ("self", "∂out/∂self = exp(self) = out", "grad · out", lambda e: e.g * e.saved("result"),
      lambda e: f"{e.fg} · {e.fs('result')}"))
_add("Exp2Backward0", "out = 2^self", "exponential rule: d(2ˣ)/dx = 2ˣ · ln 2",
     ("self", "∂out/∂self = out · ln 2", "grad · out · ln 2",
      lambda e: K.inexact(e.g * e.saved("result") * math.log(2.0)),
      lambda e: f"{e.fg} · {e.fs('result')} · ln 2"))
_add("LogBackward0", "out = ln(self)", "d(ln x)/dx = 1/x",
     ("self", "∂out/∂self = 1 / self", "grad / self", lambda e: e.g.div(e.saved("self")),
      lambda e: f"{e.fg} / {e.fs('self')}"))
_add("Log1PBackward0", "out = ln(1 + self)", "d ln(1+x)/dx = 1/(1+x)",
     ("self", "∂out/∂self = 1 / (self + 1)", "grad / (self + 1)", lambda e: e.g / (e.saved("self") + 1),
      lambda e: f"{e.fg} / ({e.fs('self')} + 1)"))
_add("SinBackward0", "out = sin(self)", "d(sin x)/dx = cos x",
     ("self", "∂out/∂self = cos(self)", "grad · cos(self)", lambda e: e.g * e.saved("self").cos(),
      lambda e: f"{e.fg} · cos({e.fs('self')})"))
_add("CosBackward0", "out = cos(self)", "d(cos x)/dx = −sin x",
     ("self", "∂out/∂self = −sin(self)", "grad · −sin(self)", lambda e: e.g * -e.saved("self").sin(),
      lambda e: f"{e.fg} · -sin({e.fs('self')})"))
_add("TanBackward0", "out = tan(self)", "d(tan x)/dx = 1 + tan² x",
     ("self", "∂out/∂self = 1 + out²", "grad · (1 + out²)", lambda e: e.g * (1 + e.saved("result").pow(2)),
      lambda e: f"{e.fg} · (1 + {fmt_power(e.fs('result'), 2)})"))
_add("AtanBackward0", "out = atan(self)", "d(atan x)/dx = 1/(1 + x²)",
     ("self", "∂out/∂self = 1 / (self² + 1)", "grad / (self · self + 1)",
      lambda e: e.g / (e.saved("self") * e.saved("self") + 1),
      lambda e: f"{e.fg} / ({e.fs('self')} · {e.fs('self')} + 1)"))
_add("TanhBackward0", "out = tanh(self)", "d(tanh x)/dx = 1 − tanh² x",
     ("self", "∂out/∂self = 1 − out²", "grad · (1 − out²)",
      lambda e: K.tanh_backward(e.g, e.saved("result")),
      lambda e: f"{e.fg} · (1 − {fmt_power(e.fs('result'), 2)})"))
_add("SigmoidBackward0", "out = σ(self) = 1 / (1 + e^(−self))", "d σ(x)/dx = σ(x) · (1 − σ(x))",
     ("self", "∂out/∂self = out · (1 − out)", "grad · (1 − out) · out",
      lambda e: K.sigmoid_backward(e.g, e.saved("result")),
      lambda e: f"{e.fg} · (1 − {e.fs('result')}) · {e.fs('result')}"))
_add("SqrtBackward0", "out = √self", "power rule with exponent ½: 1/(2√x)",
     ("self", "∂out/∂self = 1 / (2 · out)", "grad / (2 · out)", lambda e: e.g / (2 * e.saved("result")),
      lambda e: f"{e.fg} / (2 · {e.fs('result')})"))
_add("ReluBackward0", "out = max(self, 0)", "relu passes the gradient where its output is positive, else 0",
     ("self", "∂out/∂self = 1 if out > 0 else 0", "grad where out > 0, else 0",
      lambda e: K.threshold_backward(e.g, e.saved("result"), 0),
      lambda e: f"{e.fg} where {e.fs('result')} > 0"))
_add("LeakyReluBackward0", "out = self if self > 0 else slope · self",
     "piecewise linear: slope 1 or negative_slope",
     ("self", "∂out/∂self = 1 if self > 0 else negative_slope", "grad · (1 or negative_slope)",
      lambda e: K.leaky_relu_backward(e.g, e.saved("self"), e.attr("negative_slope")),
      lambda e: f"{e.fg} · (1 where {e.fs('self')} > 0, else {e.fa('negative_slope')})"))
_add("AbsBackward0", "out = |self|", "d|x|/dx = sign(x) (0 at 0)",
     ("self", "∂out/∂self = sign(self)", "grad · sign(self)", lambda e: e.g * e.saved("self").sgn(),
      lambda e: f"{e.fg} · sign({e.fs('self')})"))


def _clamp(e: Env) -> Tensor:
    x = e.saved("self")
    lo, hi = e.attr("min"), e.attr("max")
    keep = Arr.full(x.shape, True, "bool")
    if lo is not None:
        keep = keep & (x >= lo)
    if hi is not None:
        keep = keep & (x <= hi)
    return where(keep, e.g, 0)


def _clamp_range(e: Env) -> str:
    """``0 ≤ [..] ≤ 3``, or only the bound the call gave (``clamp(min=0)``: ``[..] ≥ 0``)."""
    lo, hi = e.attr("min"), e.attr("max")
    if lo is None:
        return f"{e.fs('self')} ≤ {e.fa('max')}"
    if hi is None:
        return f"{e.fs('self')} ≥ {e.fa('min')}"
    return f"{e.fa('min')} ≤ {e.fs('self')} ≤ {e.fa('max')}"


_add("ClampBackward1", "out = clamp(self, min, max)", "1 inside [min, max], 0 where the value was clipped",
     ("self", "∂out/∂self = 1 if min ≤ self ≤ max else 0", "grad where min ≤ self ≤ max, else 0",
      _clamp, lambda e: f"{e.fg} where {_clamp_range(e)}"))
_add("ClampMinBackward0", "out = max(self, min)", "1 where self ≥ min, 0 where it was clipped",
     ("self", "∂out/∂self = 1 if self ≥ min else 0", "grad where self ≥ min, else 0",
      _clamp, lambda e: f"{e.fg} where {e.fs('self')} ≥ {e.fa('min')}"))


def _extreme(e: Env, lose: str) -> Tensor:
    x, y = e.saved("self"), e.saved("other")
    shared = where(x == y, e.g / 2, e.g)
    mask = {"self>": x > y, "self<": x < y}[f"self{lose}"]
    return shared.masked_fill(mask, 0)


_add("MaximumBackward0", "out = maximum(self, other)",
     "the larger input gets the gradient; a tie splits it in half",
     ("self", "∂out/∂self = 1 if self > other, ½ if equal, else 0",
      "grad (½ on ties, 0 where self < other)",
      lambda e: _extreme(e, "<"),
      lambda e: f"{e.fg} where {e.fs('self')} ≥ {e.fs('other')} (½ on ties)"),
     ("other", "∂out/∂other = 1 if other > self, ½ if equal, else 0",
      "grad (½ on ties, 0 where self > other)",
      lambda e: _extreme(e, ">"),
      lambda e: f"{e.fg} where {e.fs('other')} ≥ {e.fs('self')} (½ on ties)"))
_add("MinimumBackward0", "out = minimum(self, other)",
     "the smaller input gets the gradient; a tie splits it in half",
     ("self", "∂out/∂self = 1 if self < other, ½ if equal, else 0",
      "grad (½ on ties, 0 where self > other)",
      lambda e: _extreme(e, ">"),
      lambda e: f"{e.fg} where {e.fs('self')} ≤ {e.fs('other')} (½ on ties)"),
     ("other", "∂out/∂other = 1 if other < self, ½ if equal, else 0",
      "grad (½ on ties, 0 where self < other)",
      lambda e: _extreme(e, "<"),
      lambda e: f"{e.fg} where {e.fs('other')} ≤ {e.fs('self')} (½ on ties)"))


def _spread_extreme(e: Env) -> Tensor:
    mask = e.saved("self") == e.saved("result")
    return mask * (e.g / mask.sum())


def _spread_text(e: Env) -> str:
    """``grad / k`` with the number k of elements that tie for the extreme written out."""
    k = sum(bool(v) for v in (e.saved("self") == e.saved("result")).data)
    return f"{e.fg} / {k} where {e.fs('self')} = {e.fs('result')}"


_add("MaxBackward1", "out = max(self) (all elements)",
     "only the largest element moves the max; ties share equally",
     ("self", "∂out/∂self_i = 1/k where self_i is one of the k maxima, else 0", "grad / k at the maxima",
      _spread_extreme, _spread_text))
_add("MinBackward1", "out = min(self) (all elements)",
     "only the smallest element moves the min; ties share equally",
     ("self", "∂out/∂self_i = 1/k where self_i is one of the k minima, else 0", "grad / k at the minima",
      _spread_extreme, _spread_text))
_add("WhereBackward0", "out = where(condition, self, other)",
     "each element comes from one input, which gets its gradient",
     ("self", "∂out/∂self = 1 where condition else 0", "grad where condition, else 0",
      lambda e: _where(e, True), lambda e: f"{e.fg} where {e.fs('condition')}"),
     ("other", "∂out/∂other = 0 where condition else 1", "grad where not condition, else 0",
      lambda e: _where(e, False), lambda e: f"{e.fg} where not {e.fs('condition')}"))


def _where(e: Env, take_self: bool) -> Tensor:
    cond = e.saved("condition").as_bool()
    return where(cond, e.g, 0) if take_self else where(cond, 0, e.g)


# ---- linear algebra --------------------------------------------------------------
_add("MmBackward0", "out = self @ mat2 (matrix · matrix)",
     "matrix product rule: the other factor, transposed",
     ("self", "∂out/∂self: grad_self = grad @ mat2ᵀ", "grad @ mat2ᵀ", lambda e: e.g.mm(e.saved("mat2").t()),
      lambda e: f"{e.fg} @ {e.fmt(e.saved('mat2').t())}"),
     ("mat2", "∂out/∂mat2: grad_mat2 = selfᵀ @ grad", "selfᵀ @ grad", lambda e: e.saved("self").t().mm(e.g),
      lambda e: f"{e.fmt(e.saved('self').t())} @ {e.fg}"))
_add("MvBackward0", "out = self @ vec (matrix · vector)", "matrix product rule",
     ("self", "grad_self = grad ⊗ vec (outer product)", "outer(grad, vec)",
      lambda e: e.g.outer(e.saved("vec")), lambda e: f"outer({e.fg}, {e.fs('vec')})"),
     ("vec", "grad_vec = selfᵀ @ grad", "selfᵀ @ grad", lambda e: e.saved("self").t().mv(e.g),
      lambda e: f"{e.fmt(e.saved('self').t())} @ {e.fg}"))
_add("DotBackward0", "out = self · tensor (dot product of vectors)", "product rule, element by element",
     ("self", "∂out/∂self = tensor", "grad · tensor", lambda e: e.g * e.saved("tensor"),
      lambda e: f"{e.fg} · {e.fs('tensor')}"),
     ("tensor", "∂out/∂tensor = self", "grad · self", lambda e: e.g * e.saved("self"),
      lambda e: f"{e.fg} · {e.fs('self')}"))


def _scaled(e: Env, name: str, t: Tensor) -> Tensor:
    factor = e.attr(name, 1)
    return t if factor == 1 else t * factor


def _addmm_bias_text(e: Env) -> str:
    text = e.fg if e.attr("beta", 1) == 1 else f"{e.fa('beta')} · {e.fg}"
    shape = e.shape(0)
    if shape is not None and tuple(shape) != tuple(e.g.shape):
        text += f" summed to shape {tuple(shape)}"
    return text


def _sum_to(e: Env, t: Tensor, index: int) -> Tensor:
    shape = e.shape(index)
    if shape is None or tuple(t.shape) == tuple(shape):
        return t
    return t.sum_to_size(shape) if shape else t.sum()


_add("AddmmBackward0", "out = beta · self + alpha · (mat1 @ mat2) (a linear layer)",
     "sum rule and matrix product rule",
     ("self", "∂out/∂self = beta (summed over broadcast rows)", "beta · grad, summed to self's shape",
      lambda e: _sum_to(e, _scaled(e, "beta", e.g), 0), _addmm_bias_text),
     ("mat1", "grad_mat1 = alpha · grad @ mat2ᵀ", "alpha · (grad @ mat2ᵀ)",
      lambda e: _scaled(e, "alpha", e.g.mm(e.saved("mat2").t())),
      lambda e: f"{e.fa('alpha')} · ({e.fg} @ {e.fmt(e.saved('mat2').t())})"),
     ("mat2", "grad_mat2 = alpha · mat1ᵀ @ grad", "alpha · (mat1ᵀ @ grad)",
      lambda e: _scaled(e, "alpha", e.saved("mat1").t().mm(e.g)),
      lambda e: f"{e.fa('alpha')} · ({e.fmt(e.saved('mat1').t())} @ {e.fg})"))

# ---- reductions ------------------------------------------------------------------


def _dims(e: Env, ndim: int) -> list[int]:
    dim = e.attr("dim")
    dims = list(range(ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return sorted(d % ndim if ndim else 0 for d in dims)


def _sum_backward(e: Env) -> Tensor:
    sizes = e.sizes()
    g = e.g
    if not e.attr("keepdim", False) and sizes:
        for d in _dims(e, len(sizes)):
            g = g.unsqueeze(d)
    return g.expand(sizes)


def _count(e: Env) -> int:
    sizes = e.sizes()
    return math.prod(sizes[d] for d in _dims(e, len(sizes))) if sizes else 1


_add("SumBackward0", "out = Σ self (all elements)", "sum rule: every element counts once",
     ("self", "∂out/∂self_i = 1", "grad copied to every element", lambda e: e.g.expand(e.sizes()),
      lambda e: f"{e.fg} copied to shape {e.sizes()}"))
_add("SumBackward1", "out = Σ self along dim", "sum rule: every element counts once",
     ("self", "∂out/∂self_i = 1", "grad copied along dim", _sum_backward,
      lambda e: f"{e.fg} copied along dim {e.fa('dim')}"))
_add("MeanBackward0", "out = (Σ self) / n (all n elements)", "sum rule and constant factor 1/n",
     ("self", "∂out/∂self_i = 1/n", "grad / n, copied to every element",
      lambda e: e.g.expand(e.sizes()) / math.prod(e.sizes()),
      lambda e: f"{e.fg} / {math.prod(e.sizes())} copied to shape {e.sizes()}"))
_add("MeanBackward1", "out = (Σ self along dim) / n", "sum rule and constant factor 1/n",
     ("self", "∂out/∂self_i = 1/n (n elements along dim)", "grad / n, copied along dim",
      lambda e: _sum_backward(e) / _count(e),
      lambda e: f"{e.fg} / {_count(e)} copied along dim {e.fa('dim')}"))


def _max_dim(e: Env) -> Tensor:
    g, idx = e.g, e.saved("indices")
    if not e.attr("keepdim", False):
        g, idx = g.unsqueeze(e.attr("dim")), idx.unsqueeze(e.attr("dim"))
    return zeros(e.sizes(), e.g.dtype).scatter(e.attr("dim"), idx, g)


_add("MaxBackward0", "values, indices = max(self, dim)", "only the selected element moves each maximum",
     ("self", "∂out/∂self_i = 1 at the recorded index, else 0", "grad placed at indices",
      _max_dim, lambda e: f"{e.fg} placed at indices {e.fs('indices')} along dim {e.fa('dim')}"))
_add("MinBackward0", "values, indices = min(self, dim)", "only the selected element moves each minimum",
     ("self", "∂out/∂self_i = 1 at the recorded index, else 0", "grad placed at indices",
      _max_dim, lambda e: f"{e.fg} placed at indices {e.fs('indices')} along dim {e.fa('dim')}"))

# ---- indexing --------------------------------------------------------------------


def _select(e: Env) -> Tensor:
    return K.select_backward(e.g, list(e.sizes()), e.attr("dim"), e.attr("index"))


def _slice(e: Env) -> Tensor:
    return K.slice_backward(e.g, list(e.sizes()), e.attr("dim"), e.attr("start"), e.attr("end"),
                                  e.attr("step"))


def _indices(e: Env) -> list[Tensor]:
    found = sorted((k for k in e._saved if k.startswith("indices[")), key=lambda k: int(k[8:-1]))
    if not found:
        raise Unavailable("the index tensors are not in the snapshot")
    return [e.saved(k) for k in found]


def _index(e: Env) -> Tensor:
    indices = _indices(e)  # read first: a missing index tensor is said before a result too large to write out
    return zeros(e.sizes(), e.g.dtype).index_put_accumulate(indices, e.g)


_add("SelectBackward0", "out = self[index] (one position along dim)",
     "the picked element gets the gradient, others 0",
     ("self", "∂out/∂self_i = 1 at the index, else 0", "zeros with grad written at index",
      _select, lambda e: f"zeros{e.sizes()} with {e.fg} at [{e.fa('index')}] along dim {e.fa('dim')}"))
_add("SliceBackward0", "out = self[start:end:step] along dim", "the kept elements get the gradient, others 0",
     ("self", "∂out/∂self_i = 1 inside the slice, else 0", "zeros with grad written into the slice",
      _slice, lambda e: f"zeros{e.sizes()} with {e.fg} in the slice"))
_add("IndexBackward0", "out = self[indices] (advanced indexing)",
     "each picked element gets its gradient; repeats add up",
     ("self", "∂out/∂self_i = number of times i was picked", "zeros with grad added at indices",
      _index, lambda e: f"zeros{e.sizes()} with {e.fg} added at the indices"))

# ---- shape changes: the numbers move, nothing is multiplied ----------------------------


def _inverse(dims: Any) -> list[int]:
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d % len(dims)] = i
    return inv


def _squeeze_back(e: Env) -> Tensor:
    return e.g.reshape(e.sizes())


_add("ExpandBackward0", "out = self.expand(size)", "a copied element counts once per copy: gradients add up",
     ("self", "∂out/∂self = 1 per copy", "grad summed over the copies",
      lambda e: e.g.sum_to_size(e.sizes()) if e.sizes() else e.g.sum(),
      lambda e: f"{e.fg} summed to shape {e.sizes()}"))
_add("ViewBackward0", "out = self.view(shape) / reshape / flatten", "same numbers, new shape",
     ("self", "∂out/∂self = identity", "grad reshaped back", lambda e: e.g.reshape(e.sizes()),
      lambda e: f"{e.fg} reshaped to {e.sizes()}"))
_add("UnsafeViewBackward0", "out = self reshaped (a copy)", "same numbers, new shape",
     ("self", "∂out/∂self = identity", "grad reshaped back", lambda e: e.g.reshape(e.sizes()),
      lambda e: f"{e.fg} reshaped to {e.sizes()}"))
_add("TBackward0", "out = selfᵀ", "transposing is undone by transposing",
     ("self", "∂out/∂self = identity (transposed)", "gradᵀ", lambda e: e.g.t(), lambda e: f"{e.fg}ᵀ"))
_add("TransposeBackward0", "out = self.transpose(dim0, dim1)", "a swap of dims is undone by the same swap",
     ("self", "∂out/∂self = identity (swapped)", "grad.transpose(dim0, dim1)",
      lambda e: e.g.transpose(e.attr("dim0"), e.attr("dim1")),
      lambda e: f"{e.fg}.transpose({e.fa('dim0')}, {e.fa('dim1')})"))
_add("PermuteBackward0", "out = self.permute(dims)", "a permutation is undone by its inverse",
     ("self", "∂out/∂self = identity (permuted)", "grad.permute(inverse of dims)",
      lambda e: e.g.permute(_inverse(e.attr("dims"))),
      lambda e: f"{e.fg}.permute{tuple(_inverse(e.attr('dims')))}"))
_add("UnsqueezeBackward0", "out = self.unsqueeze(dim)", "adding a dim of size 1 is undone by removing it",
     ("self", "∂out/∂self = identity", "grad.squeeze(dim)", lambda e: e.g.squeeze(e.attr("dim")),
      lambda e: f"{e.fg}.squeeze({e.fa('dim')})"))
_SQUEEZES = (("SqueezeBackward0", "self.squeeze()"), ("SqueezeBackward1", "self.squeeze(dim)"),
             ("SqueezeBackward2", "self.squeeze(dims)"),
             ("SqueezeBackward4", "self.squeeze(dim) (from matmul)"))
for _name, _what in _SQUEEZES:
    _add(_name, f"out = {_what}", "removing dims of size 1 is undone by putting them back",
         ("self", "∂out/∂self = identity", "grad reshaped back", _squeeze_back,
          lambda e: f"{e.fg} reshaped to {e.sizes()}"))
_add("CloneBackward0", "out = self.clone()", "a copy: identity",
     ("self", "∂out/∂self = 1", "grad", lambda e: e.g, lambda e: e.fg))
_add("AliasBackward0", "out = alias of self", "the same numbers: identity",
     ("self", "∂out/∂self = 1", "grad", lambda e: e.g, lambda e: e.fg))


def _cat_part(e: Env, index: int) -> Tensor:
    dim = e.attr("dim")
    offset = 0
    for i in range(index):
        shape = e.shape(i)
        if shape is None:
            raise Unavailable("the shapes of the concatenated inputs are not in the snapshot")
        offset += shape[dim] if shape else 0
    shape = e.shape(index)
    if shape is None:
        raise Unavailable("the shapes of the concatenated inputs are not in the snapshot")
    return e.g.narrow(dim, offset, shape[dim])


def _stack_part(e: Env, index: int) -> Tensor:
    return e.g.select(e.attr("dim"), index)


def _join(parts: list[Tensor], dim: int) -> Tensor:
    """``cat(parts, dim)`` of arrays of one shape but along ``dim``."""
    moved = [p.transpose(0, dim) for p in parts]
    data = [v for p in moved for v in p.data]
    shape = (sum(p.shape[0] for p in moved), *moved[0].shape[1:])
    return moved[0].like(data, shape=shape, exact=all(p.exact for p in parts)).transpose(0, dim)


def _each_output(e: Env, shapes: list[tuple[int, ...]]) -> list[Tensor]:
    """The gradient of every output; an output no gradient reached counts as zeros (as in PyTorch)."""
    if len(e.outputs) != len(shapes):
        raise Unavailable("the gradients of its outputs are not in the snapshot")
    return [Arr.full(shape, 0, e.dtype) if g is None else g for g, shape in zip(e.outputs, shapes, strict=True)]


def _unbind_back(e: Env) -> Tensor:
    got = [g for g in e.outputs if g is not None]
    if not got:
        raise Unavailable("no output got a gradient")
    dim = e.attr("dim", 0) % (got[0].dim() + 1)
    return _join([g.unsqueeze(dim) for g in _each_output(e, [got[0].shape] * len(e.outputs))], dim)


def _split_back(e: Env) -> Tensor:
    sizes = e.attr("self_sym_sizes")
    if sizes is None:
        raise Unavailable("the input's shape is not in the snapshot")
    sizes = tuple(sizes)
    dim = e.attr("dim", 0) % len(sizes)
    each = e.attr("split_sizes")
    if each is None:
        step = e.attr("split_size")
        each = [min(step, sizes[dim] - start) for start in range(0, sizes[dim], step)] if step else [sizes[dim]]
    shapes = [sizes[:dim] + (n,) + sizes[dim + 1:] for n in each]
    return _join(_each_output(e, shapes), dim)


_add("UnbindBackward0", "out_k = self.select(dim, k), one output for each k",
     "each output is one slice of the input: their gradients are stacked back in place",
     ("self", "∂out_k/∂self = identity on slice k", "stack(grad of each output, dim)", _unbind_back,
      lambda e: f"the {len(e.outputs)} outputs' gradients stacked along dim {e.fa('dim')}"))
for _name in ("SplitBackward0", "SplitWithSizesBackward0"):
    _add(_name, "out_k = k-th piece of self along dim (split, chunk)",
         "each output is one piece of the input: their gradients are joined back in place",
         ("self", "∂out_k/∂self = identity on piece k", "cat(grad of each output, dim)", _split_back,
          lambda e: f"the {len(e.outputs)} outputs' gradients joined along dim {e.fa('dim')}"))

_add("CatBackward0", "out = cat(tensors, dim)", "each input gets back its own block of the gradient",
     ("tensors[i]", "∂out/∂tensors[i] = identity on its block", "the i-th block of grad along dim",
      lambda e: _cat_part(e, 0), lambda e: f"block of {e.fg} along dim {e.fa('dim')}"))
_add("StackBackward0", "out = stack(tensors, dim)", "each input gets back its own slice of the gradient",
     ("tensors[i]", "∂out/∂tensors[i] = identity on its slice", "grad.select(dim, i)",
      lambda e: _stack_part(e, 0), lambda e: f"slice of {e.fg} along dim {e.fa('dim')}"))

# ---- softmax and losses ----------------------------------------------------------


def _softmax(e: Env) -> Tensor:
    return K.softmax_backward(e.g, e.saved("result"), e.attr("dim"))


def _log_softmax(e: Env) -> Tensor:
    return K.log_softmax_backward(e.g, e.saved("result"), e.attr("dim"))


_add("SoftmaxBackward0", "out_i = e^(self_i) / Σ_j e^(self_j)",
     "quotient rule: ∂out_i/∂self_j = out_i · (δ_ij − out_j)",
     ("self", "∂out_i/∂self_j = out_i · (δ_ij − out_j)", "out · (grad − Σ(grad · out))",
      _softmax, lambda e: f"{e.fs('result')} · ({e.fg} − Σ({e.fg} · {e.fs('result')}))"))
_add("LogSoftmaxBackward0", "out_i = self_i − ln Σ_j e^(self_j)", "d/dself_j: δ_ij − softmax_j",
     ("self", "∂out_i/∂self_j = δ_ij − softmax(self)_j", "grad − e^out · Σ grad",
      _log_softmax, lambda e: f"{e.fg} − exp({e.fs('result')}) · Σ{e.fg}"))

def _mse(e: Env, first: str, second: str) -> Tensor:
    return K.mse_loss_backward(e.g, e.saved(first), e.saved(second), e.attr("reduction", 1))


def _mse_text(e: Env, first: str, second: str) -> str:
    n = e.saved("self").numel() if e.attr("reduction", 1) == 1 else 1
    return f"{e.fg} · 2 · ({e.fs(first)} − {e.fs(second)}) / {n}"


_add("MseLossBackward0", "out = mean((self − target)²) (reduction='mean')",
     "power rule and chain rule, 1/n from the mean",
     ("self", "∂out/∂self = 2 · (self − target) / n", "grad · 2 · (self − target) / n",
      lambda e: _mse(e, "self", "target"), lambda e: _mse_text(e, "self", "target")),
     ("target", "∂out/∂target = −2 · (self − target) / n", "grad · 2 · (target − self) / n",
      lambda e: _mse(e, "target", "self"), lambda e: _mse_text(e, "target", "self")))


def _nll_weight(e: Env) -> Arr | None:
    return e.saved("weight") if e.has("weight") and e.attr("weight") is not None else None


def _nll(e: Env) -> Tensor:
    return K.nll_loss_backward(e.g, e.saved("self"), e.saved("target"), _nll_weight(e),
                               e.attr("reduction", 1), e.attr("ignore_index", -100), e.saved("total_weight"))


def _nll_text(e: Env) -> str:
    """``w[t] · (−grad / total_weight)`` placed at each row's target, in the kernel's order, as the reduction
    and the weights make it; rows whose target is ``ignore_index`` get 0 and are named."""
    reduction, ignore = e.attr("reduction", 1), e.attr("ignore_index", -100)
    target = e.saved("target")
    picked = _neg(e) if reduction != 1 else f"({_neg(e)} / {e.fs('total_weight')})"
    weight = _nll_weight(e)
    if weight is None and reduction == 1:
        picked = picked[1:-1]
    ignored = [i for i, t in enumerate(target.data) if int(t) == ignore]
    if weight is not None:
        w = [0.0 if int(t) == ignore else weight.data[int(t)] for t in target.data]
        one = len(set(w)) == 1
        picked = f"{e.fmt(Arr(w[:1] if one else w, () if one else target.shape, weight.dtype))} · {picked}"
    if target.dim() == 0:
        if ignored:
            return f"0{NOTE}the target is ignore_index {ignore}: it adds nothing)"
        return f"{picked} at target {e.fs('target')}"
    text = f"{picked} at targets {e.fs('target')}"
    if ignored:
        rows = ", ".join(str(i) for i in ignored)
        text += f" except rows {ignored}{NOTE}row{'s' if len(ignored) > 1 else ''} {rows}: target {ignore} is " \
                "ignore_index, which adds nothing)"
    return text


_add("NllLossBackward0", "out = −Σ_i w[target_i] · self[i, target_i] / Σ_i w[target_i] (reduction='mean'; "
     "'sum' drops the division, 'none' keeps one loss per row)",
     "only the picked log-probability of each row moves the loss; a row whose target is ignore_index adds nothing",
     ("self", "∂out/∂self[i, c] = −w[c] / total_weight if c = target_i else 0",
      "−w[target_i] · grad / total_weight at each row's target (no division for 'sum'; grad_i for 'none')",
      _nll, _nll_text))


def _bce_text(e: Env) -> str:
    """In the kernel's order: ``grad · (p − t) / (p · (1 − p))``, times the weights, over n for the mean."""
    p, t = e.fs("self"), e.fs("target")
    text = f"{e.fg} · ({p} − {t}) / ({p} · (1 − {p}))"
    if e.has("weight") and e.attr("weight") is not None:
        text += f" · {e.fs('weight')}"
    if e.attr("reduction", 1) == 1:
        text += f" / {e.saved('self').numel()}"
    return text


def _bce(e: Env) -> Tensor:
    weight = e.saved("weight") if e.has("weight") and e.attr("weight") is not None else None
    return K.binary_cross_entropy_backward(e.g, e.saved("self"), e.saved("target"), weight,
                                                 e.attr("reduction", 1))


_add("BinaryCrossEntropyBackward0", "out = −mean(t · ln p + (1 − t) · ln(1 − p))",
     "d/dp: (p − t) / (p · (1 − p)), 1/n from the mean",
     ("self", "∂out/∂self = (self − target) / (self · (1 − self)) / n", "grad · (p − t) / (p(1 − p)) / n",
      _bce, _bce_text))
#: the constants of PyTorch's tanh approximation of gelu: √(2/π) and the cubic term's factor
_GELU_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
_GELU_KAPPA = 0.044715


def _gelu_text(e: Env) -> str:
    x, g = e.fs("self"), e.fg
    if e.attr("approximate", "none") != "tanh":
        return f"{g} · (Φ({x}) + {x} · φ({x}))"
    beta, kappa = fmt_number(_GELU_BETA, e.dtype), fmt_number(_GELU_KAPPA, e.dtype)
    inner = f"tanh({beta} · ({x} + {kappa} · {fmt_power(x, 3)}))"
    return (f"{g} · (0.5 · (1 + {inner}) + 0.5 · {x} · (1 − {inner}²) · {beta} · "
            f"(1 + {fmt_number(3 * _GELU_KAPPA, e.dtype)} · {fmt_power(x, 2)}))")


_add("GeluBackward0", "out = self · Φ(self); approximate='tanh': 0.5 · self · (1 + tanh(√(2/π) · (self + "
     "0.044715 · self³)))",
     "product rule with the normal CDF Φ (or with its tanh approximation)",
     ("self", "∂out/∂self = Φ(self) + self · φ(self) (approximate='tanh': the derivative of the tanh form)",
      "grad · (Φ(self) + self · φ(self))",
      lambda e: K.gelu_backward(e.g, e.saved("self"), e.attr("approximate", "none")), _gelu_text))


def _softplus_text(e: Env) -> str:
    """``grad · σ(beta · self)``; above the threshold (beta · self > threshold) softplus is linear, and the
    gradient passes through unchanged."""
    beta, threshold = e.attr("beta", 1), e.attr("threshold", 20)
    x = e.saved("self")
    scaled = f"{e.fa('beta')} · {e.fs('self')}"
    text = f"{e.fg} · σ({scaled})"
    if any(v * beta > threshold for v in x.data):
        text += f" where {scaled} ≤ {e.fa('threshold')}, else {e.fg}"
    return text


_add("SoftplusBackward0", "out = ln(1 + e^(beta · self)) / beta (just self where beta · self > threshold)",
     "chain rule: the derivative is σ(beta · self); above the threshold softplus is self, derivative 1",
     ("self", "∂out/∂self = σ(beta · self), or 1 where beta · self > threshold",
      "grad · σ(beta · self), or grad where beta · self > threshold",
      lambda e: K.softplus_backward(e.g, e.saved("self"), e.attr("beta", 1), e.attr("threshold", 20)),
      _softplus_text))

# ---- nodes without a formula of their own ------------------------------------------
_add(COPY_SLICES, "base[view] = value (an in-place write through a view)",
     "the written region's old values no longer matter: their gradient is 0 for the base",
     ("base", "grad_base = grad with the written region set to 0", "grad, zeroed where the view was written",
      lambda _e: _no_geometry(), lambda _e: _no_geometry()),
     ("value", "grad_value = grad restricted to the written region", "grad[view region]",
      lambda _e: _no_geometry(), lambda _e: _no_geometry()))
_add(ACCUMULATE_GRAD, "leaf.grad += incoming gradient",
     "the end of the chain: gradients of a leaf are summed into .grad",
     (".grad", ".grad ← .grad + grad (or grad when .grad is None)", "grad added to .grad",
      lambda e: e.g, lambda e: e.fg))


def _no_geometry() -> Any:
    raise Unavailable("the region a view wrote is not visible from Python; "
                      "the walkthrough shows torch's numbers")


# ---------------------------------------------------------------- looking up and filling in


def formula_for(name: str) -> Formula | None:
    """The formula of a node type (``node.name()``), or ``None`` when none is recorded.

    ``AccumulateGrad`` and ``CopySlices`` are found with or without torch's
    ``torch::autograd::`` prefix.
    """
    return FORMULAS.get(name) or FORMULAS.get(AUTOGRAD_PREFIX + name)


#: the node in which a module's full backward hooks run (one output per tensor passing through, output i to input i)
HOOK_NODE = "BackwardHookFunctionBackward"
#: nodes of PyTorch's own C++ classes whose names end in "Backward" without a number (not autograd.Functions)
_NOT_PYTHON_FUNCTIONS = frozenset({"UndefinedGradBackward", "SendRpcBackward", "RecvRpcBackward"})


def no_formula_text(name: str) -> str:
    """What is said of a node without a formula: who computes its gradient, never a guess at how.

    PyTorch names the node of a Python ``autograd.Function`` subclass ``<Class>Backward`` (built-in nodes
    end in a number: ``MulBackward0``); ``nn.Module`` full backward hooks run in a
    ``BackwardHookFunctionBackward`` node, an autograd.Function that passes gradients on unchanged.
    """
    if name == HOOK_NODE:
        return ("passes the gradient on unchanged; a module's full backward hooks "
                "(register_full_backward_hook) run here and may replace it")
    m = re.fullmatch(r"([A-Za-z_]\w*?)Backward", name)
    if m and name not in _NOT_PYTHON_FUNCTIONS:
        return (f"the backward() of the autograd.Function {m[1]}: Python code, so the figures are what it "
                "returned, not a formula")
    return f"no formula recorded for {name}"


def rule_text(name: str, index: int = 0) -> str:
    """The local rule for input ``index`` of a node type, or an honest 'no formula recorded'."""
    formula = formula_for(name)
    if formula is None:
        return no_formula_text(name)
    rule = formula.rules[min(index, len(formula.rules) - 1)]
    return rule.local


def _rule_index(formula: Formula, index: int) -> int | None:
    if formula.inputs and formula.inputs[0] == "tensors[i]":
        return 0
    return index if index < len(formula.rules) else None


def _grad_values(grad: Any, dtype: str) -> Arr:
    """The incoming gradient as an array: plain values in ``dtype``, or anything with ``tolist()`` and ``dtype``."""
    if isinstance(grad, Arr):
        return grad
    if hasattr(grad, "tolist") and hasattr(grad, "dtype"):
        dtype, grad = dtype_of(str(grad.dtype)), grad.tolist()
    arr = Arr.of(grad, dtype)
    return arr if arr.is_floating_point() else arr.to(dtype_of(dtype) if is_float(dtype_of(dtype)) else "float32")


def fill_in(node: NodeInfo, grad: Any, dtype: str = "float32",
            input_shapes: tuple[tuple[int, ...] | None, ...] | None = None,
            sent: tuple[Any, ...] | None = None, outputs: tuple[Any, ...] = ()) -> Filled:
    """Write ``node``'s rule with its own numbers and the incoming ``grad``.

    ``grad`` is plain values (a number or nested lists) in ``dtype``. ``input_shapes``
    (the shapes of the node's inputs, in ``next_functions`` order) lets broadcast
    gradients be summed back, and is needed by ``cat``. Only inputs that are connected
    (``node.inputs[i]`` not ``None``) are filled in. Returns a :class:`Filled` whose
    ``note`` says what could not be filled in and why.

    The arithmetic is done on plain Python numbers, rounded to ``dtype`` after each
    operation (see :mod:`._arith`). ``sent``, the gradients the tracer recorded leaving
    the node (values, in input order), makes each figure PyTorch's own wherever the
    formula gives it: bit for bit for +, −, ×, ÷, within a few units in the last place
    where the arithmetic takes exp, cos or a sum whose order PyTorch chooses. ``outputs``, for a node of
    several outputs (unbind, split, chunk), is the gradient each output got (None where none came);
    ``grad`` is then any one of them.
    """
    formula = formula_for(node.name)
    if formula is None:
        return Filled(node.id, node.name, False, note=no_formula_text(node.name))
    if "complex" in dtype or _has_complex(grad) or any(_has_complex(sv.value.values) for sv in node.saved
                                                        if sv.value is not None):
        return Filled(node.id, node.name, True, note="the rules above are written for real numbers; with complex "
                      "numbers PyTorch multiplies by conjugates (Wirtinger calculus), so the figures shown are the "
                      "ones it computed, not filled in")
    try:
        env = Env(node, _grad_values(grad, dtype), dtype_of(dtype), input_shapes,
                  tuple(None if o is None else _grad_values(o, dtype) for o in outputs))
    except (ValueError, TypeError) as exc:
        return Filled(node.id, node.name, True, note=f"the incoming gradient could not be read: {exc}")
    if formula.name == ACCUMULATE_GRAD:
        return _fill_parts(formula, env, node, [0], sent)
    wanted = [i for i, edge in enumerate(node.inputs) if edge is not None]
    filled = _fill_parts(formula, env, node, wanted, sent)
    if sent is None or not is_float(env.dtype) or all(p.bitwise for p in filled.parts):
        return filled
    return _in_another_dtype(formula, node, grad, env, wanted, sent, filled) or filled


#: the dtypes a node may have computed in, when the one it was given does not give PyTorch's figures
_COMPUTE = ("float32", "bfloat16", "float16", "float64")


def _disagrees(filled: Filled, sent: tuple[Any, ...]) -> bool:
    return any(p.index < len(sent) and sent[p.index] is not None and not same_values(p.values, sent[p.index])
               for p in filled.parts)


def _in_another_dtype(formula: Formula, node: NodeInfo, grad: Any, env: Env, wanted: list[int],
                      sent: tuple[Any, ...], first: Filled) -> Filled | None:
    """The node filled in with the dtype PyTorch computed it in, when it is not the one the gradient was
    taken to have: after a cast (``x.half().float() ** 3``), a promotion (float16 · bfloat16 computes in
    float32) or autocast (a bfloat16 matmul of float32 leaves). Taken only when every figure then agrees with
    what PyTorch sent, and more of them to the last bit than in the first dtype (a float16 figure agrees with
    a float32 one within float16's few units in the last place); the note names the dtype."""
    for dtype in _COMPUTE:
        if dtype == env.dtype:
            continue
        try:
            wide = Env(node, _grad_values(grad, dtype), dtype, env.input_shapes,
                       tuple(None if o is None else _grad_values(o, dtype) for o in env.outputs))
        except (ValueError, TypeError):
            continue
        filled = _fill_parts(formula, wide, node, wanted, sent)
        closer = sum(p.bitwise for p in filled.parts) > sum(p.bitwise for p in first.parts) or _disagrees(first, sent)
        if filled.parts and not _disagrees(filled, sent) and len(filled.parts) == len(wanted) and closer:
            said = f"computed in {dtype}, the dtype PyTorch ran this node in"
            parts = tuple(FilledPart(p.input, p.index, p.rule, p.expr, p.values, p.dtype, p.exact,
                                     "; ".join(n for n in (said, p.note) if n)) for p in filled.parts)
            return Filled(filled.node, filled.name, True, parts, filled.note)
    return None


#: dtypes whose rounding a learner's hand does not do: a product of printed integers can come out otherwise
_ROUNDS = {"float32": 9, "float16": 5, "bfloat16": 4}


def _rounding_note(formula: Formula, rule: Rule, env: Env, index: int, value: Arr) -> str:
    """``float32 rounds 784147476`` when the printed arithmetic, done by hand, gives a short figure (an integer
    or a few digits) that the dtype cannot hold: ``9335089 · (2 · 42)`` is 784147476, float32 holds 784147456.

    The hand's figure is the same formula in float64, where such numbers are exact; a long float64 figure (the
    printed operands themselves rounded) is not the hand's and says nothing."""
    if rule.input == "tensors[i]":
        return ""
    wide_env = Env(env.node, env.g.to("float64"), "float64", env.input_shapes,
                   tuple(None if o is None else o.to("float64") for o in env.outputs))
    try:
        wide = _sum_to(wide_env, formula.grads[rule.input](wide_env), index)
    except (Unavailable, RuntimeError, ValueError, TypeError, IndexError, ZeroDivisionError):
        return ""
    if not wide.exact or wide.shape != value.shape or same_values(wide.data, value.data):
        return ""
    if fmt_values(wide.tolist(), "float64") == fmt_values(value.tolist(), value.dtype):
        return ""  # the dtype's figure reads as the hand's (1.3 · 1 = 1.3): nothing to say
    if not all(isinstance(v, float) and math.isfinite(v) for v in wide.data):
        return ""
    digits = _ROUNDS[value.dtype]
    texts = [fmt_number(v, "float64") for v in wide.data]
    if any(len(t.lstrip("-").replace(".", "").lstrip("0")) > digits + 1 or "e" in t for t in texts):
        return ""
    return f"{value.dtype} rounds {fmt_values(wide.tolist(), 'float64')}"


def _has_complex(values: Any) -> bool:
    if isinstance(values, complex):
        return True
    if isinstance(values, (list, tuple)):
        return any(_has_complex(v) for v in values)
    return "complex" in str(getattr(values, "dtype", ""))


def _fill_parts(formula: Formula, env: Env, node: NodeInfo, wanted: list[int],
                sent: tuple[Any, ...] | None) -> Filled:
    parts: list[FilledPart] = []
    notes: list[str] = []
    for index in wanted:
        ri = _rule_index(formula, index)
        if ri is None:
            notes.append(f"input {index} has no recorded rule")
            continue
        rule = formula.rules[ri]
        try:
            part = _fill_one(formula, rule, env, index, None if sent is None or index >= len(sent) else sent[index])
        except Unavailable as exc:
            notes.append(f"grad_{rule.input}: {exc}")
            continue
        except (RuntimeError, ValueError, TypeError, IndexError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
            notes.append(f"grad_{rule.input}: could not be computed from the snapshot ({reason})")
            continue
        parts.append(part)
    return Filled(node.id, node.name, True, tuple(parts), "; ".join(notes) or None)


def _grad_of(formula: Formula, rule: Rule, env: Env, index: int) -> Tensor:
    if rule.input == "tensors[i]":
        return (_cat_part if formula.name == "CatBackward0" else _stack_part)(env, index)
    return formula.grads[rule.input](env)


def _too_large(formula: Formula, rule: Rule, env: Env, index: int) -> Tensor | None:
    """The gradient of input ``index``, or None when it has more elements than can be written out: the figures
    of such a gradient are never shown, so they are not computed (made from a few numbers by ``expand`` or
    ``zeros``, it would cost Python time in proportion to its size)."""
    try:
        with bounded(MAX_ELEMENTS):
            return _grad_of(formula, rule, env, index)
    except TooLarge:
        shape = env.shape(index)
        if shape is None or math.prod(shape) <= MAX_ELEMENTS:  # its own shape unknown, or summed down to a few
            return _grad_of(formula, rule, env, index)
        return None


def _fill_one(formula: Formula, rule: Rule, env: Env, index: int, recorded: Any) -> FilledPart:
    value = _too_large(formula, rule, env, index)
    expr = formula.exprs[rule.input](env)
    if rule.input == "tensors[i]":
        expr = expr.replace("block", f"block {index}").replace("slice", f"slice {index}")
        label = f"tensors[{index}]"
    else:
        label = rule.input
    if value is None:
        raise Unavailable(f"the {tuple(env.shape(index) or ())} result is too large to write out")
    expr, _, note = expr.partition(NOTE)
    note = note[:-1] if note.endswith(")") else note
    summed = _sum_to(env, value, index)
    if tuple(summed.shape) != tuple(value.shape) and "summed to shape" not in expr:
        # the input was broadcast: its gradient is the sum back to its shape (say so, or "[a, b, c] = s" reads false)
        expr += f" summed to shape {tuple(summed.shape)}"
    value = summed
    if value.numel() > MAX_ELEMENTS:
        raise Unavailable(f"the {tuple(value.shape)} result is too large to write out")
    values, exact = value.tolist(), value.exact or not value.is_floating_point()
    if not note and exact and value.dtype in _ROUNDS:
        note = _rounding_note(formula, rule, env, index, value)
    if recorded is not None and not agree(value, recorded) and value.is_floating_point():
        stored = next((d for d in ("bfloat16", "float16", "float32") if d != value.dtype
                       and agree(value.to(d), recorded)), None)
        if stored is not None:  # the engine hands each input its gradient in that input's own dtype
            expr, value = f"{expr} rounded to {stored}", value.to(stored)
            note = "; ".join(n for n in (note, f"PyTorch stores the gradient of {label} in its dtype, {stored}") if n)
    bitwise = recorded is None or same_values(value.tolist(), recorded)
    if recorded is not None and agree(value, recorded):
        values, exact = recorded, True  # the formula gives PyTorch's figure: show PyTorch's own
    return FilledPart(label, index, rule.local, expr, values, value.dtype, exact, note, bitwise)

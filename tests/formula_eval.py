"""Reads a filled-in formula back and evaluates it with torch, in a given dtype.

The explain layer prints each node's rule with its numbers (``1 · (2 · 42) = 84``). This
module parses the printed left side in the notation the formulas table uses and evaluates
it with real torch operations on tensors of the node's dtype, one operation at a time, so a
test can hold the printed arithmetic to PyTorch's own gradient.

Understood: numbers (``inf``, ``nan``, ``-0``), nested lists ``[..]``, ``+ − - · / @``,
powers (``x²``, ``x^0.5``, ``x^(e − 1)``), unary minus, ``exp ln cos sin tanh sign σ Φ φ``
(with or without parentheses: ``ln 2``), ``Σ`` (along the last dim, kept), ``ᵀ``, and the
trailing phrases ``copied to shape S``, ``summed to shape S``, ``reshaped to S``,
``where A > B`` / ``≥`` / ``<`` / ``≤`` (also ``lo ≤ A ≤ hi``), ``at targets T``
(a scalar or per-row value put at each row's target, 0 elsewhere), ``except rows R`` (those rows 0),
``where A ≠ B or C < D, else E``, ``where A ≥ B (½ on ties)``, ``where [True, ..]``, ``where not [..]``,
``outer(a, b)``, ``(1 where A > 0, else s)`` and ``rounded to DTYPE``. Anything else raises
:class:`Unreadable`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import torch


class Unreadable(ValueError):
    """The text uses notation this reader does not know."""


_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
           "float64": torch.float64}
_SUPER = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8", "⁹": "9",
          "⁻": "-"}
_FUNCS = ("exp", "ln", "cos", "sin", "tanh", "sign", "σ", "Φ", "φ", "e^")

_TOKEN = re.compile(r"""
    (?P<num>(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+)|inf|nan|True|False)
  | (?P<ties>\(½\ on\ ties\))
  | (?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)
  | (?P<method>\.(?:transpose|permute|squeeze))
  | (?P<word>copied\ along\ dim|copied\ to\ shape|summed\ to\ shape|reshaped\ to|at\ targets?|except\ rows|rounded\ to
             |where\ not|where|else|or)
  | (?P<dtype>float16|bfloat16|float32|float64)
  | (?P<func>exp|ln|cos|sin|tanh|sign|σ|Φ|φ|e\^|outer)
  | (?P<build>zeros|slice)
  | (?P<joint>with|of|along\ dim|at)
  | (?P<op>[-+−·/@^()\[\],>≥<≤=≠Σᵀ])
  | (?P<space>\s+)
""", re.VERBOSE)


@dataclass
class _Tok:
    kind: str
    text: str


def tokens(text: str) -> list[_Tok]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise Unreadable(f"cannot read {text[pos:pos + 20]!r} in {text!r}")
        pos = m.end()
        if m.lastgroup != "space":
            out.append(_Tok(m.lastgroup or "", m.group()))
    return out


class _Parser:
    def __init__(self, text: str, dtype: torch.dtype) -> None:
        self.toks = tokens(text)
        self.i = 0
        self.dtype = dtype

    # ------------------------------------------------------------ helpers
    def peek(self, k: int = 0) -> _Tok | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def take(self, text: str | None = None) -> _Tok:
        tok = self.peek()
        if tok is None or (text is not None and tok.text != text):
            raise Unreadable(f"expected {text!r}, got {tok and tok.text!r}")
        self.i += 1
        return tok

    def at(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text in texts

    def t(self, value: Any) -> torch.Tensor:
        return torch.tensor(value, dtype=self.dtype)

    # ------------------------------------------------------------ grammar
    def parse(self) -> torch.Tensor:
        value = self.phrase()
        if self.peek() is not None:
            raise Unreadable(f"unread text from {self.peek().text!r}")
        return value

    def phrase(self) -> torch.Tensor:
        """An expression with the trailing words a formula may add."""
        value = self.expr()
        while True:
            tok = self.peek()
            if tok is None or tok.kind != "word":
                return value
            self.take()
            if tok.text == "copied along dim":
                dims = self.shape()
                if value.dim() < len(self.target):
                    for d in sorted(d % len(self.target) for d in dims):
                        value = value.unsqueeze(d)
                value = value.expand(self.target).clone()
            elif tok.text in ("copied to shape", "reshaped to"):
                shape = self.shape()
                value = value.expand(shape).clone() if tok.text.startswith("copied") else value.reshape(shape)
            elif tok.text == "summed to shape":
                shape = self.shape()
                value = value.sum_to_size(shape) if shape else value.sum()
            elif tok.text == "where not":
                value = torch.where(self.expr().bool(), self.t(0.0), value)
            elif tok.text == "where" and self.ties_ahead():
                left = self.expr()
                op = self.take().text
                right = self.expr()
                self.take("(½ on ties)")
                value = torch.where(left == right, value / 2, torch.where(self.compare(left, op, right), value,
                                                                          self.t(0.0)))
            elif tok.text == "where":
                cond = self.condition()
                other = self.t(0.0)
                if self.at(",") and self.peek(1) is not None and self.peek(1).text == "else":
                    self.take(",")
                    self.take("else")
                    other = self.expr()
                value = torch.where(cond, value, other)
            elif tok.text in ("at targets", "at target"):
                value = self.at_targets(value)
            elif tok.text == "except rows":
                rows = self.literal().long().reshape(-1)
                keep = torch.ones(value.shape[0], dtype=torch.bool)
                keep[rows] = False
                value = torch.where(keep.reshape(-1, *([1] * (value.dim() - 1))), value, self.t(0.0))
            elif tok.text == "rounded to":
                value = value.to(_DTYPES[self.take().text])
                self.dtype = value.dtype
            else:
                raise Unreadable(tok.text)

    def ties_ahead(self) -> bool:
        return any(t.kind == "ties" for t in self.toks[self.i:])

    def shape(self) -> tuple[int, ...]:
        self.take("(")
        dims = []
        while not self.at(")"):
            sign = -1 if self.at("-", "−") else 1
            if sign < 0:
                self.take()
            dims.append(sign * int(self.take().text))
            if self.at(","):
                self.take(",")
        self.take(")")
        return tuple(dims)

    def condition(self) -> torch.Tensor:
        left = self.expr()
        if not self.at(">", "≥", "<", "≤", "=", "≠"):
            return left.bool()  # a mask written out: where [True, False, ..]
        op = self.take().text
        right = self.expr()
        cond = self.compare(left, op, right)
        if self.at("≤", "<", "≥", ">"):  # lo ≤ x ≤ hi
            op2 = self.take().text
            third = self.expr()
            cond = cond & self.compare(right, op2, third)
        if self.at("or"):
            self.take("or")
            cond = cond | self.condition()
        return cond

    @staticmethod
    def compare(a: torch.Tensor, op: str, b: torch.Tensor) -> torch.Tensor:
        return {">": a > b, "≥": a >= b, "<": a < b, "≤": a <= b, "=": a == b, "≠": a != b}[op]

    def at_targets(self, value: torch.Tensor) -> torch.Tensor:
        targets = self.literal().long()
        rows = targets.reshape(-1)
        classes = int(self.classes)
        out = torch.zeros(rows.numel(), classes, dtype=value.dtype)
        per_row = value.reshape(-1)
        for i, t in enumerate(rows.tolist()):
            if 0 <= t < classes:  # (an ignore_index such as -100 is no class: its row is named "except rows")
                out[i, t] = per_row[i if per_row.numel() > 1 else 0]
        return out if targets.dim() == 1 else out.reshape(classes)

    classes = 0
    #: the shape the result must have (for "copied along dim")
    target: tuple[int, ...] = ()

    def literal(self) -> torch.Tensor:
        return self.atom()

    def expr(self) -> torch.Tensor:
        value = self.term()
        while self.at("+", "−", "-"):
            op = self.take().text
            other = self.term()
            value = value + other if op == "+" else value - other
        return value

    def term(self) -> torch.Tensor:
        value = self.unary()
        while self.at("·", "/", "@"):
            op = self.take().text
            other = self.unary()
            if op == "·":
                value = value * other
            elif op == "/":
                value = value / other
            else:
                value = value @ other
        return value

    def unary(self) -> torch.Tensor:
        if self.at("-", "−"):
            self.take()
            return -self.unary()
        return self.power()

    def power(self) -> torch.Tensor:
        value = self.postfix()
        if self.at("^"):
            self.take()
            exponent = self.unary()
            return torch.pow(value, exponent)
        return value

    def postfix(self) -> torch.Tensor:
        value = self.atom()
        while True:
            tok = self.peek()
            if tok is not None and tok.kind == "sup":
                self.take()
                n = int("".join(_SUPER[c] for c in tok.text))
                value = torch.pow(value, self.t(float(n))) if n not in (2, 3) else (
                    value * value if n == 2 else value * value * value)
            elif tok is not None and tok.kind == "method":
                self.take()
                args = self.shape()
                value = getattr(value, tok.text[1:])(*args)
            elif tok is not None and tok.text == "ᵀ":
                self.take()
                value = value.t()
            else:
                return value

    def atom(self) -> torch.Tensor:
        tok = self.peek()
        if tok is None:
            raise Unreadable("the text ends early")
        if tok.kind == "num":
            self.take()
            return self.t(_number(tok.text))
        if tok.text == "[":
            return self.t(self.nested())
        if tok.text == "(":
            self.take()
            if self.at("1") and self.peek(1) is not None and self.peek(1).text == "where":
                return self.piecewise()
            value = self.expr()
            self.take(")")
            return value
        if tok.text == "Σ":
            self.take()
            inner = self.postfix()
            return inner.sum(-1, keepdim=True) if inner.dim() else inner
        if tok.text == "slice":  # slice i of G along dim d
            self.take()
            index = int(self.take().text)
            self.take("of")
            whole = self.expr()
            self.take("along dim")
            return whole.select(int(self.take().text), index)
        if tok.text == "zeros":  # zeros(2, 3) with G at [i] along dim d
            self.take()
            out = torch.zeros(self.shape(), dtype=self.dtype)
            self.take("with")
            part = self.expr()
            self.take("at")
            index = int(self.nested()[0])
            self.take("along dim")
            out.select(int(self.take().text), index).copy_(part)
            return out
        if tok.text == "outer":
            self.take()
            self.take("(")
            a = self.expr()
            self.take(",")
            b = self.expr()
            self.take(")")
            return torch.outer(a, b)
        if tok.kind == "func":
            self.take()
            return self.function(tok.text, self.atom())  # a power after it applies to the function's value
        raise Unreadable(f"unexpected {tok.text!r}")

    def piecewise(self) -> torch.Tensor:
        """``(1 where x > 0, else s)``."""
        self.take("1")
        self.take("where")
        cond = self.condition()
        self.take(",")
        self.take("else")
        other = self.expr()
        self.take(")")
        return torch.where(cond, self.t(1.0), other)

    def nested(self) -> Any:
        self.take("[")
        items: list[Any] = []
        while not self.at("]"):
            if self.at("["):
                items.append(self.nested())
            else:
                sign = -1.0 if self.at("-", "−") else 1.0
                if sign < 0:
                    self.take()
                items.append(sign * _number(self.take().text))
            if self.at(","):
                self.take(",")
        self.take("]")
        return items

    def function(self, name: str, x: torch.Tensor) -> torch.Tensor:
        if name in ("exp", "e^"):
            return torch.exp(x)
        if name == "ln":
            return torch.log(x)
        if name == "cos":
            return torch.cos(x)
        if name == "sin":
            return torch.sin(x)
        if name == "tanh":
            return torch.tanh(x)
        if name == "sign":
            return torch.sign(x)
        if name == "σ":
            return torch.sigmoid(x)
        if name == "Φ":
            return 0.5 * (1 + torch.erf(x / math.sqrt(2.0)))
        if name == "φ":
            return torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        raise Unreadable(name)


def _number(text: str) -> float:
    flags = {"True": 1.0, "False": 0.0}
    return flags[text] if text in flags else float(text)


def evaluate(text: str, dtype: torch.dtype, classes: int = 0, target: tuple[int, ...] = ()) -> torch.Tensor:
    """The value of a printed formula, computed with torch in ``dtype`` (``classes``: width of ``at targets``;
    ``target``: the input's shape, which ``copied along dim`` needs)."""
    parser = _Parser(text, dtype)
    parser.classes = classes
    parser.target = tuple(target)
    return parser.parse()


def split_result(text: str) -> tuple[str, str]:
    """``'1 · (2 · 42) = 84'`` -> ``('1 · (2 · 42)', '84')`` (the last `` = `` outside brackets)."""
    depth, cut = 0, -1
    for k, ch in enumerate(text):
        depth += ch in "([" and 1 or 0
        depth -= ch in ")]" and 1 or 0
        if depth == 0 and text.startswith(" = ", k):
            cut = k
    if cut < 0:
        raise Unreadable(f"no ' = ' in {text!r}")
    return text[:cut], text[cut + 3:]

"""What a formula can read about one node: its saved values, attributes and incoming gradient.

Place in the pipeline: tracer -> model -> **explain** -> render.

An :class:`Env` is built from a plain :class:`~gradtrace.model.NodeInfo`; saved
values are turned into plain-number arrays (:class:`~._arith.Arr`) in the dtype of
the incoming gradient, so the arithmetic rounds as PyTorch's does.
"""

from __future__ import annotations

import ast
from typing import Any

from ..model import FREED, STALE, NodeInfo
from ._arith import REDUCED, Arr, rounder
from ._numbers import MAX_ELEMENTS, fmt_number, fmt_values

#: Saved values that hold positions, not numbers: kept as integers.
INDEX_NAMES = frozenset({"target", "indices", "index", "condition", "mask"})


class Unavailable(Exception):
    """A number the formula needs is not in the snapshot; the message says which and why."""


def parse_attr(text: str) -> Any:
    """An attribute's text (``"2"``, ``"(0,)"``, ``"None"``) back into a Python value."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _strip(name: str) -> str:
    return name[len("_saved_"):] if name.startswith("_saved_") else name


class Env:
    """Numbers of one node, as tensors and as text."""

    def __init__(self, node: NodeInfo, grad: Any, dtype: str,
                 input_shapes: tuple[tuple[int, ...] | None, ...] | None = None,
                 outputs: tuple[Any, ...] = ()) -> None:
        self.node = node
        self.dtype = dtype
        self.g = grad
        #: of a node of several outputs (unbind, split, chunk): the gradient each output got (None: none came)
        self.outputs = outputs
        self.input_shapes = input_shapes or ()
        self._attrs = {_strip(k): v for k, v in node.attrs}
        self._saved = {_strip(s.name): s for s in node.saved}

    # ------------------------------------------------------------ reading
    def has(self, name: str) -> bool:
        return name in self._attrs or name in self._saved

    def attr(self, name: str, default: Any = None) -> Any:
        """A non-tensor attribute (``exponent``, ``dim``, ``alpha``) as a Python value."""
        if name in self._attrs:
            value = parse_attr(self._attrs[name])
        elif name in self._saved and self._saved[name].value is not None:
            summary = self._saved[name].value
            assert summary is not None
            value = summary.values if summary.values is not None else parse_attr(summary.text)
        else:
            return default
        if isinstance(value, int) and value >= 2**63:
            value -= 2**64  # an earlier gradtrace's trace kept PyTorch's unsigned reading (ignore_index = -100)
        return value

    def saved(self, name: str) -> Any:
        """A saved value as an array in the gradient's dtype (positions stay integers)."""
        entry = self._saved.get(name)
        if entry is None:
            if name in self._attrs:
                return self._scalar_tensor(parse_attr(self._attrs[name]), name)
            raise Unavailable(f"{name} was not saved in the snapshot")
        if entry.state == FREED and entry.value is None:
            raise Unavailable(f"{name} was freed by an earlier backward()")
        if entry.state == STALE:
            raise Unavailable(f"{name} was changed in place after it was saved")
        if entry.value is None or (entry.value.values is None and entry.value.text == "None"):
            raise Unavailable(f"{name} has no recorded value")
        if entry.value.values is None:
            large = entry.value.stats is not None or entry.value.text.startswith(("min ", "shape "))
            raise Unavailable(f"{name} has more than {MAX_ELEMENTS} elements" if large
                              else f"{name} is not visible here ({entry.value.text})")
        return self._scalar_tensor(entry.value.values, name)

    def _scalar_tensor(self, values: Any, name: str) -> Arr:
        if self.dtype in REDUCED and isinstance(values, float) and rounder(self.dtype)(values) != values:
            # a Python number (``x * 1.7``) that the half-precision gradient meets: PyTorch's CPU kernels
            # read it in float32 and round only the product, so it keeps float32 precision here too
            return Arr([rounder("float32")(values)], (), self.dtype)
        t = Arr.of(values, self.dtype)
        if name.split("[")[0] not in INDEX_NAMES and not t.is_floating_point() and t.dtype != "bool":
            t = t.to(self.g.dtype)
        return t

    def shape(self, i: int) -> tuple[int, ...] | None:
        return self.input_shapes[i] if i < len(self.input_shapes) else None

    def sizes(self, name: str = "self") -> tuple[int, ...]:
        value = self.attr(f"{name}_sym_sizes", None)
        if value is None:
            value = self.attr(f"{name}_sizes", None)
        if value is None:
            shape = self.shape(0)
            if shape is None:
                raise Unavailable(f"the shape of {name} is not in the snapshot")
            return shape
        return tuple(value)

    # ------------------------------------------------------------ writing
    def fmt(self, t: Any) -> str:
        """An array or Python number as text, in this node's dtype."""
        if isinstance(t, Arr):
            if t.numel() > MAX_ELEMENTS:
                raise Unavailable(f"a {tuple(t.shape)} tensor is too large to write out")
            return fmt_values(t.tolist(), t.dtype)
        return fmt_number(t, "float64")

    @property
    def fg(self) -> str:
        return self.fmt(self.g)

    def fs(self, name: str) -> str:
        return self.fmt(self.saved(name))

    def fa(self, name: str) -> str:
        value = self.attr(name)
        if isinstance(value, float):
            return fmt_number(value, "float64")
        return str(value)

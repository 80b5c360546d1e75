"""Numbers as the explain layer writes them.

Place in the pipeline: tracer -> model -> **explain** -> render.

Pure Python: every figure is written as the shortest text that reads back as
exactly the value in its dtype (the arithmetic itself is in :mod:`._arith`).
"""

from __future__ import annotations

import math
import struct
from typing import Any

#: Tensors with more elements than this are not written out element by element.
MAX_ELEMENTS = 16

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _f32(v: float) -> float:
    return float(struct.unpack("f", struct.pack("f", v))[0])


def fmt_number(v: Any, dtype: str = "float32") -> str:
    """The shortest text that reads back as exactly ``v`` in ``dtype``.

    Integral values lose their trailing ``.0`` (``84``, not ``84.0``).
    """
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, complex):  # complex64 holds two float32 parts, complex128 two float64 parts
        part = "float32" if "complex64" in dtype or "32" in dtype else "float64"
        im = fmt_number(v.imag, part)
        sign = "" if im.startswith("-") else "+"
        return f"({fmt_number(v.real, part)}{sign}{im}j)"
    if not isinstance(v, float):
        return str(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    if v.is_integer() and abs(v) < 1e16:
        return str(int(v))  # every digit of an integral value is exact
    if "float32" in dtype or "half" in dtype or "float16" in dtype or "bfloat16" in dtype or "complex64" in dtype:
        # (a real number met where complex64 flows, e.g. the gradient ``polar`` sends to its float32
        # inputs, is a float32: a complex64's parts are)
        text = _shortest(v, _f32)
    else:
        text = repr(v)
    if "e" not in text and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.endswith(".0"):
        text = text[:-2]
    return text


def _shortest(v: float, cast: Any) -> str:
    target = cast(v)
    for digits in range(1, 18):
        text = f"{target:.{digits}g}"
        if cast(float(text)) == target:
            return text
    return repr(target)


def fmt_values(values: Any, dtype: str = "float32") -> str:
    """A number or nested list of numbers, written compactly: ``[1, 2.5]``."""
    if isinstance(values, (list, tuple)):
        return "[" + ", ".join(fmt_values(v, dtype) for v in values) + "]"
    return fmt_number(values, dtype)


def same_values(a: Any, b: Any) -> bool:
    """Whether two numbers or nested lists hold the same values (NaN equals NaN, as in the same tensor)."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
            return False
        return all(same_values(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, complex) or isinstance(b, complex):
        return complex(a) == complex(b) or (same_values(complex(a).real, complex(b).real)
                                            and same_values(complex(a).imag, complex(b).imag))
    try:
        return bool(a == b) or float(a) == float(b)
    except (TypeError, ValueError):
        return False


def superscript(n: int) -> str:
    return str(n).translate(_SUPERSCRIPT)


def fmt_power(base: str, exponent: float) -> str:
    """``42`` for exponent 1, ``42²`` for small integers, ``42^0.5`` otherwise."""
    if exponent == 1:
        return base
    wrapped = base if base.replace(".", "").isdigit() else f"({base})"
    if float(exponent).is_integer() and abs(exponent) < 100:
        return wrapped + superscript(int(exponent))
    return f"{wrapped}^{fmt_number(float(exponent), 'float64')}"


def numel(values: Any) -> int:
    if isinstance(values, (list, tuple)):
        return sum(numel(v) for v in values)
    return 1


def per_output(grads: Any, text: Any) -> str:
    """The gradients a node of several outputs gets, one per output (``output 0: 2; output 1: 8``).

    Each is the gradient of its own output: they are not added up. ``text(g)`` writes one; an output
    no path reached gets none (PyTorch hands the node ``None`` there).
    """
    return "one gradient for each of its outputs, kept apart: " + "; ".join(
        f"output {i}: {'none, no path reached it' if g is None else text(g)}" for i, g in enumerate(grads))

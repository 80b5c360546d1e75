"""Small arrays of plain Python numbers, rounded to a tensor dtype after every operation.

Place in the pipeline: tracer -> model -> **explain** -> render.

A formula's filled-in figures are recomputed here from the numbers the tracer
recorded, with no torch: each operation is done in Python's float (an IEEE double)
and rounded to the dtype, as PyTorch's CPU kernels round each operation (float16 and
bfloat16 are computed in float32 and rounded again, as PyTorch does). For +, −, ×
and ÷ that gives PyTorch's figure bit for bit. Functions such as exp, cos or log, and
sums of several terms (whose order PyTorch's vectorized kernels choose), can differ
from PyTorch's in the last bit: such results are marked ``exact=False``, and
:func:`agree` then allows a few units in the last place. The figure a walkthrough
shows is always the one PyTorch computed (recorded by the tracer); this module
only checks that the formula gives it.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

Number = float | int | bool

#: How wide each dtype is under type promotion.
_RANK = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "bfloat16": 5,
         "float32": 6, "float64": 7, "complex64": 8, "complex128": 9}
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}
#: Dtypes PyTorch's CPU kernels compute in float32, rounding once at the end of a kernel.
REDUCED = frozenset({"float16", "bfloat16"})
#: How many units in the last place an inexact result may differ from PyTorch's.
ULPS = 8


#: the most elements an array may be given here (None: no bound); see :func:`bounded`
_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("gradtrace_arith_limit", default=None)


class TooLarge(Exception):
    """An array of more elements than the bound in force was about to be made (see :func:`bounded`)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__(f"a {shape} array is beyond the bound")
        self.shape = shape


@contextlib.contextmanager
def bounded(limit: int) -> Iterator[None]:
    """Within it, making an array of more than ``limit`` elements by copying or filling (``expand``,
    ``full``, ``zeros``) raises :class:`TooLarge` before any element is computed: a figure too large to be
    written out costs nothing to find out, whatever its size (the values of such an array are never shown)."""
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def _within_bound(shape: Sequence[int]) -> None:
    limit = _LIMIT.get()
    if limit is not None and math.prod(shape) > limit:
        raise TooLarge(tuple(shape))


def _f32(v: float) -> float:
    try:
        return float(struct.unpack("f", struct.pack("f", v))[0])
    except OverflowError:
        return math.copysign(math.inf, v)


def _f16(v: float) -> float:
    v = _f32(v)
    try:
        return float(struct.unpack("e", struct.pack("e", v))[0])
    except OverflowError:
        return math.copysign(math.inf, v)


def _bf16(v: float) -> float:
    v = _f32(v)
    if math.isnan(v) or math.isinf(v):
        return v
    bits = struct.unpack("I", struct.pack("f", v))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round to nearest, ties to even
    return float(struct.unpack("f", struct.pack("I", bits))[0])


def dtype_of(name: str) -> str:
    """``'torch.float32'`` -> ``'float32'``; ``half`` and ``double`` by their sizes."""
    name = str(name).split(".")[-1]
    return {"half": "float16", "float": "float32", "double": "float64", "long": "int64", "int": "int32"}.get(name, name)


def is_float(dtype: str) -> bool:
    return dtype in _EPS


def rounder(dtype: str) -> Callable[[Any], Any]:
    """The function that rounds a Python number to ``dtype``."""
    if dtype == "float64":
        return float
    if dtype == "float32":
        return _f32
    if dtype == "float16":
        return _f16
    if dtype == "bfloat16":
        return _bf16
    if dtype == "bool":
        return bool
    if dtype == "complex64":
        return _c64
    if dtype == "complex128":
        return complex
    return _to_int


def _c64(v: Any) -> complex:
    v = complex(v)
    return complex(_f32(v.real), _f32(v.imag))


def _to_int(v: Any) -> int:
    return int(v)


def _scalar_dtype(dtype: str) -> str:
    """The precision a Python number is turned into before an operation with a ``dtype`` tensor."""
    return "float64" if dtype == "float64" else "float32"


def promote(a: str, b: str) -> str:
    return a if _RANK.get(a, 6) >= _RANK.get(b, 6) else b


def _shape_of(values: Any) -> tuple[int, ...]:
    shape: list[int] = []
    while isinstance(values, (list, tuple)):
        shape.append(len(values))
        values = values[0] if values else None
    return tuple(shape)


def _flatten(values: Any, out: list[Any]) -> None:
    if isinstance(values, (list, tuple)):
        for v in values:
            _flatten(v, out)
    else:
        out.append(values)


def _strides(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def _indices(shape: Sequence[int]) -> Iterable[tuple[int, ...]]:
    if not shape:
        yield ()
        return
    total = math.prod(shape)
    for flat in range(total):
        idx = []
        for d in reversed(shape):
            idx.append(flat % d)
            flat //= d
        yield tuple(reversed(idx))


def _leaf_kind(values: Any) -> str:
    flat: list[Any] = []
    _flatten(values, flat)
    if flat and all(isinstance(v, bool) for v in flat):
        return "bool"
    if any(isinstance(v, complex) for v in flat):
        return "complex"
    if flat and all(isinstance(v, (int, bool)) for v in flat) and not isinstance(values, float):
        return "int64"
    return "float"


class Arr:
    """A small array: flat row-major ``data``, a ``shape`` and a dtype name."""

    __slots__ = ("data", "shape", "dtype", "exact", "scale")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, data: list[Any], shape: tuple[int, ...], dtype: str, exact: bool = True,
                 scale: float = 0.0) -> None:
        self.data, self.shape, self.dtype, self.exact = data, tuple(shape), dtype, exact
        #: the largest magnitude met on the way to these values: where terms cancel, an inexact result's
        #: last-place error is relative to it, not to the (smaller) result
        self.scale = scale

    # ---------------------------------------------------------------- making
    @staticmethod
    def of(values: Any, dtype: str, shape: tuple[int, ...] | None = None) -> Arr:
        """Plain values (a number or nested lists): floats in ``dtype``, ints as int64, bools as bool."""
        if isinstance(values, Arr):
            return values
        kind = _leaf_kind(values)
        dt = dtype_of(dtype) if kind in ("float", "complex") else kind
        if kind == "float" and not is_float(dt):
            dt = "float32"
        if kind == "complex" and not dt.startswith("complex"):
            dt = "complex128" if dt == "float64" else "complex64"
        flat: list[Any] = []
        _flatten(values, flat)
        r = rounder(dt)
        arr = Arr([r(v) for v in flat], _shape_of(values), dt)
        if shape is not None and tuple(shape) != arr.shape and arr.numel() == math.prod(shape):
            arr = arr.reshape(tuple(shape))
        return arr

    @staticmethod
    def full(shape: Sequence[int], value: Number, dtype: str) -> Arr:
        _within_bound(shape)
        return Arr([rounder(dtype)(value)] * math.prod(shape), tuple(shape), dtype)

    def like(self, data: list[Any], dtype: str | None = None, exact: bool | None = None,
             shape: Sequence[int] | None = None) -> Arr:
        return Arr(data, self.shape if shape is None else tuple(shape), dtype or self.dtype,
                   self.exact if exact is None else exact, self.scale)

    # ---------------------------------------------------------------- reading
    def numel(self) -> int:
        return len(self.data)

    def dim(self) -> int:
        return len(self.shape)

    def tolist(self) -> Any:
        if not self.shape:
            return self.data[0]
        return self._nest(self.data, self.shape)

    @staticmethod
    def _nest(data: list[Any], shape: tuple[int, ...]) -> Any:
        if len(shape) == 1:
            return list(data)
        size = math.prod(shape[1:])
        return [Arr._nest(data[i * size:(i + 1) * size], shape[1:]) for i in range(shape[0])]

    def is_floating_point(self) -> bool:
        return is_float(self.dtype)

    def at(self, idx: Sequence[int]) -> Any:
        return self.data[sum(i * s for i, s in zip(idx, _strides(self.shape), strict=True))]

    # ---------------------------------------------------------------- elementwise
    def to(self, dtype: str) -> Arr:
        r = rounder(dtype)
        return self.like([r(v) for v in self.data], dtype)

    def as_bool(self) -> Arr:
        return self.to("bool")

    def map(self, fn: Callable[[Any], Any], exact: bool = False, dtype: str | None = None) -> Arr:
        """``fn`` on each element, rounded to the dtype; ``exact`` when ``fn`` is one IEEE operation."""
        dt = dtype or self.dtype
        r = rounder(dt)
        out = self.like([r(fn(v)) for v in self.data], dt, self.exact and exact)
        out.scale = max(self.scale, _magnitude(self.data), _magnitude(out.data))
        return out

    def _binary(self, other: Any, fn: Callable[[Any, Any], Any], exact: bool = True,
                out_dtype: str | None = None, reverse: bool = False) -> Arr:
        if isinstance(other, Arr):
            dt = promote(self.dtype, other.dtype)
            b = other
        else:
            dt = self.dtype
            if isinstance(other, float) and not is_float(dt):
                dt = "float32"
            elif isinstance(other, int) and not isinstance(other, bool) and dt == "bool":
                dt = "int64"
            sdt = _scalar_dtype(dt) if is_float(dt) else ("float32" if isinstance(other, float) else dt)
            b = Arr([rounder(sdt)(other)], (), sdt)
        a = self
        if reverse:
            a, b = b, a
        shape, ia, ib = _broadcast(a.shape, b.shape)
        res_dt = out_dtype or dt
        r = rounder(res_dt)
        data = [r(fn(a.data[i], b.data[j])) for i, j in zip(ia, ib, strict=True)]
        scale = max(a.scale, b.scale, _magnitude(a.data), _magnitude(b.data), _magnitude(data))
        return Arr(data, shape, res_dt, a.exact and b.exact and exact, scale)

    def __add__(self, other: Any) -> Arr:
        return self._binary(other, lambda x, y: x + y)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Arr:
        return self._binary(other, lambda x, y: x - y)

    def __rsub__(self, other: Any) -> Arr:
        return self._binary(other, lambda x, y: x - y, reverse=True)

    def __mul__(self, other: Any) -> Arr:
        return self._binary(other, lambda x, y: x * y)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Arr:
        dt = self.dtype if is_float(self.dtype) else "float32"
        if isinstance(other, Arr) and is_float(other.dtype):
            dt = promote(dt, other.dtype)
        return self._binary(other, _div, out_dtype=dt)

    def __rtruediv__(self, other: Any) -> Arr:
        return self._binary(other, _div, reverse=True, out_dtype=self.dtype if is_float(self.dtype) else "float32")

    def div(self, other: Any) -> Arr:
        return self.__truediv__(other)

    def __neg__(self) -> Arr:
        return self.like([-v for v in self.data])

    def neg(self) -> Arr:
        return -self

    def _compare(self, other: Any, fn: Callable[[Any, Any], bool]) -> Arr:
        return self._binary(other, fn, out_dtype="bool")

    def __eq__(self, other: Any) -> Arr:  # type: ignore[override]
        return self._compare(other, lambda x, y: x == y)

    def __gt__(self, other: Any) -> Arr:
        return self._compare(other, lambda x, y: x > y)

    def __lt__(self, other: Any) -> Arr:
        return self._compare(other, lambda x, y: x < y)

    def __ge__(self, other: Any) -> Arr:
        return self._compare(other, lambda x, y: x >= y)

    def __le__(self, other: Any) -> Arr:
        return self._compare(other, lambda x, y: x <= y)

    def __and__(self, other: Any) -> Arr:
        return self._compare(other, lambda x, y: bool(x) and bool(y))

    def pow(self, exponent: Any) -> Arr:
        """``self ** exponent`` as PyTorch's kernel does it: 2 and 3 as products, −1, −2 and −½ as
        quotients (exact); other exponents through ``pow`` (inexact: PyTorch's own pow may round otherwise)."""
        if self.dtype in REDUCED:  # PyTorch computes a half-precision power in float32 and rounds once
            out = self.to("float32").pow(exponent).to(self.dtype)
            out.exact = False  # bfloat16 powers do not always round as float32's do
            return out
        if isinstance(exponent, Arr):
            return self._binary(exponent, _pow, exact=False)
        e = float(exponent)
        if e == 1:
            return self.like(list(self.data))
        if e == 2:
            return self * self
        if e == 3:
            return self * self * self
        if e == -0.5:
            return 1.0 / self.map(_sqrt, exact=True)
        if e == -1:
            return 1.0 / self
        if e == -2:
            return 1.0 / (self * self)
        if e == 0:
            return self.map(lambda _v: 1.0, exact=True)
        return self.map(lambda v: _pow(v, e), exact=False)

    def sqrt(self) -> Arr:
        return self.map(_sqrt)  # PyTorch's vectorized float32 sqrt is not always correctly rounded

    def exp(self) -> Arr:
        return self.map(_exp)

    def log(self) -> Arr:
        return self.map(_log)

    def cos(self) -> Arr:
        return self.map(math.cos)

    def sin(self) -> Arr:
        return self.map(math.sin)

    def sgn(self) -> Arr:
        return self.map(lambda v: v if math.isnan(v) else (v > 0) - (v < 0), exact=True)

    def masked_fill(self, mask: Arr, value: Number) -> Arr:
        return where(mask, value, self)

    # ---------------------------------------------------------------- shapes
    def reshape(self, shape: Sequence[int]) -> Arr:
        shape = list(shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape[shape.index(-1)] = self.numel() // known if known else 0
        if math.prod(shape) != self.numel():
            raise ValueError(f"shape {tuple(shape)} is invalid for {self.numel()} elements")
        return self.like(list(self.data), shape=shape)

    view = reshape

    def permute(self, dims: Sequence[int]) -> Arr:
        n = self.dim()
        dims = [d % n for d in dims] if n else []
        shape = tuple(self.shape[d] for d in dims)
        strides = _strides(self.shape)
        data = [self.data[sum(idx[k] * strides[d] for k, d in enumerate(dims))] for idx in _indices(shape)]
        return self.like(data, shape=shape)

    def transpose(self, d0: int, d1: int) -> Arr:
        n = max(self.dim(), 1)
        dims = list(range(self.dim()))
        if dims:
            dims[d0 % n], dims[d1 % n] = dims[d1 % n], dims[d0 % n]
        return self.permute(dims)

    def t(self) -> Arr:
        return self if self.dim() < 2 else self.transpose(0, 1)

    def unsqueeze(self, dim: int) -> Arr:
        shape = list(self.shape)
        dim = dim % (len(shape) + 1)
        shape.insert(dim, 1)
        return self.like(list(self.data), shape=shape)

    def squeeze(self, dim: Any = None) -> Arr:
        n = self.dim()
        if dim is None:
            shape = [d for d in self.shape if d != 1]
        else:
            dims = {d % n for d in ([dim] if isinstance(dim, int) else dim)} if n else set()
            shape = [d for i, d in enumerate(self.shape) if not (i in dims and d == 1)]
        return self.like(list(self.data), shape=shape)

    def expand(self, shape: Sequence[int]) -> Arr:
        shape = tuple(self.shape[i - (len(shape) - self.dim())] if d == -1 else d for i, d in enumerate(shape))
        _within_bound(shape)
        out, ia, _ = _broadcast(self.shape, shape)
        if out != tuple(shape):
            raise ValueError(f"cannot expand {self.shape} to {tuple(shape)}")
        return self.like([self.data[i] for i in ia], shape=out)

    def select(self, dim: int, index: int) -> Arr:
        dim %= self.dim()
        index %= self.shape[dim]
        shape = self.shape[:dim] + self.shape[dim + 1:]
        data = [self.at(idx[:dim] + (index,) + idx[dim:]) for idx in _indices(shape)]
        return self.like(data, shape=shape)

    def narrow(self, dim: int, start: int, length: int) -> Arr:
        dim %= self.dim()
        shape = self.shape[:dim] + (length,) + self.shape[dim + 1:]
        data = [self.at(idx[:dim] + (idx[dim] + start,) + idx[dim + 1:]) for idx in _indices(shape)]
        return self.like(data, shape=shape)

    # ---------------------------------------------------------------- reductions
    def sum(self, dims: Sequence[int] | None = None, keepdim: bool = False) -> Arr:
        """Sums in index order; more than two terms is marked inexact (PyTorch picks its own order)."""
        n = self.dim()
        dims = list(range(n)) if dims is None else [d % n for d in dims]
        out_shape = tuple(1 if i in dims else d for i, d in enumerate(self.shape))
        dt = self.dtype if is_float(self.dtype) else "int64"
        r = rounder(dt)
        acc: dict[tuple[int, ...], Any] = {}
        count = math.prod(self.shape[d] for d in dims) if dims else 1
        for idx, v in zip(_indices(self.shape), self.data, strict=True):
            key = tuple(0 if i in dims else k for i, k in enumerate(idx))
            acc[key] = v if key not in acc else r(acc[key] + v)
        data = [acc.get(idx, r(0)) for idx in _indices(out_shape)]
        shape = out_shape if keepdim else tuple(d for i, d in enumerate(self.shape) if i not in dims)
        return Arr(data, shape, dt, self.exact and (count <= 2 or not is_float(dt)),
                   max(self.scale, _magnitude(self.data), _magnitude(data)))

    def sum_to_size(self, shape: Sequence[int]) -> Arr:
        shape = tuple(shape)
        lead = self.dim() - len(shape)
        dims = list(range(lead)) + [lead + i for i, d in enumerate(shape) if d == 1 and self.shape[lead + i] != 1]
        return self.sum(dims, keepdim=True).reshape(shape) if dims else self

    # ---------------------------------------------------------------- products
    def mm(self, other: Arr) -> Arr:
        (m, k), (k2, n) = self.shape, other.shape
        if k != k2:
            raise ValueError(f"cannot multiply {self.shape} by {other.shape}")
        dt = promote(self.dtype, other.dtype)
        r = rounder(dt)
        data = []
        for i in range(m):
            for j in range(n):
                total = None
                for p in range(k):
                    term = r(self.data[i * k + p] * other.data[p * n + j])
                    total = term if total is None else r(total + term)
                data.append(total if total is not None else r(0))
        scale = max(self.scale, other.scale, _magnitude(self.data) * _magnitude(other.data), _magnitude(data))
        return Arr(data, (m, n), dt, self.exact and other.exact and k <= 1, scale)

    def mv(self, vec: Arr) -> Arr:
        return self.mm(vec.unsqueeze(1)).squeeze(1)

    def outer(self, other: Arr) -> Arr:
        return self.unsqueeze(1) * other.unsqueeze(0)

    def scatter(self, dim: int, index: Arr, src: Arr) -> Arr:
        dim %= self.dim()
        data = list(self.data)
        strides = _strides(self.shape)
        for idx in _indices(index.shape):
            target = idx[:dim] + (int(index.at(idx)),) + idx[dim + 1:]
            data[sum(i * s for i, s in zip(target, strides, strict=True))] = src.at(idx)
        return self.like(data, exact=self.exact and src.exact)

    def index_put_accumulate(self, indices: Sequence[Arr], values: Arr) -> Arr:
        """``self.index_put(indices, values, accumulate=True)`` for index tensors on the leading dims."""
        idx_lists = []
        for ind in indices:
            if ind.dtype == "bool":  # a mask of k dims picks along k dims: one index list for each
                picked = [idx for idx, v in zip(_indices(ind.shape), ind.data, strict=True) if v]
                idx_lists += [Arr([idx[d] for idx in picked], (len(picked),), "int64") for d in range(ind.dim())]
            else:
                idx_lists.append(ind)
        count = idx_lists[0].numel() if idx_lists else 0
        inner = self.shape[len(idx_lists):]
        size = math.prod(inner)
        vals = values.expand((count,) + inner) if values.shape != (count,) + inner else values
        data = list(self.data)
        strides = _strides(self.shape)
        r = rounder(self.dtype)
        hits: dict[int, int] = {}
        for k in range(count):
            base = sum((int(ind.data[k]) % self.shape[d]) * strides[d] for d, ind in enumerate(idx_lists))
            for j in range(size):
                data[base + j] = r(data[base + j] + vals.data[k * size + j])
                hits[base + j] = hits.get(base + j, 0) + 1
        exact = self.exact and values.exact and all(h <= 1 for h in hits.values())
        return self.like(data, exact=exact)


def _magnitude(data: list[Any]) -> float:
    """The largest finite magnitude among real numbers (0 for none)."""
    best = 0.0
    for v in data:
        if isinstance(v, float) and math.isfinite(v):
            best = max(best, abs(v))
        elif isinstance(v, int):
            best = max(best, float(abs(v)))
    return best


def _div(x: float, y: float) -> float:
    try:
        return x / y
    except ZeroDivisionError:
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)


def _sqrt(v: float) -> float:
    return math.sqrt(v) if v >= 0 else math.nan


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _log(v: float) -> float:
    if v == 0:
        return -math.inf
    return math.log(v) if v > 0 else math.nan


def _pow(x: float, y: float) -> float:
    try:
        return float(math.pow(x, y))
    except (OverflowError, ZeroDivisionError):
        return math.inf
    except ValueError:
        if x == 0 and y < 0:  # C's pow (and PyTorch's): ±0 to a negative power is ±inf, not a domain error
            odd = float(y).is_integer() and int(y) % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], list[int], list[int]]:
    """The broadcast shape and, for each of its elements, the flat index into ``a`` and into ``b``."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    shape = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        shape.append(y if x == 1 else x)
    sa = [0 if d == 1 else s for d, s in zip(pa, _strides(pa), strict=True)]
    sb = [0 if d == 1 else s for d, s in zip(pb, _strides(pb), strict=True)]
    ia, ib = [], []
    for idx in _indices(shape):
        ia.append(sum(i * s for i, s in zip(idx, sa, strict=True)))
        ib.append(sum(i * s for i, s in zip(idx, sb, strict=True)))
    return tuple(shape), ia, ib


def where(cond: Arr, a: Any, b: Any) -> Arr:
    """``torch.where(cond, a, b)``: ``a`` and ``b`` are arrays or numbers (of the other's dtype)."""
    ref = a if isinstance(a, Arr) else b
    if not isinstance(ref, Arr):
        raise TypeError("where() needs an array")
    dt = ref.dtype
    if isinstance(a, Arr) and isinstance(b, Arr):
        dt = promote(a.dtype, b.dtype)
    r = rounder(dt)
    aa = a if isinstance(a, Arr) else Arr([r(a)], (), dt)
    bb = b if isinstance(b, Arr) else Arr([r(b)], (), dt)
    shape, ic, ia = _broadcast(cond.shape, aa.shape)
    shape2, i2, ib = _broadcast(shape, bb.shape)
    data = []
    for k in range(math.prod(shape2)):
        j = i2[k]
        data.append(aa.data[ia[j]] if cond.data[ic[j]] else bb.data[ib[k]])
    return Arr(data, shape2, dt, aa.exact and bb.exact, max(aa.scale, bb.scale))


def zeros(shape: Sequence[int], dtype: str) -> Arr:
    return Arr.full(shape, 0, dtype)


def ulp_close(a: Any, b: Any, dtype: str, scale: float, ulps: int = ULPS) -> bool:
    """Whether two numbers are within ``ulps`` units of the last place of ``dtype`` at ``scale``."""
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, float) or not isinstance(b, float):
        return bool(a == b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    eps = _EPS.get(dtype, _EPS["float32"])
    return abs(a - b) <= ulps * eps * max(abs(a), abs(b), scale)


def agree(computed: Arr, recorded: Any) -> bool:
    """Whether a formula's figures are the ones PyTorch computed: bit for bit where the arithmetic is
    exact, within :data:`ULPS` units in the last place where it took functions or longer sums."""
    got: list[Any] = []
    _flatten(recorded, got)
    if computed.shape != _shape_of(recorded) and len(got) != computed.numel():
        return False
    if len(got) != computed.numel():
        return False
    if computed.exact or not computed.is_floating_point():
        from ._numbers import same_values

        return all(same_values(x, float(y) if isinstance(x, float) and isinstance(y, int) else y)
                   for x, y in zip(computed.data, got, strict=True))
    return all(ulp_close(float(x), float(y), computed.dtype, computed.scale)
               for x, y in zip(computed.data, got, strict=True))

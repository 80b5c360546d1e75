"""Value summaries of tensors, as plain data (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

Up to 16 elements are kept whole; a larger tensor is summarised by its
min, mean and max, so a label costs O(1) beyond that one pass. Numbers print
the way torch prints them (``42.``, ``0.1``), in the shortest form that reads
back to the same value of the tensor's own dtype.

Finding that shortest form is the costly part of a summary, and most summaries
of a long trace are never shown, so :func:`summarize` reads the values at once
and writes their text on first use (a :class:`Summary` whose ``text`` is filled
in lazily; it compares, prints and pickles as a plain one).
"""

from __future__ import annotations

import ctypes
import math
import struct
import weakref
from collections.abc import Callable
from typing import Any

import torch

from ..model import Summary

MAX_ELEMENTS = 16
MEAN_CHUNK = 1 << 20  # elements summed at a time for the mean of a large tensor
#: tensors up to this many elements are copied as bytes and summarised when first shown
CAPTURE_MAX = 4096

_PACK = {torch.float32: "f", torch.float16: "e"}
#: the real dtype of each part of a complex dtype
_PART = {torch.complex64: torch.float32, torch.complex128: torch.float64, torch.complex32: torch.float16}
_STRIDED = torch.strided
_string_at = ctypes.string_at
_new = object.__new__


def summarize(t: torch.Tensor) -> Summary:
    """A :class:`Summary` of ``t``'s values; never raises, never prints it whole."""
    try:
        # the usual case first, inline (as _summarize, _capture and Captured would make it): a small
        # contiguous CPU tensor of a plain dtype, its bytes copied as they are
        if t.is_cpu and t.layout is _STRIDED:
            dtype = t.dtype
            if dtype in _CAPTURED:
                n = t.numel()
                ptr = t.data_ptr()  # 0: no memory (an efficient zero tensor): read below, the long way
                if ptr and 0 < n <= CAPTURE_MAX and t.is_contiguous() and not (t.is_conj() or t.is_neg()):
                    raw = _string_at(ptr, n * t.element_size())
                    captured = _new(Captured)
                    captured.__dict__.update(_raw=raw, _dtype=dtype, _shape=tuple(t.shape), _strides=None)
                    return captured
    except Exception:  # read again below, the long way
        pass
    try:
        return _summarize(t)
    except Exception as exc:  # odd layouts and devices: say what we could not read
        return Summary(text=f"<values not readable: {type(exc).__name__}>")


def _summarize(t: torch.Tensor, capture: bool = True) -> Summary:
    if t._is_zerotensor():  # owns no memory (``torch.func`` and forward AD save these): its values are 0
        t = torch.zeros(t.shape, dtype=t.dtype)
    if capture and t.is_cpu and t.layout is _STRIDED:
        dtype = t.dtype
        if dtype in _CAPTURED:
            n = t.numel()
            if n <= CAPTURE_MAX:
                captured = _capture(t, dtype, n)
                if captured is not None:
                    return captured
    if t.device.type == "meta":
        return Summary(text="<meta: no values>")
    d = t.detach()
    if d.layout != torch.strided:
        return _sparse_summary(d)
    if d.numel() <= MAX_ELEMENTS:
        return LazySummary(d.tolist(), None, d.dtype)
    stats = _stats(d)
    if stats is None:
        return Summary(text=f"<{d.numel()} values>")
    return LazySummary(None, stats, d.dtype)


def _sparse_summary(d: torch.Tensor) -> Summary:
    """What a sparse tensor holds, as PyTorch holds it: its stored indices and values, not a dense copy.

    A COO tensor that is not coalesced may store one index more than once (its entries add up);
    the text says so rather than adding them. ``values`` is the dense equivalent (``to_dense()``)
    when it has at most 16 elements, for arithmetic that redoes PyTorch's; it is never shown as the value."""
    layout = str(d.layout).replace("torch.", "")
    total = d.numel()  # positions of a compressed (CSR...) tensor's elements
    summary = _sparse_text(d, layout, total)
    if total <= MAX_ELEMENTS:
        try:
            return Summary(summary.text, d.to_dense().tolist(), None, layout)
        except Exception:
            pass
    return summary


def _sparse_text(d: torch.Tensor, layout: str, total: int) -> Summary:
    if d.layout == torch.sparse_coo:
        nnz = int(d._nnz())
        positions = math.prod(d.shape[: d.sparse_dim()])
        head = f"{layout} shape {_shape(d)}, {nnz} of {positions} entries stored"
        if not d.is_coalesced():
            repeated = nnz <= CAPTURE_MAX and int(d.coalesce()._nnz()) < nnz
            head += " (not coalesced: a repeated index adds up)" if repeated else " (not coalesced)"
        values = d._values()
        if values.numel() <= MAX_ELEMENTS:
            dtype = values.dtype
            return Summary(text=f"{head}: indices {d._indices().tolist()} "
                                f"values {format_values(values.tolist(), dtype)}", layout=layout)
        return Summary(text=f"{head}: stored values {_values_stats_text(values)}", layout=layout)
    if d.layout in (torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc):
        values = d.values()
        compressed, plain = (d.crow_indices(), d.col_indices()) if d.layout in (torch.sparse_csr, torch.sparse_bsr) \
            else (d.ccol_indices(), d.row_indices())
        names = ("crow_indices", "col_indices") if d.layout in (torch.sparse_csr, torch.sparse_bsr) \
            else ("ccol_indices", "row_indices")
        head = f"{layout} shape {_shape(d)}, {values.numel()} of {total} entries stored"
        if values.numel() <= MAX_ELEMENTS and compressed.numel() + plain.numel() <= 4 * MAX_ELEMENTS:
            return Summary(text=f"{head}: {names[0]} {compressed.tolist()} {names[1]} {plain.tolist()} "
                                f"values {format_values(values.tolist(), values.dtype)}", layout=layout)
        return Summary(text=f"{head}: stored values {_values_stats_text(values)}", layout=layout)
    return Summary(text=f"<{layout}: {total} elements>", layout=layout)


def _shape(d: torch.Tensor) -> str:
    return "(" + ", ".join(str(int(n)) for n in d.shape) + ("," if d.dim() == 1 else "") + ")"


def _values_stats_text(values: torch.Tensor) -> str:
    stats = _stats(values.reshape(-1)) if values.numel() else None
    return "none" if stats is None else _stats_text(stats, values.dtype)


def _capture(t: torch.Tensor, dtype: torch.dtype, n: int) -> Captured | None:
    """A copy of the bytes of a small CPU tensor (None when they cannot be read).

    No tensor is made for a contiguous one, nor for a view whose memory spans few more elements
    than it has (a transposed weight, an expanded row): those bytes are copied with the strides."""
    try:
        shape = tuple(t.shape)
        if not n:
            return Captured(b"", dtype, shape)
        size = t.element_size()
        if not (t.is_conj() or t.is_neg()):
            if t.is_contiguous():
                return Captured(_string_at(t.data_ptr(), n * size), dtype, shape)
            strides = t.stride()
            span = 1 + sum((d - 1) * s for d, s in zip(shape, strides, strict=True))
            if span <= CAPTURE_MAX:
                return Captured(_string_at(t.data_ptr(), span * size), dtype, shape, tuple(strides))
        # a copy (NumPy would mark the learner's storage as not resizable), made outside any graph
        c = t.detach() if t.requires_grad and torch.is_grad_enabled() else t
        if c.is_conj():
            c = c.resolve_conj()
        if c.is_neg():
            c = c.resolve_neg()
        c = c.contiguous()
        return Captured(_string_at(c.data_ptr(), n * size), dtype, shape)
    except Exception:
        return None


def _stats_text(stats: tuple[float, float, float], dtype: torch.dtype) -> str:
    lo, mean, hi = stats
    if dtype.is_complex:  # the stats of a complex tensor are of its magnitudes (see _stats)
        part = _PART.get(dtype, torch.float64)
        return f"|z| min {format_number(lo, part)} mean {mean:.5g} max {format_number(hi, part)}"
    if dtype.is_floating_point:
        lo_text, hi_text = format_number(lo, dtype), format_number(hi, dtype)
    else:
        lo_text, hi_text = str(int(lo)), str(int(hi))
    return f"min {lo_text} mean {mean:.5g} max {hi_text}"


class LazySummary(Summary):
    """A :class:`Summary` of read values whose ``text`` is written on first access.

    Equal to a plain ``Summary`` with the same text, values and stats; pickles and
    copies as a plain one (so a saved trace needs no torch to load).
    """

    def __init__(self, values: Any, stats: tuple[float, float, float] | None, dtype: torch.dtype) -> None:
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "stats", stats)
        object.__setattr__(self, "_dtype", dtype)

    def __getattr__(self, name: str) -> Any:
        if name != "text":
            raise AttributeError(name)
        dtype = self.__dict__["_dtype"]
        text = format_values(self.values, dtype) if self.stats is None else _stats_text(self.stats, dtype)
        object.__setattr__(self, "text", text)
        return text

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Summary):
            return NotImplemented
        if not (self.values == other.values and self.stats == other.stats):
            return False
        if isinstance(other, LazySummary) and self.__dict__["_dtype"] == other.__dict__["_dtype"]:
            # same dtype, values equal: the texts differ only where a zero's sign does, as the reprs do
            return repr((self.values, self.stats)) == repr((other.values, other.stats))
        return self.text == other.text

    __hash__ = Summary.__hash__

    def __repr__(self) -> str:
        return repr(Summary(self.text, self.values, self.stats))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Summary, (self.text, self.values, self.stats))


#: dtypes whose bytes are read back as they were copied (the others are summarised at once)
_CAPTURED = frozenset({
    torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128, torch.bool,
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
})


class _OnDemand(Summary):
    """A :class:`Summary` whose text, values and stats are made on first use, by :meth:`_make`.

    Compares, prints and pickles as the plain summary it stands for (so a saved trace needs no torch
    to load); the one made is kept.
    """

    def _make(self) -> Summary:
        raise NotImplementedError

    def _real(self) -> Summary:
        d = self.__dict__
        real = d.get("_summary")
        if real is None:
            real = self._make()
            object.__setattr__(self, "_summary", real)
        return real

    @property
    def text(self) -> str:
        return self._real().text

    @property
    def values(self) -> Any:
        return self._real().values

    @property
    def stats(self) -> tuple[float, float, float] | None:
        return self._real().stats

    @property
    def layout(self) -> str:
        return self._real().layout

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Summary):
            return NotImplemented  # nothing to make: None, a number
        if isinstance(other, _OnDemand):
            other = other._real()
        return self._real() == other

    __hash__ = Summary.__hash__

    def __repr__(self) -> str:
        return repr(self._real())

    def __reduce__(self) -> tuple[Any, ...]:
        real = self._real()
        return (Summary, (real.text, real.values, real.stats, real.layout))


class Captured(_OnDemand):
    """A :class:`Summary` of a small tensor whose bytes were copied when it was taken.

    Reading a tensor's numbers and their min/mean/max costs several torch calls; most
    summaries of a trace are never shown, or shown long after. The copy (plain bytes,
    no tensor) is read on first use of ``values``, ``stats`` or ``text``.
    """

    def __init__(self, raw: bytes, dtype: torch.dtype, shape: tuple[int, ...],
                 strides: tuple[int, ...] | None = None) -> None:
        d = self.__dict__
        d["_raw"] = raw
        d["_dtype"] = dtype
        d["_shape"] = shape
        d["_strides"] = strides  # None: the bytes are the values in order; else how a view reads them

    def _make(self) -> Summary:
        d = self.__dict__
        data = torch.frombuffer(bytearray(d["_raw"]), dtype=d["_dtype"]) if d["_raw"] else \
            torch.empty(0, dtype=d["_dtype"])
        strides = d["_strides"]
        data = data.reshape(d["_shape"]) if strides is None else data.as_strided(d["_shape"], strides)
        return _summarize(data, capture=False)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Captured) and "_summary" not in self.__dict__ and "_summary" not in other.__dict__:
            mine, theirs = self.__dict__, other.__dict__
            if (mine["_dtype"], mine["_shape"], mine["_strides"]) == (theirs["_dtype"], theirs["_shape"],
                                                                      theirs["_strides"]) \
                    and mine["_raw"] == theirs["_raw"]:
                return True  # the same bytes: the same numbers, shown the same
        return super().__eq__(other)

    __hash__ = Summary.__hash__


def _stats(d: torch.Tensor) -> tuple[float, float, float] | None:
    if d.is_complex():
        d = d.abs()
    if d.dtype == torch.bool:
        d = d.to(torch.uint8)
    if d.numel() == 0:
        return None
    lo, hi = torch.aminmax(d)
    return (float(lo.item()), _mean(d), float(hi.item()))


def _mean(d: torch.Tensor) -> float:
    """The mean in float64, summed in slices: no float64 copy of a large tensor."""
    if d.numel() <= MEAN_CHUNK:
        return float((d.double().mean() if not d.is_floating_point() else d.mean(dtype=torch.float64)).item())
    flat = d.reshape(-1)
    total = 0.0
    for start in range(0, flat.numel(), MEAN_CHUNK):
        total += float(flat[start : start + MEAN_CHUNK].sum(dtype=torch.float64).item())
    return total / flat.numel()


def format_number(v: Any, dtype: torch.dtype) -> str:
    """One number as torch would print it: ``42.``, ``0.1``, ``1.0000e-08``-free shortest form."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, complex):
        real, imag = v.real, v.imag
        part = _PART.get(dtype, torch.float64)  # each part has the precision of the complex dtype's halves
        sign = "-" if imag < 0 or (imag == 0 and math.copysign(1, imag) < 0) else "+"
        return f"{format_number(real, part)}{sign}{format_number(abs(imag), part)}j"
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = _shortest(v, dtype)
    if "e" not in text and "." not in text:
        text += "."
    return text


def _shortest(v: float, dtype: torch.dtype) -> str:
    """Whole numbers below 1e16 in full; others in the fewest digits that read back to ``v``."""
    if float(v).is_integer() and abs(v) < 1e16:
        return ("-" if math.copysign(1.0, v) < 0 else "") + str(abs(int(v)))
    if dtype == torch.float64 or not isinstance(dtype, torch.dtype):
        return repr(v)
    for digits in range(1, 18):
        text = f"{v:.{digits}g}"
        if _round(float(text), dtype) == v:
            return repr(float(text))
    return repr(v)


def _round(v: float, dtype: torch.dtype) -> float:
    code = _PACK.get(dtype)
    if code is not None:
        try:
            return float(struct.unpack(code, struct.pack(code, v))[0])
        except OverflowError:
            return math.inf
    return float(torch.tensor(v, dtype=dtype).item())


def format_values(values: Any, dtype: torch.dtype) -> str:
    """Nested lists of numbers as ``[2., 8., 18.]``."""
    if isinstance(values, list):
        return "[" + ", ".join(format_values(v, dtype) for v in values) + "]"
    return format_number(values, dtype)


class DeferredSummary(_OnDemand):
    """A :class:`Summary` of a tensor read only when something asks for it (a picture draws it).

    For a graph shown at once (``gradtrace.show``): most of a huge graph's values are
    folded away and never drawn. Holds a weak reference only; if the tensor is gone or
    changed by the time the value is asked for, it says so instead of showing other values.
    """

    def __init__(self, t: torch.Tensor, at: tuple[int, int | None], made: Callable[[], None]) -> None:
        object.__setattr__(self, "_ref", weakref.ref(t))
        object.__setattr__(self, "_at", at)
        object.__setattr__(self, "_made", made)

    def _make(self) -> Summary:
        d = self.__dict__
        t = d["_ref"]()
        object.__setattr__(self, "_ref", None)
        if t is None:
            return Summary(text="<no longer in memory>")
        if d["_at"] != _where(t):
            return Summary(text="<changed since the picture was taken>")
        d["_made"]()
        return summarize(t)


def _where(t: torch.Tensor) -> tuple[int, int | None]:
    try:
        version = int(t._version)
    except Exception:
        version = 0
    try:
        ptr: int | None = int(t.data_ptr())
    except Exception:
        ptr = None
    return version, ptr


def deferred(t: torch.Tensor, made: Callable[[], None]) -> Summary:
    """A summary of ``t`` made on first use (``made`` is called when it is)."""
    return DeferredSummary(t, _where(t), made)

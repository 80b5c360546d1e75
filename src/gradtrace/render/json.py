"""A trace as strict JSON: versioned, deduplicated, with no NaN or Infinity literals.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

The format (``"schema": "gradtrace.trace", "version": 2``) is described in
``docs/json-format.md``. In short: each distinct :class:`TensorInfo` and
:class:`NodeInfo` is stored once in the ``tensors`` / ``nodes`` tables and each
step maps ids to row numbers in them; events keep their fields plus ``kind``;
non-finite floats are the strings ``"nan"``, ``"inf"``, ``"-inf"`` and complex
numbers strings such as ``"(1+2j)"``, so ``json.loads`` in any language reads it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

from .._gc import paused_gc
from ..model import SCHEMA_VERSION, NodeInfo, Step, Summary, TensorInfo, Trace

__all__ = ["plain", "summary_dict", "trace_dict", "trace_json", "SCHEMA"]

SCHEMA = "gradtrace.trace"


def plain(value: Any) -> Any:
    """``value`` with only JSON types: tuples become lists, odd numbers become strings."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, complex):
        return str(value)
    if isinstance(value, Summary):
        return summary_dict(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return str(value)


def summary_dict(s: Summary | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"text": s.text, "values": plain(s.values), "stats": plain(s.stats)}


def _tensor(t: TensorInfo) -> dict[str, Any]:
    d = plain(t)
    d["kind"] = t.kind
    return d


def _node(n: NodeInfo) -> dict[str, Any]:
    d = plain(n)
    d["inputs"] = [None if e is None else {"node": e.node, "output_nr": e.output_nr} for e in n.inputs]
    return d


class _Table:
    """Rows stored once; ``ref`` gives the row number of an equal row.

    A trace shares one record between the steps in which its object did not change:
    each record object is turned into a row (and compared with the others) once,
    later steps find its row number by the record itself (``made`` counts the rows made).
    """

    def __init__(self, make: Callable[[Any], Any]) -> None:
        self.rows: list[Any] = []
        self._index: dict[str, int] = {}
        self._of: dict[int, tuple[object, int]] = {}  # id(record) -> (record, row number): the record is held
        self._make = make
        self.made = 0

    def ref(self, record: object) -> int:
        hit = self._of.get(id(record))
        if hit is None:
            self.made += 1
            row = self._make(record)
            key = json.dumps(row, sort_keys=True)
            if key not in self._index:
                self._index[key] = len(self.rows)
                self.rows.append(row)
            hit = self._of[id(record)] = (record, self._index[key])
        return hit[1]


def _step(step: Step, tensors: _Table, nodes: _Table) -> dict[str, Any]:
    return {
        "index": step.index,
        "lineno": step.lineno,
        "code": step.code,
        "frame": step.frame,
        "bindings": dict(step.bindings),
        "tensors": {tid: tensors.ref(t) for tid, t in step.tensors.items()},
        "nodes": {nid: nodes.ref(n) for nid, n in step.nodes.items()},
        "events": [plain(e) for e in step.events],
        "predictions": [plain(p) for p in step.predictions],
    }


def _grads(trace: Trace) -> dict[str, Any]:
    last = trace.last
    if last is None:
        return {}
    out = {}
    for name, tid in last.bindings.items():
        info = last.tensors.get(tid)
        if info is not None and info.grad is not None:
            out[name] = plain(info.grad.values)
    return out


def trace_dict(trace: Trace) -> dict[str, Any]:
    """``trace`` as plain JSON-able data (see ``docs/json-format.md``)."""
    with paused_gc():  # many small acyclic records: the cyclic collector would only rescan the trace
        return _trace_dict(trace)


def _trace_dict(trace: Trace) -> dict[str, Any]:
    tensors, nodes = _Table(_tensor), _Table(_node)
    steps = [_step(s, tensors, nodes) for s in trace.steps]
    final = None if trace.final is None else _step(trace.final, tensors, nodes)
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "source": trace.source,
        "filename": trace.filename,
        "max_steps": trace.max_steps,
        "steps_unrecorded": trace.steps_unrecorded,
        "error": plain(trace.error),
        "steps": steps,
        "final": final,
        "tensors": tensors.rows,
        "nodes": nodes.rows,
        "grads": _grads(trace),
    }


def trace_json(trace: Trace, *, indent: int | None = None) -> str:
    """``trace`` as strict JSON text (``allow_nan=False``: it never writes NaN)."""
    return json.dumps(trace_dict(trace), indent=indent, ensure_ascii=False, allow_nan=False)

"""A trace as strict JSON and back: versioned, deduplicated, with no NaN or Infinity literals.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

The format (``"schema": "gradtrace.trace", "version": 2``) is described in
``docs/json-format.md``. In short: each distinct :class:`TensorInfo` and
:class:`NodeInfo` is stored once in the ``tensors`` / ``nodes`` tables and each
step maps ids to row numbers in them; events keep their fields plus ``kind``;
non-finite floats are the strings ``"nan"``, ``"inf"``, ``"-inf"`` and complex
numbers strings such as ``"(1+2j)"``, so ``json.loads`` in any language reads it.
:func:`trace_from_json` reads such a document back into a :class:`Trace` that
renders and explains as the original does, with torch absent.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

from .._gc import paused_gc
from ..model import (
    DEFAULT_MAX_STEPS,
    SCHEMA_VERSION,
    Backward,
    Bind,
    Create,
    Edge,
    Error,
    Event,
    Flow,
    Grad,
    GradChange,
    Mutate,
    NodeInfo,
    Prediction,
    Rebind,
    Root,
    SavedValue,
    Step,
    Summary,
    TensorInfo,
    Trace,
    Unbind,
    Untracked,
)
from .json_check import TraceFormatError, check_document

__all__ = ["plain", "summary_dict", "trace_dict", "trace_from_dict", "trace_from_json", "trace_json", "SCHEMA"]

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
    d = {"text": s.text, "values": plain(s.values), "stats": plain(s.stats)}
    layout = s.layout
    if layout != "strided":  # written only for the rare other layouts (sparse), so documents stay small
        d["layout"] = layout
    return d


def _tensor(t: TensorInfo) -> dict[str, Any]:
    d: dict[str, Any] = plain(t)
    d["kind"] = t.kind
    if not t.forbidden:  # written only for the rare tensor PyTorch forbids in autograd, so documents stay small
        del d["forbidden"]
    if not t.output_nr:  # written only for an output after the first of a node of several outputs
        del d["output_nr"]
    return d


def _event_dict(e: Event) -> dict[str, Any]:
    d: dict[str, Any] = plain(e)
    if d.get("held_elsewhere") is False:  # written only when true, as ``forbidden``
        del d["held_elsewhere"]
    if d.get("values_kept") is False:  # likewise
        del d["values_kept"]
    if d.get("existing_grads") == []:  # written only when some are
        del d["existing_grads"]
    if d.get("shares") == []:  # likewise
        del d["shares"]
    return d


def _node(n: NodeInfo) -> dict[str, Any]:
    d: dict[str, Any] = plain(n)
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
        "events": [_event_dict(e) for e in step.events],
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


# ---------------------------------------------------------------- reading


_NUMBER_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _number(value: Any) -> Any:
    """A JSON value of ``values``/``stats`` back into Python numbers (``"nan"``, ``"(1+2j)"``)."""
    if isinstance(value, list):
        return [_number(v) for v in value]
    if isinstance(value, str):
        if value in _NUMBER_WORDS:
            return _NUMBER_WORDS[value]
        try:
            return complex(value)
        except ValueError:
            return value
    return value


def _summary(d: Any) -> Summary | None:
    if d is None:
        return None
    stats = d.get("stats")
    return Summary(text=d["text"], values=_number(d.get("values")),
                   stats=None if stats is None else tuple(_number(stats)), layout=d.get("layout", "strided"))


def _tensor_info(d: dict[str, Any]) -> TensorInfo:
    return TensorInfo(id=d["id"], shape=tuple(d["shape"]), dtype=d["dtype"], device=d["device"],
                      requires_grad=d["requires_grad"], is_leaf=d["is_leaf"], retains_grad=d["retains_grad"],
                      version=d["version"], grad_fn=d["grad_fn"], base=d["base"], value=_summary(d["value"]) or
                      Summary(text=""), grad=_summary(d["grad"]), is_param=d.get("is_param", False),
                      forbidden=d.get("forbidden", False), output_nr=d.get("output_nr", 0))


def _node_info(d: dict[str, Any]) -> NodeInfo:
    saved = tuple(SavedValue(name=v["name"], tensor=v["tensor"], value=_summary(v["value"]), state=v["state"],
                             saved_version=v.get("saved_version"), version=v.get("version")) for v in d["saved"])
    inputs = tuple(None if e is None else Edge(e["node"], e["output_nr"]) for e in d["inputs"])
    return NodeInfo(id=d["id"], name=d["name"], inputs=inputs, attrs=tuple((a, b) for a, b in d["attrs"]),
                    saved=saved, variable=d.get("variable"), output=d.get("output"),
                    value=_summary(d.get("value")), module=d.get("module", ""))


def _change(d: dict[str, Any]) -> GradChange:
    return GradChange(d["tensor"], _summary(d["before"]), _summary(d["after"]))


def _pairs(rows: list[Any]) -> tuple[tuple[str, str], ...]:
    return tuple((a, b) for a, b in rows)


def _event(d: dict[str, Any]) -> Event:
    kind = d.get("kind")
    if kind == "create":
        return Create(tuple(d["tensors"]), tuple(d["nodes"]), _pairs(d.get("existing_grads", [])),
                      _pairs(d.get("shares", [])))
    if kind == "bind":
        return Bind(d["name"], d["new"])
    if kind == "rebind":
        return Rebind(d["name"], d["old"], d["new"], tuple(d["held_by_names"]), tuple(d["held_by_nodes"]),
                      d.get("held_elsewhere", False))
    if kind == "unbind":
        return Unbind(d["name"], d["old"], tuple(d["held_by_names"]), tuple(d["held_by_nodes"]),
                      d.get("held_elsewhere", False))
    if kind == "mutate":
        return Mutate(d["tensor"], d["version_before"], d["version_after"], d["grad_fn_before"], d["grad_fn_after"],
                      _pairs(d.get("stale", [])), d.get("via"), d.get("op", ""),
                      d.get("values_kept", False))
    if kind == "backward":
        flow = tuple(Flow(f["node"], tuple(_summary(g) for g in f["grad_in"]),
                          tuple(_summary(g) for g in f["grad_out"])) for f in d.get("flow", []))
        others = tuple(Root(r["tensor"], r["node"], _summary(r["gradient"])) for r in d.get("others", []))
        return Backward(d["root"], _summary(d["gradient"]), d["retain_graph"], tuple(_change(c) for c in d["grads"]),
                        _pairs(d["freed"]), d.get("call", "backward"), d.get("root_node"), flow, others)
    if kind == "grad":
        return Grad(_change(d["change"]))
    if kind == "untracked":
        return Untracked(d["tensor"], d["reason"], d.get("shares_with"))
    if kind == "error":
        return Error(d["type"], d["message"], d["lineno"])
    raise TraceFormatError(f"unknown event kind {kind!r}")


def _read_step(d: dict[str, Any], tensors: list[TensorInfo], nodes: list[NodeInfo]) -> Step:
    return Step(index=d["index"], lineno=d["lineno"], code=d["code"], frame=d["frame"],
                bindings=dict(d["bindings"]),
                tensors={tid: tensors[row] for tid, row in d["tensors"].items()},
                nodes={nid: nodes[row] for nid, row in d["nodes"].items()},
                events=tuple(_event(e) for e in d["events"]),
                predictions=tuple(Prediction(**{k: v for k, v in p.items() if k != "kind"})
                                  for p in d["predictions"]))


def trace_from_dict(doc: Any) -> Trace:
    """A :class:`Trace` from the data :func:`trace_dict` gives (or ``json.loads`` of a saved trace).

    Raises :class:`TraceFormatError` (a ``ValueError``) with a one-line reason when the
    document is not a gradtrace trace of a version this reader knows.
    """
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise TraceFormatError(f"not a gradtrace trace: its \"schema\" is not {SCHEMA!r}; "
                               "save one with Trace.to_json()")
    version = doc.get("version")
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise TraceFormatError(f"gradtrace trace version {version!r} cannot be read by this gradtrace "
                               f"(it reads versions 1 to {SCHEMA_VERSION}); upgrade gradtrace")
    check_document(doc)
    try:
        tensors = [_tensor_info(t) for t in doc["tensors"]]
        nodes = [_node_info(n) for n in doc["nodes"]]
        steps = tuple(_read_step(s, tensors, nodes) for s in doc["steps"])
        final = None if doc.get("final") is None else _read_step(doc["final"], tensors, nodes)
        error = doc.get("error")
        return Trace(source=doc["source"], filename=doc["filename"], steps=steps,
                     error=None if error is None else Error(error["type"], error["message"], error["lineno"]),
                     steps_unrecorded=doc.get("steps_unrecorded", 0), max_steps=doc.get("max_steps", DEFAULT_MAX_STEPS),
                     final=final)
    except TraceFormatError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise TraceFormatError(f"a damaged gradtrace trace ({type(exc).__name__}: {exc}); "
                               "save it again with Trace.to_json()") from None


def trace_from_json(text: str | bytes) -> Trace:
    """A :class:`Trace` from the JSON text :func:`trace_json` (``Trace.to_json()``) wrote."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise TraceFormatError("not a gradtrace trace: its JSON nests too deeply to read; "
                               "save it again with Trace.to_json()") from None
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        raise TraceFormatError(f"not JSON: {exc}") from None
    return trace_from_dict(doc)

"""Checks a saved trace document before it is read: every field the renderers use, of the right type.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

:func:`check_document` runs in :func:`gradtrace.render.json.trace_from_dict` before any
record is built. It checks the type of every field the reader and the renderers read,
the words of the closed vocabularies (event kinds, saved-value states, backward calls),
the form of tensor and node ids (``t3``, ``n7``), that row numbers point into the
``tensors`` / ``nodes`` tables (a negative one would read another row), and that a step
says the truth about its rows (row ``t3`` is a ``t3``). A damaged document raises
:class:`TraceFormatError` whose one line says where the damage is. The walk never
recurses on the document's nesting, so a deep nest of lists is refused, not overflowed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["TraceFormatError", "check_document"]


class TraceFormatError(ValueError):
    """The document is not a gradtrace trace this version can read; the message says why."""


Where = Any  # the text at the top, or (outer place, "." / "[" / " key", key or index)
Check = Callable[[Any, Where], None]

#: deepest nest of lists a summary's ``values`` may have (a tensor of that many dimensions)
MAX_VALUE_DEPTH = 64
_TENSOR_ID = re.compile(r"t[0-9]+\Z")
_NODE_ID = re.compile(r"n[0-9]+\Z")
_NUMBER_WORDS = frozenset({"nan", "inf", "-inf"})


def damaged(where: Where, what: str) -> TraceFormatError:
    """The one-line error for a damaged field (``where`` is spelled out only now: the checks pass it unbuilt)."""
    what = what.replace("\n", " ")
    return TraceFormatError(f"a damaged gradtrace trace: {_place(where)} {what}; save it again with Trace.to_json()")


def _place(where: Where) -> str:
    parts = []
    while isinstance(where, tuple):
        where, how, key = where
        parts.append(f".{key}" if how == "." else f"[{key!r}]" if how == "[" else how)
    if not parts:
        return str(where)
    return "".join(reversed(parts)).lstrip(".")  # steps[3].tensors['t1']: a place inside the document


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------- field checks


def string(value: Any, where: Where) -> None:
    if not isinstance(value, str):
        raise damaged(where, f"should be a string, not {_shown(value)}")


def integer(value: Any, where: Where) -> None:
    if type(value) is not int:
        raise damaged(where, f"should be a whole number, not {_shown(value)}")


def count(value: Any, where: Where) -> None:
    integer(value, where)
    if value < 0:
        raise damaged(where, f"should not be negative, not {value}")


def flag(value: Any, where: Where) -> None:
    if not isinstance(value, bool):
        raise damaged(where, f"should be true or false, not {_shown(value)}")


def optional(check: Check) -> Check:
    def maybe(value: Any, where: Where) -> None:
        if value is not None:
            check(value, where)
    return maybe


def ident(pattern: re.Pattern[str], what: str) -> Check:
    def check(value: Any, where: Where) -> None:
        if not isinstance(value, str) or not pattern.match(value):
            raise damaged(where, f"should be {what}, not {_shown(value)}")
    return check


tensor_id = ident(_TENSOR_ID, "a tensor id (t1, t2, ...)")
node_id = ident(_NODE_ID, "a node id (n1, n2, ...)")


def one_of(*words: str) -> Check:
    def check(value: Any, where: Where) -> None:
        if value not in words or not isinstance(value, str):
            raise damaged(where, f"should be one of {', '.join(words)}, not {_shown(value)}")
    return check


def list_of(check: Check) -> Check:
    def each(value: Any, where: Where) -> None:
        if not isinstance(value, list):
            raise damaged(where, f"should be a list, not {_shown(value)}")
        for i, item in enumerate(value):
            check(item, (where, "[", i))
    return each


def pair_of(first: Check, second: Check) -> Check:
    def pair(value: Any, where: Where) -> None:
        if not isinstance(value, list) or len(value) != 2:
            raise damaged(where, f"should be a pair [a, b], not {_shown(value)}")
        first(value[0], (where, "[", 0))
        second(value[1], (where, "[", 1))
    return pair


def record(required: Mapping[str, Check], optional_keys: Mapping[str, Check] | None = None) -> Check:
    """An object with the ``required`` keys and maybe the ``optional_keys``, each checked; other keys are ignored."""
    def check(value: Any, where: Where) -> None:
        if not isinstance(value, dict):
            raise damaged(where, f"should be an object, not {_shown(value)}")
        for key, inner in required.items():
            if key not in value:
                raise damaged(where, f"has no {key!r}")
            inner(value[key], (where, ".", key))
        for key, inner in (optional_keys or {}).items():
            if key in value:
                inner(value[key], (where, ".", key))
    return check


def mapping(key: Check, inner: Check) -> Check:
    def check(value: Any, where: Where) -> None:
        if not isinstance(value, dict):
            raise damaged(where, f"should be an object, not {_shown(value)}")
        for k, v in value.items():
            key(k, (where, " key", None))
            inner(v, (where, "[", k))
    return check


# ---------------------------------------------------------------- values


def _scalar(value: Any) -> bool:
    if isinstance(value, (bool, int, float)):
        return True
    if not isinstance(value, str):
        return False
    if value in _NUMBER_WORDS:
        return True
    try:
        complex(value)
    except ValueError:
        return False
    return True


def values(value: Any, where: Where) -> None:
    """A number, or a tensor's nested lists of numbers: every list at one depth as long as the first, no deeper
    than :data:`MAX_VALUE_DEPTH` (walked without recursion)."""
    shape = _first_shape(value, where)
    todo = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if depth < len(shape):
            if not isinstance(item, list) or len(item) != shape[depth]:
                raise damaged(where, f"should hold nested lists of shape {tuple(shape)}, not {_shown(item)} inside")
            todo.extend((v, depth + 1) for v in item)
        elif not _scalar(item):
            raise damaged(where, f"should hold numbers, not {_shown(item)}")


def _first_shape(value: Any, where: Where) -> list[int]:
    """The lengths of the first list at each depth (a tensor's shape, when the lists are a tensor's values)."""
    shape: list[int] = []
    while isinstance(value, list):
        if len(shape) >= MAX_VALUE_DEPTH:
            raise damaged(where, f"nests lists deeper than {MAX_VALUE_DEPTH}")
        shape.append(len(value))
        value = value[0] if value else None
    return shape


def _stats(value: Any, where: Where) -> None:
    if not isinstance(value, list) or len(value) != 3 or not all(_scalar(v) and not isinstance(v, list)
                                                                  for v in value):
        raise damaged(where, f"should be [min, mean, max], not {_shown(value)}")


summary = record({"text": string}, {"values": optional(values), "stats": optional(_stats), "layout": string})
maybe_summary = optional(summary)
names = list_of(string)
tensor_ids = list_of(tensor_id)
node_ids = list_of(node_id)
saved_pairs = list_of(pair_of(node_id, string))
tensor_pairs = list_of(pair_of(tensor_id, tensor_id))
change = record({"tensor": tensor_id, "before": maybe_summary, "after": maybe_summary})

# ---------------------------------------------------------------- rows and events

tensor_row = record(
    {"id": tensor_id, "shape": list_of(count), "dtype": string, "device": string, "requires_grad": flag,
     "is_leaf": flag, "retains_grad": flag, "version": count, "grad_fn": optional(node_id),
     "base": optional(tensor_id), "value": maybe_summary, "grad": maybe_summary},
    {"is_param": flag, "forbidden": flag, "output_nr": count},
)
saved_value = record({"name": string, "tensor": optional(tensor_id), "value": maybe_summary,
                      "state": one_of("alive", "freed", "stale")},
                     {"saved_version": optional(integer), "version": optional(integer)})
node_row = record(
    {"id": node_id, "name": string, "inputs": list_of(optional(record({"node": node_id, "output_nr": count}))),
     "attrs": list_of(pair_of(string, string)), "saved": list_of(saved_value)},
    {"variable": optional(tensor_id), "output": optional(tensor_id), "value": maybe_summary, "module": string},
)
holders = {"held_by_names": names, "held_by_nodes": node_ids}
held = {"held_elsewhere": flag}
flow = record({"node": node_id, "grad_in": list_of(maybe_summary), "grad_out": list_of(maybe_summary)})
root = record({"tensor": optional(tensor_id), "node": optional(node_id), "gradient": maybe_summary})
error = record({"type": string, "message": string, "lineno": optional(integer)})
EVENTS: dict[str, Check] = {
    "create": record({"tensors": tensor_ids, "nodes": node_ids},
                     {"existing_grads": tensor_pairs, "shares": tensor_pairs}),
    "bind": record({"name": string, "new": tensor_id}),
    "rebind": record({"name": string, "old": tensor_id, "new": tensor_id, **holders}, held),
    "unbind": record({"name": string, "old": tensor_id, **holders}, held),
    "mutate": record({"tensor": tensor_id, "version_before": count, "version_after": count,
                      "grad_fn_before": optional(node_id), "grad_fn_after": optional(node_id)},
                     {"stale": saved_pairs, "via": optional(tensor_id), "op": string, "values_kept": flag}),
    "backward": record({"root": optional(tensor_id), "gradient": maybe_summary, "retain_graph": flag,
                        "grads": list_of(change), "freed": saved_pairs},
                       {"call": one_of("backward", "autograd.backward", "autograd.grad"),
                        "root_node": optional(node_id), "flow": list_of(flow), "others": list_of(root)}),
    "grad": record({"change": change}),
    "untracked": record({"tensor": tensor_id, "reason": string}, {"shares_with": optional(tensor_id)}),
    "error": error,
}


def event(value: Any, where: Where) -> None:
    kind = value.get("kind") if isinstance(value, dict) else None
    if not isinstance(kind, str) or kind not in EVENTS:
        raise damaged(where, f"should be an event whose kind is one of {', '.join(EVENTS)}, not {_shown(value)}")
    EVENTS[kind](value, where)


prediction = record({"root": string, "node": node_id, "saved": string, "tensor": optional(tensor_id),
                     "saved_version": integer, "version": integer, "message": string})


def rows(table: list[Any], id_of: Check) -> Check:
    """Row numbers into ``table`` (a negative one would read from its end), each row of the id it is filed under.

    The table's rows are checked first, so a row of the right id also vouches for the id's form."""
    ids = [r["id"] for r in table]

    def check(value: Any, where: Where) -> None:
        if not isinstance(value, dict):
            raise damaged(where, f"should be an object, not {_shown(value)}")
        for key, row in value.items():
            if type(row) is not int or not 0 <= row < len(ids) or ids[row] != key:
                _bad_row(key, row, ids, id_of, where)
    return check


def _bad_row(key: Any, row: Any, ids: list[str], id_of: Check, where: Where) -> None:
    id_of(key, (where, " key", None))
    integer(row, (where, "[", key))
    if not 0 <= row < len(ids):
        raise damaged((where, "[", key), f"is row {row}, outside the table's rows 0 to {len(ids) - 1}")
    raise damaged((where, "[", key), f"is row {row}, the row of {ids[row]}")


def step(doc: dict[str, Any]) -> Check:
    return record({"index": count, "lineno": integer, "code": string, "frame": string,
                   "bindings": mapping(string, tensor_id), "tensors": rows(doc["tensors"], tensor_id),
                   "nodes": rows(doc["nodes"], node_id), "events": list_of(event),
                   "predictions": list_of(prediction)})


def check_document(doc: dict[str, Any]) -> None:
    """Raise :class:`TraceFormatError` when ``doc`` (schema and version already checked) is damaged."""
    record({"tensors": list_of(tensor_row), "nodes": list_of(node_row)})(doc, "the document")
    record({"source": string, "filename": string, "steps": list_of(step(doc))},
           {"final": optional(step(doc)), "error": optional(error), "steps_unrecorded": count,
            "max_steps": count})(doc, "the document")

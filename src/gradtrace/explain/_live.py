"""Reading a live backward node into a plain :class:`~gradtrace.model.NodeInfo`.

Place in the pipeline: tracer -> model -> **explain** -> render. This is the one
part of explain (with the walkthrough) that touches torch objects: it reads a
node's ``_saved_*`` attributes once, before a backward pass frees them, and keeps
only plain values.
"""

from __future__ import annotations

from typing import Any

from ..model import ALIVE, FREED, Edge, NodeInfo, SavedValue, Summary
from ._numbers import MAX_ELEMENTS, dtype_name, fmt_values

_SAVED_NAMES: dict[type, tuple[str, ...]] = {}


def saved_names(node: Any) -> tuple[str, ...]:
    """The ``_saved_*`` attribute names of a node class (``dir()`` once per class)."""
    cls = type(node)
    names = _SAVED_NAMES.get(cls)
    if names is None:
        names = tuple(a for a in dir(node) if a.startswith("_saved_"))
        _SAVED_NAMES[cls] = names
    return names


def summarize(t: Any) -> Summary:
    """A tensor's values as plain data: all of them when there are at most 16."""
    t = t.detach()
    sparse = ""
    if t.layout != _strided():
        sparse = " (sparse)"
        t = t.to_dense() if t.numel() <= MAX_ELEMENTS else t
    if t.numel() <= MAX_ELEMENTS:
        values = t.tolist()
        return Summary(fmt_values(values, dtype_name(t.dtype)) + sparse, values)
    if sparse:
        return Summary(f"sparse {dtype_name(t.dtype)}{list(t.shape)}", None)
    stats = None
    if t.is_floating_point() and t.numel():
        stats = (float(t.min()), float(t.mean()), float(t.max()))
    return Summary(f"{dtype_name(t.dtype)}{list(t.shape)}", None, stats)


def _strided() -> Any:
    import torch

    return torch.strided


def _read(node: Any, attr: str) -> tuple[str, Any]:
    try:
        return ALIVE, getattr(node, attr)
    except RuntimeError:
        return FREED, None


def read_saved(node: Any) -> tuple[tuple[tuple[str, str], ...], tuple[SavedValue, ...]]:
    """``(attrs, saved)`` of a node: non-tensor values as text, tensors summarised."""
    import torch

    attrs: list[tuple[str, str]] = []
    saved: list[SavedValue] = []
    for attr in saved_names(node):
        name = attr[len("_saved_"):]
        state, value = _read(node, attr)
        if state == FREED:
            saved.append(SavedValue(name, None, None, FREED))
        elif isinstance(value, torch.Tensor):
            saved.append(SavedValue(name, None, summarize(value)))
        elif isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
            saved += [SavedValue(f"{name}[{i}]", None, summarize(v)) for i, v in enumerate(value)]
        else:
            attrs.append((name, repr(value)))
    return tuple(attrs), tuple(saved)


def node_info(node: Any, node_id: str, ids: dict[int, str] | None = None) -> NodeInfo:
    """A plain snapshot of ``node``; ``ids`` maps ``id(next node)`` to its id for the edges."""
    ids = ids or {}
    inputs = tuple(None if nxt is None else Edge(ids.get(id(nxt), "?"), nr)
                   for nxt, nr in node.next_functions)
    attrs, saved = read_saved(node)
    return NodeInfo(node_id, node.name(), inputs, attrs, saved)


def input_meta(node: Any) -> tuple[tuple[tuple[int, ...], str] | None, ...]:
    """Shape and dtype of each input of ``node`` (read from the nodes it feeds)."""
    out: list[tuple[tuple[int, ...], str] | None] = []
    for nxt, nr in node.next_functions:
        if nxt is None:
            out.append(None)
            continue
        try:
            meta = nxt._input_metadata[nr]
            out.append((tuple(meta.shape), dtype_name(meta.dtype)))
        except (AttributeError, IndexError, RuntimeError):
            out.append(None)
    return tuple(out)

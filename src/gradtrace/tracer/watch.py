"""Hearing ``backward()`` calls and watching their reverse pass node by node (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

``Tensor.backward``, ``torch.autograd.backward`` and ``torch.autograd.grad`` are
Python functions. The run driver tells the recorder when a frame of one of their
code objects starts and when it ends (``sys.settrace``'s call and return events;
``sys.monitoring``'s PY_START and PY_RETURN/PY_UNWIND on those code objects only),
so the call runs exactly as the program made it: a program's wrapper of
``Tensor.backward`` runs once, and nothing stands between the caller and torch.
The call's arguments are read from the starting frame.

While the outermost such call runs, a pre-hook and a hook sit on every node it can
reach (:func:`watch_nodes`); they return nothing (gradients pass unchanged: PyTorch's
results are bit-identical with and without them) and capture only node ids and value
summaries, never a node or a tensor, so they keep no graph alive. They are removed
when the call's frame ends, also when it raises. This module finds those nodes and
summarizes the gradients the hooks see.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..model import Flow, Summary
from .ids import Ids
from .quiet import quiet
from .summary import MAX_ELEMENTS, summarize

#: Graphs larger than this are run without watching (the flow is left empty).
MAX_WATCHED_NODES = 5000
#: Only the first backward() calls of a trace are watched: a training loop repeats the same
#: reverse pass, and watching every node costs about a quarter of tracing such a loop.
MAX_WATCHED_CALLS = 8


def _summary(g: Any) -> Summary | None:
    """Small gradients in full; a large one by its shape only (its numbers are not written out)."""
    if not isinstance(g, torch.Tensor):
        return None
    if g.numel() > MAX_ELEMENTS and g.layout is torch.strided:  # a sparse one: its few stored values
        return Summary(text="shape (" + ", ".join(str(int(d)) for d in g.shape) + ")")
    return summarize(g)


def _summaries(grads: Any) -> tuple[Summary | None, ...]:
    with quiet():
        return tuple(_summary(g) for g in grads)


def _reachable(roots: list[Any], ids: Ids) -> list[tuple[Any, str]] | None:
    """(node, id) for every stamped node under ``roots``; None past the limit."""
    found: list[tuple[Any, str]] = []
    seen: set[str] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        nid = ids.node(node)
        if nid is None or nid in seen:
            continue
        seen.add(nid)
        found.append((node, nid))
        if len(found) > MAX_WATCHED_NODES:
            return None
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return found


#: the code objects whose frames are backward calls, and what each call is named
BACKWARD_CODES: dict[types.CodeType, str] = {
    torch.Tensor.backward.__code__: "backward",
    torch.autograd.backward.__code__: "autograd.backward",
    torch.autograd.grad.__code__: "autograd.grad",
}


@dataclass
class BackwardCall:
    """One backward()/autograd.backward/autograd.grad call, as made."""

    call: str
    roots: list[torch.Tensor]
    gradient: Any
    retain_graph: bool
    create_graph: bool
    flow: list[Flow] = field(default_factory=list)


def _as_list(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for t in x if isinstance(t, torch.Tensor)]
    return []


def backward_call(kind: str, args: dict[str, Any]) -> BackwardCall:
    """The call a starting backward frame makes, from its arguments (``frame.f_locals``)."""
    create = bool(args.get("create_graph", False))
    retain = args.get("retain_graph")
    keep = create if retain is None else bool(retain)
    if kind == "backward":
        return BackwardCall(kind, _as_list(args.get("self")), args.get("gradient"), keep, create)
    if kind == "autograd.backward":
        return BackwardCall(kind, _as_list(args.get("tensors")), args.get("grad_tensors"), keep, create)
    return BackwardCall(kind, _as_list(args.get("outputs")), args.get("grad_outputs"), keep, create)


def watch_nodes(roots: list[Any], ids: Ids, flow: list[Flow]) -> list[Any]:
    """Put a pre-hook and a hook on every stamped node under ``roots``; their handles.

    The hooks append to ``flow`` in the engine's order. Remove the handles with
    :func:`unwatch_nodes` once the call ends.
    """
    nodes = _reachable(roots, ids)
    if not nodes:
        return []
    entered: dict[str, tuple[Summary | None, ...]] = {}
    handles: list[Any] = []

    def pre(nid: str) -> Callable[[Any], None]:
        def hook(grad_outputs: Any) -> None:
            entered[nid] = _summaries(grad_outputs)

        return hook

    def post(nid: str) -> Callable[[Any, Any], None]:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            flow.append(Flow(nid, entered.pop(nid, _summaries(grad_outputs)), _summaries(grad_inputs)))

        return hook

    try:
        for node, nid in nodes:
            handles.append(node.register_prehook(pre(nid)))
            handles.append(node.register_hook(post(nid)))
    except BaseException:
        unwatch_nodes(handles)
        raise
    return handles


def unwatch_nodes(handles: list[Any]) -> None:
    for handle in handles:
        handle.remove()
    handles.clear()


def compiling() -> bool:
    """``torch.compile`` is tracing (Dynamo, or AOTAutograd running autograd.grad on fake tensors):
    a backward call then is the compiler's, not one the program made."""
    if "torch._dynamo" not in sys.modules:
        return False
    return torch.compiler.is_compiling() or torch._guards.TracingContext.try_get() is not None


def compiled_code(code: types.CodeType) -> bool:
    """``code`` is the bytecode ``torch.compile`` made of a function: it runs the compiled graph, and
    its frame is no statement of the program (the function's own code runs when it is not compiled)."""
    dynamo_utils = sys.modules.get("torch._dynamo.utils")
    return dynamo_utils is not None and code in dynamo_utils.orig_code_map

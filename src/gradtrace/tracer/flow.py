"""The reverse pass, watched node by node (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

When the learner's code calls ``backward()`` (or ``torch.autograd.grad``), the
tracer (:mod:`.backward`) puts a pre-hook and a hook on every node the call can
reach, lets the call run exactly as made, and removes every hook again when its
frame ends, even when the call raises. This module finds those nodes and
summarizes the gradients the hooks see.
The hooks return nothing (gradients pass unchanged: PyTorch's results are
bit-identical with and without them) and capture only node ids and value
summaries, never a node or a tensor, so they keep no graph alive.
"""

from __future__ import annotations

from typing import Any

import torch

from ..model import Summary
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

"""Stale-value predictions: which named root's ``backward()`` will fail, and why (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

A node that saved a tensor which has since been changed in place holds a *stale*
saved value (the graph book marks it); a ``backward()`` that reaches that node
raises. After each statement the tracer asks :func:`predictions` which named
roots reach such a node, and :func:`take_back` drops what the steps before said
when a backward call from that root ran fine without the stale node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..model import FREED, STALE, Error, NodeInfo, Prediction, SavedValue, Step, reachable
from .graph import GraphBook, grad_fn_of
from .ids import Ids
from .shown import num as _num


def predictions(book: GraphBook, ids: Ids, bindings: dict[str, str],
                nodes: Mapping[str, NodeInfo]) -> tuple[Prediction, ...]:
    """Each named root whose ``backward()`` will fail on a stale saved value, and why."""
    if not book.stale:
        return ()
    book.stale = {nid for nid in book.stale if any(s.state == STALE for s in book.nodes[nid].saved)}
    shown = sorted((nid for nid in book.stale if nid in nodes), key=_num)
    stale = [(nid, s) for nid in shown for s in nodes[nid].saved if s.state == STALE]
    if not stale:
        return ()
    out = []
    for name, tid in bindings.items():
        t = ids.obj(tid)
        fn = None if t is None else grad_fn_of(t)
        if fn is None:
            continue
        root = ids.node(fn)
        reach = reachable(nodes, [root])
        blocked = _blocked(reach, nodes)
        for nid, s in stale:
            if nid not in reach or nid in blocked:
                continue
            out.append(_prediction(name, nid, nodes[nid], s))
    return tuple(out)


def _blocked(reach: set[str], nodes: Mapping[str, NodeInfo]) -> set[str]:
    """The nodes of ``reach`` a backward never gets to: a node whose saved values a backward freed raises
    ("backward through the graph a second time") when it runs, and it runs before every node it leads to."""
    blocked: set[str] = set()
    for nid in reach:
        if nid not in blocked and any(s.state == FREED for s in nodes[nid].saved):
            blocked |= reachable(nodes, [nid])
    return blocked


def _prediction(name: str, nid: str, holder: NodeInfo, s: SavedValue) -> Prediction:
    """``name.backward()`` will fail on the stale value ``s`` that node ``nid`` saved."""
    who = s.tensor or "a saved tensor"
    inner, dot, slot = s.name.partition(".")
    saver = f"the {inner} inside {holder.name} ({nid})" if dot else f"{holder.name} ({nid})"
    message = (
        f"{name}.backward() will fail: {saver} saved {slot if dot else s.name} = {who} "
        f"at version {s.saved_version}, and {who} has since been changed in place "
        f"(now version {s.version})."
    )
    return Prediction(name, nid, s.name, s.tensor, s.saved_version or 0, s.version or 0, message)


def take_back(steps: list[Step], calls: list[Any], ids: Ids, error: Error | None) -> None:
    """Drop the predictions of the steps just before a backward call that ran fine without their node.

    A prediction says ``y.backward()`` will fail; a call from ``y`` that never reaches the
    stale node (``y.backward(inputs=[b])``, ``torch.autograd.grad(y, [b])``) runs fine, so
    the steps leading to it must not say it will fail. Only a call watched node by node
    (its flow lists the nodes that ran) is judged; a call that raised keeps them all.
    """
    for i, call in enumerate(calls):
        if not call.flow or (error is not None and i == len(calls) - 1):
            continue
        ran = {f.node for f in call.flow}
        roots = {tid for tid in map(ids.tensor, call.roots) if tid is not None}
        k = len(steps) - 1
        while k >= 0:
            step = steps[k]
            keep = tuple(p for p in step.predictions
                         if p.node in ran or step.bindings.get(p.root) not in roots)
            if len(keep) == len(step.predictions):
                break
            steps[k] = replace(step, predictions=keep)
            k -= 1


def stale_saves(book: GraphBook, tid: str, version: int) -> tuple[tuple[str, str], ...]:
    """``(node, saved name)`` of every saved value of ``tid`` now stale at ``version``, in node order."""
    nodes = book.nodes
    out = []
    for nid in dict.fromkeys(nid for nid, _ in book.saved_by.get(tid, ())):
        out += [(nid, s.name) for s in nodes[nid].saved if s.tensor == tid and s.state == STALE
                and s.version == version]
    return tuple(out)

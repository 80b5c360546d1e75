"""What a statement changed, read from the recorder, the ids and what is shown (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The tracer's step is read -> diff -> assemble. :class:`Changes` is the diff's live
half: it looks at the statement's records and at the tensors themselves (memory,
``.grad``, versions) and hands plain ids to :mod:`.events`, whose functions make the
events from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ..model import IN_OP_WRITE, UNSEEN_WRITE, Backward, Create, Event, Root, TensorInfo, Untracked
from .events import grad_changes, make_grad, mutate_events
from .graph import GraphBook, grad_fn_of, storage_of, version_of
from .ids import Ids
from .predict import stale_saves
from .recorder import Recorder
from .shown import Shown, num
from .summary import summarize
from .watch import BackwardCall

_num = num


class Changes:
    """The events of one statement that need the live tensors to tell (one per trace)."""

    def __init__(self, ids: Ids, book: GraphBook, shown: Shown, recorder: Recorder) -> None:
        self.ids, self.book, self.shown, self.recorder = ids, book, shown, recorder

    def create(self, added: list[str], counts: tuple[int, int]) -> Create | None:
        """The tensors and nodes the statement made (``counts``: how many there were as it began), if any."""
        tensor_count, node_count = counts
        new_tensors = sorted((x for x in added if x[0] == "t" and _num(x) > tensor_count), key=_num)
        new_nodes = sorted((x for x in added if x[0] == "n" and _num(x) > node_count), key=_num)
        grads = self._existing_grads(new_tensors) if new_tensors else {}
        if grads:
            new_tensors = [t for t in new_tensors if t not in grads]
        if not (new_tensors or new_nodes or grads):
            return None
        shares = self._shared_memory(new_tensors, tensor_count) if new_tensors else ()
        return Create(tuple(new_tensors), tuple(new_nodes), tuple(grads.items()), shares)

    def _existing_grads(self, new: list[str]) -> dict[str, str]:
        """Of the tensors first shown at this step, those that are the ``.grad`` a tensor shown before already
        had, unchanged, at the step before (``g = w.grad``): the statement made none of them. Id -> owner.
        Owners are looked up by memory (``Shown.by_storage``): the work is that of the new tensors."""
        shown, obj = self.shown, self.ids.obj
        out: dict[str, str] = {}
        touched: set[int] | None = None  # ``w.grad = g = ...``: this statement set that .grad itself
        for tid in new:
            info, t = shown.tensors.get(tid), obj(tid)
            if t is None or info is None or info.requires_grad or info.grad_fn is not None:
                continue
            for owner in sorted(shown.by_storage.get(storage_of(t), ()), key=_num):
                now = shown.tensors.get(owner)
                was = shown.before(owner) if owner not in new and now is not None and now.grad is not None else None
                if was is None or was.grad is None or (was.grad != now.grad and was.grad.text != now.grad.text):  # type: ignore[union-attr]
                    continue
                o = obj(owner)
                if touched is None:
                    touched = {id(x) for x in self.recorder.flagged}
                if o is not None and id(o) not in touched and o.grad is t:
                    out[tid] = owner
                    break
        return out

    def _shared_memory(self, new: list[str], known: int) -> tuple[tuple[str, str], ...]:
        """Of the tensors made by this step, those that are no view yet use the memory of a tensor shown before
        (``nn.Parameter(h)``, ``w.data``, ``torch.from_numpy(h.numpy())``), each with the first such tensor.
        A ``detach()`` is left out: its own event says it. Looked up by memory: the work is that of the new ones."""
        shown, obj = self.shown, self.ids.obj
        detached = {id(t) for t, _reason, source in self.recorder.untracked if source is not None}
        out = []
        for tid in new:
            info, t = shown.tensors.get(tid), obj(tid)
            if t is None or info is None or info.base is not None or id(t) in detached or not t.numel():
                continue
            s = storage_of(t)
            if not s:
                continue
            for other in sorted(shown.by_storage.get(s, ()), key=_num):
                o = obj(other) if _num(other) <= known else None
                if o is not None and storage_of(o) == s:  # its own memory, not its .grad's
                    out.append((tid, other))
                    break
        return tuple(out)

    def mutations(self, mutated: list[tuple[str, int, int]], tensors: Mapping[str, TensorInfo],
                  in_op: bool = False) -> list[Event]:
        """The tensors changed in place, and the saved values that went stale with them."""
        direct: dict[str, str] = {}
        where: dict[str, int | None] = {}  # storage of each tensor changed directly
        for op, target in self.recorder.inplace:
            tid = self.ids.tensor(target)
            if tid is not None:
                direct.setdefault(tid, op)
                where.setdefault(tid, storage_of(target))

        def shares(tid: str, other: str) -> bool:  # changed through a view: the two share memory
            t = self.ids.obj(tid)
            mine = None if t is None else storage_of(t)
            return mine is not None and where[other] == mine

        made, made_from = self._made_and_changed(mutated, tensors)
        return mutate_events(mutated + made, direct, self.shown.before, tensors, self.shown.changed, self._stale,
                             shares, IN_OP_WRITE if in_op else UNSEEN_WRITE, made_from)

    def _made_and_changed(
        self, mutated: list[tuple[str, int, int]], tensors: Mapping[str, TensorInfo]
    ) -> tuple[list[tuple[str, int, int]], dict[str, str | None]]:
        """Tensors shown for the first time that the statement's in-place calls changed (``y = x.exp().add_(1)``,
        ``ReLU(inplace=True)`` of a new tensor): ``(tid, version before, now)`` and the node each had before."""
        out: list[tuple[str, int, int]] = []
        nodes: dict[str, str | None] = {}
        done = {tid for tid, _v0, _v1 in mutated}
        before, ids = self.shown.before, self.ids
        for t, v0, fn in self.recorder.changed_from:  # in call order: the first change of each tensor counts
            tid = ids.tensor(t)
            if tid is None or tid in done or tid not in tensors or before(tid) is not None:
                continue
            done.add(tid)
            v1 = version_of(t)
            if v1 != v0:
                out.append((tid, v0, v1))
                nodes[tid] = None if fn is None else ids.node(fn)
        return out, nodes

    def _stale(self, tid: str, version: int) -> tuple[tuple[str, str], ...]:
        """``(node, saved name)`` of every saved value of ``tid`` now stale at ``version`` (see :mod:`.predict`)."""
        return stale_saves(self.book, tid, version)

    def grads(
        self, tensors: Mapping[str, TensorInfo], backward_events: list[tuple[Any, list[tuple[str, str]]]]
    ) -> list[Event]:
        """The ``.grad`` changes, told by the backward calls that made them (each with what it freed)."""
        shown = self.shown
        changes = grad_changes((*shown.changed, *shown.added), shown.before, tensors)
        if not backward_events:
            return [make_grad(c) for c in changes]
        out: list[Event] = []
        for i, (call, freed) in enumerate(backward_events):
            first, *others = self._roots(call) or [Root(None, None, None)]
            out.append(
                Backward(
                    root=first.tensor,
                    gradient=first.gradient,
                    retain_graph=call.retain_graph,
                    grads=tuple(changes) if i == len(backward_events) - 1 else (),
                    freed=tuple(freed),
                    call=call.call,
                    root_node=first.node,
                    flow=tuple(call.flow),
                    others=tuple(others),
                )
            )
        return out

    def _roots(self, call: BackwardCall) -> list[Root]:
        """Each tensor ``call`` starts from, with its node and the gradient given for it."""
        grads = call.gradient if isinstance(call.gradient, (list, tuple)) else [call.gradient]
        out = []
        for k, root in enumerate(call.roots):
            fn = grad_fn_of(root)
            g = grads[k] if k < len(grads) else None
            out.append(Root(self.ids.tensor(root), None if fn is None else self.ids.node(fn),
                            summarize(g) if isinstance(g, torch.Tensor) else None))
        return out

    def untracked(self, tensors: Mapping[str, TensorInfo]) -> list[Event]:
        """The tensors the statement made that autograd does not follow (``detach()``, ``.data``)."""
        out: list[Event] = []
        for t, reason, source in self.recorder.untracked:
            tid = self.ids.tensor(t)
            if tid is None or tid not in tensors:
                continue
            shares = None
            if source is not None:
                shares = self.ids.stamp(source)[0]
            out.append(Untracked(tid, reason, shares))
        return out

"""What a step shows, kept up to date statement by statement (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

A step shows every tensor and backward node reachable from a name: from a
tensor to its ``grad_fn`` and its view base, from a node to its inputs, the leaf
it accumulates into and the tensors it saved (until freed). :class:`Shown` keeps
that set, the edges between its members and, for each member, the members that
point at it. A statement then costs what it changed:

- new names and new edges add what they reach, walking only what was not shown;
- a lost name or edge makes its target a *candidate*; a candidate stays if a
  search backwards through the members pointing at it finds a name, otherwise
  it and everything that search saw (none of which a name reaches) go;
- a tensor is read again (its :class:`~gradtrace.model.TensorInfo`) only when its
  version moved, its memory was written, or a call changed its flags or ``.grad``
  (the tracer says which); versions and liveness of the shown tensors are checked
  every step, at a few attribute reads each.
"""

from __future__ import annotations

import functools
import weakref
from collections import Counter
from typing import Any

import torch

from ..model import FREED, NodeInfo, Summary, TensorInfo
from .graph import GraphBook, storage_of, version_of
from .ids import Ids


def num(xid: str) -> int:
    return int(xid[1:])


def _first_num(item: tuple[str, int, int]) -> int:
    return int(item[0][1:])


@functools.cache
def _dtype_text(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


@functools.cache
def _device_text(device: torch.device) -> str:
    return str(device)


_new = object.__new__
#: (``isinstance(t, Parameter)`` runs Python code, the metaclass's ``__instancecheck__``: a parameter is told first)
_Parameter = torch.nn.Parameter


def _tensor_info(id: str, shape: tuple[int, ...], dtype: str, device: str, requires_grad: bool, is_leaf: bool,
                 retains_grad: bool, version: int, grad_fn: str | None, base: str | None, value: Summary,
                 grad: Summary | None, is_param: bool, forbidden: bool = False, output_nr: int = 0) -> TensorInfo:
    """``TensorInfo(...)`` with these fields, made without the frozen dataclass's per-field ``__setattr__``
    (a step may make many): the same object the constructor makes (a test compares them)."""
    info = _new(TensorInfo)
    info.__dict__.update(id=id, shape=shape, dtype=dtype, device=device, requires_grad=requires_grad,
                         is_leaf=is_leaf, retains_grad=retains_grad, version=version, grad_fn=grad_fn, base=base,
                         value=value, grad=grad, is_param=is_param, forbidden=forbidden, output_nr=output_nr)
    return info


class _SameObject:
    """A ``.grad`` in a cache key: equal only to the key of the very same object, still alive, at the same
    version. Its ``id()`` alone is not enough: a retained ``.grad`` that a second ``backward()`` replaces
    is freed, and the new one's Python object can be made at the same address (``c.grad`` then showed
    ``[1., 1.]`` after the second pass, not ``[2., 2.]``, now and then)."""

    __slots__ = ("ref", "version")

    def __init__(self, obj: Any, version: int | None) -> None:
        self.ref, self.version = weakref.ref(obj), version

    def __eq__(self, other: object) -> bool:
        if type(other) is not _SameObject or other.version != self.version:
            return False
        mine = self.ref()
        return mine is not None and mine is other.ref()

    __hash__ = None  # type: ignore[assignment]


def node_edges(info: NodeInfo) -> tuple[str, ...]:
    """What a shown node makes shown: its input nodes, its leaf, its saved tensors not yet freed."""
    out = [e.node for e in info.inputs if e is not None]
    if info.variable is not None:
        out.append(info.variable)
    out += [s.tensor for s in info.saved if s.tensor is not None and s.state != FREED]
    return tuple(out)


class Shown:
    """The shown tensors and nodes, their edges, and who points at each."""

    def __init__(self, ids: Ids, book: GraphBook, work: Counter[str]) -> None:
        self.ids, self.book, self.work = ids, book, work
        self.tensors: dict[str, TensorInfo] = {}
        self.nodes: dict[str, NodeInfo] = {}
        #: member -> the ids it points at (tensors: grad_fn, base; nodes: see :func:`node_edges`)
        self.out: dict[str, tuple[str, ...]] = {}
        #: id -> {member pointing at it: how many edges}
        self.preds: dict[str, dict[str, int]] = {}
        #: named tensors (and this step's extra nodes) -> how many names
        self.roots: dict[str, int] = {}
        #: tid -> (what its info depends on, the info made from it)
        self.cache: dict[str, tuple[tuple[Any, ...], TensorInfo]] = {}
        #: shown tensor -> its version when last read
        self.versions: dict[str, int] = {}
        #: storage address -> shown tensors whose values or ``.grad`` live there
        self.by_storage: dict[int | None, set[str]] = {}
        self._where: dict[str, tuple[int | None, ...]] = {}
        #: tid -> ((data pointer, .grad key), storages) as last read
        self._at: dict[str, tuple[tuple[Any, Any], tuple[int | None, ...]]] = {}
        self._max_t = 0
        self._max_n = 0
        self._sorted = True
        # what the last update did
        self.added: list[str] = []
        self.dropped: list[str] = []
        self.changed: list[str] = []  # shown tensors whose TensorInfo is a new one
        #: tensor id -> its info before the last update (None: not shown), for the ids that update touched
        self.was: dict[str, TensorInfo | None] = {}
        #: how many updates began (a step's mappings build on the last one only if it was the step before)
        self.updates = 0
        #: nodes whose output may have left the step while another of their outputs is shown (see :meth:`_relink`)
        self._orphans: list[str] = []

    # ----------------------------------------------------------- one step
    def scan(self) -> tuple[list[tuple[str, int, int]], list[str]]:
        """``(tid, version before, now)`` for shown tensors changed in place (id order), and the dead ones."""
        refs = self.ids._refs
        moved: list[tuple[str, int, int]] = []
        dead: list[str] = []
        for tid, v in self.versions.items():
            t = refs[tid]()
            if t is None:
                dead.append(tid)
                continue
            try:
                now = t._version
            except Exception:
                now = version_of(t)
            if now != v:
                moved.append((tid, v, now))
        self.work["scanned"] += len(self.versions)
        if len(moved) > 1:
            moved.sort(key=_first_num)
        return moved, dead

    def update(self, roots: dict[str, int], recheck: set[str] | None, nodes: set[str], dead: list[str]) -> None:
        """Bring what is shown to ``roots``; ``recheck`` tensors (None: all) and ``nodes`` may have changed."""
        self.added, self.dropped, self.changed = [], [], []
        self.was = {}
        self.updates += 1
        cand: list[str] = []
        todo: list[str] = []
        old = self.roots
        if roots is not old:  # the same dict: the same names (the tracer does not change it in place)
            todo += [r for r in roots if r not in old]
            cand += [r for r in old if r not in roots]
            self.roots = roots
        for tid in dead:
            if tid in self.out:
                self._drop(tid, cand)
        # in id order (a set's order follows string hashes, which change from run to run): reading a tensor
        # walks its graph, and the first walk to reach a node names its output
        for tid in (list(self.tensors) if recheck is None else sorted(recheck, key=num) if len(recheck) > 1
                    else recheck):
            if tid not in self.tensors:
                continue
            t = self.ids.obj(tid)
            if t is None:
                self._drop(tid, cand)
                continue
            info, edges = self._read(tid, t)
            shown = self.tensors[tid]
            if info is not shown:
                self.was.setdefault(tid, shown)
                self.tensors[tid] = info
                self.changed.append(tid)
            self._reedge(tid, edges, cand, todo)
        book_nodes = self.book.nodes
        for nid in nodes:
            if nid in self.nodes:
                ninfo = book_nodes[nid]
                if ninfo is not self.nodes[nid]:
                    self.nodes[nid] = ninfo
                    self.changed.append(nid)
                    self._reedge(nid, node_edges(ninfo), cand, todo)
        self._add(todo)
        self._collect(cand)
        if self._orphans:
            self._relink()
        if not self._sorted:
            self.tensors = dict(sorted(self.tensors.items(), key=lambda kv: num(kv[0])))
            self.nodes = dict(sorted(self.nodes.items(), key=lambda kv: num(kv[0])))
            self._sorted = True

    # ---------------------------------------------------------- membership
    def _add(self, todo: list[str]) -> None:
        out, preds, ids, book = self.out, self.preds, self.ids, self.book
        while todo:
            x = todo.pop()
            if x in out:
                continue
            if x[0] == "t":
                t = ids.obj(x)
                if t is None:
                    continue
                info, edges = self._read(x, t)
                self.was.setdefault(x, None)
                self.tensors[x] = info
                fn = info.grad_fn
                if fn is not None:
                    shown = book.nodes.get(fn)
                    if shown is not None and shown.output != x:  # one of several outputs, or an alias's
                        self._orphans.append(fn)
                n = num(x)
                if n < self._max_t:
                    self._sorted = False
                self._max_t = max(self._max_t, n)
            else:
                ninfo = book.nodes.get(x)
                if ninfo is None:
                    continue
                self.nodes[x] = ninfo
                edges = node_edges(ninfo)
                n = num(x)
                if n < self._max_n:
                    self._sorted = False
                self._max_n = max(self._max_n, n)
                self.work["nodes"] += 1
            out[x] = edges
            self.added.append(x)
            for y in edges:
                p = preds.get(y)
                if p is None:
                    preds[y] = {x: 1}
                else:
                    p[x] = p.get(x, 0) + 1
                if y not in out:
                    todo.append(y)

    def _unlink(self, x: str, edges: tuple[str, ...], cand: list[str]) -> None:
        preds = self.preds
        for y in edges:
            p = preds[y]
            c = p[x] - 1
            if c:
                p[x] = c
            else:
                del p[x]
                if not p:
                    del preds[y]
            cand.append(y)

    def _drop(self, x: str, cand: list[str]) -> None:
        edges = self.out.pop(x)
        self._unlink(x, edges, cand)
        if x[0] == "t":
            info = self.tensors.pop(x)
            self.was.setdefault(x, info)
            fn = info.grad_fn
            if fn is not None:
                shown = self.nodes.get(fn)
                if shown is not None and shown.output == x:  # its node may stay, shown by another of its outputs
                    self._orphans.append(fn)
            self.versions.pop(x, None)
            self._at.pop(x, None)
            for s in self._where.pop(x, ()):
                held = self.by_storage.get(s)
                if held is not None:
                    held.discard(x)
                    if not held:
                        del self.by_storage[s]
        else:
            del self.nodes[x]
        self.dropped.append(x)

    def _reedge(self, x: str, edges: tuple[str, ...], cand: list[str], todo: list[str]) -> None:
        old = self.out[x]
        if old == edges:
            return
        self._unlink(x, old, cand)
        self.out[x] = edges
        preds = self.preds
        for y in edges:
            p = preds.get(y)
            if p is None:
                preds[y] = {x: 1}
            else:
                p[x] = p.get(x, 0) + 1
            if y not in self.out:
                todo.append(y)

    def _relink(self) -> None:
        """A shown node whose output is not shown takes a shown tensor it made as its output.

        A node of several outputs (``for v in x:`` unbinds ``x`` once) is the ``grad_fn`` of each; the one
        linked first may leave the step while another, named, stays. Only nodes an update touched are
        looked at (a tensor of theirs added or dropped)."""
        orphans, self._orphans = self._orphans, []
        nodes, tensors, preds = self.nodes, self.tensors, self.preds
        for nid in dict.fromkeys(orphans):
            info = nodes.get(nid)
            if info is None or info.output in tensors:
                continue
            made = [p for p in preds.get(nid, ()) if p[0] == "t" and tensors[p].grad_fn == nid]
            if not made:
                continue
            tid = min(made, key=num)
            t = self.ids.obj(tid)
            if t is None:
                continue
            self.book.relink_output(nid, tid, t)
            nodes[nid] = self.book.nodes[nid]
            self.changed.append(nid)

    def _collect(self, cand: list[str]) -> None:
        """Drop the candidates no name reaches any more (and what only they reached)."""
        live: set[str] = set()
        roots, preds, out = self.roots, self.preds, self.out
        i = 0
        while i < len(cand):
            c = cand[i]
            i += 1
            if c not in out or c in live:
                continue
            seen = {c}
            queue = [c]
            rooted = False
            j = 0
            while j < len(queue):
                x = queue[j]
                j += 1
                if x in live or roots.get(x):
                    rooted = True
                    break
                for p in preds.get(x, ()):
                    if p not in seen:
                        seen.add(p)
                        queue.append(p)
            self.work["searched"] += j
            if rooted:
                live.add(c)
                continue
            for x in queue:
                if x in out:
                    self._drop(x, cand)

    # ------------------------------------------------------------ tensors
    def _read(self, tid: str, t: torch.Tensor) -> tuple[TensorInfo, tuple[str, ...]]:
        """The tensor's info now, and its edges; notes its version and where its memory is.

        Each attribute is read once. The info is the one made before (:attr:`cache`) when nothing it
        shows changed: version, node, ``.grad`` object and version, flags, base, shape, memory, and
        no write to its storage (or its ``.grad``'s) that the version counter missed."""
        self.work["tensors"] += 1
        ids, book = self.ids, self.book
        forbidden = False
        try:  # (grad_fn_of, is_leaf_of, version_of and data_ptr_of of .graph, inline: read for every tensor shown)
            fn = t.grad_fn
        except RuntimeError:  # PyTorch forbids it in autograd (a no_grad view whose base changed): said so
            fn, forbidden = None, True
        nid = None
        output_nr = 0
        if fn is not None:
            nid = ids.node(fn)
            output_nr = t.output_nr
            if nid is None:
                book.walk(fn, output=t)
                nid = ids.node(fn)
            elif output_nr == 0:  # walked before from another tensor (a view of it): ``t`` is its output
                book.link_output(nid, t)
        try:
            leaf = bool(t.is_leaf)
        except RuntimeError:
            leaf = False
        retains = t.retains_grad
        grad = t.grad if (leaf or retains) else None  # a non-leaf's .grad warns when read
        grad_key = None if grad is None else _SameObject(grad, version_of(grad))
        base = t._base
        try:
            version = int(t._version)
        except Exception:  # inference tensors have no version counter
            version = 0
        try:
            ptr: int | None = int(t.data_ptr())
        except Exception:  # sparse and other layouts without one
            ptr = None
        requires_grad = t.requires_grad
        shape = tuple(t.shape)
        dtype = t.dtype  # (a ``.data`` of another dtype may keep the memory: ``x.data = x.data.view(torch.int32)``)
        cls = type(t)
        # (the base is stamped here, not only looked up: a view read before its base has an id, as
        # ``torch.arange(6.).view(2, 3)`` or a hook's expanded gradient, would otherwise show no base for good)
        base_id = None if base is None else ids.stamp(base)[0]
        key = (version, nid, grad_key, requires_grad, leaf, retains, base_id, shape, ptr, dtype, cls, forbidden)
        dirty = book.dirty
        written = bool(dirty) and storage_of(t) in dirty  # changed through an alias, version unchanged
        grad_written = bool(dirty) and grad is not None and storage_of(grad) in dirty
        cached = self.cache.get(tid)
        if cached is not None and cached[0] == key and not written and not grad_written:
            info = cached[1]
        else:
            info = self._fresh_info(tid, t, key, cached, grad, grad_written, output_nr)
        if nid is not None and nid in book.nodes:
            edges: tuple[str, ...] = (nid,) if base_id is None else (nid, base_id)
        else:
            edges = () if base_id is None else (base_id,)
        self.versions[tid] = version
        at = (ptr, grad_key)
        found = self._at.get(tid)
        if found is not None and found[0] == at:
            return info, edges  # same memory, same .grad object: same storages
        self._place(tid, t, grad, at)
        return info, edges

    def _fresh_info(self, tid: str, t: torch.Tensor, key: tuple[Any, ...],
                    cached: tuple[tuple[Any, ...], TensorInfo] | None, grad: torch.Tensor | None,
                    grad_written: bool, output_nr: int) -> TensorInfo:
        """:meth:`_read`'s info when something it shows changed (``key``: what it read), cached; what did
        not change is taken from the info before (``cached``)."""
        book = self.book
        version, nid, grad_key, requires_grad, leaf, retains, base_id, shape, ptr, dtype, cls, forbidden = key
        old_grad = None
        device = is_param = None
        if cached is not None:
            was_key, was = cached
            if grad_key is not None and was_key[2] == grad_key and not grad_written:
                old_grad = was.grad  # the same .grad object at the same version
            if was_key[8] == ptr and ptr is not None:  # the same memory: the same device
                device = was.device
            if was_key[10] is cls:  # (``isinstance(t, Parameter)`` runs the metaclass's Python code)
                is_param = was.is_param
            if was_key[9] != dtype:  # the same memory and version read as another dtype: summarised again
                book.summaries.pop(tid, None)
        info = _tensor_info(
            tid, shape, _dtype_text(dtype), _device_text(t.device) if device is None else device,
            bool(requires_grad), bool(leaf), bool(retains), version, nid, base_id, book.summary(tid, t, version),
            old_grad if old_grad is not None or grad is None else book.summary(None, grad),
            (cls is _Parameter or isinstance(t, _Parameter)) if is_param is None else is_param, forbidden,
            output_nr,
        )
        self.cache[tid] = (key, info)
        return info

    def _place(self, tid: str, t: torch.Tensor, grad: torch.Tensor | None, at: tuple[Any, Any]) -> None:
        """:meth:`_read` found ``tid`` at other memory or with another ``.grad``: the storages it is
        filed under, updated."""
        where = (storage_of(t),) if grad is None else (storage_of(t), storage_of(grad))
        self._at[tid] = (at, where)
        old = self._where.get(tid)
        if old != where:
            for s in old or ():
                held = self.by_storage.get(s)
                if held is not None:
                    held.discard(tid)
            for s in where:
                self.by_storage.setdefault(s, set()).add(tid)
            self._where[tid] = where

    def before(self, tid: str) -> TensorInfo | None:
        """``tid``'s info as the last update found it (None: not shown then)."""
        was = self.was
        return was[tid] if tid in was else self.tensors.get(tid)

    def holders(self, tid: str) -> tuple[str, ...]:
        """The shown nodes that saved ``tid`` (not freed) or accumulate into it, in id order."""
        return tuple(sorted((p for p in self.preds.get(tid, ()) if p[0] == "n"), key=num))

    def clear(self) -> None:
        """Forget every member (and the edges): the next update starts from nothing."""
        self.tensors, self.nodes, self.out, self.preds, self.roots = {}, {}, {}, {}, {}
        self.versions, self.by_storage, self._where, self._at = {}, {}, {}, {}
        self._max_t = self._max_n = 0
        self._sorted = True
        self.updates += 1

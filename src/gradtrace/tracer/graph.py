"""The autograd graph as plain data, walked incrementally (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

:class:`GraphBook` turns backward nodes into :class:`~gradtrace.model.NodeInfo`
records. Walks are iterative (graphs can be 100,000 nodes deep) and stop at
nodes already seen, so the cost of a step is proportional to what it created.
Saved values are read once when a node is first seen and re-read only for the
nodes a ``backward()`` ran through.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import torch

from ..model import ALIVE, FREED, STALE, Edge, NodeInfo, SavedValue, Summary
from .ids import Ids
from .summary import deferred, format_number, summarize

_PREFIX = "torch::autograd::"
#: what a saved value packed by a learner's hook shows (reading it would run the unpack hook)
PACKED = "packed by a hook"
# weak keys: a custom Function's node class holds the learner's namespace (through its
# methods' globals); a strong cache would keep every traced cell's tensors alive
_FIELDS: weakref.WeakKeyDictionary[type, tuple[tuple[str, ...], tuple[str, ...]]] = weakref.WeakKeyDictionary()
_NAMES: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()
#: node class -> True for a custom ``autograd.Function``'s (its saved values are ``saved_tensors``)
_CUSTOM: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()
MAX_ATTR_CHARS = 80


def node_name(node: Any) -> str:
    """``PowBackward0``, ``AccumulateGrad``, ``CopySlices``, ``MyFnBackward`` (read once per node class)."""
    cls = type(node)
    name = _NAMES.get(cls)
    if name is None:
        try:
            name = str(node.name())
        except Exception:
            name = cls.__name__
        name = name[len(_PREFIX):] if name.startswith(_PREFIX) else name
        _NAMES[cls] = name
    return name


def saved_fields(node: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names of the tensors and of the other values a node class saves."""
    cls = type(node)
    fields = _FIELDS.get(cls)
    if fields is None:
        names = dir(node)
        raw = {n[len("_raw_saved_"):] for n in names if n.startswith("_raw_saved_")}
        saved = [n[len("_saved_"):] for n in names if n.startswith("_saved_")]
        fields = (tuple(s for s in saved if s in raw), tuple(s for s in saved if s not in raw))
        _FIELDS[cls] = fields
    return fields


def attr_text(value: Any) -> str:
    """A saved non-tensor value (exponent, alpha, dim, sizes) as short text."""
    if isinstance(value, float):
        text = format_number(value, torch.float64)
    elif isinstance(value, (tuple, list)):
        text = "(" + ", ".join(attr_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    else:
        text = repr(value)
    return text if len(text) <= MAX_ATTR_CHARS else text[: MAX_ATTR_CHARS - 1] + "…"


def read_attrs(node: Any, names: Iterable[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for name in names:
        try:
            value = getattr(node, "_saved_" + name)
        except Exception:
            continue
        if isinstance(value, torch.Tensor):
            continue
        out.append((name, attr_text(value)))
    return tuple(out)


def read_saved(node: Any, names: Iterable[str]) -> list[tuple[str, torch.Tensor | None]]:
    """``(name, tensor or None)`` for each saved tensor; None once freed."""
    out: list[tuple[str, torch.Tensor | None]] = []
    for name in names:
        try:
            raw = getattr(node, "_raw_saved_" + name)
        except Exception:
            continue
        if isinstance(raw, (list, tuple)):
            for i, item in enumerate(raw):
                out.append((f"{name}[{i}]", _data(item)))
        else:
            out.append((name, _data(raw)))
    return out


def _data(raw: Any) -> torch.Tensor | None:
    try:
        data = raw.data
    except Exception:
        return None
    return data if isinstance(data, torch.Tensor) else None


def custom_saved(node: Any) -> list[tuple[str, torch.Tensor | None]] | None:
    """Saved tensors of a custom ``autograd.Function`` node; None once freed."""
    cls = type(node)
    custom = _CUSTOM.get(cls)
    if custom is None:
        custom = _CUSTOM[cls] = hasattr(node, "_forward_cls")
    if not custom:
        return []
    try:
        return [(f"saved_tensors[{i}]", t) for i, t in enumerate(node.saved_tensors)]
    except RuntimeError:
        return None


def grad_fn_of(t: torch.Tensor) -> Any:
    """``t.grad_fn``, or None where reading it raises.

    A view made under ``no_grad`` whose base was then changed in place with grad
    mode on raises ``RuntimeError`` on ``grad_fn`` (and ``is_leaf``); the learner's
    code only fails if *it* reads them, so the tracer must not.
    """
    try:
        return t.grad_fn
    except RuntimeError:
        return None


def is_leaf_of(t: torch.Tensor) -> bool:
    """``t.is_leaf``; False where reading it raises (see :func:`grad_fn_of`)."""
    try:
        return bool(t.is_leaf)
    except RuntimeError:
        return False


def storage_of(t: torch.Tensor) -> int | None:
    """The address of ``t``'s storage (shared by its views and ``.data``), None if unreadable."""
    try:
        return int(t.untyped_storage().data_ptr())
    except Exception:
        return None


def data_ptr_of(t: torch.Tensor) -> int | None:
    """Where ``t``'s values start; moves when ``t.data = ...`` or ``set_`` gives it other memory."""
    try:
        return int(t.data_ptr())
    except Exception:  # sparse and other layouts without one
        return None


def version_of(t: torch.Tensor) -> int:
    try:
        return int(t._version)
    except Exception:  # inference tensors have no version counter
        return 0


def unseen(ids: Ids, root: Any) -> list[tuple[Any, Any]]:
    """``(node, next_functions)`` of every node reachable from ``root`` that has no id yet.

    Walked without recursion (graphs can be 100,000 nodes deep), stopping at nodes with an id.
    """
    found: list[tuple[Any, Any]] = []
    met: set[int] = set()  # id() of the wrappers met; ``found`` keeps them alive meanwhile
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in met or ids.node(node) is not None:
            continue
        met.add(id(node))
        nexts = node.next_functions
        found.append((node, nexts))
        stack.extend(nxt for nxt, _ in nexts if nxt is not None)
    return found


def sequence_nr(node: Any) -> int:
    """When PyTorch made ``node`` (grows in creation order, per thread); nodes without one come last."""
    try:
        return int(node._sequence_nr())
    except Exception:
        return 1 << 64


def creation_order(found: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``found`` (tuples whose first item is a node) in the order PyTorch made the nodes: how ids are given.

    Nodes go by sequence number; each ``AccumulateGrad`` (it has none) right after the
    first node that uses it, a node's accumulators last input first (the second item of
    each tuple is the node's ``next_functions``). A trace walks each call's new nodes as
    the call returns, a snapshot the whole graph at once: both number nodes alike, so
    ``explain(root)`` of plain code names nodes as a trace of it does.

    A snapshot orders 100,000 nodes at once: the steps taken per node are bulk ones (no
    Python loop over the nodes), and a chain, met newest first, is just reversed.
    """
    from itertools import compress
    from operator import itemgetter, not_

    types = list(map(type, map(itemgetter(0), found)))
    acc_types = {cls for cls in set(types) if cls.__name__ == "AccumulateGrad"}
    if not acc_types:
        return _by_sequence_nr(list(found))
    is_acc = list(map(acc_types.__contains__, types))
    plain = _by_sequence_nr(list(compress(found, map(not_, is_acc))))
    accs = {id(f[0]): f for f in compress(found, is_acc)}
    return _with_accumulators(plain, accs, found)


def _by_sequence_nr(plain: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``plain`` sorted by its nodes' sequence numbers (stable: nodes without one keep their order, last)."""
    from itertools import islice
    from operator import gt

    if len(plain) < 2:
        return plain
    try:
        numbers = [f[0]._sequence_nr() for f in plain]
    except Exception:  # a node without one
        numbers = [sequence_nr(f[0]) for f in plain]
    if all(map(gt, numbers, islice(numbers, 1, None))):  # newest first, as a walk meets a chain
        return plain[::-1]
    return [plain[i] for i in sorted(range(len(plain)), key=numbers.__getitem__)]


def _with_accumulators(plain: list[tuple[Any, ...]], accs: dict[int, tuple[Any, ...]],
                       found: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``plain`` (in creation order) with the accumulators ``accs`` (by id of their node) each after its first
    user, a user's accumulators last input first; the ones no node uses last, in the order found."""
    from itertools import compress, count
    from operator import itemgetter, not_

    # an accumulator has one input, so every edge to it is (accumulator, 0): the users are found in bulk
    wanted = {(f[0], 0) for f in accs.values()}
    out: list[tuple[Any, ...]] = []
    start = 0
    for user in compress(count(), map(not_, map(wanted.isdisjoint, map(itemgetter(1), plain)))):
        for nxt, _ in reversed(plain[user][1]):
            acc = accs.pop(id(nxt), None) if nxt is not None else None
            if acc is not None:
                out += plain[start : user + 1]
                start = user + 1
                out.append(acc)
        if not accs:
            break
    out += plain[start:]
    if accs:  # an accumulator walked from itself
        out += [f for f in found if id(f[0]) in accs]
    return out


class GraphBook:
    """Every node seen in one trace, as its latest :class:`NodeInfo`."""

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self.nodes: dict[str, NodeInfo] = {}
        #: tensor id -> [(node id, saved name)] of the nodes that saved it
        self.saved_by: dict[str, list[tuple[str, str]]] = {}
        #: tensor id -> ((version, data pointer), summary of its values then)
        self.summaries: dict[str, tuple[tuple[int, int | None], Summary]] = {}
        #: storages written in place by the current statement (see :meth:`touched`)
        self.dirty: set[int | None] = set()
        #: nodes whose saved values a learner's ``saved_tensors_hooks`` packed: never unpacked
        self.packed: set[str] = set()
        #: id(tensor) -> (tensor, summary) for tensors with no id yet, during one snapshot
        self._fresh: dict[int, tuple[torch.Tensor, int, Summary]] = {}
        #: nodes whose record was made or replaced since the tracer last took this set
        self.changed: set[str] = set()
        #: nodes that may hold a stale saved value
        self.stale: set[str] = set()
        #: nodes with an alive saved value that no tensor id follows (an object's attribute, a temporary
        #: view), by the storage that value lives in: :meth:`mark_versions` never reaches them,
        #: :meth:`check_untracked` reads their versions when their storage is written
        self.untracked: dict[int | None, set[str]] = {}
        #: how much work was done: nodes read, summaries made
        self.work: dict[str, int] = {"nodes": 0, "summaries": 0}
        #: summaries made only when read (a one-off picture: most values are never drawn)
        self.lazy = False
        #: the module new nodes belong to when a walk is not told (the innermost module running while
        #: the tracer takes a step inside a forward: the statement's own calls were made in it)
        self.module = ""

    def summary(self, tid: str | None, t: torch.Tensor, version: int | None = None) -> Summary:
        """``summarize(t)``, read once per version of a tensor.

        A change that bumps no version (through ``.data`` or a ``detach()``-ed
        alias) is caught through :attr:`dirty`: the storages the statement's
        in-place calls wrote to are read again.
        """
        if self.lazy and tid is not None:  # a tensor with an id lives on; one without is a saved value unpacked
            return deferred(t, self._count)  # just now, gone once read: summarised at once
        if self.dirty and storage_of(t) in self.dirty:
            value = self._summarize(t)
            if tid is not None:
                self.summaries[tid] = ((version_of(t) if version is None else version, data_ptr_of(t)), value)
            return value
        if tid is None:
            fresh = self._fresh.get(id(t))
            now = version_of(t)  # a statement's calls read values as they go: changed in place since?
            if fresh is not None and fresh[0] is t and fresh[1] == now:
                return fresh[2]
            value = self._summarize(t)
            self._fresh[id(t)] = (t, now, value)
            return value
        if version is None:
            version = version_of(t)
        key = (version, data_ptr_of(t))  # ``t.data = ...`` keeps the version and moves the memory
        hit = self.summaries.get(tid)
        if hit is not None and hit[0] == key:
            return hit[1]
        fresh = self._fresh.get(id(t))
        value = fresh[2] if fresh is not None and fresh[0] is t and fresh[1] == version else self._summarize(t)
        self.summaries[tid] = (key, value)
        return value

    def _summarize(self, t: torch.Tensor) -> Summary:
        self._count()
        return summarize(t)

    def _count(self) -> None:
        self.work["summaries"] += 1

    def touched(self, targets: Iterable[torch.Tensor]) -> None:
        """The statement about to be recorded wrote in place to ``targets``."""
        self.dirty = {storage_of(t) for t in targets}

    def done(self) -> None:
        """One snapshot is taken: drop what held tensors for its duration."""
        self.dirty = set()
        self._fresh.clear()
        self.module = ""

    def walk(
        self, root: Any, output: torch.Tensor | None = None, module: str | None = None, packed: bool = False
    ) -> list[str]:
        """Record every node reachable from ``root`` not seen before; new ids in creation order.

        ``module``: the path of the module the new nodes were made in; :attr:`module` when not given.

        ``packed``: the new nodes were made while ``saved_tensors_hooks`` (or a checkpoint)
        were active. Their saved values are handed to the learner's unpack hook on every
        read, so they are never read: they show as packed by a hook.
        """
        if root is None:
            return []
        ids = self.ids
        if ids.node(root) is not None:
            return []  # seen before, and so is everything it reaches
        new: list[tuple[str, Any, Any]] = []
        for node, nexts in creation_order(unseen(ids, root)):
            nid, is_new = ids.stamp_node(node)
            if is_new:
                new.append((nid, node, nexts))
        root_id = ids.node(root)
        if module is None:
            module = self.module
        if packed:
            self.packed.update(nid for nid, _, _ in new)
        self.work["nodes"] += len(new)
        for nid, node, nexts in reversed(new):
            info = self._info(nid, node, output if nid == root_id else None, nexts, module)
            self.nodes[nid] = info
            self.changed.add(nid)
        return sorted((nid for nid, _, _ in new), key=_order)

    def _info(
        self, nid: str, node: Any, out: torch.Tensor | None, nexts: Any = None, module: str = "",
        known: int | None = None, inputs: tuple[Edge | None, ...] | None = None,
    ) -> NodeInfo:
        """The node's record. ``known``: tensor ids past ``t<known>`` were given after the node was met
        (a saved value read later is matched only to tensors that had an id then); ``inputs``: its
        input edges, when the caller has them."""
        ids = self.ids
        if inputs is None:
            if nexts is None:
                nexts = node.next_functions
            inputs = tuple(None if nxt is None else Edge(ids.stamp_node(nxt)[0], int(nr)) for nxt, nr in nexts)
        name = node_name(node)
        if name == "AccumulateGrad":
            leaf = ids.stamp(node.variable)[0]
            return NodeInfo(id=nid, name=name, inputs=inputs, variable=leaf, module=module)
        tensor_fields, attr_fields = saved_fields(node)
        attrs = read_attrs(node, attr_fields)
        if nid in self.packed:
            return NodeInfo(
                id=nid, name=name, inputs=inputs, attrs=attrs,
                saved=tuple(SavedValue(name=f, tensor=None, value=Summary(text=PACKED)) for f in tensor_fields),
                output=None if out is None else ids.tensor(out),
                value=None if out is None else self.summary(ids.tensor(out), out), module=module,
            )
        pairs = read_saved(node, tensor_fields)
        pairs += custom_saved(node) or []
        saved = tuple(self._saved(nid, sname, data, out, known) for sname, data in pairs)
        saved = tuple(_freed_if_gone(node, s) for s in saved)
        # a slot PyTorch never filled (``x * 2`` saves no ``self``) is not a saved value
        saved = tuple(s for s in saved if s.saved_version is not None or s.state == FREED)
        return NodeInfo(
            id=nid,
            name=name,
            inputs=inputs,
            attrs=attrs,
            saved=saved,
            output=None if out is None else ids.tensor(out),
            value=None if out is None else self.summary(ids.tensor(out), out),
            module=module,
        )

    def _saved(self, nid: str, name: str, data: torch.Tensor | None, out: Any, known: int | None = None) -> SavedValue:
        if data is None:
            return SavedValue(name=name, tensor=None, value=Summary(text="None"))
        tid = self.ids.tensor(data)
        if tid is not None and known is not None and _order(tid) > known:
            tid = None
        if tid is None and out is not None and _same_storage(data, out):
            tid = self.ids.stamp(out)[0]
        version = version_of(data)
        if tid is not None:
            self.saved_by.setdefault(tid, []).append((nid, name))
        elif not name.startswith("saved_tensors["):
            self.untracked.setdefault(storage_of(data), set()).add(nid)
        same = tid is not None and data is self.ids.obj(tid)
        value = self.summary(tid if same else None, data, version)
        return SavedValue(name=name, tensor=tid, value=value, saved_version=version, version=version)

    def link_output(self, nid: str, out: torch.Tensor) -> None:
        """Note that ``out`` is the forward output of node ``nid``."""
        info = self.nodes.get(nid)
        if info is None or info.output is not None:
            return
        tid = self.ids.tensor(out)
        if tid is not None:
            self.nodes[nid] = _with(info, output=tid, value=info.value or self.summary(tid, out))
            self.changed.add(nid)

    def refresh_freed(self, root: Any) -> list[tuple[str, str]]:
        """Re-read saved values of every node under ``root``; the newly freed ones."""
        freed: list[tuple[str, str]] = []
        stack, seen = [root], set()
        while stack:
            node = stack.pop()
            nid = self.ids.node(node)
            if nid is None or nid in seen:
                continue
            seen.add(nid)
            info = self.nodes.get(nid)
            if info is not None and info.saved and nid not in self.packed:
                now = self._recheck(node, info, freed)
                if now is not info:
                    self.nodes[nid] = now
                    self.changed.add(nid)
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
        return sorted(freed, key=lambda p: (_order(p[0]), p[1]))

    def _recheck(self, node: Any, info: NodeInfo, freed: list[tuple[str, str]]) -> NodeInfo:
        tensor_fields, _ = saved_fields(node)
        pairs = read_saved(node, tensor_fields)
        custom = custom_saved(node)
        now = dict(pairs)
        if custom is None:
            now.update({s.name: None for s in info.saved if s.name.startswith("saved_tensors[")})
        freed_now = False
        saved = []
        for s in info.saved:
            if s.state != FREED and s.name in now and now[s.name] is None and s.saved_version is not None:
                s = _with(s, state=FREED)
                freed.append((info.id, s.name))
                freed_now = True
            saved.append(s)
        return _with(info, saved=tuple(saved)) if freed_now else info

    def mark_versions(self, tid: str, version: int) -> list[tuple[str, str]]:
        """Tensor ``tid`` is now at ``version``: the saved values that became stale."""
        stale: list[tuple[str, str]] = []
        for nid, sname in self.saved_by.get(tid, ()):
            info = self.nodes[nid]
            saved = []
            changed = False
            for s in info.saved:
                if s.name == sname and s.tensor == tid and s.state != FREED:
                    new_state = STALE if version != s.saved_version else ALIVE
                    if new_state == STALE and s.state != STALE:
                        stale.append((nid, sname))
                    if (new_state, version) != (s.state, s.version):
                        s = _with(s, state=new_state, version=version)
                        changed = True
                saved.append(s)
            if changed:
                self.nodes[nid] = _with(info, saved=tuple(saved))
                self.changed.add(nid)
            if any(s.state == STALE for s in saved):
                self.stale.add(nid)
        return stale

    def check_untracked(self, roots: Iterable[Any], written: Iterable[int | None]) -> list[tuple[str, str]]:
        """Saved values with no tensor id that went stale: read under the grad_fns ``roots``.

        ``written``: the storages the statement wrote in place. Only the nodes of :attr:`untracked`
        that saved a value in one of them are read, through their raw saved slots (``_raw_saved_*``:
        no unpacking, so no version check raises and no learner hook runs); the walk ends once all
        of them were met.
        """
        stale: list[tuple[str, str]] = []
        want: set[str] = set()
        for storage in set(written):
            want |= self.untracked.get(storage, set())
        if not want:
            return stale
        ids = self.ids
        stack, seen, left = [r for r in roots if r is not None], set(), len(want)
        while stack and left:
            node = stack.pop()
            nid = ids.node(node)
            if nid is None or nid in seen:
                continue
            seen.add(nid)
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
            if nid not in want:
                continue
            left -= 1
            info = self.nodes.get(nid)
            if info is None or nid in self.packed:
                self._settled(nid)
                continue
            now = dict(read_saved(node, [s.name.split("[", 1)[0] for s in info.saved if s.tensor is None]))
            saved = []
            changed = waiting = False
            for s in info.saved:
                data = now.get(s.name) if s.tensor is None and s.state == ALIVE else None
                if data is not None and s.saved_version is not None:
                    version = version_of(data)
                    if version != s.saved_version:
                        s = _with(s, state=STALE, version=version)
                        stale.append((nid, s.name))
                        changed = True
                    else:
                        waiting = True
                saved.append(s)
            if changed:
                self.nodes[nid] = _with(info, saved=tuple(saved))
                self.changed.add(nid)
                self.stale.add(nid)
            if not waiting:
                self._settled(nid)  # nothing left alive to go stale
        return stale

    def _settled(self, nid: str) -> None:
        for storage, nids in list(self.untracked.items()):
            nids.discard(nid)
            if not nids:
                del self.untracked[storage]


def _freed_if_gone(node: Any, saved: SavedValue) -> SavedValue:
    """A saved slot read as empty is ``freed`` when reading it raises (a backward freed it).

    An empty slot that reads as ``None`` was never filled (e.g. ``x * 2`` saves no ``self``).
    Matters for nodes first seen after ``backward()``, as in ``snapshot`` of a used graph.
    """
    if saved.tensor is not None or saved.saved_version is not None or saved.name.startswith("saved_tensors["):
        return saved
    try:
        getattr(node, "_saved_" + saved.name.split("[", 1)[0])
    except RuntimeError:
        return replace(saved, state=FREED, value=None)  # freed before the tracer saw it: no value to show
    except Exception:
        return saved
    return saved


_new = object.__new__


def _with(record: Any, **changes: Any) -> Any:
    """``dataclasses.replace(record, **changes)`` for the frozen records here (no ``__post_init__``,
    every field a plain attribute), without building it again field by field."""
    out = _new(type(record))
    d = out.__dict__
    d.update(record.__dict__)
    d.update(changes)
    return out


def _same_storage(a: torch.Tensor, b: Any) -> bool:
    try:
        return bool(a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.dtype == b.dtype)
    except Exception:
        return False


def _order(nid: str) -> int:
    return int(nid[1:])

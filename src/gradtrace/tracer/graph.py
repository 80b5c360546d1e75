"""The autograd graph as plain data, walked incrementally (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

:class:`GraphBook` turns backward nodes into :class:`~gradtrace.model.NodeInfo`
records. Walks are iterative (graphs can be 100,000 nodes deep) and stop at
nodes already seen, so the cost of a step is proportional to what it created.
Saved values are read once when a node is first seen and re-read only for the
nodes a ``backward()`` ran through.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable
from itertools import compress, count, islice
from operator import gt, itemgetter, not_
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from ..model import ALIVE, FREED, STALE, Edge, NodeInfo, SavedValue, Summary
from .ids import Ids
from .saved import SavedBook
from .summary import deferred, format_number, summarize

if TYPE_CHECKING:
    from .copyslices import ViewWrite

_PREFIX = "torch::autograd::"
#: what a saved value packed by a learner's hook shows (reading it would run the unpack hook)
PACKED = "packed by a hook"
MAX_ATTR_CHARS = 80
#: ``CopySlices``' name, as :func:`node_name` gives it
COPY_SLICES = "CopySlices"


class Kind:
    """What never changes for one node class, read once: its name and the fields it saves.

    ``tensors``: the saved tensor slots (``_raw_saved_<name>``), ``attrs``: the other saved values;
    ``custom``: a custom ``autograd.Function``'s node (its saved values are ``saved_tensors``).
    """

    __slots__ = ("__weakref__", "accumulate", "attr_getters", "attrs", "custom", "name", "raw_getters", "tensors")

    def __init__(self, node: Any) -> None:
        cls = type(node)
        try:
            name = str(node.name())
        except Exception:
            name = cls.__name__
        self.name = name[len(_PREFIX):] if name.startswith(_PREFIX) else name
        self.accumulate = cls.__name__ == "AccumulateGrad"
        self.custom = hasattr(node, "_forward_cls")
        names = dir(node)
        raw = {n[len("_raw_saved_"):] for n in names if n.startswith("_raw_saved_")}
        saved = [n[len("_saved_"):] for n in names if n.startswith("_saved_")]
        self.tensors = tuple(s for s in saved if s in raw)
        self.attrs = tuple(s for s in saved if s not in raw)
        self.raw_getters = tuple((n, "_raw_saved_" + n) for n in self.tensors)
        self.attr_getters = tuple((n, "_saved_" + n) for n in self.attrs)


#: built-in node classes (they live as long as torch) -> their kind
_KINDS: dict[type, Kind] = {}
# weak keys: a custom Function's node class holds the learner's namespace (through its
# methods' globals); a strong cache would keep every traced cell's tensors alive
_CUSTOM_KINDS: weakref.WeakKeyDictionary[type, Kind] = weakref.WeakKeyDictionary()


def kind_of(node: Any) -> Kind:
    """The :class:`Kind` of ``node``'s class (read once per class)."""
    cls = type(node)
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _CUSTOM_KINDS.get(cls)
        if kind is None:
            kind = Kind(node)
            if cls.__module__ == "builtins":
                _KINDS[cls] = kind
            else:
                _CUSTOM_KINDS[cls] = kind
    return kind


def node_name(node: Any) -> str:
    """``PowBackward0``, ``AccumulateGrad``, ``CopySlices``, ``MyFnBackward`` (read once per node class)."""
    return kind_of(node).name


def saved_fields(node: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names of the tensors and of the other values a node class saves."""
    kind = kind_of(node)
    return kind.tensors, kind.attrs


def attr_text(value: Any) -> str:
    """A saved non-tensor value (exponent, alpha, dim, sizes) as short text.

    An int of 2**63 or more is a negative int64 that PyTorch's getter read as unsigned
    (``softmax(-1)`` saves ``dim`` -1, read as 2**64 - 1): it is shown as the program gave it."""
    if type(value) is int and value >= _INT64_WRAP:
        value -= 2**64
    if isinstance(value, float):
        text = format_number(value, torch.float64)
    elif isinstance(value, (tuple, list)):
        text = "(" + ", ".join(attr_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    else:
        text = repr(value)
    return text if len(text) <= MAX_ATTR_CHARS else text[: MAX_ATTR_CHARS - 1] + "…"


#: where PyTorch's getters wrap a saved int64 (read as unsigned) around
_INT64_WRAP = 2**63
#: the text of saved ints and tuples of ints (sizes, strides, dims: the same few values again and again)
_INT_TEXTS: dict[Any, str] = {}
_MAX_INT_TEXTS = 4096


def _attr_text(value: Any) -> str:
    t = type(value)
    if t is int or (t is tuple and all(type(v) is int for v in value)):  # not bool: True == 1, its text differs
        text = _INT_TEXTS.get(value)
        if text is None:
            if len(_INT_TEXTS) >= _MAX_INT_TEXTS:
                _INT_TEXTS.clear()
            text = _INT_TEXTS[value] = attr_text(value)
        return text
    return attr_text(value)


def read_attrs(node: Any, names: Iterable[str] | None = None) -> tuple[tuple[str, str], ...]:
    """``(name, text)`` of each saved non-tensor value (``names``: those of these; all when None)."""
    getters = kind_of(node).attr_getters if names is None else tuple((n, "_saved_" + n) for n in names)
    out = []
    for name, getter in getters:
        try:
            value = getattr(node, getter)
        except Exception:
            continue
        if isinstance(value, torch.Tensor):
            continue
        out.append((name, _attr_text(value)))
    return tuple(out)


#: (kind, saved values, their types) -> the attrs of a node that saved them (see :func:`_read_attrs`)
_ATTRS: dict[tuple[Any, ...], tuple[tuple[str, str], ...]] = {}
_MAX_ATTRS = 4096
#: how many input edges a book keeps to share (a layer's weight is an input at every call)
_MAX_EDGES = 4096
#: saved values whose text :func:`_read_attrs` may keep: equal values of one of these types read the same
#: (for a float, but for 0.0 and -0.0; a tuple is kept when it holds ints only)
_PLAIN = frozenset({int, bool, str, type(None), float, tuple})


def _read_attrs(node: Any, kind: Kind) -> tuple[tuple[str, str], ...]:
    """:func:`read_attrs` of ``node``: the text of the same values (a layer's sizes, strides, alpha, at every
    call) is made once."""
    try:
        values = tuple([getattr(node, getter) for _, getter in kind.attr_getters])
    except Exception:  # a value that cannot be read: read_attrs leaves that one out
        return read_attrs(node)
    types = tuple(map(type, values))
    if not _PLAIN.issuperset(types):
        return read_attrs(node)
    for t, v in zip(types, values, strict=True):
        if (t is float and v == 0.0) or (t is tuple and not all(type(x) is int for x in v)):
            return read_attrs(node)
    key = (kind, values, types)
    attrs = _ATTRS.get(key)
    if attrs is None:
        if len(_ATTRS) >= _MAX_ATTRS:
            _ATTRS.clear()
        attrs = _ATTRS[key] = read_attrs(node)
    return attrs


def read_saved(node: Any, names: Iterable[str] | None = None) -> list[tuple[str, torch.Tensor | None]]:
    """``(name, tensor or None)`` for each saved tensor (of ``names``; all when None); None once freed.

    Read from the raw slots (``_raw_saved_*``): no unpacking, so no version check and no hook runs."""
    getters = kind_of(node).raw_getters if names is None else tuple((n, "_raw_saved_" + n) for n in names)
    out: list[tuple[str, torch.Tensor | None]] = []
    for name, getter in getters:
        try:
            raw = getattr(node, getter)
        except Exception:
            continue
        if isinstance(raw, (list, tuple)):
            for i, item in enumerate(raw):
                out.append((f"{name}[{i}]", _data(item)))
        else:
            out.append((name, _data(raw)))
    return out


def _packed_saved(kind: Any) -> tuple[SavedValue, ...]:
    """The saved values of a node whose slots saved-tensor hooks packed: named, not read."""
    return tuple(SavedValue(name=f, tensor=None, value=Summary(text=PACKED)) for f in kind.tensors)


def _data(raw: Any) -> torch.Tensor | None:
    try:
        data = raw.data
    except Exception:
        return None
    return data if isinstance(data, torch.Tensor) else None


def custom_saved(node: Any) -> list[tuple[str, torch.Tensor | None]] | None:
    """Saved tensors of a custom ``autograd.Function`` node; None once freed."""
    if not kind_of(node).custom:
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


def forbids_autograd(t: torch.Tensor) -> bool:
    """Whether PyTorch raises when asked ``t.grad_fn`` (see :func:`grad_fn_of`): it forbids ``t`` in autograd."""
    try:
        _ = t.grad_fn
    except RuntimeError:
        return True
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
    if len(found) < 2:  # a call's one new node: nothing to order
        return list(found)
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
        #: the saved-value index: which nodes hold alive saved values, by storage, and when they die
        self._saved_index_made()
        #: how much work was done: nodes read, summaries made, nodes visited to re-read saved values
        self.work: dict[str, int] = {"nodes": 0, "summaries": 0, "rechecked": 0, "untracked": 0}
        #: summaries made only when read (a one-off picture: most values are never drawn)
        self.lazy = False
        #: the module new nodes belong to when a walk is not told (the innermost module running while
        #: the tracer takes a step inside a forward: the statement's own calls were made in it)
        self.module = ""
        #: (node id, output number) -> its :class:`Edge` (see :meth:`_edges`; at most ``_MAX_EDGES``)
        self._edges_made: dict[tuple[str, int], Edge] = {}
        #: ``CopySlices`` nodes holding the saved values of the node they wrap (see :func:`.copyslices.view_write`)
        self._hidden: set[str] = set()
        #: (node id, saved name) -> the base of the view that hidden saved value is, held weakly: a view
        #: shares its base's version counter, so its version is still read once the program drops the view
        self._hidden_base: dict[tuple[str, str], Any] = {}

    def _saved_index_made(self) -> None:
        """The saved-value index (:class:`.saved.SavedBook`), shared: its containers and handlers read here."""
        index = self.saved_index = SavedBook(self, recheck_saved)
        self.untracked, self._filed, self._no_id, self._life = index.untracked, index.filed, index.no_id, index.life
        self._file, self._watch, self._settled = index.file, index.watch, index.settled
        self.sweep, self.check_untracked = index.sweep, index.check_untracked

    def summary(self, tid: str | None, t: torch.Tensor, version: int | None = None) -> Summary:
        """``summarize(t)``, read once per version of a tensor.

        A change that bumps no version (through ``.data`` or a ``detach()``-ed
        alias) is caught through :attr:`dirty`: the storages the statement's
        in-place calls wrote to are read again.
        """
        if tid is not None and not self.dirty and not self.lazy:  # the usual case first: read before, unchanged?
            hit = self.summaries.get(tid)
            if hit is not None:
                try:
                    now = int(t._version) if version is None else version
                except Exception:  # inference tensors have no version counter
                    now = 0
                try:
                    ptr: int | None = int(t.data_ptr())
                except Exception:  # sparse and other layouts without one
                    ptr = None
                if hit[0] == (now, ptr):
                    return hit[1]
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
        self.work["summaries"] += 1
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

        ``output``: the tensor whose ``grad_fn`` ``root`` is. When it is a view, its base's ``grad_fn``
        (a ``CopySlices`` once the view was written in place) is the base's: told so here, whatever
        the order the two tensors are read in.

        ``module``: the path of the module the new nodes were made in; :attr:`module` when not given.

        ``packed``: the new nodes were made while ``saved_tensors_hooks`` (or a checkpoint)
        were active. Their saved values are handed to the learner's unpack hook on every
        read, so they are never read: they show as packed by a hook.
        """
        if root is None:
            return []
        ids = self.ids
        nid = ids.node(root)
        if nid is not None:  # seen before, and so is everything it reaches
            if output is not None and output.output_nr == 0:  # walked from another tensor, or before
                had = self.nodes.get(nid)
                if had is not None and had.output is None:
                    self.link_output(nid, output)  # ``output`` had an id (one of several outputs: the first)
            return []
        # Every node reachable from ``root`` with no id yet, without recursion (graphs can be 100,000 nodes
        # deep), stopping at nodes with an id; the id of every node met is kept: the new nodes' input edges
        # need them. ``met`` is keyed by id(): safe, as each wrapper met stays alive until the walk ends (the
        # root is the caller's, every other one is in the ``next_functions`` of a node in ``found``).
        found: list[tuple[Any, Any]] = []
        met: dict[int, str | None] = {}  # id() of each wrapper met -> its node id
        node_id = ids.node
        stack = [root]
        pop = stack.pop
        while stack:
            node = pop()
            key = id(node)
            if key in met:
                continue
            met[key] = nid = node_id(node)
            if nid is not None:
                continue
            nexts = node.next_functions
            found.append((node, nexts))
            stack += [nxt for nxt, _ in nexts if nxt is not None]
        new: list[tuple[str, Any, Any]] = []
        stamp_node = ids.stamp_node
        root_id = None
        for node, nexts in creation_order(found) if len(found) > 1 else found:
            nid, is_new = stamp_node(node)
            met[id(node)] = nid
            if is_new:
                new.append((nid, node, nexts))
            if node is root:
                root_id = nid
        base, base_id = None, None
        if output is not None and len(new) > 1:
            base, base_id = _base_node(ids, output)
        if module is None:
            module = self.module
        if packed:
            self.packed.update(nid for nid, _, _ in new)
        self.work["nodes"] += len(new)
        nodes, changed, info, edges = self.nodes, self.changed, self._info, self._edges
        for nid, node, nexts in reversed(new):
            out = output if nid == root_id else base if nid == base_id else None
            nodes[nid] = info(nid, node, out, nexts, module, inputs=edges(nexts, met))
            changed.add(nid)
        return [nid for nid, _, _ in new]  # stamped in this order: ascending

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
            inputs = self._edges(nexts)
        kind = kind_of(node)
        name = kind.name
        if kind.accumulate:
            return _record(NodeInfo, id=nid, name=name, inputs=inputs, attrs=(), saved=(),
                           variable=ids.stamp(node.variable)[0], output=None, value=None, module=module)
        attrs = _read_attrs(node, kind) if kind.attr_getters else ()
        if nid in self.packed:
            saved: tuple[SavedValue, ...] = _packed_saved(kind)
        else:
            found: list[SavedValue] = []
            saved_value = self._saved
            for sname, getter in kind.raw_getters:  # read_saved, inline: a node has few slots, read often
                try:
                    raw = getattr(node, getter)
                except Exception:
                    continue
                if isinstance(raw, (list, tuple)):
                    items = [(f"{sname}[{i}]", _data(item)) for i, item in enumerate(raw)]
                else:
                    try:
                        data = raw.data
                    except Exception:
                        data = None
                    items = [(sname, data if isinstance(data, torch.Tensor) else None)]
                for iname, data in items:
                    if data is not None:
                        found.append(saved_value(nid, iname, data, out, known, node))
                    elif _freed_slot(node, iname):  # a slot read as empty that raises: a backward freed it
                        found.append(_record(SavedValue, name=iname, tensor=None, value=None, state=FREED,
                                             saved_version=None, version=None))
                    # else a slot PyTorch never filled (``x * 2`` saves no ``self``): not a saved value
            if kind.custom:
                self._custom_saved(found, nid, node, out, known)
            saved = tuple(found)
        if out is None:
            output, value = None, None
        else:
            output = ids.tensor(out)
            value = self.summary(output, out)
        return _record(NodeInfo, id=nid, name=name, inputs=inputs, attrs=attrs, saved=saved, variable=None,
                       output=output, value=value, module=module)

    def _custom_saved(self, found: list[SavedValue], nid: str, node: Any, out: torch.Tensor | None,
                      known: int | None) -> None:
        """A custom Function's node: what its ``ctx.save_for_backward`` kept, added to ``found``."""
        for sname, data in custom_saved(node) or ():
            if data is not None:
                found.append(self._saved(nid, sname, data, out, known, node))

    def _edges(self, nexts: Any, met: dict[int, str | None] | None = None) -> tuple[Edge | None, ...]:
        """A node's input edges (``next_functions``), the nodes they lead to stamped (``met``: id() of node
        wrappers a walk met -> their ids). An edge is a plain value: one record per (node, output) serves
        every node that has it as an input."""
        stamp_node, made = self.ids.stamp_node, self._edges_made
        edges: list[Edge | None] = []
        for nxt, nr in nexts:
            if nxt is None:
                edges.append(None)
                continue
            nid = met.get(id(nxt)) if met is not None else None
            key = (stamp_node(nxt)[0] if nid is None else nid, nr)
            edge = made.get(key)
            if edge is None:
                if len(made) >= _MAX_EDGES:  # bounded: a long chain's edges are each met once
                    made.clear()
                edge = made[key] = _record(Edge, node=key[0], output_nr=nr)
            edges.append(edge)
        return tuple(edges)

    def _saved(self, nid: str, name: str, data: torch.Tensor, out: Any, known: int | None = None,
               node: Any = None) -> SavedValue:
        ids = self.ids
        entry = ids._by_addr.get(id(data))  # ids.tensor(data), inline (as version_of, storage_of, _file below)
        tid = entry[1] if entry is not None and entry[0]() is data else None
        if tid is not None and known is not None and _order(tid) > known:
            tid = None
        alias = False  # ``data`` shows the very values of ``out`` (a node's saved result)
        if tid is None and out is not None and _same_storage(data, out):
            tid = ids.stamp(out)[0]
            alias = True
        try:
            version = int(data._version)
        except Exception:  # inference tensors have no version counter
            version = 0
        saved_version = version
        if version and node is not None and "[" not in name:
            # A node read after its call returned may have saved its value at an older version: the node of
            # an in-place call that saved its own target before changing it (``a.mul_(a)``), or a node read
            # at the end of a statement that went on to change what it saved (``getattr(x.exp(), "add_")(1)``,
            # run with no torch function mode). PyTorch says when it saved it. (At version 0 nothing older.)
            saved_version = _saved_version(node, name, version)
        try:
            storage: int | None = int(data.untyped_storage().data_ptr())
        except Exception:
            storage = None
        if nid not in self._life:
            self._watch(nid, node)
        if tid is not None:
            by = self.saved_by.get(tid)
            if by is None:
                self.saved_by[tid] = [(nid, name)]
            else:
                by.append((nid, name))
        elif not name.startswith("saved_tensors["):
            self._no_id.add(nid)
        self._file(nid, storage)
        if tid is None:
            value = self.summary(None, data, version)
        elif data is ids.obj(tid):
            value = self.summary(tid, data, version)
        elif alias and version == version_of(out) and _same_strides(data, out):
            value = self.summary(tid, out, version)  # the same numbers, read once for both
        else:
            value = self.summary(None, data, version)
        if saved_version != version:
            self.stale.add(nid)
            return _record(SavedValue, name=name, tensor=tid, value=value, state=STALE,
                           saved_version=saved_version, version=version)
        return _record(SavedValue, name=name, tensor=tid, value=value, state=ALIVE,
                       saved_version=version, version=version)

    def hidden_node(self, target: torch.Tensor, before: ViewWrite) -> tuple[Any, str, NodeInfo] | None:
        """The ``CopySlices`` node an in-place call on the view ``target`` just made on its base (``before``: as
        noted before the call, see :func:`.copyslices.view_write_before`), its id and record; None when the
        call made none, or its hidden saves are read already (see :func:`.copyslices.view_write`)."""
        if version_of(target) == before.version:
            return None  # the call wrote nothing
        base = target._base
        copy_slices = grad_fn_of(base) if base is not None else None
        if copy_slices is None or copy_slices is before.base_fn or kind_of(copy_slices).name != COPY_SLICES:
            return None
        nid = self.ids.node(copy_slices)  # read as the call returned its output (``t[i] = v`` returns none)
        if nid is None or nid in self._hidden or nid in self.packed:
            return None
        info = self.nodes.get(nid)
        if info is None:
            return None
        return copy_slices, nid, info

    def add_hidden_saves(self, copy_slices: Any, nid: str, info: NodeInfo, inner: str,
                         found: list[tuple[str, torch.Tensor, int]]) -> None:
        """Show what the node ``inner`` hidden inside ``copy_slices`` saved (``(slot, tensor, version saved
        at)``) as the ``CopySlices`` node's saved values, named ``<inner node>.<slot>``; they go stale as any
        saved value does."""
        saved = list(info.saved)
        if nid not in self._life:
            self._watch(nid, copy_slices)
        for slot, t, saved_version in found:
            tid = self.ids.stamp(t)[0]
            name = f"{inner}.{slot}"
            version = version_of(t)
            by = self.saved_by.get(tid)
            if by is None:
                self.saved_by[tid] = [(nid, name)]
            else:
                by.append((nid, name))
            self._file(nid, storage_of(t))
            state = ALIVE if version == saved_version else STALE
            if state == STALE:
                self.stale.add(nid)
            base = t._base
            if base is not None:
                self._hidden_base[(nid, name)] = weakref.ref(base)
            saved.append(_record(SavedValue, name=name, tensor=tid, value=self.summary(tid, t, version), state=state,
                                 saved_version=saved_version, version=version))
        self._hidden.add(nid)
        self._no_id.add(nid)  # a view written unnamed (``b[0].sigmoid_()``) is followed by no step: re-read on writes
        self.nodes[nid] = _with(info, saved=tuple(saved))
        self.changed.add(nid)

    def link_output(self, nid: str, out: torch.Tensor) -> None:
        """Note that ``out`` is the forward output of node ``nid``."""
        info = self.nodes.get(nid)
        if info is None or info.output is not None:
            return
        tid = self.ids.tensor(out)
        if tid is not None:
            self.nodes[nid] = _with(info, output=tid, value=info.value or self.summary(tid, out))
            self.changed.add(nid)

    def relink_output(self, nid: str, tid: str, out: torch.Tensor) -> None:
        """Name ``out`` (id ``tid``), another of node ``nid``'s outputs, as its output from now on."""
        info = self.nodes.get(nid)
        if info is not None and info.output != tid:
            self.nodes[nid] = _with(info, output=tid, value=self.summary(tid, out))

    def refresh_freed(self, root: Any, ran: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """Re-read saved values of the nodes under ``root`` a backward freed; the newly freed ones.

        Only nodes filed with a saved value not yet freed are read. ``ran``: the ids of the nodes the
        backward ran, when its hooks told them: the walk ends once all of those were met.
        """
        freed: list[tuple[str, str]] = []
        filed, packed, nodes, work = self._filed, self.packed, self.nodes, self.work
        left = -1  # -1: walk everything under root
        if ran is not None:
            left = len({nid for nid in ran if nid in filed and nid not in packed})
        if not filed or not left:
            return freed
        node_id = self.ids.node
        stack, seen = [root], set()
        while stack:
            node = stack.pop()
            nid = node_id(node)
            if nid is None or nid in seen:
                continue
            seen.add(nid)
            work["rechecked"] += 1
            if nid in filed and nid not in packed:
                info = nodes.get(nid)
                if info is not None and info.saved:
                    now = self._recheck(node, info, freed, ran is None or nid in ran)
                    if now is not info:
                        nodes[nid] = now
                        self.changed.add(nid)
                        if not any(s.state == ALIVE for s in now.saved):
                            self._settled(nid)  # nothing alive left to change
                if ran is not None and nid in ran:
                    left -= 1
                    if not left:
                        break
            stack += [nxt for nxt, _ in node.next_functions if nxt is not None]
        return sorted(freed, key=lambda p: (_order(p[0]), p[1]))

    def _recheck(self, node: Any, info: NodeInfo, freed: list[tuple[str, str]], ran: bool = True) -> NodeInfo:
        kind = kind_of(node)
        now: dict[str, torch.Tensor | None] = {}
        if info.id in self._hidden and ran:
            # a CopySlices a backward ran drops the node it wraps, and with it that node's saved values
            now.update({s.name: None for s in info.saved})
        for sname, getter in kind.raw_getters:  # read_saved, inline (a backward frees every node it ran)
            try:
                raw = getattr(node, getter)
            except Exception:
                continue
            if isinstance(raw, (list, tuple)):
                for i, item in enumerate(raw):
                    now[f"{sname}[{i}]"] = _data(item)
            else:
                try:
                    data = raw.data
                except Exception:
                    data = None
                now[sname] = data if isinstance(data, torch.Tensor) else None
        if kind.custom and custom_saved(node) is None:
            now.update({s.name: None for s in info.saved if s.name.startswith("saved_tensors[")})
        saved: list[SavedValue] | None = None
        for i, s in enumerate(info.saved):
            if s.state != FREED and s.saved_version is not None and s.name in now and now[s.name] is None:
                if saved is None:
                    saved = list(info.saved)
                saved[i] = _with(s, state=FREED)
                freed.append((info.id, s.name))
        return info if saved is None else _with(info, saved=tuple(saved))

    def mark_versions(self, tid: str, version: int) -> list[tuple[str, str]]:
        """Tensor ``tid`` is now at ``version``: the saved values that became stale. Hidden saved values of
        views of it the program dropped (they share its version counter) are at that version too."""
        stale: list[tuple[str, str]] = []
        for nid, sname in self.saved_by.get(tid, ()):
            stale += self._set_version(nid, sname, version, tid)
        if self._hidden_base:
            obj = self.ids.obj(tid)
            for (nid, sname), ref in list(self._hidden_base.items()):
                if obj is not None and ref() is obj and nid in self.nodes:
                    stale += self._set_version(nid, sname, version, None)
        return stale

    def _set_version(self, nid: str, sname: str, version: int, tid: str | None) -> list[tuple[str, str]]:
        """Saved value ``sname`` of node ``nid`` is now at ``version``: of tensor ``tid``, or with ``tid`` None
        of a view the program dropped (read through its base); the newly stale."""
        info = self.nodes[nid]
        stale: list[tuple[str, str]] = []
        saved = []
        changed = False
        for s in info.saved:
            if s.name == sname and s.state != FREED and (
                    s.tensor == tid if tid is not None else s.tensor is not None and self.ids.obj(s.tensor) is None):
                new_state = STALE if version != s.saved_version else ALIVE
                if new_state == STALE and s.state != STALE:
                    stale.append((nid, s.name))
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



def _base_node(ids: Ids, t: torch.Tensor) -> tuple[torch.Tensor | None, str | None]:
    """``t``'s base (when ``t`` is a view and its base has an id) and the id of the base's ``grad_fn``."""
    try:
        base = t._base
        if base is None or ids.tensor(base) is None:
            return None, None
        fn = grad_fn_of(base)
        return (base, ids.node(fn)) if fn is not None else (None, None)
    except Exception:
        return None, None


_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+)")


def _saved_version(node: Any, name: str, version: int) -> int:
    """The version saved value ``name`` of ``node`` was saved at, now that its tensor is at ``version``.

    Unpacks it (the nodes asked about have no hooks: nothing of the learner's runs): PyTorch
    checks the version it saved and names it when it differs."""
    try:
        getattr(node, "_saved_" + name)
    except RuntimeError as exc:
        said = _VERSIONS.search(str(exc))
        if said is not None and int(said.group(1)) == version:
            return int(said.group(2))
    except Exception:
        pass
    return version


def _freed_slot(node: Any, name: str) -> bool:
    """A saved slot read as empty is freed when reading it raises (a backward freed it).

    An empty slot that reads as ``None`` was never filled (e.g. ``x * 2`` saves no ``self``).
    Matters for nodes first seen after ``backward()``, as in ``snapshot`` of a used graph.
    """
    try:
        getattr(node, "_saved_" + name.split("[", 1)[0])
    except RuntimeError:
        return True
    except Exception:
        return False
    return False


_new = object.__new__
_R = TypeVar("_R")


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


def _same_strides(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return bool(a.stride() == b.stride())
    except Exception:  # layouts without strides
        return False


def _record(cls: type[_R], **fields: Any) -> _R:
    """``cls(**fields)`` for the frozen records here, given every field (no ``__post_init__``), without
    setting them one by one through the frozen ``__setattr__``."""
    out: _R = _new(cls)
    out.__dict__.update(fields)
    return out


def _order(nid: str) -> int:
    return int(nid[1:])


def recheck_saved(book: GraphBook, node: Any, nid: str, info: NodeInfo, stale: list[tuple[str, str]]) -> bool:
    """Read node ``nid``'s saved values again (see :meth:`.saved.SavedBook.check_untracked`); those gone stale
    join ``stale``. False when none is left alive (nothing a write could change any more)."""
    ids, dirty = book.ids, book.dirty
    now = dict(read_saved(node))
    hidden = nid in book._hidden  # its values are read through their tensors (see .copyslices.view_write)
    saved = []
    changed = False
    for s in info.saved:
        through_base = False
        if s.state != ALIVE:
            data = None
        elif hidden and s.tensor is not None:
            data = ids.obj(s.tensor)
            if data is None:  # the program dropped the view: its base counts its versions
                ref = book._hidden_base.get((nid, s.name))
                data = None if ref is None else ref()
                through_base = True
        else:
            data = now.get(s.name)
        if data is not None and s.saved_version is not None:
            version = version_of(data)
            if (s.tensor is None or hidden) and version != s.saved_version:
                s = _with(s, state=STALE, version=version)
                stale.append((nid, s.name))
                changed = True
                book.stale.add(nid)
            elif version == s.saved_version and storage_of(data) in dirty and not through_base:
                value = book.summary(None, data, version)  # written behind the version counter?
                if value != s.value:
                    s = _with(s, value=value)
                    changed = True
        saved.append(s)
    if changed:
        book.nodes[nid] = _with(info, saved=tuple(saved))
        book.changed.add(nid)
    return any(s.state == ALIVE for s in saved)

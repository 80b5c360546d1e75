"""One snapshot of a tensor's whole graph, without running code (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.
Used by :func:`gradtrace.make_dot` and :func:`gradtrace.show`.

:func:`snapshot` reads every node in full. :class:`Sketch` reads a graph in two
passes, for a picture that folds most of it away: first every node's name, inputs
and leaf (what folding looks at), then, on request, the saved values, attributes
and output of the nodes the picture draws. A 100,000-node chain then costs one
light pass plus the few nodes drawn.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from itertools import compress, count
from typing import Any

import torch

from .._gc import paused_gc
from ..model import Edge, NodeInfo, Step, TensorInfo
from .core import Tracer
from .graph import GraphBook, creation_order, grad_fn_of, is_leaf_of, node_name, version_of
from .ids import Ids
from .stack import ensure_deep_stack


def _plain_fields(cls: type, required: set[str]) -> dict[str, Any] | None:
    """The defaults of a frozen dataclass whose records can be made by filling ``__dict__``, or None.

    Fits when the class has no ``__post_init__``, slots or default factories, and
    ``required`` are exactly its fields without a default.
    """
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        return None
    fields = dataclasses.fields(cls)
    if any(f.default_factory is not dataclasses.MISSING for f in fields):
        return None
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    return defaults if {f.name for f in fields} - set(defaults) == required else None


#: A record's generated ``__init__`` sets each field through ``object.__setattr__`` (frozen): about
#: 3 µs a NodeInfo, 0.3 s for the 100,000 nodes of a huge graph. Filling the new record's
#: ``__dict__`` makes the same record (equal, hashable, immutable) four times faster.
_NODE_DEFAULTS = _plain_fields(NodeInfo, {"id", "name", "inputs"})
_EDGE_FITS = _plain_fields(Edge, {"node", "output_nr"}) == {}


def _records(nids: list[str], names: list[str], nexts: list[Any], by: Mapping[int, str]) -> list[NodeInfo]:
    """``NodeInfo(id, name, inputs)`` of each node (its id, name and ``next_functions``), made quickly where
    the model's classes allow it."""
    if _NODE_DEFAULTS is None or not _EDGE_FITS:
        return [NodeInfo(id=nid, name=name,
                         inputs=tuple(None if nxt is None else Edge(by[id(nxt)], nr) for nxt, nr in pairs))
                for nid, name, pairs in zip(nids, names, nexts, strict=True)]
    new, defaults, edge_cls, node_cls = _new, _NODE_DEFAULTS, Edge, NodeInfo
    out: list[NodeInfo] = []
    keep = out.append
    for nid, name, pairs in zip(nids, names, nexts, strict=True):
        inputs: list[Edge | None] = []
        for nxt, nr in pairs:
            if nxt is None:
                inputs.append(None)
            else:
                edge = new(edge_cls)
                state = edge.__dict__
                state["node"], state["output_nr"] = by[id(nxt)], nr
                inputs.append(edge)
        record = new(node_cls)
        state = record.__dict__
        state.update(defaults)
        state["id"], state["name"], state["inputs"] = nid, name, tuple(inputs)
        keep(record)
    return out


_new = object.__new__


def _outputs(var: Any) -> list[torch.Tensor]:
    outputs = list(var) if isinstance(var, (list, tuple)) else [var]
    if not all(isinstance(v, torch.Tensor) for v in outputs):
        raise TypeError("gradtrace needs a tensor (or a list of tensors) to draw; got "
                        + ", ".join(sorted({type(v).__name__ for v in outputs})))
    return outputs


def snapshot(var: Any, params: Mapping[str, torch.Tensor] | None = None, name: str = "output") -> Step:
    """A :class:`~gradtrace.model.Step` holding everything reachable from ``var``.

    ``var`` is a tensor or a sequence of tensors; ``params`` names tensors
    (as ``dict(model.named_parameters())`` does) so leaves are labelled.
    """
    outputs = _outputs(var)
    ensure_deep_stack()
    tracer = Tracer("", "<snapshot>")
    ids, book = tracer.ids, tracer.book
    book.lazy = True  # a value is read when the picture draws it: most of a huge graph is folded away
    bindings: dict[str, str] = {}
    with paused_gc(), torch._C.DisableTorchFunction(), torch.no_grad():
        for i, v in enumerate(outputs):
            label = name if len(outputs) == 1 else f"{name}[{i}]"
            bindings[label] = ids.stamp(v)[0]
            book.walk(grad_fn_of(v), output=v)
        for pname, p in (params or {}).items():
            if isinstance(p, torch.Tensor):
                bindings.setdefault(str(pname), ids.stamp(p)[0])
        roots: dict[str, int] = {}
        for tid in bindings.values():
            roots[tid] = roots.get(tid, 0) + 1
        leaves = [n.variable for _, n in sorted(book.nodes.items(), key=lambda kv: int(kv[0][1:])) if n.variable]
        stamp_bases(ids, [*roots, *leaves])
        tracer.scene.update(roots, None, set(), [])
        tensors, nodes = dict(tracer.scene.tensors), dict(tracer.scene.nodes)
    tracer.scene.clear()
    return Step(index=0, lineno=0, code="", frame="<snapshot>", bindings=bindings, tensors=tensors, nodes=nodes)


def stamp_bases(ids: Ids, tids: Iterable[str]) -> None:
    """Ids for the bases of the views among ``tids``, in that order, before any tensor is read.

    A view then shows its base (its ``TensorInfo.base``), and the ids do not depend on
    the order in which a snapshot happens to reach the views.
    """
    for tid in tids:
        t = ids.obj(tid)
        base = None if t is None else t._base
        if base is not None:
            ids.stamp(base)


class Sketch:
    """A snapshot read lightly: :attr:`step` has every node's name, inputs and leaf, :meth:`fill` the rest.

    The ids, the nodes and the tensors are those :func:`snapshot` gives; ``fill(nids)`` gives
    the step with those nodes read in full (saved values, attributes, output), as
    :func:`snapshot` has them. :attr:`work` counts the nodes read in full.

    Nodes are told apart by their Python wrappers (kept while the sketch lives, so their
    ``id()`` stays theirs): nothing is written into ``node.metadata``.
    """

    def __init__(self, var: Any, params: Mapping[str, torch.Tensor] | None = None, name: str = "output") -> None:
        outputs = _outputs(var)
        ensure_deep_stack()
        self.ids = ids = Ids()
        self.book = GraphBook(ids)
        self.book.lazy = True
        self.work: Counter[str] = Counter()
        self._by: dict[int, str] = {}  # id(node wrapper) -> node id
        self._kinds: dict[type, str] = {}  # node class -> its name
        #: every node in id order (``n1`` first): the wrappers whose id() is a key above
        self._order: list[Any] = []
        #: the nodes read in full (accumulators need no more than the sketch has)
        self._read: set[str] = set()
        #: node id -> the tensor it made, where known (the roots of walks)
        self._outs: dict[str, torch.Tensor] = {}
        #: (number of a walk's first node, tensor ids given when the walk met its nodes), one per walk
        self._known: list[tuple[int, int]] = []
        #: node id -> the tensor found to be its output after the node was met (as ``GraphBook.walk`` finds it)
        self._linked: dict[str, torch.Tensor] = {}
        self._nodes: dict[str, NodeInfo] = {}
        bindings: dict[str, str] = {}
        with paused_gc(), torch._C.DisableTorchFunction(), torch.no_grad():
            leaves: list[str] = []
            for i, v in enumerate(outputs):
                label = name if len(outputs) == 1 else f"{name}[{i}]"
                bindings[label] = ids.stamp(v)[0]
                leaves += self._walk(grad_fn_of(v), v)
            for pname, p in (params or {}).items():
                if isinstance(p, torch.Tensor):
                    bindings.setdefault(str(pname), ids.stamp(p)[0])
            stamp_bases(ids, [*dict.fromkeys(bindings.values()), *leaves])
            tensors = self._tensors(bindings, leaves)
        # ids only grow, so the nodes are in id order already
        self.step = Step(index=0, lineno=0, code="", frame="<snapshot>", bindings=bindings, tensors=tensors,
                         nodes=dict(self._nodes))

    def _walk(self, root: Any, out: torch.Tensor) -> list[str]:
        """Ids for the nodes ``root`` reaches that have none, given as ``GraphBook.walk`` gives them, with
        their names, inputs and leaves; the new leaves' tensor ids.

        One light step per node: the walk pushes each node's ``next_functions`` pairs as they come
        (the ``None`` ones are skipped when popped), ids and names are made in bulk.
        """
        if root is None:
            return []
        by, ids, kinds = self._by, self.ids, self._kinds
        met = by.get(id(root))
        if met:  # walked before: ``out`` is its output (its output 0), as GraphBook.walk and the scene tell it
            record = self._nodes[met]
            tid = None if out is None else ids.tensor(out)
            if record.output is None and tid is not None and out.output_nr == 0:
                self._nodes[met] = replace(record, output=tid)
                self._linked[met] = out
            return []
        found: list[tuple[Any, Any]] = []
        stack: list[tuple[Any, int]] = [(root, 0)]
        pop, push, meet = stack.pop, stack.extend, found.append
        while stack:  # met nodes go into ``by`` at once (with no id yet): each is read once
            node = pop()[0]
            if node is None:
                continue
            key = id(node)
            if key in by:
                continue
            by[key] = ""
            nexts = node.next_functions
            meet((node, nexts))
            push(nexts)
        if not found:
            return []
        found = creation_order(found)
        nodes = [f[0] for f in found]
        before = len(self._nodes)
        nids = [f"n{i}" for i in range(before + 1, before + 1 + len(nodes))]
        by.update(zip(map(id, nodes), nids, strict=True))
        types = list(map(type, nodes))
        for cls, node in dict(zip(types, nodes, strict=True)).items():
            if cls not in kinds:
                kinds[cls] = node_name(node)
        names = list(map(kinds.__getitem__, types))
        # ids in creation order; a leaf gets its tensor id with its accumulator's
        accs = list(compress(count(), map("AccumulateGrad".__eq__, names)))
        leaves = [ids.stamp(nodes[i].variable)[0] for i in accs]
        self._order += nodes
        self._read.update(nids[i] for i in accs)
        records = _records(nids, names, [f[1] for f in found], by)
        for i, leaf in zip(accs, leaves, strict=True):
            records[i] = replace(records[i], variable=leaf)
        if out is not None:  # the root comes last in creation order: the output it made is known
            root_id = by[id(root)]
            where = len(nodes) - 1 if nids[-1] == root_id else nids.index(root_id)
            if names[where] != "AccumulateGrad":
                records[where] = replace(records[where], output=ids.tensor(out))
                self._outs[root_id] = out
        self._nodes.update(zip(nids, records, strict=True))
        self._known.append((before + 1, ids.tensor_count))
        return leaves

    def node_id(self, node: Any) -> str | None:
        return None if node is None else self._by.get(id(node))

    def _tensors(self, bindings: Mapping[str, str], leaves: list[str]) -> dict[str, TensorInfo]:
        """The tensors a snapshot shows: the named ones, the leaves, and the bases of views among them
        (taken as the scene takes them: the last name first, a view's base right after it)."""
        ids, out = self.ids, {}
        todo = list(reversed(leaves)) + list(dict.fromkeys(bindings.values()))
        while todo:
            tid = todo.pop()
            if tid in out:
                continue
            t = ids.obj(tid)
            if t is None:
                continue
            fn = grad_fn_of(t)
            if fn is not None:  # walked already, unless it is a base's graph that no output reaches
                todo += reversed(self._walk(fn, t))
            out[tid] = self._tensor_info(tid, t, fn)
            base = t._base
            if base is not None:
                todo.append(ids.stamp(base)[0])
        return dict(sorted(out.items(), key=lambda kv: int(kv[0][1:])))

    def _tensor_info(self, tid: str, t: torch.Tensor, fn: Any) -> TensorInfo:
        """The tensor as a snapshot's scene reads it (values summarised when drawn)."""
        leaf, retains = is_leaf_of(t), bool(t.retains_grad)
        grad = t.grad if (leaf or retains) else None
        base = t._base
        version = version_of(t)
        summary = self.book.summary
        return TensorInfo(
            id=tid, shape=tuple(int(s) for s in t.shape), dtype=str(t.dtype).replace("torch.", ""),
            device=str(t.device), requires_grad=bool(t.requires_grad), is_leaf=leaf, retains_grad=retains,
            version=version, grad_fn=self.node_id(fn), base=None if base is None else self.ids.tensor(base),
            value=summary(tid, t, version), grad=None if grad is None else summary(None, grad),
            is_param=isinstance(t, torch.nn.Parameter),
        )

    def fill(self, nids: Iterable[str]) -> Step:
        """The step with the nodes ``nids`` read in full (the others as they were)."""
        nodes = self.step.nodes
        todo = [nid for nid in dict.fromkeys(nids) if nid in nodes and nid not in self._read]
        if not todo:
            return self.step
        nodes = dict(nodes)
        with paused_gc(), torch._C.DisableTorchFunction(), torch.no_grad():
            for nid in todo:
                number = int(nid[1:])
                known = next(k for first, k in reversed(self._known) if first <= number)
                nodes[nid] = record = self.book._info(nid, self._order[number - 1], self._outs.get(nid), known=known,
                                                      inputs=nodes[nid].inputs)
                linked = self._linked.get(nid)
                if linked is not None and record.output is None:
                    tid = self.ids.tensor(linked)
                    nodes[nid] = replace(record, output=tid, value=record.value or self.book.summary(tid, linked))
                self._read.add(nid)
        self.work["nodes"] += len(todo)
        self.step = Step(index=0, lineno=0, code="", frame="<snapshot>", bindings=self.step.bindings,
                         tensors=self.step.tensors, nodes=nodes)
        return self.step

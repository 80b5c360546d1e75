"""One snapshot of a tensor's whole graph, without running code (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.
Used by :func:`gradtrace.make_dot` and :func:`gradtrace.show`.

:func:`snapshot` reads every node in full. :class:`Sketch` reads a graph in two
passes, for a picture that folds most of it away: first every node's name, inputs
and leaf (what folding looks at), then, on request, the saved values, attributes
and output of the nodes the picture draws. A 100,000-node chain then costs one
light pass plus the few nodes drawn: the first pass keeps names and inputs as lists
(:class:`SketchNodes`, whose records are made when looked up), and folding reads
those lists, not a record per node.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from itertools import chain, compress, count, islice, repeat
from operator import itemgetter
from typing import Any

import torch

from .._gc import paused_gc
from ..model import Edge, NodeInfo, Step, TensorInfo
from .graph import GraphBook, creation_order, forbids_autograd, grad_fn_of, is_leaf_of, node_name, version_of
from .ids import Ids
from .shown import Shown
from .stack import ensure_deep_stack


class SketchNodes(Mapping[str, NodeInfo]):
    """The nodes of a :class:`Sketch`, ``n1`` to ``n<len>`` in order: each record is made when first looked up.

    Folding a huge graph reads its :meth:`outline` (names and inputs as lists, no record per
    node) and draws a few of its nodes, so most records are never made.
    """

    def __init__(self, outline: _Outline, made: dict[str, NodeInfo]) -> None:
        self._outline = outline
        self._made = made  # the records made or read in full so far

    def __len__(self) -> int:
        return len(self._outline.ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._outline.ids)

    def __contains__(self, key: object) -> bool:
        return self._index(key) is not None

    def _index(self, key: object) -> int | None:
        ids = self._outline.ids
        try:
            i = int(key[1:]) - 1 if isinstance(key, str) else -1
        except ValueError:
            return None
        return i if 0 <= i < len(ids) and ids[i] == key else None

    def __getitem__(self, key: str) -> NodeInfo:
        record = self._made.get(key)
        if record is None:
            i = self._index(key)
            if i is None:
                raise KeyError(key)
            record = self._made[key] = self._outline.record(i)
        return record

    @property
    def made(self) -> int:
        """How many records were made so far (looked up, or read in full): the work done per node."""
        return len(self._made)

    def outline(self) -> tuple[list[str], list[str], list[str], list[tuple[str | None, ...]], set[str]]:
        """Every node's id, name, module and input nodes (``None``: an input that needs no gradient), in order,
        and the ids of the accumulators: what folding looks at, as lists."""
        o = self._outline
        return o.ids, o.names, [""] * len(o.ids), o.heads, o.leaves

    def with_records(self, records: Mapping[str, NodeInfo]) -> SketchNodes:
        """These nodes with ``records`` in place of theirs (nodes read in full)."""
        return SketchNodes(self._outline, {**self._made, **records})


@dataclasses.dataclass
class _Outline:
    """What a sketch knows of every node, as lists in id order (``n1`` first)."""

    ids: list[str] = dataclasses.field(default_factory=list)
    names: list[str] = dataclasses.field(default_factory=list)
    heads: list[tuple[str | None, ...]] = dataclasses.field(default_factory=list)  # input nodes' ids
    nexts: list[Any] = dataclasses.field(default_factory=list)  # ``next_functions`` (for the output numbers)
    leaves: set[str] = dataclasses.field(default_factory=set)  # the accumulators' ids

    def record(self, i: int) -> NodeInfo:
        inputs = tuple(None if head is None else Edge(head, int(nr))
                       for head, (_, nr) in zip(self.heads[i], self.nexts[i], strict=True))
        return NodeInfo(id=self.ids[i], name=self.names[i], inputs=inputs)


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
    ids = Ids()
    book = GraphBook(ids)
    shown = Shown(ids, book, Counter())
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
        shown.update(roots, None, set(), [])
        tensors, nodes = dict(shown.tensors), dict(shown.nodes)
    shown.clear()
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
        #: node wrapper -> node id (wrappers hash by identity; a wrapper's own hash spreads better than its id())
        self._by: dict[Any, str] = {}
        self._kinds: dict[type, str] = {}  # node class -> its name
        #: every node in id order (``n1`` first)
        self._order: list[Any] = []
        #: the nodes read in full (accumulators need no more than the sketch has)
        self._read: set[str] = set()
        #: node id -> the tensor it made, where known (the roots of walks)
        self._outs: dict[str, torch.Tensor] = {}
        #: (number of a walk's first node, tensor ids given when the walk met its nodes), one per walk
        self._known: list[tuple[int, int]] = []
        self._outline = _Outline()
        self._made: dict[str, NodeInfo] = {}  # the accumulators' and the outputs' records
        #: node id -> the tensor found to be its output after the node was met (as ``GraphBook.walk`` finds it)
        self._linked: dict[str, torch.Tensor] = {}
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
                         nodes=SketchNodes(self._outline, dict(self._made)))

    def _walk(self, root: Any, out: torch.Tensor | None) -> list[str]:
        """Ids for the nodes ``root`` reaches that have none, given as ``GraphBook.walk`` gives them, with
        their names, inputs and leaves; the new leaves' tensor ids.

        One light step per node: the walk pushes each node's ``next_functions`` pairs as they come
        (the ``None`` ones are skipped when popped), ids and names are made in bulk.
        """
        if root is None:
            return []
        by, ids, kinds = self._by, self.ids, self._kinds
        met = by.get(root)
        if met:  # walked before: ``out`` is its output (its output 0), as GraphBook.walk and the scene tell it
            record = self._made.get(met) or self._outline.record(int(met[1:]) - 1)
            tid = None if out is None else ids.tensor(out)
            if record.output is None and tid is not None and out is not None and out.output_nr == 0:
                self._made[met] = replace(record, output=tid)
                self._linked[met] = out
            return []
        found: list[tuple[Any, Any]] = []
        stack: list[tuple[Any, int]] = [(root, 0)]
        pop, push, meet = stack.pop, stack.extend, found.append
        while stack:  # met nodes go into ``by`` at once (with no id yet): each is read once
            node = pop()[0]
            if node is None:
                continue
            if node in by:
                continue
            by[node] = ""
            nexts = node.next_functions
            meet((node, nexts))
            push(nexts)
        if not found:
            return []
        found = creation_order(found)
        nodes = [f[0] for f in found]
        before = len(self._outline.ids)
        nids = [f"n{i}" for i in range(before + 1, before + 1 + len(nodes))]
        by.update(zip(nodes, nids, strict=True))
        types = list(map(type, nodes))
        for cls, node in dict(zip(types, nodes, strict=True)).items():
            if cls not in kinds:
                kinds[cls] = node_name(node)
        names = list(map(kinds.__getitem__, types))
        # ids in creation order; a leaf gets its tensor id with its accumulator's
        accs = list(compress(count(), map("AccumulateGrad".__eq__, names)))
        leaves = [ids.stamp(nodes[i].variable)[0] for i in accs]
        self._order += nodes
        nexts = [f[1] for f in found]
        # each input's node id (None for an input that needs no gradient), in bulk, grouped by node
        heads = iter(list(map(by.get, map(itemgetter(0), chain.from_iterable(nexts)))))
        outline = self._outline
        outline.ids += nids
        outline.names += names
        outline.heads += map(tuple, map(islice, repeat(heads), map(len, nexts)))
        outline.nexts += nexts
        made = self._made
        for i, leaf in zip(accs, leaves, strict=True):
            made[nids[i]] = replace(outline.record(before + i), variable=leaf)
            outline.leaves.add(nids[i])
            self._read.add(nids[i])
        if out is not None:  # the root comes last in creation order: the output it made is known
            root_id = by[root]
            where = len(nodes) - 1 if nids[-1] == root_id else nids.index(root_id)
            if names[where] != "AccumulateGrad":
                made[root_id] = replace(outline.record(before + where), output=ids.tensor(out))
                self._outs[root_id] = out
        self._known.append((before + 1, ids.tensor_count))
        return leaves

    def node_id(self, node: Any) -> str | None:
        return None if node is None else self._by.get(node)

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
            is_param=isinstance(t, torch.nn.Parameter), forbidden=fn is None and forbids_autograd(t),
            output_nr=0 if fn is None else int(t.output_nr),
        )

    def fill(self, nids: Iterable[str]) -> Step:
        """The step with the nodes ``nids`` read in full (the others as they were)."""
        nodes = self.step.nodes
        assert isinstance(nodes, SketchNodes)
        todo = [nid for nid in dict.fromkeys(nids) if nid in nodes and nid not in self._read]
        if not todo:
            return self.step
        read: dict[str, NodeInfo] = {}
        with paused_gc(), torch._C.DisableTorchFunction(), torch.no_grad():
            for nid in todo:
                number = int(nid[1:])
                known = next(k for first, k in reversed(self._known) if first <= number)
                read[nid] = record = self.book._info(nid, self._order[number - 1], self._outs.get(nid), known=known,
                                                     inputs=nodes[nid].inputs)
                linked = self._linked.get(nid)
                if linked is not None and record.output is None:
                    tid = self.ids.tensor(linked)
                    read[nid] = replace(record, output=tid, value=record.value or self.book.summary(tid, linked))
                self._read.add(nid)
        self.work["nodes"] += len(todo)
        self.step = Step(index=0, lineno=0, code="", frame="<snapshot>", bindings=self.step.bindings,
                         tensors=self.step.tensors, nodes=nodes.with_records(read))
        return self.step

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


def _records(found: list[tuple[Any, Any, int]], by: Mapping[int, str], kinds: Mapping[type, str]) -> list[NodeInfo]:
    """``NodeInfo(id, name, inputs)`` of each found node, made quickly where the model's classes allow it."""
    if _NODE_DEFAULTS is None or not _EDGE_FITS:
        return [NodeInfo(id=by[key], name=kinds[type(node)],
                         inputs=tuple(None if nxt is None else Edge(by[id(nxt)], nr) for nxt, nr in nexts))
                for node, nexts, key in found]
    new, defaults, edge_cls, node_cls = _new, _NODE_DEFAULTS, Edge, NodeInfo
    out = []
    for node, nexts, key in found:
        inputs: list[Edge | None] = []
        for nxt, nr in nexts:
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
        state["id"], state["name"], state["inputs"] = by[key], kinds[type(node)], tuple(inputs)
        out.append(record)
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
        self._keep: list[Any] = []  # the wrappers whose id() is a key above
        #: node id -> (node, the tensor it made if known, tensor ids given when it was met)
        self._later: dict[str, tuple[Any, torch.Tensor | None, int]] = {}
        #: node id -> the tensor found to be its output after it was met
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
        their names, inputs and leaves; the new leaves' tensor ids."""
        if root is None:
            return []
        by, ids, kinds = self._by, self.ids, self._kinds
        met = by.get(id(root))
        if met:  # walked before: ``out`` is its output, as GraphBook.walk and the scene tell it
            record = self._nodes[met]
            tid = None if out is None else ids.tensor(out)
            if record.output is None and tid is not None:
                self._nodes[met] = replace(record, output=tid)
                self._linked[met] = out
            return []
        found: list[tuple[Any, Any, int]] = []
        stack = [root]
        pop, push = stack.pop, stack.extend
        while stack:  # met nodes go into ``by`` at once (with no id yet): each is read once
            node = pop()
            key = id(node)
            if key in by:
                continue
            by[key] = ""
            nexts = node.next_functions
            found.append((node, nexts, key))
            push([nxt for nxt, _ in nexts if nxt is not None])
        found = creation_order(found)
        count = len(self._nodes)
        leaves: list[str] = []
        for node, _, key in found:  # ids in creation order; a leaf gets its id with its accumulator's
            count += 1
            by[key] = f"n{count}"
            cls = type(node)
            if (kinds.get(cls) or kinds.setdefault(cls, node_name(node))) == "AccumulateGrad":
                leaves.append(ids.stamp(node.variable)[0])
        self._keep += [f[0] for f in found]
        known = ids.tensor_count
        later, nodes = self._later, self._nodes
        variables = iter(leaves)
        for (node, _, _), record in zip(found, _records(found, by, kinds), strict=True):
            nid = record.id
            nodes[nid] = record
            if record.name == "AccumulateGrad":
                nodes[nid] = replace(record, variable=next(variables))
                continue
            if node is root and out is not None:
                nodes[nid] = replace(record, output=ids.tensor(out))
            later[nid] = (node, out if node is root else None, known)
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
        todo = [nid for nid in nids if nid in self._later]
        if not todo:
            return self.step
        nodes = dict(self.step.nodes)
        with paused_gc(), torch._C.DisableTorchFunction(), torch.no_grad():
            for nid in todo:
                node, out, known = self._later.pop(nid)
                nodes[nid] = record = self.book._info(nid, node, out, known=known, inputs=nodes[nid].inputs)
                linked = self._linked.get(nid)
                if linked is not None and record.output is None:
                    tid = self.ids.tensor(linked)
                    nodes[nid] = replace(record, output=tid, value=record.value or self.book.summary(tid, linked))
        self.work["nodes"] += len(todo)
        self.step = Step(index=0, lineno=0, code="", frame="<snapshot>", bindings=self.step.bindings,
                         tensors=self.step.tensors, nodes=nodes)
        return self.step

"""``make_dot``: a drop-in for ``torchviz.make_dot``, and ``show``: one graph for notebooks.

Place in the pipeline: tracer -> model -> explain -> render -> **public API**.

``make_dot`` draws the same picture as torchviz (same boxes, same arrows), and
also works where torchviz fails:

* after ``backward()``: saved tensors that the backward pass freed are drawn as
  ``freed`` boxes (torchviz raises with ``show_saved=True``);
* on graphs 100,000 operations deep (torchviz recurses once per node);
* node names are ids given in the order a walk from the output meets them
  (``t1``, ``n1``, ...), so the same program gives the same DOT source
  every run (torchviz uses ``id()``);
* a tensor that several nodes saved is one box with an arrow from each, as in
  torchviz (which keys it by the unpacked object's ``id()``).

It walks ``next_functions`` once, without recursion, and writes the DOT lines
directly; saved values and attributes are read only when ``show_saved`` or
``show_attrs`` draws them (a custom ``autograd.Function``'s saved tensors are
always drawn, as torchviz does). Nothing is summarized: a saved tensor's box
shows its name and shape.

A plain call imports only graphviz, torch and this module (a notebook cell's
first ``make_dot`` pays no tracer or renderer import): node names are read here,
and the tracer's readers (:mod:`gradtrace.tracer.graph`) and the renderers' text
cleaning are imported only when a graph needs them (saved values, attributes,
non-ASCII names, a graph deep enough to need room on the C stack).

Colours are torchviz's: output green (its base, for a view, darker green),
leaves blue, saved tensors orange, backward nodes grey; freed saved tensors are
light grey and dashed.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import graphviz

__all__ = ["BIG_GRAPH", "GradGraph", "make_dot", "show"]

FONT = "Courier"
_COLOURS = {"output": "darkolivegreen1", "base": "darkolivegreen3", "leaf": "lightblue", "saved": "orange"}
_FREED = ' fillcolor=lightgrey style="filled,dashed"]\n'
_PREFIX = "torch::autograd::"
#: Nodes read past which freeing the graph may need room on the C stack (see :mod:`gradtrace.tracer.stack`):
#: freeing one takes about 140 bytes, so fewer than this fit in any usual limit and import nothing
_DEEP = 1000
#: Statements past which ``GradGraph.svg()`` warns that laying the whole graph out is slow.
BIG_GRAPH = 2000


class GradGraph(graphviz.Digraph):  # type: ignore[misc, unused-ignore]  # graphviz has no type information
    """A ``graphviz.Digraph`` whose notebook picture falls back to gradtrace's layout binary.

    ``graphviz.Digraph`` shows itself by running the system ``dot``; when there is
    none, this class lays the graph out with the ``graphviz-pure`` binary instead
    (see :mod:`gradtrace.render.svg`). ``render()``, ``pipe()`` and ``view()`` are
    graphviz's own and still need the system ``dot``; use :meth:`svg` for the picture.
    """

    def svg(self) -> str:
        """The SVG picture, laid out by the system ``dot`` or ``graphviz-pure``.

        Every box is laid out: past :data:`BIG_GRAPH` statements that takes
        seconds to minutes, so it warns and suggests ``gradtrace.show``, which folds.
        """
        from .render.svg import dot_to_svg

        if len(self.body) > BIG_GRAPH:
            warnings.warn(
                f"this graph has {len(self.body):,} DOT statements: laying it all out can take minutes; "
                "gradtrace.show(var, params) draws it folded and grouped by module in about a second",
                stacklevel=2,
            )
        return dot_to_svg(self.source)

    def _repr_image_svg_xml(self) -> str:
        return self.svg()

    # IPython calls this with include= and exclude= by keyword, so their names stay though unused
    def _repr_mimebundle_(self, include: Collection[str] | None = None,  # noqa: ARG002
                          exclude: Collection[str] | None = None, **_: Any) -> dict[str, str]:  # noqa: ARG002
        from .render.svg import LayoutError

        text = f"<gradtrace make_dot graph: {len(self.body)} statements>"
        bundle = {"text/plain": text}
        try:
            bundle["image/svg+xml"] = self.svg()
        except LayoutError as exc:
            bundle["text/plain"] = f"{text}\n(no picture: {exc})"
        return bundle


@functools.lru_cache(maxsize=4096)
def _label(*lines: str) -> str:
    """Plain-text lines as one quoted DOT label: each line escaped, never read as an HTML-like label."""
    if not all(line.isascii() and line.isprintable() for line in lines):  # clean() leaves the others as they are
        from .render.words import clean

        lines = tuple(clean(line) for line in lines)
    text = graphviz.nohtml("\\n".join(graphviz.escape(line) for line in lines if line))
    return str(graphviz.quoting.quote(text))


def _shape(shape: Iterable[int]) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _node_name(node: Any) -> str:
    """``MulBackward0``, ``AccumulateGrad``, ``MyFnBackward``: as :func:`gradtrace.tracer.graph.node_name` reads it."""
    try:
        name = str(node.name())
    except Exception:
        name = type(node).__name__
    return name[len(_PREFIX):] if name.startswith(_PREFIX) else name


def _grad_fn(t: Any) -> Any:
    """``t.grad_fn``, or None where reading it raises (a view PyTorch forbids in autograd)."""
    try:
        return t.grad_fn
    except RuntimeError:
        return None


def _truncate(text: str, limit: int) -> str:
    limit = max(limit, 3)
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: kind() of PyTorch's built-in node classes, kept across calls (never a learner's class: it would keep
#: the learner's namespace alive)
_BUILT_IN: dict[type, tuple[int, str, str]] = {}


class _Node:
    """One backward node met by the walk: its id, the node, its inputs, and what its saved values may name."""

    __slots__ = ("nid", "node", "nexts", "known", "out", "leaf")

    def __init__(self, nid: str, node: Any, nexts: Any, leaf: str | None) -> None:
        self.nid = nid
        self.node = node
        self.nexts = nexts
        self.leaf = leaf  # the leaf's tensor id, for AccumulateGrad
        self.known = 0  # tensor ids t1..t<known> existed when this node's walk ended
        self.out: Any = None  # the output tensor, for the node an output's grad_fn is


class _Writer:
    """Walks the graph once (giving ids), then writes the DOT lines in torchviz's drawing order."""

    def __init__(self, show_attrs: bool, show_saved: bool, max_attr_chars: int) -> None:
        self.show_attrs = show_attrs
        self.show_saved = show_saved
        self.max_attr_chars = max_attr_chars
        self.tensors: dict[int, tuple[Any, str]] = {}  # id(tensor) -> (tensor, tensor id); holds them
        self.objs: dict[str, Any] = {}  # tensor id -> tensor
        self.by_obj: dict[int, _Node] = {}  # id(node wrapper) -> its record
        self.acc: dict[str, _Node] = {}  # leaf id -> its AccumulateGrad record
        self.keep: list[Any] = []  # wrappers whose id() is a key above
        self.kinds: dict[type, tuple[int, str, str]] = dict(_BUILT_IN)  # see kind()
        self.nodes = 0
        self.names: dict[str, str] = {}
        self.outputs: set[str] = set()
        self.drawn: set[str] = set()
        self.lines: list[str] = []
        #: id(unpacked saved tensor) -> its box: a tensor saved by several nodes is one box, as in torchviz
        self.shared: dict[int, str] = {}
        self.unpacked: list[Any] = []  # the tensors whose id() is a key above
        #: box -> (its line in ``lines``, its shape, [(node record, value's index, label)] of the nodes saving it)
        self.writers: dict[str, tuple[int, str, list[tuple[_Node, int, str]]]] = {}

    # ids ----------------------------------------------------------------
    def tid(self, t: Any) -> str | None:
        entry = self.tensors.get(id(t))
        return entry[1] if entry is not None and entry[0] is t else None

    def stamp(self, t: Any) -> str:
        tid = self.tid(t)
        if tid is None:
            tid = f"t{len(self.objs) + 1}"
            self.tensors[id(t)] = (t, tid)
            self.objs[tid] = t
        return tid

    def kind(self, node: Any) -> tuple[int, str, str]:
        """Per node class: 0 plain, 1 AccumulateGrad, 2 custom Function; its name; its DOT label."""
        cls = type(node)
        k = self.kinds.get(cls)
        if k is None:
            name = _node_name(node)
            code = 1 if cls.__name__ == "AccumulateGrad" else 2 if hasattr(cls, "_forward_cls") else 0
            k = self.kinds[cls] = (code, name, _label(name))
            if code != 2 and cls.__module__ == "builtins":  # a C++ node class
                _BUILT_IN[cls] = k  # PyTorch's own node classes live as long as the process
        return k

    def walk(self, root: Any, out: Any) -> None:
        """An id for each node reachable from ``root`` not met before, in the order a walk from the output meets."""
        if root is None:
            return
        by_obj, acc, kinds = self.by_obj, self.acc, self.kinds
        stack = [root]
        new: list[_Node] = []
        count = self.nodes
        while stack:
            node = stack.pop()
            if id(node) in by_obj:
                continue
            leaf = None
            k = kinds.get(type(node)) or self.kind(node)
            if k[0] == 1:
                leaf = self.stamp(node.variable)
                rec = acc.get(leaf)
                if rec is not None:  # a second wrapper of the same leaf's accumulator
                    by_obj[id(node)] = rec
                    self.keep.append(node)
                    continue
            count += 1
            nexts = node.next_functions
            rec = _Node(f"n{count}", node, nexts, leaf)
            by_obj[id(node)] = rec
            if leaf is not None:
                acc[leaf] = rec
            new.append(rec)
            for nxt, _ in nexts:
                if nxt is not None:
                    stack.append(nxt)
        self.nodes = count
        known = len(self.objs)
        for rec in new:
            rec.known = known
        if new:
            new[0].out = out

    def bases(self, bindings: Mapping[str, str]) -> None:
        """Ids for the bases of named views (last name first)."""
        seen: set[str] = set()
        for tid in reversed(list(dict.fromkeys(bindings.values()))):
            if tid in seen:
                continue
            seen.add(tid)
            base = self.objs[tid]._base
            if base is not None:
                btid = self.stamp(base)
                seen.add(btid)

    # drawing --------------------------------------------------------------
    def tensor(self, tid: str, colour: str, label_name: str | None = None) -> None:
        if tid in self.drawn:
            return
        self.drawn.add(tid)
        name = self.names.get(tid, "") if label_name is None else label_name
        self.lines.append(f"\t{tid} [label={_label(name, _shape(self.objs[tid].shape))} fillcolor={colour}]\n")

    def output(self, tid: str) -> None:
        """An output tensor, its graph, and (for a view) its base, as torchviz draws them."""
        todo = [(tid, _COLOURS["output"])]
        while todo:
            t, colour = todo.pop()
            if t in self.drawn:
                continue
            self.tensor(t, colour)
            obj = self.objs[t]
            fn = _grad_fn(obj)
            rec = self.by_obj.get(id(fn)) if fn is not None else None
            if rec is not None:
                self.graph(rec)
                self.lines.append(f"\t{rec.nid} -> {t}\n")
            base = obj._base
            if base is not None:
                btid = self.stamp(base)
                todo.append((btid, _COLOURS["base"]))
                self.lines.append(f"\t{btid} -> {t} [style=dotted]\n")

    def graph(self, root: _Node) -> None:
        lines, drawn, by_obj, kinds = self.lines, self.drawn, self.by_obj, self.kinds
        details = self.show_saved or self.show_attrs
        stack = [root]
        while stack:
            rec = stack.pop()
            nid = rec.nid
            if nid in drawn:
                continue
            drawn.add(nid)
            code, name, label = kinds[type(rec.node)]
            if rec.leaf is not None:
                self.tensor(rec.leaf, _COLOURS["leaf"])
                lines.append(f"\t{rec.leaf} -> {nid}\n")
            elif details or code == 2:
                label = self.node_label(rec, name, self.saved(rec))
            lines.append(f"\t{nid} [label={label}]\n")
            for nxt, _ in rec.nexts:
                if nxt is not None:
                    child = by_obj[id(nxt)]
                    lines.append(f"\t{child.nid} -> {nid}\n")
                    stack.append(child)

    def saved_values(self, rec: _Node) -> list[tuple[str, str | None, Any]]:
        """``(name, tensor id or None, tensor or None when freed)`` of each value the node saved."""
        from .tracer.graph import custom_saved, read_saved, saved_fields

        node = rec.node
        tensor_fields, _ = saved_fields(node)
        pairs = read_saved(node, tensor_fields) if self.show_saved or self.show_attrs else []
        pairs += custom_saved(node) or []
        out: list[tuple[str, str | None, Any]] = []
        for name, data in pairs:
            if data is None:
                if not name.startswith("saved_tensors[") and _freed(node, name):
                    out.append((name, None, None))
                continue
            tid = self.tid(data)
            if tid is not None and int(tid[1:]) > rec.known:
                tid = None  # given an id after this node's walk (as in the order make_dot always drew)
            if tid is None and rec.out is not None and _same_storage(data, rec.out):
                tid = self.tid(rec.out)
            out.append((name, tid, data))
        return out

    def saved(self, rec: _Node) -> list[tuple[str, str | None, Any]]:
        """Draw the saved tensors: always for custom functions (as torchviz), the others with ``show_saved``."""
        values = self.saved_values(rec)
        out_tid = self.tid(rec.out) if rec.out is not None else None
        for k, (name, tid, data) in enumerate(values):
            custom = name.startswith("saved_tensors[")
            if not (custom or self.show_saved):
                continue
            if data is None:  # freed: nothing to share
                key = f"{rec.nid}_s{k}"
            elif tid is not None and tid != out_tid:
                key = tid
            else:  # keyed by the unpacked object, as torchviz keys it (``id()``): one box however many save it
                key = self.shared.get(id(data)) or self.shared.setdefault(id(data), f"{rec.nid}_s{k}")
                self.unpacked.append(data)
            if custom:
                self.saved_box(key, data, "", (rec, k))
                self.lines.append(f"\t{key} -> {rec.nid} [dir=none]\n")
            else:
                self.lines.append(f"\t{rec.nid} -> {key} [dir=none]\n")
                self.saved_box(key, data, name, (rec, k))
        return values

    def saved_box(self, key: str, data: Any, label: str, writer: tuple[_Node, int]) -> None:
        if key in self.drawn:
            if key in self.writers:
                self.writers[key][2].append((*writer, label))
            return
        if data is None:
            self.drawn.add(key)
            self.lines.append(f"\t{key} [label={_label(label, 'freed')}{_FREED}")
            return
        t = self.objs.get(key)
        if t is not None:
            from .tracer.graph import is_leaf_of

            if key in self.outputs:
                self.tensor(key, _COLOURS["output"])
            elif is_leaf_of(t) and t.requires_grad:
                self.tensor(key, _COLOURS["leaf"])
            else:
                self.tensor(key, _COLOURS["saved"], label or self.names.get(key, ""))
            return
        self.drawn.add(key)
        shape = _shape(data.shape)
        self.writers[key] = (len(self.lines), shape, [(*writer, label)])
        self.lines.append(f"\t{key} [label={_label(label, shape)} fillcolor={_COLOURS['saved']}]\n")

    def relabel(self, outputs: list[Any]) -> None:
        """A box saved under different names is labelled as torchviz leaves it: by the last node to draw it.

        torchviz draws a node's ``_saved_*`` values as it enters the node and a custom
        function's ``saved_tensors`` as it leaves it; the last label written is the one shown.
        """
        mixed = {key: w for key, w in self.writers.items() if len({label for _, _, label in w[2]}) > 1}
        if not mixed:
            return
        clock = _torchviz_clock(outputs)

        def when(writer: tuple[_Node, int, str]) -> tuple[int, int]:
            rec, k, label = writer
            enter, leave = clock.get(id(rec.node), (0, 0))
            return (leave if rec.node is not None and hasattr(rec.node, "_forward_cls") and not label else enter, k)

        for key, (at, shape, writers) in mixed.items():
            label = max(writers, key=when)[2]
            self.lines[at] = f"\t{key} [label={_label(label, shape)} fillcolor={_COLOURS['saved']}]\n"

    def node_label(self, rec: _Node, name: str, saved: list[tuple[str, str | None, Any]]) -> str:
        if not self.show_attrs:
            return _label(name)
        from .tracer.graph import read_attrs, saved_fields

        rows: dict[str, str] = dict(read_attrs(rec.node, saved_fields(rec.node)[1]))
        for sname, _, data in saved:
            base = sname.split("[", 1)[0]
            if base == "saved_tensors":
                continue
            text = "[freed]" if data is None else "[saved tensor]"
            rows[base] = text if base == sname else text.replace("tensor]", "tensors]")
        if not rows:
            return _label(name)
        rows = {k: rows[k] for k in sorted(rows)}
        width = max(len(k) for k in rows)
        lines = [f"{k.ljust(width)}: {_truncate(v, self.max_attr_chars)}" for k, v in rows.items()]
        rule = "-" * max(len(name), *(len(line) for line in lines))
        return _label(name, rule, *lines)


def _torchviz_clock(outputs: list[Any]) -> dict[int, tuple[int, int]]:
    """id(node) -> (when torchviz's recursive walk enters it, when it leaves it), walked without recursion."""
    from .tracer.graph import grad_fn_of

    times: dict[int, tuple[int, int]] = {}
    entered: dict[int, int] = {}
    keep: list[Any] = []  # the wrappers whose id() is a key above
    clock = 0
    met: set[int] = set()
    for v in outputs:
        while v is not None and id(v) not in met:  # an output, then its base (a view's) and so on
            met.add(id(v))
            fn = grad_fn_of(v)
            stack: list[tuple[Any, Any]] = [(fn, None)] if fn is not None else []
            while stack:
                node, todo = stack[-1]
                if todo is None:
                    if id(node) in entered:
                        stack.pop()
                        continue
                    clock += 1
                    entered[id(node)] = clock
                    keep.append(node)
                    todo = iter([u for u, _ in node.next_functions if u is not None])
                    stack[-1] = (node, todo)
                nxt = next(todo, None)
                if nxt is None:
                    stack.pop()
                    clock += 1
                    times[id(node)] = (entered[id(node)], clock)
                else:
                    stack.append((nxt, None))
            v = v._base if v._is_view() else None
    return times


def _freed(node: Any, name: str) -> bool:
    """An empty saved slot is freed when reading it raises (a backward freed it), not when it was never filled."""
    try:
        getattr(node, "_saved_" + name.split("[", 1)[0])
    except RuntimeError:
        return True
    except Exception:
        return False
    return False


def _room_to_free(nodes: int) -> None:
    """Raise the C stack limit when freeing ``nodes`` backward nodes, whose wrappers now exist, may need it."""
    from .tracer.stack import ensure_deep_stack, nodes_before_raise

    if nodes >= nodes_before_raise():  # (where gradtrace raised it before, that call raised it again)
        ensure_deep_stack()


def _same_storage(a: Any, b: Any) -> bool:
    try:
        return bool(a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.dtype == b.dtype)
    except Exception:
        return False


def _param_map(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    items = params.items() if isinstance(params, Mapping) else params
    return {str(name): value for name, value in items}


def make_dot(var: Any, params: Any = None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50) -> GradGraph:
    """The autograd graph behind ``var`` as a ``graphviz.Digraph``, as ``torchviz.make_dot`` draws it.

    ``var`` is a tensor or a tuple/list of tensors; ``params`` maps names to
    tensors (``dict(model.named_parameters())``) to label the leaves;
    ``show_attrs`` adds each node's saved values (non-tensor ones in full,
    truncated at ``max_attr_chars``); ``show_saved`` draws saved tensors as
    orange boxes, and as ``freed`` boxes once a ``backward()`` has freed them.
    For a picture of a big graph, folded and grouped by module, use :func:`show`.
    """
    import torch

    from ._gc import paused_gc

    outputs = list(var) if isinstance(var, (list, tuple)) else [var]
    if not all(isinstance(v, torch.Tensor) for v in outputs):
        raise TypeError("gradtrace needs a tensor (or a list of tensors) to draw; got "
                        + ", ".join(sorted({type(v).__name__ for v in outputs})))
    named = _param_map(params)
    w = _Writer(show_attrs, show_saved, max_attr_chars)
    with paused_gc(), torch._C.DisableTorchFunction(), torch.no_grad():
        bindings: dict[str, str] = {}
        for i, v in enumerate(outputs):
            bindings["output" if len(outputs) == 1 else f"output[{i}]"] = w.stamp(v)
            w.walk(_grad_fn(v), v)
        for pname, p in named.items():
            if isinstance(p, torch.Tensor):
                bindings.setdefault(pname, w.stamp(p))
        w.bases(bindings)
        w.names = {tid: n for n, tid in bindings.items() if n in named}
        drawn_outputs = [t for n, t in bindings.items() if n == "output" or n.startswith("output[")]
        w.outputs.update(drawn_outputs)
        for tid in drawn_outputs:
            w.output(tid)
        w.relabel(outputs)
    if w.nodes > _DEEP:
        _room_to_free(w.nodes)
    dot = GradGraph(
        node_attr={"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
                   "height": "0.2", "fontname": FONT},
        graph_attr={"size": "12,12"},
    )
    dot.body = w.lines
    size = max(12.0, len(w.lines) * 0.15)
    dot.graph_attr.update(size=f"{size},{size}")
    return dot


def show(var: Any, params: Mapping[str, Any] | None = None) -> Any:
    """The picture of the graph behind ``var`` for a notebook cell (SVG, with a text twin).

    Big graphs are drawn folded (repeated ops as counted blocks) and grouped by
    module, with at most :data:`~gradtrace.render.fold.MAX_NODES` boxes. Only the
    nodes drawn are read in full (saved values, attributes): a 100,000-op chain
    costs one light pass over its nodes. Returns a :class:`gradtrace.render.graph.Graph`:
    ``.source`` (DOT), ``.svg()`` (laid out on first call), ``.text`` and ``.save(path)``;
    a notebook cell shows it, a script saves or prints it.
    """
    from ._gc import paused_gc

    with paused_gc():  # the sketch's many small records are freed before the collector runs again
        return _show(var, _param_map(params))


def _show(var: Any, params: Mapping[str, Any]) -> Any:
    from .render.graph import step_graph
    from .tracer.snapshot import Sketch

    sketch = Sketch(var, params)  # names and inputs of every node; the rest only for the nodes drawn
    return step_graph(sketch.step, fill=sketch.fill)

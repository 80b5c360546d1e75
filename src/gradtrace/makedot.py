"""``make_dot``: a drop-in for ``torchviz.make_dot``, and ``show``: one graph for notebooks.

Place in the pipeline: tracer -> model -> explain -> render -> **public API**.

``make_dot`` draws the same picture as torchviz (same boxes, same arrows) from a
:func:`gradtrace.snapshot`, so it also works where torchviz fails:

* after ``backward()``: saved tensors that the backward pass freed are drawn as
  ``freed`` boxes (torchviz raises with ``show_saved=True``);
* on graphs 100,000 operations deep (torchviz recurses once per node);
* node names are the snapshot's ids (``t1``, ``n1``, ...), so the same program
  gives the same DOT source every run (torchviz uses ``id()``).

Colours are torchviz's: output green (its base, for a view, darker green),
leaves blue, saved tensors orange, backward nodes grey; freed saved tensors are
light grey and dashed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

import graphviz

from .model import FREED, NodeInfo, SavedValue, Step, TensorInfo

__all__ = ["GradGraph", "make_dot", "show"]

FONT = "Courier"
_COLOURS = {"output": "darkolivegreen1", "base": "darkolivegreen3", "leaf": "lightblue", "saved": "orange"}
_FREED_STYLE = {"fillcolor": "lightgrey", "style": "filled,dashed"}


class GradGraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` whose notebook picture falls back to gradtrace's layout binary.

    ``graphviz.Digraph`` shows itself by running the system ``dot``; when there is
    none, this class lays the graph out with the ``graphviz-pure`` binary instead
    (see :mod:`gradtrace.render.svg`). ``render()``, ``pipe()`` and ``view()`` are
    graphviz's own and still need the system ``dot``; use :meth:`svg` for the picture.
    """

    def svg(self) -> str:
        """The SVG picture, laid out by the system ``dot`` or ``graphviz-pure``."""
        from .render.svg import dot_to_svg

        return dot_to_svg(self.source)

    def _repr_image_svg_xml(self) -> str:
        return self.svg()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **_: Any) -> dict[str, str]:
        from .render.svg import LayoutError

        text = f"<gradtrace make_dot graph: {len(self.body)} statements>"
        bundle = {"text/plain": text}
        try:
            bundle["image/svg+xml"] = self.svg()
        except LayoutError as exc:
            bundle["text/plain"] = f"{text}\n(no picture: {exc})"
        return bundle


@functools.lru_cache(maxsize=4096)
def _label(*lines: str) -> graphviz.quoting.NoHtml:
    """Plain-text lines as one DOT label: each line escaped, never read as an HTML-like label."""
    from .render.words import clean

    return graphviz.nohtml("\\n".join(graphviz.escape(clean(line)) for line in lines if line))


def _shape(shape: Iterable[int]) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _values_shape(values: Any) -> tuple[int, ...] | None:
    """The shape of nested lists of numbers (a summary's values), or None when unknown."""
    if values is None:
        return None
    shape: list[int] = []
    while isinstance(values, list):
        shape.append(len(values))
        if not values:
            break
        values = values[0]
    return tuple(shape)


def _truncate(text: str, limit: int) -> str:
    limit = max(limit, 3)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Drawer:
    """Draws one snapshot; every walk is a loop over an explicit stack."""

    def __init__(self, step: Step, names: Mapping[str, str], show_attrs: bool, show_saved: bool,
                 max_attr_chars: int) -> None:
        self.step = step
        self.names = names
        self.show_attrs = show_attrs
        self.show_saved = show_saved
        self.max_attr_chars = max_attr_chars
        self.drawn: set[str] = set()
        self.outputs: set[str] = set()
        self.dot = GradGraph(
            node_attr={"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
                       "height": "0.2", "fontname": FONT},
            graph_attr={"size": "12,12"},
        )

    # tensors -------------------------------------------------------------
    def tensor(self, tid: str, colour: str, label_name: str | None = None) -> None:
        if tid in self.drawn:
            return
        self.drawn.add(tid)
        info = self.step.tensors.get(tid)
        name = self.names.get(tid, "") if label_name is None else label_name
        shape = _shape(info.shape) if info is not None else "(?)"
        self.dot.node(tid, _label(name, shape), fillcolor=colour)

    def output(self, tid: str) -> None:
        """An output tensor, its graph, and (for a view) its base, as torchviz draws them."""
        todo = [(tid, _COLOURS["output"])]
        while todo:
            t, colour = todo.pop()
            if t in self.drawn:
                continue
            self.tensor(t, colour)
            info = self.step.tensors.get(t)
            if info is None:
                continue
            if info.grad_fn is not None and info.grad_fn in self.step.nodes:
                self.graph(info.grad_fn)
                self.dot.edge(info.grad_fn, t)
            if info.base is not None:
                todo.append((info.base, _COLOURS["base"]))
                self.dot.edge(info.base, t, style="dotted")

    # nodes ---------------------------------------------------------------
    def graph(self, root: str) -> None:
        nodes = self.step.nodes
        stack = [root]
        while stack:
            nid = stack.pop()
            if nid in self.drawn or nid not in nodes:
                continue
            self.drawn.add(nid)
            info = nodes[nid]
            self.saved(info)
            if info.variable is not None:
                self.tensor(info.variable, _COLOURS["leaf"])
                self.dot.edge(info.variable, nid)
            self.dot.node(nid, self.node_label(info))
            for edge in info.inputs:
                if edge is not None:
                    self.dot.edge(edge.node, nid)
                    stack.append(edge.node)

    def node_label(self, info: NodeInfo) -> graphviz.quoting.NoHtml:
        if not self.show_attrs:
            return _label(info.name)
        rows: dict[str, str] = dict(info.attrs)
        for s in info.saved:
            base = s.name.split("[", 1)[0]
            if base == "saved_tensors":
                continue
            if s.saved_version is None and s.state != FREED:
                rows[base] = "None"
                continue
            text = "[freed]" if s.state == FREED else "[saved tensor]"
            rows[base] = text if base == s.name else text.replace("tensor]", "tensors]")
        if not rows:
            return _label(info.name)
        rows = {k: rows[k] for k in sorted(rows)}
        width = max(len(k) for k in rows)
        lines = [f"{k.ljust(width)}: {_truncate(v, self.max_attr_chars)}" for k, v in rows.items()]
        rule = "-" * max(len(info.name), *(len(line) for line in lines))
        return _label(info.name, rule, *lines)

    def saved(self, info: NodeInfo) -> None:
        """Saved tensors: always for custom functions (as torchviz), the others with ``show_saved``."""
        for k, s in enumerate(info.saved):
            custom = s.name.startswith("saved_tensors[")
            if not (custom or self.show_saved) or (s.saved_version is None and s.state != FREED):
                continue
            key = self.saved_key(info, s, k)
            if custom:
                self.saved_box(key, s, "")
                self.dot.edge(key, info.id, dir="none")
            else:
                self.dot.edge(info.id, key, dir="none")
                self.saved_box(key, s, s.name)

    def saved_key(self, info: NodeInfo, s: SavedValue, k: int) -> str:
        """A saved tensor that is a tensor drawn elsewhere (a leaf, an output) shares its box.

        A saved *result* (``exp``, ``tanh``...) is a new tensor object sharing the
        output's memory, so it gets its own box, as in torchviz.
        """
        if s.tensor is not None and s.tensor != info.output and s.state != FREED:
            return s.tensor
        return f"{info.id}_s{k}"

    def saved_box(self, key: str, s: SavedValue, name: str) -> None:
        if key in self.drawn:
            return
        if s.state == FREED:
            self.drawn.add(key)
            self.dot.node(key, _label(name, "freed"), **_FREED_STYLE)
            return
        info: TensorInfo | None = self.step.tensors.get(key)
        if info is not None:
            if key in self.outputs:
                self.tensor(key, _COLOURS["output"])
            elif info.is_leaf and info.requires_grad:
                self.tensor(key, _COLOURS["leaf"])
            else:
                self.tensor(key, _COLOURS["saved"], name or self.names.get(key, ""))
            return
        self.drawn.add(key)
        shape = _values_shape(None if s.value is None else s.value.values)
        shape_text = _shape(shape) if shape is not None else (s.value.text if s.value is not None else "?")
        self.dot.node(key, _label(name, shape_text), fillcolor=_COLOURS["saved"])


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
    """
    from .tracer import snapshot

    named = _param_map(params)
    step = snapshot(var, named)
    outputs = [t for n, t in step.bindings.items() if n == "output" or n.startswith("output[")]
    names = {tid: n for n, tid in step.bindings.items() if n in named}
    drawer = _Drawer(step, names, show_attrs, show_saved, max_attr_chars)
    drawer.outputs.update(outputs)
    for tid in outputs:
        drawer.output(tid)
    size = max(12.0, len(drawer.dot.body) * 0.15)
    drawer.dot.graph_attr.update(size=f"{size},{size}")
    return drawer.dot


def show(var: Any, params: Mapping[str, Any] | None = None) -> Any:
    """The picture of the graph behind ``var`` for a notebook cell (SVG, with a text twin).

    Returns a :class:`gradtrace.render.graph.Graph`: ``.source`` (DOT), ``.svg()``,
    ``.text`` and ``.save(path)``.
    """
    from .render.graph import step_graph
    from .tracer import snapshot

    return step_graph(snapshot(var, _param_map(params)))

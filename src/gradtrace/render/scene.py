"""What a picture of one step contains, before it becomes DOT: boxes, rows, edges.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

A :class:`Scene` is plain data built from one :class:`~gradtrace.model.Step`:
one :class:`Box` per Python name, tensor object and backward node, each with its
text rows and the marks the step put on it (``created``, ``mutated``, ...), and
the edges between them. ``dot.py`` turns a scene into DOT; ``layout.py`` builds
one scene per step and lays out their union once. All learner text in a box is
already passed through :func:`~gradtrace.render.words.clean` and fitted to
``limit`` characters between words; escaping for DOT happens in ``dot.py``.

A tensor box is headed by the names that refer to it, then its id
(``x · t2 leaf v0``); a node box by its id and op (``n1 PowBackward0``, the way
the reverse pass names it). Each mark the step put on a box is also written as
a glyph before its head (:data:`GLYPH`) or drawn with its own pen (a new
object's thick border, a rebound name's thick arrow), so no mark relies on colour alone.
Node attributes (``exponent=2``, ``mat2_sym_sizes=...``) are internal and left
out unless ``show_attrs`` asks for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..explain.errors import culprits
from ..model import ALIVE, FREED, Backward, Bind, Create, Error, Grad, Mutate, NodeInfo, Rebind, SavedValue, Step
from .words import clean, fit, op_name, shape_text, summary_text

__all__ = ["Row", "Box", "Link", "Scene", "BoxMemo", "scene", "roots", "GLYPH", "head_text"]

#: Longest text in one row of a box (longer text is cut between words and ends with ``…``).
LIMIT = 40

#: The glyph written before a box's head for each mark the step put on it (strongest first).
#: ``created`` (a thick border) and ``moved`` (a thick arrow from the name) are told by their pen.
GLYPH = {
    "culprit": "✗",
    "stale": "⚠",
    "mutated": "✎",
    "grad": "∇",
    "freed": "∅",
}


def head_text(marks: tuple[str, ...] | list[str], text: str) -> str:
    """``text`` after the glyphs of ``marks`` (``✎ x · t2 leaf v1``)."""
    glyphs = "".join(g for m, g in GLYPH.items() if m in marks)
    return f"{glyphs} {text}" if glyphs else text


@dataclass(frozen=True)
class Row:
    """One line of a box; ``cls`` is ``head``, ``freed``, ``stale``, ``grad`` or empty."""

    text: str
    cls: str = ""


@dataclass(frozen=True)
class Box:
    """A drawn object. ``key`` is the dot node name (``t1``, ``n1``, ``name1``)."""

    key: str
    group: str  # "name", "tensor", "node", "acc"
    kind: str  # leaf/nonleaf/retained/const/root for tensors, op/acc/name otherwise
    rows: tuple[Row, ...]
    marks: tuple[str, ...] = ()
    label: str = ""  # what the box stands for: model id or the Python name


@dataclass(frozen=True)
class Link:
    """An edge ``tail -> head`` as the arrow is meant (``kind`` says which)."""

    tail: str
    head: str
    kind: str  # "name", "grad_fn", "next", "variable", "saved"
    marks: tuple[str, ...] = ()

    @cached_property
    def key(self) -> str:
        return f"{self.kind}-{self.tail}-{self.head}"


@dataclass(frozen=True)
class Scene:
    boxes: tuple[Box, ...]
    links: tuple[Link, ...]
    names: dict[str, str] = field(default_factory=dict)  # name -> box key


def roots(step: Step) -> set[str]:
    """Tensors whose ``grad_fn`` no other node of the step leads to: the outputs."""
    fed = {e.node for n in step.nodes.values() for e in n.inputs if e is not None}
    return {t.id for t in step.tensors.values() if t.grad_fn is not None and t.grad_fn not in fed}


def _marks(step: Step) -> dict[str, list[str]]:
    """What this step did to each object, from its events: created, mutated, stale, freed, grad, moved."""
    marks: dict[str, list[str]] = {}

    def add(key: str, mark: str) -> None:
        marks.setdefault(key, [])
        if mark not in marks[key]:
            marks[key].append(mark)

    for e in step.events:
        if isinstance(e, Create):
            for k in e.tensors + e.nodes:
                add(k, "created")
        elif isinstance(e, Mutate):
            add(e.tensor, "mutated")
            for node, _ in e.stale:
                add(node, "stale")
        elif isinstance(e, Backward):
            for g in e.grads:
                add(g.tensor, "grad")
            for node, _ in e.freed:
                add(node, "freed")
        elif isinstance(e, Grad):
            add(e.change.tensor, "grad")
        elif isinstance(e, (Bind, Rebind)):
            add("name:" + e.name, "moved")
        elif isinstance(e, Error):
            for key in culprits(step, e):
                add(key, "culprit")
    return marks


def _fitted(prefix: str, middle: str, suffix: str, limit: int) -> str:
    """``prefix + middle + suffix`` in ``limit`` characters: only ``middle`` (a value) is shortened."""
    room = max(limit - len(prefix) - len(suffix), 4)
    return prefix + fit(middle, room) + suffix


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def slot_text(name: str, limit: int) -> str:
    """A saved slot's name in ``limit`` characters. The slot of an inner node (``MulBackward0.other``, what
    a ``CopySlices`` node's inner node saved) keeps its slot whole: the node's name is shortened first,
    to its op (``Mul.other``), then cut (``Sigmoi….result``)."""
    if len(name) <= limit or "." not in name:
        return fit(name, limit)
    inner, slot = name.rsplit(".", 1)
    inner = _BACKWARD_SUFFIX.sub("", inner) or inner
    room = limit - len(slot) - 1
    if room < 2:
        return fit(name, limit)
    return f"{fit(inner, room)}.{slot}"


def saved_row(s: SavedValue, limit: int = LIMIT) -> Row:
    """``self = t1 42.`` with its state: ``∅ self = t1 (freed)`` greyed (the value is gone),
    ``⚠ self = t1 42. STALE v0→v1`` red.

    The state words are never cut: when the row is too long, the value is shortened.
    """
    target = f"{s.tensor} " if s.tensor else ""
    name = f"{slot_text(s.name, 16)} = {target}"
    value = summary_text(s.value, 16)
    if s.state == ALIVE:
        return Row(_fitted(name, value, "", limit))
    if s.state == FREED:
        return Row(fit(f"{GLYPH['freed']} {name}(freed)", limit), "freed")
    return Row(_fitted(f"{GLYPH['stale']} {name}", value, f" STALE v{s.saved_version}→v{s.version}", limit), "stale")


def node_rows(
    node: NodeInfo, show_attrs: bool = False, show_saved: bool = True, limit: int = LIMIT, marks: tuple[str, ...] = ()
) -> list[Row]:
    rows = [Row(fit(head_text(marks, f"{node.id} {op_name(node.name)}"), limit), "head")]
    if show_attrs:
        rows += [Row(fit(f"{fit(k, 16)}={clean(v)}", limit)) for k, v in node.attrs]
    if show_saved:
        rows += [saved_row(s, limit) for s in node.saved]
    return rows


def tensor_rows(step: Step, tid: str, kind: str, title: str = "", limit: int = LIMIT,
                marks: tuple[str, ...] = ()) -> list[Row]:
    """A tensor's rows; ``title`` (the names that refer to it) comes first, the id second."""
    t = step.tensors[tid]
    tail = f"{tid} {kind} v{t.version}"
    if title:  # long names are shortened, never the id, kind or version after them
        glyphs = head_text(marks, "")
        head = _fitted(glyphs, title, f" · {tail}", limit)
    else:
        head = fit(head_text(marks, tail), limit)
    grad_cls = "grad" if t.grad is not None else ""
    return [
        Row(head, "head"),
        Row("data " + fit(summary_text(t.value), limit - 5)),
        Row("grad " + fit(summary_text(t.grad), limit - 5), grad_cls),
        Row(fit(f"{t.dtype} {shape_text(t.shape)}" if t.layout == "strided" else
                f"{t.dtype} {t.layout} {shape_text(t.shape)}", limit)),
        *([Row(fit(f"view of {t.base}", limit), "view")] if t.base is not None else []),
    ]


def _tensor_box(step: Step, tid: str, out: set[str], marks: list[str], panel: bool, limit: int,
                names: list[str]) -> Box:
    t = step.tensors[tid]
    kind = "root" if tid in out else t.kind
    title = fit(", ".join(clean(n) for n in names), 20) if names else ""
    extra = ["unnamed"] if panel and not names else []  # only the graph holds it
    rows = tensor_rows(step, tid, t.kind, title, limit, tuple(marks))
    return Box(tid, "tensor", kind, tuple(rows), tuple(marks + extra), tid)


def _node_box(node: NodeInfo, marks: list[str], attrs: bool, saved: bool, limit: int) -> Box:
    group = "acc" if node.is_accumulate else "node"
    rows = tuple(node_rows(node, attrs, saved, limit, tuple(marks)))
    return Box(node.id, group, "acc" if node.is_accumulate else "op", rows, tuple(marks), node.id)


class BoxMemo:
    """Boxes and arrows already made, for scenes of many steps of one trace (a film).

    A box is a function of the record it shows (a :class:`~gradtrace.model.TensorInfo`
    or :class:`~gradtrace.model.NodeInfo`, immutable) and of the step's marks and names
    for it. A trace shares one record between the steps in which the object did not
    change, so with a memo each distinct (record, marks, names) is drawn once and later
    steps get the very same :class:`Box` object back. ``built`` counts the boxes made.
    Records are held by the memo, so the ``id()`` in a key is never reused while it lives.
    """

    def __init__(self) -> None:
        self._boxes: dict[tuple[Any, ...], tuple[object, Box]] = {}
        self._links: dict[tuple[str, str, str, tuple[str, ...]], Link] = {}
        self.built = 0

    def tensor(self, step: Step, tid: str, out: set[str], marks: list[str], panel: bool, limit: int,
               names: list[str]) -> Box:
        t = step.tensors[tid]
        key = ("t", id(t), tid, tid in out, tuple(names), tuple(marks), panel, limit)
        hit = self._boxes.get(key)
        if hit is None:
            self.built += 1
            hit = self._boxes[key] = (t, _tensor_box(step, tid, out, marks, panel, limit, names))
        return hit[1]

    def node(self, node: NodeInfo, marks: list[str], attrs: bool, saved: bool, limit: int) -> Box:
        key = ("n", id(node), tuple(marks), attrs, saved, limit)
        hit = self._boxes.get(key)
        if hit is None:
            self.built += 1
            hit = self._boxes[key] = (node, _node_box(node, marks, attrs, saved, limit))
        return hit[1]

    def name(self, key: str, name: str, marks: tuple[str, ...], limit: int) -> Box:
        memo_key = ("name", key, name, marks, limit)
        hit = self._boxes.get(memo_key)
        if hit is None:
            self.built += 1
            hit = self._boxes[memo_key] = (None, _name_box(key, name, marks, limit))
        return hit[1]

    def link(self, tail: str, head: str, kind: str, marks: tuple[str, ...] = ()) -> Link:
        key = (tail, head, kind, marks)
        link = self._links.get(key)
        if link is None:
            link = self._links[key] = Link(tail, head, kind, marks)
        return link


def _name_box(key: str, name: str, marks: tuple[str, ...], limit: int) -> Box:
    return Box(key, "name", "name", (Row(fit(head_text(marks, clean(name)), limit)),), marks, name)


def _links(step: Step, marks: dict[str, list[str]], saved: bool, make: Any = Link) -> list[Link]:
    links = []
    for t in step.tensors.values():
        if t.grad_fn is not None and t.grad_fn in step.nodes:
            links.append(make(t.id, t.grad_fn, "grad_fn", tuple(m for m in marks.get(t.id, []) if m == "mutated")))
    for n in step.nodes.values():
        for e in n.inputs:
            if e is not None and e.node in step.nodes:
                links.append(make(n.id, e.node, "next"))
        if n.variable is not None and n.variable in step.tensors:
            links.append(make(n.id, n.variable, "variable"))
        if saved:
            for s in n.saved:
                if s.tensor is not None and s.tensor in step.tensors:
                    links.append(make(n.id, s.tensor, "saved", (s.state,) if s.state != ALIVE else ()))
    return _unique(links)


def _unique(links: list[Link]) -> list[Link]:
    seen: dict[str, Link] = {}
    for link in links:
        if link.key not in seen:
            seen[link.key] = link
        elif link.marks:  # a stale/freed mark wins over a plain one
            seen[link.key] = Link(
                link.tail, link.head, link.kind, tuple(dict.fromkeys(seen[link.key].marks + link.marks))
            )
    return list(seen.values())


def scene(
    step: Step,
    *,
    names: bool = True,
    show_attrs: bool = False,
    show_saved: bool = True,
    name_keys: dict[str, str] | None = None,
    limit: int = LIMIT,
    memo: BoxMemo | None = None,
) -> Scene:
    """The boxes and arrows of ``step``.

    With ``names`` the Python names get their own boxes (a names panel) with
    arrows to the tensors they name; without, a tensor's names are written in
    its box (a tensor's box is headed by its names in both cases). Node
    attributes are drawn only with ``show_attrs``. ``name_keys`` fixes the box key of each name (the film keeps keys
    stable across steps); by default names are ``name1, name2, ...`` in order.
    ``memo`` (a :class:`BoxMemo` shared by the scenes of one trace) reuses boxes
    already drawn for the same records; the scene is the same with or without it.
    """
    marks = _marks(step)
    out = roots(step)
    boxes: list[Box] = []
    links: list[Link] = []
    keys: dict[str, str] = {}
    names_of: dict[str, list[str]] = {}
    for name, tid in step.bindings.items():
        names_of.setdefault(tid, []).append(name)
    make_link: Any = Link if memo is None else memo.link
    if names:
        for i, (name, tid) in enumerate(step.bindings.items(), start=1):
            key = name_keys[name] if name_keys is not None else f"name{i}"
            keys[name] = key
            name_marks = tuple(marks.get("name:" + name, []))
            if memo is None:
                boxes.append(_name_box(key, name, name_marks, limit))
            else:
                boxes.append(memo.name(key, name, name_marks, limit))
            if tid in step.tensors:
                links.append(make_link(key, tid, "name", name_marks))
    for tid in step.tensors:
        tmarks, tnames = marks.get(tid, []), names_of.get(tid, [])
        if memo is None:
            boxes.append(_tensor_box(step, tid, out, tmarks, names, limit, tnames))
        else:
            boxes.append(memo.tensor(step, tid, out, tmarks, names, limit, tnames))
    for node in step.nodes.values():
        nmarks = marks.get(node.id, [])
        if memo is None:
            boxes.append(_node_box(node, nmarks, show_attrs, show_saved, limit))
        else:
            boxes.append(memo.node(node, nmarks, show_attrs, show_saved, limit))
    links += _links(step, marks, show_saved, make_link)
    return Scene(tuple(boxes), tuple(links), keys)

"""A whole trace as a "film": one laid-out SVG plus, per step, what to show in it.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

Every name, tensor object, backward node and arrow that appears at any step is
laid out **once**, in one SVG, so an object keeps its place for the whole trace
(as in Python Tutor) and a 600-step trace costs one layout. Each step is shown by
revealing, highlighting and fading elements and swapping the text of their rows.
Each box's rows are laid out with the longest text that row ever shows.

Format (plain JSON-able data; ``schema`` ``"gradtrace.film"``, ``version`` 2)::

    {
      "schema": "gradtrace.film", "version": 2,
      "title": str,                 # never a temporary file's path ("your code" for a cell)
      "filename": str, "source": str,
      "svg": str,                   # one <svg>; every element group has an id:
                                    #   "gt-t1" tensor, "gt-n1" node, "gt-name1" name,
                                    #   "gt-e-<kind>-<tail>-<head>" arrow, "gt-names" names panel
      "sheets": [str, ...],         # the <svg> of each layout (a long loop is laid out by place)
      "elements": {dom id: {"group": "tensor"|"node"|"acc"|"name"|"edge", "label": str}},
      "rows": [[[text, row class], ...], ...],   # distinct box contents, stored once
      "frames": [                   # distinct pictures, stored once
        {"visible": [dom id, ...],  # everything else is hidden
         "classes": {dom id: "gt-box gt-tensor gt-k-leaf gt-m-created"},
         "texts": {dom id: index into "rows"}}
      ],
      "details": [{...}, ...],      # distinct object details, stored once (node attributes live here)
      "views": [                    # a folded film's pictures with one folded box opened, stored once
        {"sheet": int,              #   in "sheets" (after the steps' own sheets)
         "frame": int,              #   in "frames"
         "label": str,              #   what was unfolded: "model.layer1.0 (6 nodes, 73,984 params)"
         "details": {dom id: index into "details"},
         "unfold": {dom id: index into "views"}}   # only when groups folded inside it open deeper
      ],
      "steps": [
        {"index": int, "lineno": int, "code": str, "sheet": int, "frame": index into "frames",
         "events": [sentence, ...],       # what the step did (an error is not repeated here)
         "prediction": sentence or null,  # the one backward() failure to expect, only when the
                                          #   next backward() goes through a stale saved value
         "predictions": [sentence],       # the same, as a list of at most one (version 1 readers)
         "explanation": str or null,      # the error of this step in plain words (what happened,
                                          #   why, where it was changed, how to fix it, and last
                                          #   PyTorch's own message), or null
         "culprits": [dom id, ...],       # the objects that explanation names (drawn gt-m-culprit)
         "reverse": [line, ...],          # a backward() step's reverse pass in numbers
         "flow": [                        # the same reverse pass node by node, in engine order
           {"node": dom id,               #   the node the engine ran ("gt-n3")
            "text": str,                  #   its lines of "reverse", e.g.
                                          #   "n3 PowBackward0: gets 1\nsends to n2: 1 · (3 · 42²) = 5292"
            "edges": {edge dom id: str},  #   the gradient sent along each arrow ("5292")
            "grads": {tensor dom id: str}}  # the .grad it filled in ("5376")
         ],
         "details": {dom id: index into "details"},
         "unfold": {dom id: index into "views"}}  # the folded boxes (gt-m-folded) that open at this step
      ],
      "backward": [{"step": i, "before": j,       # positions in "steps": a backward() and the step before it
                    "diff": {"freed": [dom id, ...],        # nodes (and saved-value arrows) it freed
                             "grad": {dom id: "old → new"},  # each .grad it changed
                             "kept": [dom id, ...]}}],      # non-leaf tensors whose .grad retain_grad() kept
      "legend": [{"class": "gt-k-leaf", "label": "leaf tensor", "fill": "#cfe2ff"}, ...],
      "marks": [{"class": "gt-m-stale", "label": ..., "color": light, "dark": dark, "glyph": "⚠" or "",
                 "pen": "solid"|"dashed"|"dotted"}, ...],   # "created" has no glyph: a thick border
      "lines": [{"class": "gt-e-saved gt-m-freed", "label": ..., "color": ..., "dark": ...,
                 "pen": "solid"|"dashed"|"dotted"|"bold", "end": "normal"|"odot"|"tee", "sample": "╌╌○"}, ...],
      "error": sentence or null, "error_step": position in "steps" of the step that raised, or null,
      "steps_unrecorded": int
    }

A folded film draws modules and repeated runs as single boxes; each of them
opens at a step where ``unfold`` maps it to a view: that step's picture with
the box unfolded (the rest folded as before, at most :data:`FILM_MAX_NODES`
boxes), laid out ahead of time so the page steps with no kernel. A view opens
the groups folded inside its unfolded one the same way (its own ``unfold``),
at most :data:`MAX_DEPTH` levels deep. Views whose sheets would make the page
more than about 1.5 times its folded size are left out (see :data:`VIEW_BYTES`);
:func:`unfolded_view` lays one out on demand (a widget asks its kernel).

Version 2 added ``prediction``, ``explanation``, ``culprits``, ``flow``,
``backward[].diff``, ``lines``, ``error_step`` and the marks' ``dark``, ``glyph``
and ``pen``; an error is no longer one of its step's ``events`` (it is
``error``, shown once, with ``explanation`` under it); ``predictions`` holds at
most the one relevant prediction.

Row classes are ``head``, ``freed``, ``stale``, ``grad`` or empty; box classes are
``gt-box``, ``gt-<group>``, ``gt-k-<kind>`` and one ``gt-m-<mark>`` per mark
(``culprit``, ``created``, ``mutated``, ``stale``, ``freed``, ``grad``, ``moved``,
``unnamed``); each mark's glyph is also written before the box's head row.
A detail is ``{"type": "tensor"|"node"|"name", "id", "title", "fields": [[label, text], ...]}``
with every learner-provided string as plain text (the front end shows it with
``textContent``, never as markup).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .._gc import paused_gc
from ..model import FREED, Backward, Error, NodeInfo, Prediction, Step, TensorInfo, Trace
from .backward import diff, flow
from .dot import FILL, LEGEND, LINES, MARKS, box_classes, box_dot, quote, scene_dot
from .fold import Block, Folded, block_box, block_links, fold, note_box, unfold
from .scene import Box, BoxMemo, Link, Row, Scene, scene
from .svg import dot_to_svg, svg_inline
from .text import reverse_pass, saved_state_text
from .words import FORBIDDEN, clean, event_words, op_name, prediction_words, shape_text, shown_filename, summary_text

__all__ = ["Film", "film", "film_scenes", "film_dot", "unfolded_view", "SCHEMA"]

SCHEMA = "gradtrace.film"
VERSION = 2


class Film(dict[str, Any]):
    """A film (a plain ``dict``, see above) that shows itself in notebooks as a stepper.

    ``_repr_mimebundle_`` always carries ``text/plain``; ``text/html`` is the
    standalone stepper page in a sandboxed ``<iframe srcdoc>`` (scripts run inside
    it only, with no access to the notebook page).
    """

    def __repr__(self) -> str:
        return f"<gradtrace film of {self.get('title', '')!s}: {len(self.get('steps', []))} steps>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        import html

        from .html import film_html

        page = html.escape(film_html(self), quote=True)
        frame = (
            f'<iframe sandbox="allow-scripts" srcdoc="{page}" title="gradtrace stepper" '
            'style="width:100%;height:640px;border:0"></iframe>'
        )
        return {"text/plain": repr(self), "text/html": frame}


class _Table:
    """Rows stored once. ``key`` is a hashable twin of the row: equal keys exactly when the rows are equal."""

    def __init__(self) -> None:
        self.rows: list[Any] = []
        self._index: dict[Hashable, int] = {}

    def ref(self, row: Any, key: Hashable) -> int:
        at = self._index.get(key)
        if at is None:
            at = self._index[key] = len(self.rows)
            self.rows.append(row)
        return at


class _Memo:
    """What one film has already made, so that each distinct box, frame and detail is made once.

    Steps share the records of objects they did not change, so the scenes of a long loop
    hand back the same :class:`Box` objects again and again (see :class:`BoxMemo`); their
    classes, rows and renamed copies are worked out once per box. Every cache holds the
    objects whose ``id()`` is in its keys, so no id is reused while the film is made.
    """

    def __init__(self) -> None:
        self.boxes = BoxMemo()
        self.rows, self.frames, self.details = _Table(), _Table(), _Table()
        self._drawn: dict[int, tuple[Box, str, int]] = {}
        self._renamed: dict[tuple[int, str], tuple[Box, Box]] = {}
        self._detail: dict[tuple[Hashable, ...], tuple[object, int]] = {}
        self._edges: dict[int, tuple[Link, str]] = {}
        self.dot_bytes = self.svg_bytes = 0

    def drawn(self, box: Box) -> tuple[str, int]:
        """The box's classes and its rows' index in ``rows``."""
        hit = self._drawn.get(id(box))
        if hit is None:
            rows = [[r.text, r.cls] for r in box.rows]
            ref = self.rows.ref(rows, tuple((r.text, r.cls) for r in box.rows))
            hit = self._drawn[id(box)] = (box, box_classes(box), ref)
        return hit[1], hit[2]

    def layout(self, dot: str) -> str:
        """The SVG of ``dot`` for a sheet (counting the bytes in and out)."""
        return self.layouts([dot])[0]

    def layouts(self, dots: list[str]) -> list[str]:
        """The SVGs of ``dots``, in order; several layouts run side by side, one ``dot`` process per core."""
        workers = min(LAYOUT_WORKERS, os.cpu_count() or 1, len(dots))
        if workers <= 1:
            svgs = [svg_inline(dot_to_svg(d)) for d in dots]
        else:
            with ThreadPoolExecutor(workers) as pool:
                svgs = list(pool.map(lambda d: svg_inline(dot_to_svg(d)), dots))
        self.dot_bytes += sum(len(d) for d in dots)
        self.svg_bytes += sum(len(x) for x in svgs)
        return svgs

    def edge_classes(self, link: Link) -> str:
        hit = self._edges.get(id(link))
        if hit is None:
            classes = " ".join([f"gt-edge gt-e-{link.kind}"] + [f"gt-m-{m}" for m in link.marks])
            hit = self._edges[id(link)] = (link, classes)
        return hit[1]

    def renamed(self, box: Box, key: str) -> Box:
        hit = self._renamed.get((id(box), key))
        if hit is None:
            new = box if box.key == key else Box(key, box.group, box.kind, box.rows, box.marks, box.label)
            hit = self._renamed[(id(box), key)] = (box, new)
        return hit[1]

    def detail(self, key: tuple[Hashable, ...], record: object, make: Callable[..., dict[str, Any]],
               *args: Any) -> int:
        """The index in ``details`` of the detail ``make(*args)`` builds; ``key`` says everything it depends on."""
        hit = self._detail.get(key)
        if hit is None:
            d = make(*args)
            ref = self.details.ref(d, (d["type"], d["id"], d["title"], tuple(tuple(f) for f in d["fields"])))
            hit = self._detail[key] = (record, ref)
        return hit[1]


def _name_keys(trace: Trace) -> dict[str, str]:
    keys: dict[str, str] = {}
    for step in trace.steps:
        for name in step.bindings:
            keys.setdefault(name, f"name{len(keys) + 1}")
    return keys


def film_scenes(trace: Trace, show_attrs: bool = False, memo: BoxMemo | None = None) -> list[Scene]:
    """One scene per step, with name boxes keyed the same way in every step.

    When any step holds more than :data:`FILM_MAX_NODES` objects, every step
    is drawn folded (loop runs as counted blocks, modules collapsed as
    needed), so each layout stays small and a block keeps its place while its
    count grows from step to step.
    """
    return _scenes(trace, show_attrs, BoxMemo() if memo is None else memo)[0]


def _scenes(trace: Trace, show_attrs: bool, memo: BoxMemo) -> tuple[list[Scene], list[Folded] | None]:
    """The scenes of :func:`film_scenes` and, for a folded film, each step's fold plan."""
    keys = _name_keys(trace)
    if not _is_big(trace):
        return [scene(step, name_keys=keys, show_attrs=show_attrs, memo=memo) for step in trace.steps], None
    plans = [fold(step, max_nodes=FILM_MAX_NODES) for step in trace.steps]
    pairs = zip(trace.steps, plans, strict=True)
    return [_folded_scene(step, plan, keys, show_attrs, memo) for step, plan in pairs], plans


#: Layouts of a film's sheets that run at once (one ``dot`` process each, at most one per core).
LAYOUT_WORKERS = 4

#: A film is drawn folded once a step holds more objects than this (a stepper panel is small).
FILM_MAX_NODES = 80


def _is_big(trace: Trace) -> bool:
    return any(len(s.tensors) + len(s.nodes) > FILM_MAX_NODES for s in trace.steps)


#: The last row of a folded picture's note: how to open a block.
UNFOLD_HINT = "Click a folded box (or Tab to it, Enter) to unfold it; Esc folds it again."


def _folded_scene(step: Step, plan: Folded, keys: dict[str, str], show_attrs: bool, memo: BoxMemo,
                  hint: bool = True) -> Scene:
    sc = scene(plan.step, name_keys=keys, show_attrs=show_attrs, memo=memo)
    extra = [block_box(b) for b in plan.blocks]
    note = note_box(plan)
    if note is not None:
        if hint and plan.blocks:
            note = Box(note.key, note.group, note.kind, (*note.rows, Row(UNFOLD_HINT)), note.marks, note.label)
        extra.append(note)
    return Scene(sc.boxes + tuple(extra), sc.links + tuple(block_links(step, plan)), sc.names)


def _widest(boxes: list[Box], last: Box) -> Box:
    """The box laid out for the film: each row holds the longest text it ever shows.

    ``boxes`` are the distinct boxes in order of first appearance, ``last`` the last one shown.
    """
    width = max(len(b.rows) for b in boxes)
    rows = []
    for i in range(width):
        texts = [b.rows[i] for b in boxes if i < len(b.rows)]
        rows.append(max(texts, key=lambda r: len(r.text)))
    return Box(last.key, last.group, last.kind, tuple(Row(r.text or "-", r.cls) for r in rows), (), last.label)


def union(scenes: list[Scene]) -> Scene:
    """Every box and arrow of every scene, in order of first appearance."""
    boxes: dict[str, dict[int, Box]] = {}  # the distinct boxes (a memo hands back the same object) by key
    last: dict[str, Box] = {}
    links: dict[str, Link] = {}
    for sc in scenes:
        for box in sc.boxes:
            boxes.setdefault(box.key, {}).setdefault(id(box), box)
            last[box.key] = box
        for link in sc.links:
            if link.key not in links:
                links[link.key] = Link(link.tail, link.head, link.kind)
    first = {k: next(iter(v.values())) for k, v in boxes.items()}
    names = [k for k, b in first.items() if b.group == "name"]
    others = [k for k, b in first.items() if b.group != "name"]
    return Scene(tuple(_widest(list(boxes[k].values()), last[k]) for k in names + others), tuple(links.values()))


def film_dot(trace: Trace, show_attrs: bool = False) -> str:
    """The DOT source of the film's one layout."""
    return scene_dot(union(film_scenes(trace, show_attrs)), bg="transparent")


def _tensor_detail(step: Step, t: TensorInfo, names: list[str]) -> dict[str, Any]:
    fields = [
        ["names", ", ".join(clean(n) for n in names) if names else "(no name: only the graph holds it)"],
        ["kind", t.kind],
        ["value", summary_text(t.value)],
        ["grad", summary_text(t.grad)],
        ["shape", shape_text(t.shape)],
        ["dtype", clean(t.dtype)],
        *([] if t.layout == "strided" else [["layout", clean(t.layout)]]),
        ["device", clean(t.device)],
        ["version", str(t.version)],
        ["grad_fn", FORBIDDEN if t.forbidden else "None" if t.grad_fn is None else _node_name(step, t.grad_fn)],
        ["requires_grad", str(t.requires_grad)],
    ]
    if t.value.stats is not None:
        fields.append(["min / mean / max", " / ".join(f"{v:g}" for v in t.value.stats)])
    if t.base is not None:
        fields.append(["view of", t.base])
    if t.is_param:
        fields.append(["parameter", "yes"])
    return {"type": "tensor", "id": t.id, "title": f"tensor {t.id}", "fields": fields}


def _node_name(step: Step, node_id: str) -> str:
    node = step.nodes.get(node_id)
    return node_id if node is None else f"{node_id} ({op_name(node.name)})"


def _node_detail(step: Step, n: NodeInfo) -> dict[str, Any]:
    inputs = ", ".join("None" if e is None else _node_name(step, e.node) for e in n.inputs) or "(none)"
    fields = [["op", op_name(n.name)], ["next_functions", inputs]]
    fields += [[f"attr {clean(k)}", clean(v)] for k, v in n.attrs]
    if n.variable is not None:
        fields.append(["writes .grad of", n.variable])
    for s in n.saved:
        target = f"{s.tensor} " if s.tensor else ""
        state = "freed by backward()" if s.state == FREED else saved_state_text(s)
        fields.append([f"saved {clean(s.name)}", f"{target}{summary_text(s.value)} ({state})"])
    if n.output is not None:  # (a node of several outputs names its first, which may have left the picture)
        fields.append(["output of forward", n.output if n.output in step.tensors else
                       f"{n.output} (not in this step's picture)"])
    return {"type": "node", "id": n.id, "title": f"backward node {n.id}", "fields": fields}


def _op_of(step: Step, node_id: str | None) -> str | None:
    node = step.nodes.get(node_id) if node_id is not None else None
    return None if node is None else node.name


def _details(step: Step, sc: Scene, memo: _Memo, own: dict[str, str] | None = None) -> dict[str, int]:
    """Details of each drawn box, keyed by its element id (``own`` maps a place key to the object's key).

    A detail is a function of its record and of the few things of the step it names
    (the names of a tensor, the ops of the nodes it links to): those make its memo key.
    """
    out: dict[str, int] = {}
    names_of: dict[str, list[str]] = {}
    for name, tid in step.bindings.items():
        names_of.setdefault(tid, []).append(name)
    for drawn in sc.boxes:
        key = drawn.key if own is None else own.get(drawn.key, drawn.key)
        if drawn.group == "name":
            tid = step.bindings[drawn.label]
            ref = memo.detail(("name", drawn.label, tid, step.frame), None, _name_detail, step, drawn.label, tid)
        elif drawn.group == "tensor" and key in step.tensors:
            t = step.tensors[key]
            names = names_of.get(key, [])
            ref = memo.detail(("tensor", id(t), tuple(names), _op_of(step, t.grad_fn)), t,
                              _tensor_detail, step, t, names)
        elif key in step.nodes:
            n = step.nodes[key]
            ops = tuple(None if e is None else _op_of(step, e.node) for e in n.inputs)
            shown = n.output is None or n.output in step.tensors
            ref = memo.detail(("node", id(n), ops, shown), n, _node_detail, step, n)
        else:  # a folded run, a collapsed module or the note saying what was left out
            ref = memo.detail(("block", id(drawn), key), drawn, _block_detail, drawn, key)
        out["gt-" + drawn.key] = ref
    return out


def _name_detail(step: Step, name: str, tid: str) -> dict[str, Any]:
    return {"type": "name", "id": name, "title": f"name {clean(name)}",
            "fields": [["names", tid], ["frame", clean(step.frame)]]}


def _block_detail(box: Box, key: str) -> dict[str, Any]:
    return {"type": "block", "id": key, "title": clean(box.rows[0].text),
            "fields": [["shows", clean(r.text)] for r in box.rows[1:]]}


def _frame(sc: Scene, memo: _Memo) -> tuple[dict[str, Any], int]:
    """The frame of ``sc`` and its index in ``frames``."""
    visible = ["gt-names"] if any(b.group == "name" for b in sc.boxes) else []
    classes: dict[str, str] = {}
    texts: dict[str, int] = {}
    for box in sc.boxes:
        dom = "gt-" + box.key
        visible.append(dom)
        classes[dom], texts[dom] = memo.drawn(box)
    for link in sc.links:
        dom = "gt-e-" + link.key
        visible.append(dom)
        classes[dom] = memo.edge_classes(link)
    frame = {"visible": visible, "classes": classes, "texts": texts}
    # equal visible lists put the keys of classes and texts in the same order: comparing items is comparing dicts
    return frame, memo.frames.ref(frame, (tuple(visible), tuple(classes.items()), tuple(texts.items())))


def _elements(u: Scene) -> dict[str, dict[str, str]]:
    out = {"gt-" + b.key: {"group": b.group, "label": clean(b.label)} for b in u.boxes}
    out.update({"gt-e-" + k.key: {"group": "edge", "label": f"{k.kind} {k.tail} -> {k.head}"} for k in u.links})
    return out


def _canonical(sc: Scene, memo: _Memo, prefix: str = "c") -> tuple[Scene, dict[str, str]]:
    """``sc`` with its boxes renamed by place (``c1``, ``c2``, ...; names keep their keys).

    A loop makes new objects at every pass, so the same picture comes back
    with new ids; by place it is the same picture, laid out once. Returns the
    renamed scene and the map from place key back to the object's own key.
    """
    rename = {b.key: b.key if b.group == "name" else f"{prefix}{i}" for i, b in enumerate(sc.boxes, 1)}
    boxes = tuple(memo.renamed(b, rename[b.key]) for b in sc.boxes)
    link = memo.boxes.link
    links = tuple(link(rename.get(k.tail, k.tail), rename.get(k.head, k.head), k.kind, k.marks) for k in sc.links)
    return Scene(boxes, links, sc.names), {new: old for old, new in rename.items()}


def _skeleton(sc: Scene) -> tuple[object, ...]:
    return tuple((b.key, b.group, b.kind, len(b.rows)) for b in sc.boxes) + tuple(k.key for k in sc.links)


def _sheets(scenes: list[Scene], memo: _Memo) -> tuple[list[str], dict[str, dict[str, str]], list[int]]:
    """One layout per distinct picture skeleton (folded traces), each shared by all its steps."""
    index: dict[tuple[object, ...], int] = {}
    members: list[list[Scene]] = []
    sheet_of: list[int] = []
    for sc in scenes:
        k = index.setdefault(_skeleton(sc), len(members))
        if k == len(members):
            members.append([])
        members[k].append(sc)
        sheet_of.append(k)
    sheets: list[str] = []
    elements: dict[str, dict[str, str]] = {}
    unions = [union(group) for group in members]
    dots = [scene_dot(u, bg="transparent") for u in unions if u.boxes]
    laid = iter(memo.layouts(dots))
    for u in unions:
        sheets.append(next(laid) if u.boxes else "")
        elements.update(_elements(u))
    return sheets or [""], elements, sheet_of


#: The unfolded views' sheets may add half the bytes of the film's own sheets, and at least this many
#: (so a page stays within about 1.5 times its folded size, and a small film opens every block).
VIEW_BYTES = 1_000_000

#: How many folded groups deep the page's views open (a group inside an unfolded group, and so on).
#: Shallow views are laid out first: deeper ones get what the byte budget leaves.
MAX_DEPTH = 4


@dataclass(frozen=True)
class _Opened:
    """One step's picture with a folded group opened (inside the groups ``labels[:-1]`` opened before it)."""

    step: int  # position of the step in the trace
    dom: str  # the folded box's element id in the picture it opens from
    parent: int | None  # position (among all opened pictures) of the picture it opens from; None: the step's own
    placed: Scene  # renamed by place ("u1", "u2", ...)
    mine: dict[str, str]  # place key -> the object's own key
    labels: tuple[str, ...]  # each opened group's label, outermost first
    frames: tuple[frozenset[str], ...]  # place keys drawn inside each opened group, outermost first
    plan: Folded
    groups: tuple[frozenset[str], ...]  # node ids of each opened group, outermost first


def _group_nodes(step: Step, block: Block) -> frozenset[str]:
    """The nodes an opened group's frame holds: its own, and for a module every op it ran (a residual add too)."""
    members = set(block.nodes)
    if block.kind == "module":
        members |= {n.id for n in step.nodes.values() if not n.is_accumulate and _within(n.module, block.module)}
    return frozenset(members)


def _open(trace: Trace, i: int, plan: Folded, block: Block, dom: str, parent: int | None, outer: _Opened | None,
          keys: dict[str, str], show_attrs: bool, memo: _Memo) -> _Opened | None:
    """The picture of step ``i`` with ``block`` of ``plan`` opened (None when it does not fit the cap)."""
    step = trace.steps[i]
    opened = unfold(step, plan, block.key)
    if opened is None:
        return None
    sc = _folded_scene(step, opened, keys, show_attrs, memo.boxes, hint=False)
    placed, mine = _canonical(sc, memo, "u")
    groups = (*(outer.groups if outer else ()), _group_nodes(step, block))
    drawn_nodes = set(opened.step.nodes)
    frames = []
    for members in groups:
        inside = {b.key for b in opened.blocks if set(b.nodes) <= members} | (members & drawn_nodes)
        frames.append(frozenset(k for k, obj in mine.items() if obj in inside))
    labels = (*(outer.labels if outer else ()), clean(block.label))
    return _Opened(i, dom, parent, placed, mine, labels, tuple(frames), opened, groups)


def _opened_from(trace: Trace, i: int, plan: Folded, drawn: dict[str, str], parent: int | None,
                 outer: _Opened | None, keys: dict[str, str], show_attrs: bool, memo: _Memo) -> list[_Opened]:
    """Every folded group of ``plan`` drawn in its picture (``drawn``: object key -> place key), opened.

    In an opened picture (``outer``), only the groups inside the opened one open here: the others
    are the step's own folded boxes, which open from the step's picture.
    """
    out = []
    for block in plan.blocks:
        if block.key not in drawn or (outer is not None and not set(block.nodes) <= outer.groups[-1]):
            continue
        got = _open(trace, i, plan, block, "gt-" + drawn[block.key], parent, outer, keys, show_attrs, memo)
        if got is not None:
            out.append(got)
    return out


def _views(trace: Trace, plans: list[Folded], back: list[dict[str, str]], show_attrs: bool, memo: _Memo,
           first_sheet: int, view_bytes: int | None = None
           ) -> tuple[list[dict[str, Any]], list[dict[str, int]], list[str], dict[str, dict[str, str]]]:
    """Each step's picture with one block unfolded (:func:`~gradtrace.render.fold.unfold`), laid out ahead of time.

    Returns the distinct views, each step's map from a block's element id to its view,
    the views' sheets (numbered from ``first_sheet``) and their elements. Like the film's
    own pictures, views are laid out by place, one sheet per distinct picture, and no
    sheet holds more than :data:`FILM_MAX_NODES` boxes. The sheets serving the most
    steps (then the latest) are laid out while their SVG fits in :data:`VIEW_BYTES` or half
    the film's own sheets, whichever is more (or in ``view_bytes``, when given); a block whose view
    did not fit has none. Then, while the budget lasts, the groups folded inside each laid-out view open the same
    way (a view's ``unfold``), one level at a time, at most :data:`MAX_DEPTH` deep.
    """
    keys = _name_keys(trace)
    made: list[_Opened] = []
    level: list[_Opened] = []
    for i, (plan, own) in enumerate(zip(plans, back, strict=True)):
        level += _opened_from(trace, i, plan, {obj: key for key, obj in own.items()}, None, None, keys, show_attrs,
                              memo)
    index: dict[tuple[object, ...], int] = {}
    groups: list[list[int]] = []  # positions in ``made`` sharing one picture
    kept: dict[int, int] = {}  # group -> its sheet
    budget = max(VIEW_BYTES, memo.svg_bytes // 2) if view_bytes is None else max(view_bytes, 0)
    per_dot = memo.svg_bytes / max(memo.dot_bytes, 1)  # SVG bytes per DOT byte in this film's own sheets
    guess = 0.0
    used = 0
    more: list[str] = []
    elements: dict[str, dict[str, str]] = {}
    for _depth in range(MAX_DEPTH):
        fresh: list[int] = []  # the groups this level makes
        for o in level:
            k = index.setdefault((_skeleton(o.placed), o.frames, o.labels), len(groups))
            if k == len(groups):
                groups.append([])
                fresh.append(k)
            groups[k].append(len(made))
            made.append(o)
        chosen: list[tuple[int, Scene, str]] = []  # (group, its union, its DOT) by the estimate
        smallest = float(budget)
        for k in sorted(fresh, key=lambda k: (-len(groups[k]), -made[groups[k][-1]].step)):
            u = union([made[at].placed for at in groups[k]])
            dot = _view_dot(u, made[groups[k][0]].frames, made[groups[k][0]].labels)
            smallest = min(smallest, len(dot) * per_dot)
            if guess + len(dot) * per_dot <= budget:
                guess += len(dot) * per_dot
                chosen.append((k, u, dot))
        for (k, u, _), svg in zip(chosen, memo.layouts([dot for _, _, dot in chosen]), strict=True):
            if used + len(svg) > budget:  # the estimate was short: this one is left out
                continue
            more.append(svg)
            used += len(svg)
            elements.update(_elements(u))
            kept[k] = first_sheet + len(kept)
        if budget - guess < smallest or not level:  # a deeper view is as big as these (the same cap): none fits
            break
        level = []
        for k in sorted(fresh):
            if k not in kept:
                continue
            for at in groups[k]:
                o = made[at]
                drawn = {obj: key for key, obj in o.mine.items()}
                level += _opened_from(trace, o.step, o.plan, drawn, at, o, keys, show_attrs, memo)
    return (*_view_list(trace, made, groups, kept, memo), more, elements)


def unfolded_view(trace: Trace, index: int, path: list[str], *, show_attrs: bool = False) -> dict[str, Any]:
    """One view of a folded film, laid out now: step ``index`` with the groups ``path`` opened one inside the other.

    This is what a stepper asks for when its page holds no view of a group (the page keeps
    its size bounded): ``path`` holds block ids (``"mod:model.layer1"``, ``"fold2"``), the
    groups open in the picture and then the one clicked, which opens inside the deepest of
    them that holds it. Returns ``{"path", "view", "frame", "sheet", "rows", "details",
    "elements"}``: the view (``sheet`` 0, ``frame`` 0) with its own tables, which the stepper adds
    to its film, or ``{"error": sentence}``.
    """
    with paused_gc():
        try:
            return _unfolded_view(trace, index, [str(p) for p in path], show_attrs)
        except ValueError as exc:
            return {"error": str(exc)}


def _unfolded_view(trace: Trace, index: int, path: list[str], show_attrs: bool) -> dict[str, Any]:
    if not 0 <= index < len(trace.steps):
        raise ValueError(f"there is no step {index + 1} in this trace (it has {len(trace.steps)})")
    if not path:
        raise ValueError("no folded group was named")
    step = trace.steps[index]
    memo = _Memo()
    keys = _name_keys(trace)
    chain: list[_Opened] = []
    plan = fold(step, max_nodes=FILM_MAX_NODES)
    opened: list[str] = []
    for key in path[:-1]:  # the groups open in the picture (an id that is none of them is passed over)
        block = next((b for b in plan.blocks if b.key == key), None)
        if block is None:
            continue
        got = _open(trace, index, plan, block, "", None, chain[-1] if chain else None, keys, show_attrs, memo)
        if got is None:
            break
        chain.append(got)
        opened.append(key)
        plan = got.plan
    target = path[-1]
    for depth in range(len(chain), -1, -1):  # the deepest open group that holds the one clicked
        outer = chain[depth - 1] if depth else None
        at = outer.plan if outer else fold(step, max_nodes=FILM_MAX_NODES)
        block = next((b for b in at.blocks if b.key == target), None)
        if block is None or (outer is not None and not set(block.nodes) <= outer.groups[-1]):
            continue
        got = _open(trace, index, at, block, "", None, outer, keys, show_attrs, memo)
        if got is None:
            raise ValueError(f"{clean(block.label)} holds more than the stepper's {FILM_MAX_NODES} boxes; "
                             f"draw it with gradtrace.render.step_graph(trace[{index}], "
                             f"unfold={[*opened[:depth], target]!r}, max_nodes=None)")
        svg = memo.layout(_view_dot(got.placed, got.frames, got.labels))
        frame, _ = _frame(got.placed, memo)
        details = _details(step, got.placed, memo, got.mine)
        return {"path": [*opened[:depth], target],
                "view": {"sheet": 0, "frame": 0, "label": got.labels[-1], "details": details},
                "frame": frame, "sheet": svg, "rows": memo.rows.rows, "details": memo.details.rows,
                "elements": _elements(got.placed)}
    raise ValueError(f"{target.removeprefix('mod:')} is not a folded group at step {step.number}")


def _view_list(trace: Trace, made: list[_Opened], groups: list[list[int]], kept: dict[int, int],
               memo: _Memo) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    """The distinct views of the laid-out pictures and each step's map from a folded box to its view.

    A view whose picture has folded groups that open deeper lists them in its own ``unfold``.
    Views are numbered shallow first, then by sheet; equal views (picture, details, and what
    opens from them) are stored once.
    """
    group_of = {at: k for k, members in enumerate(groups) for at in members}
    children: dict[int, list[int]] = {}
    for at, o in enumerate(made):
        if o.parent is not None and group_of[at] in kept:
            children.setdefault(o.parent, []).append(at)
    spot = {at: j for members in groups for j, at in enumerate(members)}
    laid = [at for at in range(len(made)) if group_of[at] in kept]
    body: dict[int, tuple[object, ...]] = {}  # position -> what its view holds, made deepest first
    shown: dict[tuple[object, ...], tuple[dict[str, Any], list[tuple[str, tuple[object, ...]]]]] = {}
    for at in sorted(laid, key=lambda at: (-len(made[at].labels), kept[group_of[at]], spot[at])):
        o = made[at]
        _, frame = _frame(o.placed, memo)
        details = _details(trace.steps[o.step], o.placed, memo, o.mine)
        below = sorted((made[c].dom, body[c]) for c in children.get(at, ()))
        body[at] = (kept[group_of[at]], frame, o.labels[-1], tuple(details.items()), tuple(below))
        view = {"sheet": kept[group_of[at]], "frame": frame, "label": o.labels[-1], "details": details}
        shown.setdefault(body[at], (view, below))
    order = sorted(laid, key=lambda at: (len(made[at].labels), kept[group_of[at]], spot[at]))
    number: dict[tuple[object, ...], int] = {}
    for at in order:
        number.setdefault(body[at], len(number))
    views: list[dict[str, Any]] = [{} for _ in number]
    for held, k in number.items():
        view, below = shown[held]
        if below:
            view["unfold"] = dict(sorted(((dom, number[b]) for dom, b in below), key=lambda kv: _place(kv[0])))
        views[k] = view
    unfolds: list[dict[str, int]] = [{} for _ in trace.steps]
    for at in order:
        o = made[at]
        if o.parent is None:
            unfolds[o.step][o.dom] = number[body[at]]
    for opens in unfolds:  # in the order of the picture's boxes, as every other map of a step
        ordered = dict(sorted(opens.items(), key=lambda kv: _place(kv[0])))
        opens.clear()
        opens.update(ordered)
    return views, unfolds


def _place(dom: str) -> tuple[int, str]:
    digits = "".join(ch for ch in dom if ch.isdigit())
    return (int(digits) if digits else 0, dom)


def _within(path: str, module: str) -> bool:
    return path == module or path.startswith(module + ".")


def _view_dot(u: Scene, frames: tuple[frozenset[str], ...], labels: tuple[str, ...]) -> str:
    """DOT of an unfolded view: each opened group's contents in a dashed frame named after it, nested.

    The innermost frame (the group opened last) is ``gt-unfolded``; the ones around it
    ``gt-unfolded-1`` (outermost), ``gt-unfolded-2``, ...
    """
    framed = frozenset().union(*frames)
    body = [box_dot(b) for b in u.boxes if b.group != "name" and b.key not in framed]
    depth = len(frames)
    for j, (cluster, label) in enumerate(zip(frames, labels, strict=True)):
        inner = frames[j + 1] if j + 1 < depth else frozenset()
        pad = "  " * j
        name, dom = ("unfolded", "gt-unfolded") if j == depth - 1 else (f"unfolded{j + 1}", f"gt-unfolded-{j + 1}")
        body.append(f'{pad}  subgraph cluster_{name} {{ id="{dom}" label={quote("unfolded: " + label)} '
                    'style="rounded,dashed" color="#6c757d" fontsize=12 labeljust="l";')
        body += [f"{pad}  " + box_dot(b) for b in u.boxes if b.key in cluster and b.key not in inner]
    body += ["  " * j + "  }" for j in range(depth - 1, -1, -1)]
    return scene_dot(u, bg="transparent", boxes=body)


def _explained(trace: Trace, step: Step, error: Error) -> tuple[str | None, tuple[str, ...]]:
    """The plain-words explanation of ``error`` and the ids it names (None when it is not recognised)."""
    try:
        from ..explain.errors import explain_error
    except ImportError:  # the explain layer is absent
        return None, ()
    last = trace.steps[-1] if trace.steps else None
    try:
        e = explain_error(error, trace if step is last and trace.final is None else step)
    except Exception:  # an explanation must never stop a film
        return None, ()
    culprits = tuple(k for k in e.culprits if k in step.tensors or k in step.nodes)
    if not e.recognised:
        return None, culprits
    title = e.title if e.title.endswith((".", "!", "?")) else f"{e.title}."
    lines = [title, f"What happened: {e.what}", f"Why: {e.why}"]
    if e.code is not None:
        lines.append(f"Changed at line {e.line}: {clean(e.code)}")
    lines.append(f"Fix: {e.fix}")
    said = e.message.splitlines()[0] if e.message else ""
    lines.append(f"PyTorch's message: {clean(e.error_type)}: {clean(said)}")  # shown here, once
    return "\n".join(lines), culprits


def _reach(step: Step, start: str | None) -> set[str]:
    """The nodes a backward() from node ``start`` walks through."""
    return step.reachable([start])


def _next_backward(trace: Trace) -> list[set[str] | None]:
    """For each step, the nodes the next later ``backward()`` walks through (None when none follows)."""
    out: list[set[str] | None] = [None] * len(trace.steps)
    upcoming: set[str] | None = None
    for i in range(len(trace.steps) - 1, -1, -1):
        out[i] = upcoming
        step = trace.steps[i]
        calls = step.events_of("backward")
        if calls:
            upcoming = set()
            for call in calls:
                assert isinstance(call, Backward)
                root = step.tensors.get(call.root or "")
                upcoming |= _reach(step, call.root_node or (root.grad_fn if root is not None else None))
    return out


def _prediction(step: Step, upcoming: set[str] | None) -> Prediction | None:
    """The one prediction worth showing: about the next backward(), or, if none follows, a named root's."""
    if step.events_of("error"):
        return None  # the error itself is shown
    for p in step.predictions:
        if upcoming is not None and p.node in upcoming:
            return p
    if upcoming is None:
        return next((p for p in step.predictions if step.names_of(p.root)), None)
    return None


def _dom_of(own: dict[str, str]) -> Callable[[str], str]:
    """Object id -> DOM id for one step (``own`` maps a drawn key to the object it shows)."""
    drawn = {obj: key for key, obj in own.items()}

    def dom(obj: str) -> str:
        return "gt-" + drawn.get(obj, obj)

    return dom


def _step_entry(trace: Trace, step: Step, sc: Scene, sheet: int, own: dict[str, str], upcoming: set[str] | None,
                memo: _Memo) -> dict[str, Any]:
    dom = _dom_of(own)
    explanation: str | None = None
    culprits: tuple[str, ...] = ()
    for error in step.events_of("error"):
        assert isinstance(error, Error)
        explanation, culprits = _explained(trace, step, error)
    predicted = _prediction(step, upcoming)
    prediction = None if predicted is None else prediction_words(step, predicted)
    frame, frame_ref = _frame(sc, memo)
    return {
        "index": step.index,
        "lineno": step.lineno,
        "code": step.code,
        "sheet": sheet,
        "frame": frame_ref,
        "events": [event_words(step, e) for e in step.events if not isinstance(e, Error)],
        "prediction": prediction,
        "predictions": [] if prediction is None else [prediction],
        "explanation": explanation,
        "culprits": [dom(k) for k in culprits],
        "reverse": [clean(line) for line in reverse_pass(step)],
        "flow": _drawn_flow(flow(step, dom), frame["visible"]),
        "details": _details(step, sc, memo, own),
    }


def _drawn_flow(subs: list[dict[str, Any]], visible: list[str]) -> list[dict[str, Any]]:
    """The sub-steps of nodes the picture draws, naming only drawn arrows and boxes.

    A folded picture draws a long run of nodes as one block: the walk steps over
    those nodes (the reverse-pass text still lists them all).
    """
    out: list[dict[str, Any]] = []
    if not subs:
        return out
    drawn = set(visible)
    for sub in subs:
        if sub["node"] not in drawn:
            continue
        edges = {k: v for k, v in sub["edges"].items() if k in drawn}
        grads = {k: v for k, v in sub["grads"].items() if k in drawn}
        out.append({**sub, "edges": edges, "grads": grads})
    return out


def _drawn_diff(d: dict[str, Any], drawn: set[str]) -> dict[str, Any]:
    return {
        "freed": [k for k in d["freed"] if k in drawn],
        "grad": {k: v for k, v in d["grad"].items() if k in drawn},
        "kept": [k for k in d["kept"] if k in drawn],
    }


def _backward(trace: Trace, back: list[dict[str, str]], steps: list[dict[str, Any]],
              frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    folded = _is_big(trace)
    out = []
    for i, s in enumerate(trace.steps):
        if i and s.events_of("backward"):
            drawn = set(frames[steps[i]["frame"]]["visible"])
            dom = _dom_of(back[i])
            if folded:  # a node inside a folded block is shown by its block: the block is what was freed
                dom = _by_block(dom, {n: b.key for b in fold(s, max_nodes=FILM_MAX_NODES).blocks for n in b.nodes})
            out.append({"step": i, "before": i - 1, "diff": _drawn_diff(diff(s, dom), drawn)})
    return out


def _by_block(dom: Callable[[str], str], block_of: dict[str, str]) -> Callable[[str], str]:
    """``dom``, except that a node folded into a block is the block's DOM id (its saved-value arrows are not drawn)."""

    def mapped(obj: str) -> str:
        return dom(block_of.get(obj, obj))

    return mapped


def film(trace: Trace, *, title: str | None = None, show_attrs: bool = False, view_bytes: int | None = None) -> Film:
    """The film of ``trace`` (see the module docstring for the format). Lays out once (or once a sheet).

    Node attributes are in each node's details; ``show_attrs`` also draws them in the boxes.
    ``view_bytes`` caps the SVG bytes of the unfolded views of a folded film laid out ahead of
    time (default: :data:`VIEW_BYTES` or half the film's own sheets, whichever is more; ``0``
    lays out none, and a widget's kernel lays each out when it is clicked).
    """
    with paused_gc():  # many small acyclic records: the cyclic collector would only rescan the trace
        return _film(trace, title, show_attrs, view_bytes)


def _film(trace: Trace, title: str | None, show_attrs: bool, view_bytes: int | None = None) -> Film:
    memo = _Memo()
    scenes, plans = _scenes(trace, show_attrs, memo.boxes)
    drawn, back = scenes, [{b.key: b.key for b in sc.boxes} for sc in scenes]
    u = union(scenes)
    if len(u.boxes) > FILM_MAX_NODES:  # a loop's new objects: lay out by place, a sheet per distinct picture
        pairs = [_canonical(sc, memo) for sc in scenes]
        drawn, back = [p[0] for p in pairs], [p[1] for p in pairs]
        sheets, elements, sheet_of = _sheets(drawn, memo)
    else:
        sheets = [memo.layout(scene_dot(u, bg="transparent")) if u.boxes else ""]
        elements, sheet_of = _elements(u), [0] * len(scenes)
    upcoming = _next_backward(trace)
    steps = [
        _step_entry(trace, step, sc, sheet, own, ahead, memo)
        for step, sc, sheet, own, ahead in zip(trace.steps, drawn, sheet_of, back, upcoming, strict=True)
    ]
    views: list[dict[str, Any]] = []
    if plans is not None:  # a folded film: each block of each step also opens
        views, unfolds, more, shown = _views(trace, plans, back, show_attrs, memo, len(sheets), view_bytes)
        sheets, elements = sheets + more, {**elements, **shown}
        for entry, opens in zip(steps, unfolds, strict=True):
            entry["unfold"] = opens
    else:
        for entry in steps:
            entry["unfold"] = {}
    error, error_step = None, None
    if trace.error is not None:
        e = trace.error
        where = f" at line {e.lineno}" if e.lineno is not None else ""
        error = f"{clean(e.type)}{where}: {clean(e.message)}"
        error_step = next((i for i, s in enumerate(trace.steps) if s.events_of("error")), None)
    rows, frames, details = memo.rows, memo.frames, memo.details
    return Film(
        {
            "schema": SCHEMA,
            "version": VERSION,
            "title": title if title is not None else shown_filename(trace.filename),
            "filename": trace.filename,
            "source": trace.source,
            "svg": sheets[0],
            "sheets": sheets,
            "elements": elements,
            "rows": rows.rows,
            "frames": frames.rows,
            "details": details.rows,
            "views": views,
            "steps": steps,
            "backward": _backward(trace, back, steps, frames.rows),
            "legend": [{"class": f"gt-k-{k}", "label": label, "fill": FILL[k]} for k, label in LEGEND],
            "marks": [
                {"class": f"gt-m-{m}", "label": st.label, "color": st.color, "dark": st.dark, "glyph": st.glyph,
                 "pen": st.pen}
                for m, st in MARKS.items()
            ],
            "lines": [
                {"class": _line_class(key), "label": st.label, "color": st.color, "dark": st.dark, "pen": st.pen,
                 "end": st.end, "sample": st.sample}
                for key, st in LINES.items()
            ],
            "error": error,
            "error_step": error_step,
            "steps_unrecorded": trace.steps_unrecorded,
        }
    )


def _line_class(key: str) -> str:
    kind, _, mark = key.partition("-")
    return f"gt-e-{kind}" + (f" gt-m-{mark}" if mark else "")

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
         "details": {dom id: index into "details"}}
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

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..model import FREED, Backward, Error, NodeInfo, Prediction, Step, TensorInfo, Trace
from .backward import diff, flow
from .dot import FILL, LEGEND, LINES, MARKS, box_classes, scene_dot
from .fold import block_box, block_links, fold, note_box
from .scene import Box, Link, Row, Scene, scene
from .svg import dot_to_svg, svg_inline
from .text import reverse_pass, saved_state_text
from .words import clean, event_words, op_name, prediction_words, shape_text, shown_filename, summary_text

__all__ = ["Film", "film", "film_scenes", "film_dot", "SCHEMA"]

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


#: A row's identity: its JSON text with sorted keys (one encoder built once: json.dumps with
#: options builds a new one per call)
_row_key = json.JSONEncoder(sort_keys=True, ensure_ascii=False, check_circular=False).encode


class _Table:
    def __init__(self) -> None:
        self.rows: list[Any] = []
        self._index: dict[str, int] = {}

    def ref(self, row: Any) -> int:
        key = _row_key(row)
        if key not in self._index:
            self._index[key] = len(self.rows)
            self.rows.append(row)
        return self._index[key]


def _name_keys(trace: Trace) -> dict[str, str]:
    keys: dict[str, str] = {}
    for step in trace.steps:
        for name in step.bindings:
            keys.setdefault(name, f"name{len(keys) + 1}")
    return keys


def film_scenes(trace: Trace, show_attrs: bool = False) -> list[Scene]:
    """One scene per step, with name boxes keyed the same way in every step.

    When any step holds more than :data:`FILM_MAX_NODES` objects, every step
    is drawn folded (loop runs as counted blocks, modules collapsed as
    needed), so each layout stays small and a block keeps its place while its
    count grows from step to step.
    """
    keys = _name_keys(trace)
    if not _is_big(trace):
        return [scene(step, name_keys=keys, show_attrs=show_attrs) for step in trace.steps]
    return [_folded_scene(step, keys, show_attrs) for step in trace.steps]


#: A film is drawn folded once a step holds more objects than this (a stepper panel is small).
FILM_MAX_NODES = 80


def _is_big(trace: Trace) -> bool:
    return any(len(s.tensors) + len(s.nodes) > FILM_MAX_NODES for s in trace.steps)


def _folded_scene(step: Step, keys: dict[str, str], show_attrs: bool = False) -> Scene:
    plan = fold(step, max_nodes=FILM_MAX_NODES)
    sc = scene(plan.step, name_keys=keys, show_attrs=show_attrs)
    extra = [block_box(b) for b in plan.blocks]
    note = note_box(plan)
    if note is not None:
        extra.append(note)
    return Scene(sc.boxes + tuple(extra), sc.links + tuple(block_links(step, plan)), sc.names)


def _widest(boxes: list[Box]) -> Box:
    """The box laid out for the film: each row holds the longest text it ever shows."""
    last = boxes[-1]
    width = max(len(b.rows) for b in boxes)
    rows = []
    for i in range(width):
        texts = [b.rows[i] for b in boxes if i < len(b.rows)]
        rows.append(max(texts, key=lambda r: len(r.text)))
    return Box(last.key, last.group, last.kind, tuple(Row(r.text or "-", r.cls) for r in rows), (), last.label)


def union(scenes: list[Scene]) -> Scene:
    """Every box and arrow of every scene, in order of first appearance."""
    boxes: dict[str, list[Box]] = {}
    links: dict[str, Link] = {}
    for sc in scenes:
        for box in sc.boxes:
            boxes.setdefault(box.key, []).append(box)
        for link in sc.links:
            links.setdefault(link.key, Link(link.tail, link.head, link.kind))
    names = [k for k, v in boxes.items() if v[0].group == "name"]
    others = [k for k, v in boxes.items() if v[0].group != "name"]
    return Scene(tuple(_widest(boxes[k]) for k in names + others), tuple(links.values()))


def film_dot(trace: Trace, show_attrs: bool = False) -> str:
    """The DOT source of the film's one layout."""
    return scene_dot(union(film_scenes(trace, show_attrs)), bg="transparent")


def _tensor_detail(step: Step, t: TensorInfo) -> dict[str, Any]:
    names = step.names_of(t.id)
    fields = [
        ["names", ", ".join(clean(n) for n in names) if names else "(no name: only the graph holds it)"],
        ["kind", t.kind],
        ["value", summary_text(t.value)],
        ["grad", summary_text(t.grad)],
        ["shape", shape_text(t.shape)],
        ["dtype", clean(t.dtype)],
        ["device", clean(t.device)],
        ["version", str(t.version)],
        ["grad_fn", "None" if t.grad_fn is None else _node_name(step, t.grad_fn)],
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
    if n.output is not None:
        fields.append(["output of forward", n.output])
    return {"type": "node", "id": n.id, "title": f"backward node {n.id}", "fields": fields}


def _details(step: Step, sc: Scene, table: _Table, own: dict[str, str] | None = None) -> dict[str, int]:
    """Details of each drawn box, keyed by its element id (``own`` maps a place key to the object's key)."""
    out: dict[str, int] = {}
    for drawn in sc.boxes:
        box = drawn if own is None else replace(drawn, key=own.get(drawn.key, drawn.key))
        if box.group == "name":
            tid = step.bindings[box.label]
            detail = {
                "type": "name",
                "id": box.label,
                "title": f"name {clean(box.label)}",
                "fields": [["names", tid], ["frame", clean(step.frame)]],
            }
        elif box.group == "tensor" and box.key in step.tensors:
            detail = _tensor_detail(step, step.tensors[box.key])
        elif box.key in step.nodes:
            detail = _node_detail(step, step.nodes[box.key])
        else:  # a folded run, a collapsed module or the note saying what was left out
            detail = {"type": "block", "id": box.key, "title": clean(box.rows[0].text),
                      "fields": [["shows", clean(r.text)] for r in box.rows[1:]]}
        out["gt-" + drawn.key] = table.ref(detail)
    return out


def _frame(sc: Scene, rows: _Table) -> dict[str, Any]:
    visible = ["gt-names"] if any(b.group == "name" for b in sc.boxes) else []
    classes: dict[str, str] = {}
    texts: dict[str, int] = {}
    for box in sc.boxes:
        dom = "gt-" + box.key
        visible.append(dom)
        classes[dom] = box_classes(box)
        texts[dom] = rows.ref([[r.text, r.cls] for r in box.rows])
    for link in sc.links:
        dom = "gt-e-" + link.key
        visible.append(dom)
        classes[dom] = " ".join([f"gt-edge gt-e-{link.kind}"] + [f"gt-m-{m}" for m in link.marks])
    return {"visible": visible, "classes": classes, "texts": texts}


def _elements(u: Scene) -> dict[str, dict[str, str]]:
    out = {"gt-" + b.key: {"group": b.group, "label": clean(b.label)} for b in u.boxes}
    out.update({"gt-e-" + k.key: {"group": "edge", "label": f"{k.kind} {k.tail} -> {k.head}"} for k in u.links})
    return out


def _canonical(sc: Scene) -> tuple[Scene, dict[str, str]]:
    """``sc`` with its boxes renamed by place (``c1``, ``c2``, ...; names keep their keys).

    A loop makes new objects at every pass, so the same picture comes back
    with new ids; by place it is the same picture, laid out once. Returns the
    renamed scene and the map from place key back to the object's own key.
    """
    rename = {b.key: b.key if b.group == "name" else f"c{i}" for i, b in enumerate(sc.boxes, 1)}
    boxes = tuple(Box(rename[b.key], b.group, b.kind, b.rows, b.marks, b.label) for b in sc.boxes)
    links = tuple(Link(rename.get(k.tail, k.tail), rename.get(k.head, k.head), k.kind, k.marks) for k in sc.links)
    return Scene(boxes, links, sc.names), {new: old for old, new in rename.items()}


def _skeleton(sc: Scene) -> tuple[object, ...]:
    return tuple((b.key, b.group, b.kind, len(b.rows)) for b in sc.boxes) + tuple(k.key for k in sc.links)


def _sheets(scenes: list[Scene]) -> tuple[list[str], dict[str, dict[str, str]], list[int]]:
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
    for group in members:
        u = union(group)
        sheets.append(svg_inline(dot_to_svg(scene_dot(u, bg="transparent"))) if u.boxes else "")
        elements.update(_elements(u))
    return sheets or [""], elements, sheet_of


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
                tables: tuple[_Table, _Table, _Table]) -> dict[str, Any]:
    rows, frames, details = tables
    dom = _dom_of(own)
    explanation: str | None = None
    culprits: tuple[str, ...] = ()
    for error in step.events_of("error"):
        assert isinstance(error, Error)
        explanation, culprits = _explained(trace, step, error)
    predicted = _prediction(step, upcoming)
    prediction = None if predicted is None else prediction_words(step, predicted)
    frame = _frame(sc, rows)
    return {
        "index": step.index,
        "lineno": step.lineno,
        "code": step.code,
        "sheet": sheet,
        "frame": frames.ref(frame),
        "events": [event_words(step, e) for e in step.events if not isinstance(e, Error)],
        "prediction": prediction,
        "predictions": [] if prediction is None else [prediction],
        "explanation": explanation,
        "culprits": [dom(k) for k in culprits],
        "reverse": [clean(line) for line in reverse_pass(step)],
        "flow": _drawn_flow(flow(step, dom), set(frame["visible"])),
        "details": _details(step, sc, details, own),
    }


def _drawn_flow(subs: list[dict[str, Any]], drawn: set[str]) -> list[dict[str, Any]]:
    """The sub-steps of nodes the picture draws, naming only drawn arrows and boxes.

    A folded picture draws a long run of nodes as one block: the walk steps over
    those nodes (the reverse-pass text still lists them all).
    """
    out = []
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


def film(trace: Trace, *, title: str | None = None, show_attrs: bool = False) -> Film:
    """The film of ``trace`` (see the module docstring for the format). Lays out once (or once a sheet).

    Node attributes are in each node's details; ``show_attrs`` also draws them in the boxes.
    """
    scenes = film_scenes(trace, show_attrs)
    drawn, back = scenes, [{b.key: b.key for b in sc.boxes} for sc in scenes]
    u = union(scenes)
    if len(u.boxes) > FILM_MAX_NODES:  # a loop's new objects: lay out by place, a sheet per distinct picture
        pairs = [_canonical(sc) for sc in scenes]
        drawn, back = [p[0] for p in pairs], [p[1] for p in pairs]
        sheets, elements, sheet_of = _sheets(drawn)
    else:
        sheets = [svg_inline(dot_to_svg(scene_dot(u, bg="transparent"))) if u.boxes else ""]
        elements, sheet_of = _elements(u), [0] * len(scenes)
    tables = (_Table(), _Table(), _Table())
    upcoming = _next_backward(trace)
    steps = [
        _step_entry(trace, step, sc, sheet, own, ahead, tables)
        for step, sc, sheet, own, ahead in zip(trace.steps, drawn, sheet_of, back, upcoming, strict=True)
    ]
    error, error_step = None, None
    if trace.error is not None:
        e = trace.error
        where = f" at line {e.lineno}" if e.lineno is not None else ""
        error = f"{clean(e.type)}{where}: {clean(e.message)}"
        error_step = next((i for i, s in enumerate(trace.steps) if s.events_of("error")), None)
    rows, frames, details = tables
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

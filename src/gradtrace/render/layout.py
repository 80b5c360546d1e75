"""Laying out a film: one scene per step, and the sheets (SVG layouts) those scenes share.

Place in the pipeline: tracer -> model -> explain -> **render** (film: layout -> details, views) -> notebook/cli.

Every step of a trace becomes a :class:`~gradtrace.render.scene.Scene` with its
names keyed the same way in every step. A small film lays out the union of
its scenes once, each row as wide as the longest text it ever shows; a film
whose union is too big (a loop's new objects at every pass) renames each
scene's boxes by place and lays out one sheet per distinct picture. A film
with a step of more than :data:`FILM_MAX_NODES` objects is drawn folded (see
:mod:`.fold`). A frame says which elements of a sheet a step shows, with which
classes and rows. :class:`FilmMemo` keeps what one film has already made, so each
distinct box, frame and detail is made once however many steps show it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..model import Step, Trace
from .dot import box_classes, scene_dot
from .fold import Folded, block_box, block_links, fold, note_box
from .scene import Box, BoxMemo, Link, Row, Scene, scene
from .svg import dot_to_svg, svg_inline
from .words import clean

__all__ = [
    "FILM_MAX_NODES", "LAYOUT_WORKERS", "UNFOLD_HINT", "FilmMemo", "Laid", "Table", "by_place", "elements_of",
    "film_dot", "film_scenes", "folded_scene", "frame_of", "is_big", "lay_out", "name_keys", "scenes_and_plans",
    "sheets_of", "skeleton", "union",
]


class Table:
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


class FilmMemo:
    """What one film has already made, so that each distinct box, frame and detail is made once.

    Steps share the records of objects they did not change, so the scenes of a long loop
    hand back the same :class:`Box` objects again and again (see :class:`BoxMemo`); their
    classes, rows and renamed copies are worked out once per box. Every cache holds the
    objects whose ``id()`` is in its keys, so no id is reused while the film is made.
    """

    def __init__(self) -> None:
        self.boxes = BoxMemo()
        self.rows, self.frames, self.details = Table(), Table(), Table()
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


def name_keys(trace: Trace) -> dict[str, str]:
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
    return scenes_and_plans(trace, show_attrs, BoxMemo() if memo is None else memo)[0]


def scenes_and_plans(trace: Trace, show_attrs: bool, memo: BoxMemo) -> tuple[list[Scene], list[Folded] | None]:
    """The scenes of :func:`film_scenes` and, for a folded film, each step's fold plan."""
    keys = name_keys(trace)
    if not is_big(trace):
        return [scene(step, name_keys=keys, show_attrs=show_attrs, memo=memo) for step in trace.steps], None
    plans = [fold(step, max_nodes=FILM_MAX_NODES) for step in trace.steps]
    pairs = zip(trace.steps, plans, strict=True)
    return [folded_scene(step, plan, keys, show_attrs, memo) for step, plan in pairs], plans


#: Layouts of a film's sheets that run at once (one ``dot`` process each, at most one per core).
LAYOUT_WORKERS = 4

#: A film is drawn folded once a step holds more objects than this (a stepper panel is small).
FILM_MAX_NODES = 80


def is_big(trace: Trace) -> bool:
    return any(len(s.tensors) + len(s.nodes) > FILM_MAX_NODES for s in trace.steps)


#: The last row of a folded picture's note: how to open a block.
UNFOLD_HINT = "Click a folded box (or Tab to it, Enter) to unfold it; Esc folds it again."


def folded_scene(step: Step, plan: Folded, keys: dict[str, str], show_attrs: bool, memo: BoxMemo,
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


def frame_of(sc: Scene, memo: FilmMemo) -> tuple[dict[str, Any], int]:
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


def elements_of(u: Scene) -> dict[str, dict[str, str]]:
    out = {"gt-" + b.key: {"group": b.group, "label": clean(b.label)} for b in u.boxes}
    out.update({"gt-e-" + k.key: {"group": "edge", "label": f"{k.kind} {k.tail} -> {k.head}"} for k in u.links})
    return out


def by_place(sc: Scene, memo: FilmMemo, prefix: str = "c") -> tuple[Scene, dict[str, str]]:
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


def skeleton(sc: Scene) -> tuple[object, ...]:
    return tuple((b.key, b.group, b.kind, len(b.rows)) for b in sc.boxes) + tuple(k.key for k in sc.links)


def sheets_of(scenes: list[Scene], memo: FilmMemo) -> tuple[list[str], dict[str, dict[str, str]], list[int]]:
    """One layout per distinct picture skeleton (folded traces), each shared by all its steps."""
    index: dict[tuple[object, ...], int] = {}
    members: list[list[Scene]] = []
    sheet_of: list[int] = []
    for sc in scenes:
        k = index.setdefault(skeleton(sc), len(members))
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
        elements.update(elements_of(u))
    return sheets or [""], elements, sheet_of


@dataclass(frozen=True)
class Laid:
    """A film's pictures laid out: what each step draws, on which sheet, and what each drawn key shows."""

    drawn: list[Scene]  # each step's scene as drawn (renamed by place when the film is laid out by place)
    back: list[dict[str, str]]  # per step: drawn key -> the object's own key
    sheets: list[str]  # the SVG of each sheet
    elements: dict[str, dict[str, str]]  # every element of every sheet: its group and label
    sheet_of: list[int]  # per step: its sheet
    plans: list[Folded] | None  # per step: its fold plan (None: the film is not folded)


def lay_out(trace: Trace, show_attrs: bool, memo: FilmMemo) -> Laid:
    """Every step's scene, laid out once (the union of all) or by place, one sheet per distinct picture."""
    scenes, plans = scenes_and_plans(trace, show_attrs, memo.boxes)
    u = union(scenes)
    if len(u.boxes) > FILM_MAX_NODES:  # a loop's new objects: lay out by place, a sheet per distinct picture
        pairs = [by_place(sc, memo) for sc in scenes]
        drawn, back = [p[0] for p in pairs], [p[1] for p in pairs]
        sheets, elements, sheet_of = sheets_of(drawn, memo)
        return Laid(drawn, back, sheets, elements, sheet_of, plans)
    sheets = [memo.layout(scene_dot(u, bg="transparent")) if u.boxes else ""]
    back = [{b.key: b.key for b in sc.boxes} for sc in scenes]
    return Laid(scenes, back, sheets, elements_of(u), [0] * len(scenes), plans)

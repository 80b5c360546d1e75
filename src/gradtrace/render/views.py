"""The views of a folded film: a step's picture with one folded box opened, laid out ahead of time.

Place in the pipeline: tracer -> model -> explain -> **render** (film: layout -> details, views) -> notebook/cli.

A folded film draws modules and repeated runs as single boxes. A view is a
step's picture with one of them unfolded (the rest folded as before, at most
:data:`~gradtrace.render.layout.FILM_MAX_NODES` boxes), its contents in a dashed
frame named after the group; a view opens the groups folded inside it the same
way, at most :data:`MAX_DEPTH` levels deep. Views are laid out by place, one
sheet per distinct picture, while their SVG fits the page's budget
(:data:`VIEW_BYTES`); :func:`unfolded_view` lays out one more on demand (a
widget asks its kernel when a box with no view is clicked).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._gc import paused_gc
from ..model import Step, Trace
from .details import details_of
from .dot import box_dot, quote, scene_dot
from .fold import Block, Folded, fold, unfold, within
from .layout import FILM_MAX_NODES, FilmMemo, by_place, elements_of, folded_scene, frame_of, name_keys, skeleton, union
from .scene import Scene
from .words import clean

__all__ = ["MAX_DEPTH", "VIEW_BYTES", "ahead_views", "unfolded_view"]


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
        members |= {n.id for n in step.nodes.values() if not n.is_accumulate and within(n.module, block.module)}
    return frozenset(members)


def _open(trace: Trace, i: int, plan: Folded, block: Block, dom: str, parent: int | None, outer: _Opened | None,
          keys: dict[str, str], show_attrs: bool, memo: FilmMemo) -> _Opened | None:
    """The picture of step ``i`` with ``block`` of ``plan`` opened (None when it does not fit the cap)."""
    step = trace.steps[i]
    opened = unfold(step, plan, block.key)
    if opened is None:
        return None
    sc = folded_scene(step, opened, keys, show_attrs, memo.boxes, hint=False)
    placed, mine = by_place(sc, memo, "u")
    groups = (*(outer.groups if outer else ()), _group_nodes(step, block))
    drawn_nodes = set(opened.step.nodes)
    frames = []
    for members in groups:
        inside = {b.key for b in opened.blocks if set(b.nodes) <= members} | (members & drawn_nodes)
        frames.append(frozenset(k for k, obj in mine.items() if obj in inside))
    labels = (*(outer.labels if outer else ()), clean(block.label))
    return _Opened(i, dom, parent, placed, mine, labels, tuple(frames), opened, groups)


def _opened_from(trace: Trace, i: int, plan: Folded, drawn: dict[str, str], parent: int | None,
                 outer: _Opened | None, keys: dict[str, str], show_attrs: bool, memo: FilmMemo) -> list[_Opened]:
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


def ahead_views(trace: Trace, plans: list[Folded], back: list[dict[str, str]], show_attrs: bool, memo: FilmMemo,
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
    keys = name_keys(trace)
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
            k = index.setdefault((skeleton(o.placed), o.frames, o.labels), len(groups))
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
            elements.update(elements_of(u))
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
    memo = FilmMemo()
    keys = name_keys(trace)
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
        frame, _ = frame_of(got.placed, memo)
        details = details_of(step, got.placed, memo, got.mine)
        return {"path": [*opened[:depth], target],
                "view": {"sheet": 0, "frame": 0, "label": got.labels[-1], "details": details},
                "frame": frame, "sheet": svg, "rows": memo.rows.rows, "details": memo.details.rows,
                "elements": elements_of(got.placed)}
    raise ValueError(f"{target.removeprefix('mod:')} is not a folded group at step {step.number}")


def _view_list(trace: Trace, made: list[_Opened], groups: list[list[int]], kept: dict[int, int],
               memo: FilmMemo) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
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
        _, frame = frame_of(o.placed, memo)
        details = details_of(trace.steps[o.step], o.placed, memo, o.mine)
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

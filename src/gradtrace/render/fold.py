"""Big graphs made readable: loop bodies folded, modules grouped, a cap on what is drawn.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

:func:`fold` turns one :class:`~gradtrace.model.Step` into a :class:`Folded`
picture plan, plain data that :func:`folded_dot` draws and :func:`folded_text`
describes:

* **Folding.** A run of backward nodes that repeats one op pattern along a
  chain (what a loop body leaves behind) becomes one block labelled with the
  count: ``× 3000: MulBackward0`` or ``× 500: SinBackward0 → MulBackward0``. A
  chain is a path on which each node has one input node (besides
  ``AccumulateGrad``) and that input has no other consumer. A node that a
  named tensor points at (its ``grad_fn``) can only open a run, so the arrow
  from the name's tensor goes to the block whose newest node it is. Runs
  shorter than ``min_repeat`` stay as they are.
* **Grouping.** Nodes carry the ``nn.Module`` path that created them
  (:attr:`~gradtrace.model.NodeInfo.module`). Each module is a DOT cluster
  named by its path; with ``collapse=k`` the modules deeper than ``k`` path
  parts are folded: the nodes of all the sub-modules of one module ``k`` parts
  deep (``collapse=4``: those of ``model.h.0.attn.c_attn`` and ``.c_proj``) are
  one box, named by that module, with their node count, parameter count and
  the shapes of the tensors known to enter and leave them; the module's own
  nodes stay drawn.
* **Cap.** At most ``max_nodes`` boxes are drawn (default :data:`MAX_NODES`).
  Past it, modules are collapsed one level at a time, and if that is not
  enough the boxes nearest the outputs are kept. The picture's title and a
  note box say what was folded, collapsed or left out and how to see more.

Layout stays fast because the DOT handed to ``dot`` never holds more than
about ``max_nodes`` boxes, however big the graph.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import compress, count, islice
from operator import attrgetter, ne
from typing import Any, NamedTuple

from .._gc import paused_gc
from ..model import NodeInfo, Step, id_order
from .dot import box_dot, quote, scene_dot
from .scene import Box, Link, Row, Scene, scene
from .words import clean, op_name, shape_text

__all__ = [
    "MAX_NODES", "MIN_REPEAT", "Block", "Folded", "block_box", "block_links", "fold", "folded_dot", "folded_text",
    "note_box", "unfold", "unfold_path",
]

#: Default cap on the boxes drawn in one picture (tensors, nodes, blocks, names).
MAX_NODES = 150
#: A pattern must repeat at least this many times in a row to be folded.
MIN_REPEAT = 4
#: Longest loop body (in backward nodes) that folding recognises.
MAX_PERIOD = 8


@dataclass(frozen=True)
class Block:
    """One box standing for many nodes: a folded run (``kind="fold"``) or a collapsed module."""

    key: str
    kind: str  # "fold" or "module"
    label: str
    nodes: tuple[str, ...]
    count: int  # repetitions of the pattern (fold) or nodes inside (module)
    pattern: tuple[str, ...] = ()
    module: str = ""
    params: int = 0
    inputs: tuple[tuple[int, ...], ...] = ()
    outputs: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class Folded:
    """What one picture of a step draws: the kept objects, the blocks, and what was left out."""

    step: Step  # the step with only the objects drawn as themselves
    blocks: tuple[Block, ...]
    owner: dict[str, str]  # node id -> key of the block that holds it
    clusters: tuple[str, ...]  # module paths drawn as clusters, outermost first
    total: int  # tensors + nodes of the original step
    hidden: tuple[str, ...] = ()  # ids not drawn at all (past the cap)
    max_nodes: int | None = MAX_NODES
    collapse: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def message(self) -> str:
        return " ".join(self.notes)

    def unfolds(self) -> dict[str, dict[str, object]]:
        """For a front end that opens one block on click: block key -> what it stands for and how to open it.

        ``nodes`` are the ids of the backward nodes inside (in the step), ``module`` the
        module path; ``open`` the :func:`fold` option that draws the block's contents:
        ``collapse`` one level deeper for a module, ``min_repeat=0`` for a folded run.
        """
        out: dict[str, dict[str, object]] = {}
        for b in self.blocks:
            how = {"collapse": _depth(b.module) + 1} if b.kind == "module" else {"min_repeat": 0}
            out[b.key] = {"kind": b.kind, "label": b.label, "module": b.module, "nodes": list(b.nodes),
                          "open": how}
        return out


# ------------------------------------------------------------------ folding
class Outline(NamedTuple):
    """Every node of a step as lists, in the step's order: what folding looks at (see :func:`outline`)."""

    ids: list[str]
    names: list[str]
    modules: list[str]
    heads: list[tuple[str | None, ...]]  # each node's input nodes (None: an input that needs no gradient)
    leaves: set[str]  # the accumulators (``AccumulateGrad``)


def outline(nodes: Mapping[str, NodeInfo]) -> Outline:
    """The :class:`Outline` of ``nodes``, read once for a whole fold (graphs can have 100,000 nodes).

    A mapping that makes its records only when looked up (a sketch of an untraced graph, see
    ``gradtrace.tracer.snapshot.SketchNodes``) has it ready: ``nodes.outline()``.
    """
    ready = getattr(nodes, "outline", None)
    if callable(ready):
        return Outline(*ready())
    infos = list(nodes.values())
    heads = [tuple([None if e is None else e.node for e in info.inputs]) for info in infos]
    leaves = {info.id for info in infos if info.variable is not None}
    return Outline(list(nodes), list(map(_NAME_OF, infos)), list(map(_MODULE_OF, infos)), heads, leaves)


_NAME_OF, _MODULE_OF = attrgetter("name"), attrgetter("module")


def _chains(step: Step, skip: set[str], shape: Outline) -> list[list[str]]:
    """Maximal linear chains of nodes, each from the output side towards the inputs.

    Graphs can have 100,000 nodes: one Python loop reads the outline, bulk steps do the rest.
    """
    named = set(step.bindings.values())
    pinned = {t.grad_fn for t in step.tensors.values() if t.grad_fn is not None and t.id in named}
    accs = shape.leaves
    heads = list(filter(None, itertools.chain.from_iterable(shape.heads)))
    once = set(heads)
    shared = set() if len(once) == len(heads) else {nid for nid, n in Counter(heads).items() if n > 1}
    outside = accs | (once - set(shape.ids))  # inputs that do not count: accumulators, nodes not in the step
    stops = skip | pinned | shared  # a chain does not go on into these
    ids: list[str] = []
    nexts: list[str | None] = []
    keep_id, keep_next = ids.append, nexts.append
    for nid, inputs in zip(shape.ids, shape.heads, strict=True):
        if nid in skip or nid in accs:
            continue
        nxt, many = None, 0
        for b in inputs:
            if b is not None and b not in outside:
                nxt, many = b, many + 1
        keep_id(nid)
        keep_next(nxt if many == 1 and nxt not in stops else None)
    nxt_of = dict(zip(ids, nexts, strict=True))
    continued = set(nexts)
    chains = []
    for nid in ids:
        if nid in continued:
            continue
        chain = [nid]
        b = nxt_of[nid]
        while b is not None:
            chain.append(b)
            b = nxt_of.get(b)
        if len(chain) >= MIN_REPEAT:
            chains.append(chain)
    return chains


def _runs(symbols: list[Any], min_repeat: int) -> list[tuple[int, int, int]]:
    """``(start, period, repeats)`` of the periodic runs to fold in one chain, left to right."""
    out = []
    i, n = 0, len(symbols)
    while i < n:
        best = (0, 0)  # (covered, period)
        for p in range(1, MAX_PERIOD + 1):
            if i + 2 * p > n:
                break
            r = 0
            while i + r + p < n and symbols[i + r] == symbols[i + r + p]:
                r += 1
                if r == 64:  # a long run (a loop's 100,000 steps): where it ends is found in bulk
                    ends = compress(count(r), map(ne, islice(symbols, i + r, n - p), islice(symbols, i + r + p, None)))
                    r = next(ends, n - p - i)
                    break
            covered = (r + p) // p * p
            if covered // p >= min_repeat and covered > best[0]:
                best = (covered, p)
            if i + r + p >= n:
                break  # the rest of the chain repeats: no longer period covers more
        if best[0]:
            out.append((i, best[1], best[0] // best[1]))
            i += best[0]
        else:
            i += 1
    return out


def _fold_runs(step: Step, skip: set[str], min_repeat: int, shape: Outline,
               opened: frozenset[str] = frozenset()) -> list[Block]:
    """Folded runs of repeated ops; nodes in ``opened`` (an unfolded run) are never folded again."""
    blocks: list[Block] = []
    chains = _chains(step, skip | opened, shape)
    if not chains:
        return blocks
    # a run repeats ops of one module: where every node has the same module, the op names alone say it
    modules = set(shape.modules)
    symbol_of: dict[str, Any] = dict(zip(shape.ids, shape.names if len(modules) == 1 else
                                         zip(shape.names, shape.modules, strict=True), strict=True))
    for chain in chains:
        symbols = list(map(symbol_of.__getitem__, chain))
        for start, period, repeats in _runs(symbols, min_repeat):
            members = tuple(chain[start : start + period * repeats])
            ops = [s if len(modules) == 1 else s[0] for s in symbols[start : start + period]]
            module = next(iter(modules)) if len(modules) == 1 else symbols[start][1]
            pattern = tuple(op_name(name) for name in reversed(ops))
            label = f"× {repeats:,}: " + " → ".join(pattern)
            key = f"fold{len(blocks) + 1}"
            blocks.append(Block(key, "fold", label, members, repeats, pattern, module))
    return blocks


# ----------------------------------------------------------------- modules
def _depth(path: str) -> int:
    return len(path.split(".")) if path else 0


def within(path: str, module: str) -> bool:
    """True when the module path ``path`` is ``module`` or inside it (``enc.fc`` is within ``enc``)."""
    return path == module or path.startswith(module + ".")


def _prefix(path: str, depth: int) -> str:
    return ".".join(path.split(".")[:depth])


def _module_blocks(step: Step, depth: int, among: set[str] | None = None) -> list[Block]:
    """One block per module path of ``depth`` parts holding deeper nodes (only nodes in ``among``, if given)."""
    groups: dict[str, list[str]] = {}
    for nid, info in step.nodes.items():
        if among is not None and nid not in among:
            continue
        if _depth(info.module) > depth and not info.is_accumulate:
            groups.setdefault(_prefix(info.module, depth), []).append(nid)
    blocks = []
    for path, members in groups.items():
        inside = set(members)
        params = _params_of(step, inside)
        ins, outs = _boundary(step, inside)
        label = f"{path} ({len(members)} nodes, {sum(params.values()):,} params)"
        blocks.append(
            Block(f"mod:{path}", "module", label, tuple(members), len(members), module=path,
                  params=sum(params.values()), inputs=ins, outputs=outs)
        )
    return blocks


def _params_of(step: Step, inside: set[str]) -> dict[str, int]:
    """Parameters whose ``AccumulateGrad`` feeds a node of the group: tensor id -> element count."""
    out: dict[str, int] = {}
    for nid in inside:
        for e in step.nodes[nid].inputs:
            acc = step.nodes.get(e.node) if e is not None else None
            if acc is not None and acc.variable is not None:
                t = step.tensors.get(acc.variable)
                if t is not None and t.is_param:
                    out[t.id] = math.prod(t.shape)
    return out


def _boundary(step: Step, inside: set[str]) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Shapes of the drawn tensors known to leave the group (grad_fn inside) and to enter it (saved inside)."""
    outs = [t.shape for t in step.tensors.values() if t.grad_fn in inside]
    ins = []
    for nid in sorted(inside, key=id_order):
        for s in step.nodes[nid].saved:
            t = step.tensors.get(s.tensor) if s.tensor is not None else None
            if t is not None and t.grad_fn not in inside and not t.is_param:
                ins.append(t.shape)
    return tuple(dict.fromkeys(ins)), tuple(dict.fromkeys(outs))


# --------------------------------------------------------------------- plan
def fold(
    step: Step,
    *,
    min_repeat: int = MIN_REPEAT,
    collapse: int | None = None,
    max_nodes: int | None = MAX_NODES,
    names: bool = True,
) -> Folded:
    """The picture plan of ``step``: folded runs, collapsed modules, at most ``max_nodes`` boxes.

    ``collapse=k`` draws the sub-modules of each module ``k`` path parts deep as one box;
    ``max_nodes=None`` draws everything (folding still applies; ``min_repeat=0``
    turns it off).
    """
    with paused_gc():
        return _fold(step, min_repeat, collapse, max_nodes, names)


def _fold(step: Step, min_repeat: int, collapse: int | None, max_nodes: int | None, names: bool) -> Folded:
    depth = collapse
    shape = outline(step.nodes)
    max_depth = max(map(_depth, set(shape.modules)), default=0)
    plan = _plan(step, min_repeat, depth, shape)
    notes: list[str] = []
    # a plan that folds, collapses or cuts anything also draws a note box saying so: keep room for it
    room = max((max_nodes or 0) - 1, 1)

    def too_big(plan: Folded) -> bool:
        return max_nodes is not None and _boxes(plan, names) + _has_folds(plan) > max_nodes

    if depth is None and too_big(plan):
        for d in range(max_depth - 1, 0, -1):  # the deepest grouping that fits
            depth, plan = d, _plan(step, min_repeat, d, shape)
            if _boxes(plan, names) <= room:
                break
        if depth is not None:
            notes.append(f"{_COLLAPSED}{depth} path parts drawn as one box per module {depth} parts deep"
                         f"{_example(plan)} to fit max_nodes={max_nodes} (collapse={depth}; pass collapse=k or "
                         "max_nodes=None to change it).")
    hidden: tuple[str, ...] = ()
    if too_big(plan):
        plan, hidden = _cut(plan, room, names, shape)
    folds = [b for b in plan.blocks if b.kind == "fold"]
    if folds:
        notes.insert(0, _folds_note(folds, min_repeat))
    if hidden:
        notes.append(f"{len(hidden):,} more objects not drawn (max_nodes={max_nodes}): "
                     f"pass max_nodes=None to draw all, or collapse=1 to group them by module.")
    return replace(plan, hidden=hidden, max_nodes=max_nodes, collapse=depth, notes=tuple(notes),
                   total=len(step.tensors) + len(step.nodes))


def unfold(step: Step, plan: Folded, key: str, *, min_repeat: int = MIN_REPEAT, names: bool = True) -> Folded | None:
    """``plan`` (a :func:`fold` of ``step``) with the one block ``key`` opened, everything else as it was.

    A collapsed module is drawn one level deeper (its own nodes as themselves, its
    sub-modules as one box each); a folded run as its nodes. Past ``plan.max_nodes``
    boxes, what is farthest from the opened block is left out (and the note says so);
    ``None`` when the opened block alone does not fit: then there is nothing to draw,
    so ``dot`` is never handed more than the cap.
    """
    block = next((b for b in plan.blocks if b.key == key), None)
    if block is None:
        return None
    with paused_gc():
        return _unfold(step, plan, block, min_repeat, names)


def unfold_path(step: Step, plan: Folded, targets: str | list[str] | tuple[str, ...], *,
                min_repeat: int = MIN_REPEAT, names: bool = True) -> list[tuple[Block, Folded]]:
    """Open folded groups of ``plan`` one inside the other: each opened block and the plan with it open.

    Each target is a module path (``"model.layer1.0"``: the groups around it open first), a
    block key (``"mod:model.layer1"``, ``"fold2"``) or a list of them, opened in turn.
    A module whose nodes the plan draws already is open: nothing more opens for it (the list
    can be empty). Raises ``ValueError`` saying what can be opened when a target is not a folded
    group, or when it holds more than the plan's ``max_nodes`` boxes.
    """
    out: list[tuple[Block, Folded]] = []
    for target in [targets] if isinstance(targets, str) else list(targets):
        module = target[4:] if target.startswith("mod:") else target
        while True:
            block = next((b for b in plan.blocks if b.key == target), None)
            if block is None:
                around = [b for b in plan.blocks if b.kind == "module" and (module + ".").startswith(b.module + ".")]
                block = max(around, key=lambda b: _depth(b.module), default=None)
            if block is None:
                if any(within(n.module, module) for n in plan.step.nodes.values()):
                    break  # the module's own nodes are drawn (open already at this cap)
                can = ", ".join(repr(b.module if b.kind == "module" else b.key) for b in plan.blocks) or "none"
                raise ValueError(f"{target!r} is not a folded group of this picture; the folded groups are: {can}")
            opened = unfold(step, plan, block.key, min_repeat=min_repeat, names=names)
            if opened is None:
                raise ValueError(f"{block.label} holds more than max_nodes={plan.max_nodes} boxes: pass a larger "
                                 "max_nodes (or None) to draw it unfolded")
            out.append((block, opened))
            plan = opened
            if block.key == target or block.module == module:
                break
    return out


def _unfold(step: Step, plan: Folded, block: Block, min_repeat: int, names: bool) -> Folded | None:
    modules = [b for b in plan.blocks if b.kind == "module" and b.key != block.key]
    opened: frozenset[str] = frozenset()
    if block.kind == "module":
        modules += _module_blocks(step, _depth(block.module) + 1, among=set(block.nodes))
    else:
        opened = frozenset(block.nodes)
    shape = outline(step.nodes)
    new = _plan_blocks(step, modules, min_repeat, plan.collapse, shape, opened, "" if opened else block.module)
    hidden: tuple[str, ...] = ()
    if plan.max_nodes is not None and _boxes(new, names) + 1 > plan.max_nodes:  # + 1: the note box
        new, hidden = _cut(new, max(plan.max_nodes - 1, 1), names, shape, first=list(block.nodes))
        inner = {n for n in block.nodes if n not in new.owner}
        if not inner <= set(new.step.nodes):  # the opened block itself does not fit
            return None
    what = f"module {block.module}" if block.kind == "module" else f"the run {block.label}"
    notes = [f"Unfolded {what} ({len(block.nodes):,} nodes); the rest is folded as before."]
    folds = [b for b in new.blocks if b.kind == "fold"]
    if folds:
        notes.append(_folds_note(folds, min_repeat))
    notes += [n for n in plan.notes if n.startswith(_COLLAPSED)]
    if hidden:
        notes.append(f"{len(hidden):,} more objects not drawn (max_nodes={plan.max_nodes}).")
    return replace(new, hidden=hidden, max_nodes=plan.max_nodes, collapse=plan.collapse, notes=tuple(notes),
                   total=plan.total)


def _folds_note(folds: list[Block], min_repeat: int) -> str:
    n = sum(len(b.nodes) for b in folds)
    return (f"Folded {n:,} nodes into {len(folds)} block{'s' if len(folds) != 1 else ''} "
            f"of repeated ops (min_repeat={min_repeat}).")


#: How the note saying that modules were collapsed begins.
_COLLAPSED = "Sub-modules deeper than "


def _example(plan: Folded) -> str:
    """`` (model.h.0.attn)``: the module a box of folded sub-modules is named by, as an example, or nothing."""
    boxes = [b.module for b in plan.blocks if b.kind == "module"]
    return f" ({boxes[0]})" if boxes else ""


def _plan(step: Step, min_repeat: int, depth: int | None, shape: Outline) -> Folded:
    return _plan_blocks(step, _module_blocks(step, depth) if depth is not None else [], min_repeat, depth, shape)


def _plan_blocks(step: Step, blocks: list[Block], min_repeat: int, depth: int | None, shape: Outline,
                 opened: frozenset[str] = frozenset(), quiet: str = "") -> Folded:
    """The plan drawing the module ``blocks`` as boxes, folding runs (not of ``opened`` nodes) around them.

    Names under the module path ``quiet`` (an unfolded module) are drawn only for the tensors
    its drawn nodes use (the parameters of its sub-modules that ran nothing yet stay out).
    """
    blocks = list(blocks)
    owner = {nid: b.key for b in blocks for nid in b.nodes}
    absorbed = _absorb_leaves(step, owner)
    owner.update(absorbed)
    if min_repeat:
        folds = _fold_runs(step, set(owner), min_repeat, shape, opened)
        for b in folds:
            owner.update(dict.fromkeys(b.nodes, b.key))
        blocks += folds
    kept_nodes = {nid: step.nodes[nid] for nid in itertools.filterfalse(owner.__contains__, step.nodes)}
    inside = {step.nodes[nid].variable for nid in absorbed}
    # names of a collapsed module's own tensors (``net.layer1.0.bn1.running_mean``) go inside its box too
    collapsed = tuple(b.module + "." for b in blocks if b.kind == "module")
    bindings = {n: t for n, t in step.bindings.items() if not (collapsed and n.startswith(collapsed))}
    if quiet:
        used = _used_by(step, kept_nodes)
        bindings = {n: t for n, t in bindings.items() if t in used or not n.startswith(quiet + ".")}
    reachable = _tensors_drawn(replace(step, bindings=bindings), kept_nodes, inside)
    kept = replace(step, nodes=kept_nodes, tensors={tid: t for tid, t in step.tensors.items() if tid in reachable},
                   bindings={n: t for n, t in bindings.items() if t in reachable})
    paths: set[str] = set()
    for info in kept_nodes.values():
        paths.update(_ancestors(info.module, depth))
    for block in blocks:
        inner = _ancestors(block.module, depth)
        paths.update(inner[:-1] if block.kind == "module" else inner)
    clusters = tuple(sorted(paths, key=lambda p: (_depth(p), p)))
    return Folded(kept, tuple(blocks), owner, clusters, len(step.tensors) + len(step.nodes))


def _used_by(step: Step, nodes: Mapping[str, NodeInfo]) -> set[str]:
    """Tensors that ``nodes`` write (``.grad``), save, or hang from as ``grad_fn``."""
    out = {info.variable for info in nodes.values() if info.variable is not None}
    out.update(s.tensor for info in nodes.values() for s in info.saved if s.tensor is not None)
    out.update(t.id for t in step.tensors.values() if t.grad_fn in nodes)
    return out


def _ancestors(path: str, depth: int | None) -> list[str]:
    parts = path.split(".") if path else []
    limit = len(parts) if depth is None else min(depth, len(parts))
    return [".".join(parts[: i + 1]) for i in range(limit)]


def _absorb_leaves(step: Step, owner: dict[str, str]) -> dict[str, str]:
    """``AccumulateGrad`` nodes whose consumers all sit in one collapsed module: node id -> block key."""
    if not owner:
        return {}
    blocks_of: dict[str, set[str]] = {}
    for nid, info in step.nodes.items():
        for e in info.inputs:
            if e is not None and step.nodes.get(e.node) is not None and step.nodes[e.node].is_accumulate:
                blocks_of.setdefault(e.node, set()).add(owner.get(nid, ""))
    return {acc: next(iter(keys)) for acc, keys in blocks_of.items() if len(keys) == 1 and "" not in keys}


def _tensors_drawn(step: Step, kept_nodes: Mapping[str, NodeInfo], inside: set[str | None]) -> set[str]:
    """Tensors that a name, a kept node or another drawn tensor (as its base) still points at.

    ``inside`` are the leaves of collapsed modules: their names are not drawn either.
    """
    out = {t for t in step.bindings.values() if t not in inside}
    for info in kept_nodes.values():
        if info.variable is not None:
            out.add(info.variable)
        out.update(s.tensor for s in info.saved if s.tensor is not None)
    for t in step.tensors.values():
        if t.grad_fn in kept_nodes and t.id in step.bindings.values():
            out.add(t.id)
    todo = list(out)
    while todo:
        tinfo = step.tensors.get(todo.pop())
        if tinfo is not None and tinfo.base is not None and tinfo.base not in out:
            out.add(tinfo.base)
            todo.append(tinfo.base)
    return out & set(step.tensors)


def _has_folds(plan: Folded) -> int:
    return int(any(b.kind == "fold" for b in plan.blocks))


def _boxes(plan: Folded, names: bool) -> int:
    return len(plan.step.nodes) + len(plan.step.tensors) + len(plan.blocks) + (len(plan.step.bindings) if names else 0)


def _cut(plan: Folded, max_nodes: int, names: bool, shape: Outline,
         first: list[str] | None = None) -> tuple[Folded, tuple[str, ...]]:
    """Keep the boxes nearest the named outputs, then the other names (breadth first); hide the rest.

    ``shape`` is the outline of the whole step ``plan`` was made from. ``first`` (the nodes of an
    unfolded block) are kept before anything else.
    """
    step = plan.step
    budget = max(0, max_nodes - len(plan.blocks))
    members = {b.key: set(b.nodes) for b in plan.blocks}
    name_count: dict[str, int] = {}
    if names:
        for tid in step.bindings.values():
            name_count[tid] = name_count.get(tid, 0) + 1
    order: list[str] = []
    used = 0
    seen: set[str] = set()
    fed = set(itertools.chain.from_iterable(shape.heads))
    heads_of = dict(zip(shape.ids, shape.heads, strict=True)) if plan.blocks else {}
    outputs = [t for t in step.bindings.values()
               if t in step.tensors and step.tensors[t].grad_fn is not None and step.tensors[t].grad_fn not in fed]
    rest = [t for t in step.bindings.values() if t not in outputs]
    for seeds in (first or [], outputs, rest):  # near the outputs first, then what the other names reach
        todo = list(dict.fromkeys(seeds))
        while todo and used < budget:
            nxt: list[str] = []
            for key in todo:
                block = plan.owner.get(key)
                if block is not None:
                    if block not in seen:  # walk on from the block's inputs
                        seen.add(block)
                        nxt += [b for n in members[block] for b in heads_of[n]
                                if b is not None and b not in members[block]]
                    continue
                cost = 1 + name_count.get(key, 0)
                if key in seen or used + cost > budget:
                    continue
                seen.add(key)
                used += cost
                if key in step.tensors:
                    order.append(key)
                    t = step.tensors[key]
                    nxt += [x for x in (t.grad_fn, t.base) if x is not None]
                elif key in step.nodes:
                    order.append(key)
                    info = step.nodes[key]
                    nxt += [e.node for e in info.inputs if e is not None]
                    nxt += [info.variable] if info.variable else []
                    nxt += [s.tensor for s in info.saved if s.tensor is not None]
            todo = nxt
    keep = set(order)
    hidden = tuple(k for k in list(step.tensors) + list(step.nodes) if k not in keep)
    kept = replace(step, bindings={n: t for n, t in step.bindings.items() if t in keep},
                   tensors={k: v for k, v in step.tensors.items() if k in keep},
                   nodes={k: v for k, v in step.nodes.items() if k in keep})
    return replace(plan, step=kept), hidden


# ---------------------------------------------------------------- drawing
def block_box(block: Block) -> Box:
    rows = [Row(clean(block.label, 60), "head")]
    if block.kind == "module":
        if block.inputs:
            rows.append(Row(clean("in " + ", ".join(shape_text(s) for s in block.inputs), 60)))
        if block.outputs:
            rows.append(Row(clean("out " + ", ".join(shape_text(s) for s in block.outputs), 60)))
    else:
        rows.append(Row(f"{len(block.nodes):,} nodes folded"))
    return Box(block.key, "node", "op", tuple(rows), ("folded",), block.key)


def block_links(original: Step, plan: Folded) -> list[Link]:
    """Arrows to and from blocks, from the original step's edges (one per pair of drawn ends)."""
    drawn_nodes = set(plan.step.nodes)
    drawn_tensors = set(plan.step.tensors)
    end = dict(plan.owner)  # node id -> what is drawn for it: its block, or itself
    end.update(zip(drawn_nodes, drawn_nodes, strict=True))
    end_of = end.get
    shape = outline(original.nodes)

    links: dict[str, Link] = {}
    for nid, inputs in zip(shape.ids, shape.heads, strict=True):  # no call per node: 100,000 nodes happen
        tail = end_of(nid)
        if tail is None:
            continue
        for b in inputs:
            if b is None:
                continue
            head = end_of(b)
            if head is not None and head != tail and (tail not in drawn_nodes or head not in drawn_nodes):
                link = Link(tail, head, "next")
                links.setdefault(link.key, link)
        if tail not in drawn_nodes and nid in shape.leaves:
            variable = original.nodes[nid].variable
            if variable in drawn_tensors:
                link = Link(tail, variable, "variable")
                links.setdefault(link.key, link)
    for t in plan.step.tensors.values():
        if t.grad_fn is not None and t.grad_fn not in drawn_nodes:
            head = end_of(t.grad_fn)
            if head is not None:
                link = Link(t.id, head, "grad_fn")
                links.setdefault(link.key, link)
    return list(links.values())


def note_box(plan: Folded) -> Box | None:
    if not plan.notes:
        return None
    drawn = len(plan.step.tensors) + len(plan.step.nodes) + len(plan.blocks)
    rows = [Row(f"showing {drawn:,} boxes for {plan.total:,} objects", "head")]
    rows += [Row(clean(n, 140)) for n in plan.notes]
    return Box("gt-note", "note", "const", tuple(rows), (), "note")


def _cluster_lines(plan: Folded, boxes: list[Box], module_of: dict[str, str]) -> list[str]:
    """Box statements nested in one ``subgraph cluster_<path>`` per module path."""
    children: dict[str, list[str]] = {}
    for path in plan.clusters:
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        children.setdefault(parent, []).append(path)
    members: dict[str, list[Box]] = {}
    for box in boxes:
        members.setdefault(module_of.get(box.key, ""), []).append(box)

    def emit(path: str, indent: str) -> list[str]:
        lines = [indent + box_dot(b).strip() for b in members.get(path, [])]
        for child in children.get(path, []):
            label = quote(child)
            lines.append(f"{indent}subgraph {quote('cluster_' + child)} {{")
            lines.append(f'{indent}  label={label} id={quote("gt-cluster-" + child)} style="rounded" '
                         f'color="#adb5bd" fontsize=10;')
            lines += emit(child, indent + "  ")
            lines.append(f"{indent}}}")
        return lines

    return emit("", "  ")


def folded_dot(
    step: Step,
    *,
    min_repeat: int = MIN_REPEAT,
    collapse: int | None = None,
    max_nodes: int | None = MAX_NODES,
    names: bool = True,
    show_attrs: bool = True,
    show_saved: bool = True,
    rankdir: str = "LR",
    title: bool = True,
) -> str:
    """The picture of ``step`` as DOT, folded and capped by :func:`fold` (same options)."""
    plan = fold(step, min_repeat=min_repeat, collapse=collapse, max_nodes=max_nodes, names=names)
    return plan_dot(step, plan, names=names, show_attrs=show_attrs, show_saved=show_saved, rankdir=rankdir,
                    title=title)


def plan_dot(
    step: Step, plan: Folded, *, names: bool = True, show_attrs: bool = True, show_saved: bool = True,
    rankdir: str = "LR", title: bool = True,
) -> str:
    """DOT of a :class:`Folded` plan of ``step``."""
    with paused_gc():
        return _plan_dot(step, plan, names, show_attrs, show_saved, rankdir, title)


def _plan_dot(
    step: Step, plan: Folded, names: bool, show_attrs: bool, show_saved: bool, rankdir: str, title: bool
) -> str:
    sc = scene(plan.step, names=names, show_attrs=show_attrs, show_saved=show_saved)
    blocks = [block_box(b) for b in plan.blocks]
    note = note_box(plan)
    module_of = {nid: _cluster_of(info.module, plan) for nid, info in plan.step.nodes.items()}
    module_of.update({b.key: _cluster_of(b.module, plan, b.kind == "module") for b in plan.blocks})
    body = [b for b in sc.boxes if b.group != "name"] + blocks + ([note] if note else [])
    lines = _cluster_lines(plan, body, module_of)
    links = tuple(sc.links) + tuple(block_links(step, plan))
    full = Scene(tuple(b for b in sc.boxes if b.group == "name") + tuple(blocks), links, sc.names)
    head = None
    if title:
        head = f"step {step.number}, line {step.lineno}: {step.code}" if step.code else "graph"
        if plan.notes:
            head += f" ({plan.total:,} objects, folded)"
    return scene_dot(full, rankdir=rankdir, title=head, boxes=lines)


def _cluster_of(path: str, plan: Folded, is_block: bool = False) -> str:
    """The innermost drawn cluster a box with module ``path`` sits in."""
    if is_block:
        path = path.rsplit(".", 1)[0] if "." in path else ""
    while path and path not in plan.clusters:
        path = path.rsplit(".", 1)[0] if "." in path else ""
    return path


def folded_text(plan: Folded) -> str:
    """The text twin of a folded picture: what each block stands for, and what was left out."""
    lines = [f"{plan.total:,} objects: {len(plan.step.tensors):,} tensors and {len(plan.step.nodes):,} nodes "
             f"drawn, {len(plan.blocks):,} blocks, {len(plan.hidden):,} hidden"]
    for b in plan.blocks:
        where = f" in {b.module}" if b.module else ""
        if b.kind == "fold":
            lines.append(f"  {b.key}: {b.label}{where} ({len(b.nodes):,} nodes)")
        else:
            lines.append(f"  {b.key}: module {b.module}: {b.count} nodes, {b.params:,} params")
    lines += [f"  note: {n}" for n in plan.notes]
    return "\n".join(lines) + "\n"

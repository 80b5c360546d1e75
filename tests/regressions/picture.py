"""What the learner reads equals what the trace holds: numbers, boxes, arrows, frames.

The fidelity oracle (``fidelity.py``) proves a trace's records equal the live
objects. This module proves the next link of the chain, from records to what
is drawn and printed:

1. **Numbers.** Every value text of a tensor (and of its ``.grad``) reads back,
   in the tensor's own dtype, to exactly the values the record holds; a
   large tensor's ``min`` and ``max`` read back to its stats.
2. **Boxes and arrows.** A step's scene draws one box per name, tensor and
   node the step holds, each headed by its id (a tensor's version too), with
   the value and ``.grad`` texts of that record (a cut one is a prefix ended
   with ``…``), an arrow from each name to its tensor, from each tensor to
   its ``grad_fn`` and from each node to each of its inputs: no more, no less.
3. **Memos.** The scenes a film draws with its box memo equal scenes drawn
   afresh, step by step (a memo keyed wrongly would show a stale box).
4. **Frames.** The film's frame of each step shows exactly that step's boxes
   and arrows, each box with that step's rows, and every shown element
   exists in the step's laid-out sheet.
5. **JSON.** A trace read back from its JSON writes the very same JSON.
"""

from __future__ import annotations

import html
import math
from typing import Any

import torch

from gradtrace.model import Step, Summary, TensorInfo, Trace
from gradtrace.render.film import film
from gradtrace.render.fold import fold
from gradtrace.render.layout import FILM_MAX_NODES, film_scenes, folded_scene, is_big, name_keys, union
from gradtrace.render.scene import Box, Scene, scene
from gradtrace.render.words import clean, op_name

_DTYPES = {str(d).replace("torch.", ""): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
    torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool)}
_LITERALS = {"__builtins__": {}, "nan": math.nan, "inf": math.inf, "True": True, "False": False}


def _read_back(text: str, dtype: torch.dtype) -> torch.Tensor:
    """The values a learner reads in ``text`` (``[1.5, nan]``, ``42.``, ``[1.+2.j]``), in ``dtype``."""
    return torch.tensor(eval(text, _LITERALS), dtype=dtype)  # noqa: S307 - a value text the tracer wrote


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape:
        return False
    if a.is_complex():
        return _same(torch.view_as_real(a), torch.view_as_real(b))
    if a.is_floating_point():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool((a == b).all())


def check_summary(where: str, s: Summary | None, dtype_name: str) -> None:
    """``s.text`` reads back to ``s.values`` (or to ``s.stats``' min and max) in the dtype."""
    dtype = _DTYPES.get(dtype_name.replace("torch.", ""))
    if s is None or dtype is None or s.layout != "strided":
        return
    text = clean(s.text)
    if s.values is not None:
        shown = _read_back(text, dtype)
        held = torch.tensor(s.values, dtype=dtype)
        assert _same(shown, held), f"{where}: shows {text!r}, holds {s.values!r} ({dtype_name})"
    elif s.stats is not None and text.startswith("min ") and not dtype.is_complex:
        words = text.split()
        assert words[0::2][:3] == ["min", "mean", "max"], f"{where}: {text!r}"
        for label, word, held in (("min", words[1], s.stats[0]), ("max", words[5], s.stats[2])):
            shown = _read_back(word, dtype)
            assert _same(shown, torch.tensor(held, dtype=dtype)), f"{where}: {label} shows {word}, holds {held!r}"


#: how many records' texts were read back (a run that checks nothing is caught by the tests)
CHECKED = [0]


def check_numbers(trace: Trace) -> None:
    seen: set[int] = set()
    for step in trace.steps:
        for t in step.tensors.values():
            if id(t) in seen:
                continue
            seen.add(id(t))
            check_summary(f"step {step.number} {t.id} value", t.value, t.dtype)
            check_summary(f"step {step.number} {t.id} grad", t.grad, t.dtype)
        for n in step.nodes.values():
            for sv in n.saved:
                owner = step.tensors.get(sv.tensor) if sv.tensor is not None else None
                if owner is not None and id(sv) not in seen:
                    seen.add(id(sv))
                    check_summary(f"step {step.number} {n.id} saved {sv.name}", sv.value, owner.dtype)
        for e in step.events:
            for change in [getattr(e, "change", None), *getattr(e, "grads", ())]:
                owner = step.tensors.get(change.tensor) if change is not None else None
                if owner is not None:
                    check_summary(f"step {step.number} {change.tensor} grad before", change.before, owner.dtype)
                    check_summary(f"step {step.number} {change.tensor} grad after", change.after, owner.dtype)
    CHECKED[0] += len(seen)


def _shown(row: str, full: str, where: str) -> None:
    """``row`` is ``full`` or ``full`` cut short, ending with ``…``."""
    if row != full:
        assert row.endswith("…") and full.startswith(row[:-1]), f"{where}: shows {row!r} for {full!r}"


def _tensor_box(step: Step, t: TensorInfo, box: Box) -> None:
    where = f"step {step.number} box {t.id}"
    head = box.rows[0].text
    assert f"{t.id} " in head and head.endswith(f" v{t.version}"), f"{where}: head {head!r}"
    data, grad = box.rows[1].text, box.rows[2].text
    assert data.startswith("data ") and grad.startswith("grad "), f"{where}: rows {data!r}, {grad!r}"
    _shown(data[5:], clean(t.value.text), where)
    _shown(grad[5:], "-" if t.grad is None else clean(t.grad.text), where)
    views = [r.text for r in box.rows if r.text.startswith("view of ")]  # said exactly for a view, of its base
    assert views == ([] if t.base is None else [f"view of {t.base}"]), f"{where}: says {views}, base {t.base}"


def check_scene(step: Step, sc: Scene) -> None:
    """The scene of ``step`` draws what the step holds, each box with its own record's texts."""
    boxes = {b.key: b for b in sc.boxes}
    names = [b for b in sc.boxes if b.group == "name"]
    assert [b.label for b in names] == list(step.bindings), f"step {step.number}: names {[b.label for b in names]}"
    assert set(boxes) - {b.key for b in names} == set(step.tensors) | set(step.nodes), f"step {step.number}: boxes"
    for t in step.tensors.values():
        _tensor_box(step, t, boxes[t.id])
    for n in step.nodes.values():
        head = boxes[n.id].rows[0].text
        assert head.endswith(f"{n.id} {op_name(n.name)}") or head.endswith("…"), f"step {step.number}: {head!r}"
    want = {("name", sc.names[name], tid) for name, tid in step.bindings.items() if tid in step.tensors}
    want |= {("grad_fn", t.id, t.grad_fn) for t in step.tensors.values() if t.grad_fn in step.nodes}
    for n in step.nodes.values():
        want |= {("next", n.id, e.node) for e in n.inputs if e is not None and e.node in step.nodes}
        if n.variable is not None and n.variable in step.tensors:
            want.add(("variable", n.id, n.variable))
        want |= {("saved", n.id, s.tensor) for s in n.saved if s.tensor is not None and s.tensor in step.tensors}
    got = {(k.kind, k.tail, k.head) for k in sc.links}
    assert got == want, f"step {step.number}: arrows drawn but not held {got - want}, held but not drawn {want - got}"


def _fresh_scenes(trace: Trace) -> list[Scene]:
    keys = name_keys(trace)
    if not is_big(trace):
        return [scene(step, name_keys=keys) for step in trace.steps]
    return [folded_scene(step, fold(step, max_nodes=FILM_MAX_NODES), keys, False, _NoMemo()) for step in trace.steps]


class _NoMemo:
    """A box maker that remembers nothing (what a film's memo must be equivalent to)."""

    def tensor(self, step: Step, tid: str, out: set[str], marks: list[str], panel: bool, limit: int,
               names: list[str]) -> Box:
        from gradtrace.render.scene import _tensor_box
        return _tensor_box(step, tid, out, marks, panel, limit, names)

    def node(self, node: Any, marks: list[str], attrs: bool, saved: bool, limit: int) -> Box:
        from gradtrace.render.scene import _node_box
        return _node_box(node, marks, attrs, saved, limit)

    def name(self, key: str, name: str, marks: tuple[str, ...], limit: int) -> Box:
        from gradtrace.render.scene import _name_box
        return _name_box(key, name, marks, limit)

    def link(self, tail: str, head: str, kind: str, marks: tuple[str, ...] = ()) -> Any:
        from gradtrace.render.scene import Link
        return Link(tail, head, kind, marks)


def _by_place(sc: Scene) -> Scene:
    """``sc`` as a film lays out a long loop: boxes named by place (``c1``...), names keep their keys."""
    rename = {b.key: b.key if b.group == "name" else f"c{i}" for i, b in enumerate(sc.boxes, 1)}
    boxes = tuple(Box(rename[b.key], b.group, b.kind, b.rows, b.marks, b.label) for b in sc.boxes)
    from gradtrace.render.scene import Link
    links = tuple(Link(rename.get(k.tail, k.tail), rename.get(k.head, k.head), k.kind, k.marks) for k in sc.links)
    return Scene(boxes, links, sc.names)


def check_film(trace: Trace) -> None:
    fresh = _fresh_scenes(trace)
    memo = film_scenes(trace)
    for step, a, b in zip(trace.steps, memo, fresh, strict=True):
        assert a == b, f"step {step.number}: the film's memo draws another picture than a fresh scene"
    if not is_big(trace):
        for step, sc in zip(trace.steps, fresh, strict=True):
            check_scene(step, sc)
    f = film(trace)
    drawn = [_by_place(sc) for sc in fresh] if len(union(fresh).boxes) > FILM_MAX_NODES else fresh
    for step, entry, sc in zip(trace.steps, f["steps"], drawn, strict=True):
        frame = f["frames"][entry["frame"]]
        want = (["gt-names"] if any(b.group == "name" for b in sc.boxes) else [])
        want += ["gt-" + b.key for b in sc.boxes] + ["gt-e-" + k.key for k in sc.links]
        assert frame["visible"] == want, f"step {step.number}: the frame shows {set(frame['visible']) ^ set(want)}"
        for b in sc.boxes:
            rows = f["rows"][frame["texts"]["gt-" + b.key]]
            assert rows == [[r.text, r.cls] for r in b.rows], f"step {step.number} {b.key}: frame rows {rows}"
        sheet = html.unescape(f["sheets"][entry["sheet"]])
        missing = [dom for dom in frame["visible"] if f'id="{dom}"' not in sheet]
        assert not missing, f"step {step.number}: shown but not laid out: {missing[:5]}"


def check_json(trace: Trace) -> None:
    text = trace.to_json()
    assert Trace.from_json(text).to_json() == text, "the JSON does not read back to the same trace"


def check_picture(trace: Trace) -> None:
    """All of the above for one trace."""
    check_numbers(trace)
    check_film(trace)
    check_json(trace)

"""What a film shows beside its pictures: each step's sentences and each drawn object's details.

Place in the pipeline: tracer -> model -> explain -> **render** (film: layout -> details, views) -> notebook/cli.

A step's entry holds what the step did in words (its events), the one
``backward()`` failure worth predicting, its error explained in plain words with
the objects it names (the culprits, from :mod:`gradtrace.explain.errors`), its
reverse pass in numbers and node by node, and a detail for each drawn box. The
entries of the ``backward()`` steps also say what the pass changed (freed saved
values, gradients, kept ``.grad``). A detail is ``{"type", "id", "title",
"fields"}``, every learner-provided string in it plain text; :class:`FilmMemo`
stores each distinct one once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..explain.errors import explain_error
from ..model import FREED, Backward, Error, NodeInfo, Prediction, Step, TensorInfo, Trace
from .backward import diff, flow
from .fold import fold
from .layout import FILM_MAX_NODES, FilmMemo, frame_of, is_big
from .scene import Box, Scene
from .text import reverse_pass, saved_state_text
from .words import FORBIDDEN, clean, event_words, node_ref, op_name, prediction_words, shape_text, summary_text

__all__ = ["backward_entries", "details_of", "next_backward", "step_entry"]


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
        ["grad_fn", FORBIDDEN if t.forbidden else node_ref(step, t.grad_fn)],
        ["requires_grad", str(t.requires_grad)],
    ]
    if t.value.stats is not None:
        fields.append(["min / mean / max", " / ".join(f"{v:g}" for v in t.value.stats)])
    if t.base is not None:
        fields.append(["view of", t.base])
    if t.is_param:
        fields.append(["parameter", "yes"])
    return {"type": "tensor", "id": t.id, "title": f"tensor {t.id}", "fields": fields}


def _node_detail(step: Step, n: NodeInfo) -> dict[str, Any]:
    inputs = ", ".join("None" if e is None else node_ref(step, e.node) for e in n.inputs) or "(none)"
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


def details_of(step: Step, sc: Scene, memo: FilmMemo, own: dict[str, str] | None = None) -> dict[str, int]:
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


def _explained(trace: Trace, step: Step, error: Error) -> tuple[str | None, tuple[str, ...]]:
    """The plain-words explanation of ``error`` and the ids it names (None when it is not recognised)."""
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


def next_backward(trace: Trace) -> list[set[str] | None]:
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
                upcoming |= step.reachable([call.root_node or (root.grad_fn if root is not None else None)])
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


def step_entry(trace: Trace, step: Step, sc: Scene, sheet: int, own: dict[str, str], upcoming: set[str] | None,
                memo: FilmMemo) -> dict[str, Any]:
    dom = _dom_of(own)
    explanation: str | None = None
    culprits: tuple[str, ...] = ()
    for error in step.events_of("error"):
        assert isinstance(error, Error)
        explanation, culprits = _explained(trace, step, error)
    predicted = _prediction(step, upcoming)
    prediction = None if predicted is None else prediction_words(step, predicted)
    frame, frame_ref = frame_of(sc, memo)
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
        "details": details_of(step, sc, memo, own),
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


def backward_entries(trace: Trace, back: list[dict[str, str]], steps: list[dict[str, Any]],
              frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    folded = is_big(trace)
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

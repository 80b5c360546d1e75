"""Words shared by every renderer: how ids, shapes and events read in English.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

Pure functions of model objects. Everything learner-provided (names, code, reprs,
op names) goes through :func:`clean` first, so a control character can never
break a line, a table row or a terminal.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata

from .. import model
from ..explain.errors import culprits
from ..model import (
    Backward,
    Bind,
    Create,
    Error,
    Event,
    Grad,
    GradChange,
    Mutate,
    Prediction,
    Rebind,
    Root,
    Step,
    Summary,
    Unbind,
    Untracked,
)

__all__ = [
    "FORBIDDEN",
    "clean",
    "fit",
    "shown_filename",
    "op_name",
    "shape_text",
    "summary_text",
    "node_ref",
    "tensor_ref",
    "event_words",
    "prediction_words",
]

_ESCAPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def clean(text: object, limit: int | None = None) -> str:
    """``text`` on one line: control/format characters shown as ``\\xNN``/``\\uNNNN``.

    With ``limit``, longer text is cut and ends with ``…``.
    """
    text = str(text)
    if text.isascii() and text.isprintable():  # the common case: nothing to escape (a tab is not printable)
        return text if limit is None or len(text) <= limit else text[: max(limit - 1, 0)] + "…"
    out = []
    for ch in text:
        if ch == "\t":
            out.append(" ")
        elif unicodedata.category(ch) in _ESCAPED_CATEGORIES:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    result = "".join(out)
    if limit is not None and len(result) > limit:
        result = result[: max(limit - 1, 0)] + "…"
    return result


def fit(text: object, limit: int) -> str:
    """``text`` cleaned and, when longer than ``limit``, cut **between words** and ended with ``…``.

    A word is cut only when it alone is longer than half the room (a long number or
    identifier); short words are never split (no ``ran the`` / ``m:``).
    """
    s = clean(text)
    if len(s) <= limit:
        return s
    head = s[: max(limit - 1, 0)]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:·=") + "…"


def shown_filename(filename: str) -> str:
    """How a program's file is named in titles: its base name, never a temporary directory's path.

    A notebook cell or a string of code is run from a file the learner never made
    (``/tmp/ipykernel_41/1234.py``); such a file is called ``your code``.
    """
    import os
    import tempfile

    if filename.startswith("<") and filename.endswith(">"):
        return "your code"
    norm = os.path.normpath(filename)
    temp = os.path.normpath(tempfile.gettempdir())
    base = os.path.basename(norm) or norm
    if norm.startswith(temp + os.sep) or "ipykernel_" in norm:
        return "your code"
    return clean(base)


def op_name(name: str) -> str:
    """A node's op name as learners know it (:func:`gradtrace.model.op_name`), made safe to print."""
    return clean(model.op_name(name))


def shape_text(shape: tuple[int, ...]) -> str:
    """Python's tuple spelling: ``()``, ``(3,)``, ``(2, 3)``."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def summary_text(summary: Summary | None, limit: int | None = None) -> str:
    """The short text of a value, ``-`` for none (fitted to ``limit`` between numbers)."""
    if summary is None:
        return "-"
    return clean(summary.text) if limit is None else fit(summary.text, limit)


def node_ref(step: Step, node_id: str | None) -> str:
    """``n2 (PowBackward0)``, or the bare id when the step no longer holds it."""
    if node_id is None:
        return "None"
    node = step.nodes.get(node_id)
    return node_id if node is None else f"{node_id} ({op_name(node.name)})"


def tensor_ref(step: Step, tensor_id: str | None) -> str:
    """``t1 (x)`` with the names that refer to it at this step, or the bare id."""
    if tensor_id is None:
        return "None"
    names = step.names_of(tensor_id)
    return tensor_id if not names else f"{tensor_id} ({', '.join(clean(n) for n in names)})"


def _holders(step: Step, names: tuple[str, ...], nodes: tuple[str, ...]) -> str:
    parts = [f"name {clean(n)}" for n in names] + [node_ref(step, n) for n in nodes]
    return ", ".join(parts)


def _held(step: Step, old: str, names: tuple[str, ...], nodes: tuple[str, ...], elsewhere: bool = False) -> str:
    if not names and not nodes:
        if elsewhere:
            return (f"{old} is no longer named or saved by a node, but it is not gone: something this step "
                    "does not show (a tuple, list, iterator or closure) still holds it")
        return f"{old} is no longer held by anything and is gone"
    return f"{old} is unchanged and still held by {_holders(step, names, nodes)}"


#: How many ``.grad`` changes (and freed values) one backward() sentence lists before it counts the rest.
MAX_LISTED = 6
#: What a tensor PyTorch forbids in autograd is (``TensorInfo.forbidden``): in PyTorch's own terms.
FORBIDDEN = ("PyTorch refuses to tell: a view made under no_grad whose base was then changed in place "
             "is forbidden in autograd")


def _grad_change(step: Step, change: GradChange) -> str:
    before = "None" if change.before is None else summary_text(change.before)
    after = "None" if change.after is None else summary_text(change.after)
    return f".grad of {tensor_ref(step, change.tensor)}: {before} → {after}"


def _create(step: Step, e: Create) -> str:
    parts = []
    if e.tensors:
        parts.append("new tensor " + ", ".join(_tensor_kind(step, t) for t in e.tensors))
    if e.nodes:
        parts.append("new node " + ", ".join(node_ref(step, n) for n in e.nodes))
    parts.extend(f"{t} is the .grad of {tensor_ref(step, owner)}, there before this statement (no new tensor)"
                 for t, owner in e.existing_grads)
    parts.extend(f"{tensor_ref(step, t)} shares memory with {tensor_ref(step, other)}: writing to one changes the other"
                 for t, other in e.shares)
    return "; ".join(parts) if parts else "nothing new"


def _tensor_kind(step: Step, tensor_id: str) -> str:
    info = step.tensors.get(tensor_id)
    return tensor_id if info is None else f"{tensor_id} ({info.kind})"


#: in-place calls that set a flag, not values: the version counter stays
_FLAG_OPS = ("requires_grad_", "detach_")


def _flag(step: Step, e: Mutate) -> str:
    """A flag set in place (``requires_grad_``, ``detach_``): what moved, and that values and version stay."""
    kept = f"its values and version {e.version_after} unchanged"
    if e.op == "detach_":
        return (f"{tensor_ref(step, e.tensor)} detached in place by detach_: grad_fn {e.grad_fn_before or 'None'} → "
                f"{e.grad_fn_after or 'None'}, {kept}")
    info = step.tensors.get(e.tensor)
    now = "now requires grad" if info is None or info.requires_grad else "no longer requires grad"
    return f"{tensor_ref(step, e.tensor)} {now} (requires_grad_ sets a flag), {kept}"


def _mutate(step: Step, e: Mutate) -> str:
    if e.unseen:
        return (f"{tensor_ref(step, e.tensor)} has new values but the same version {e.version_after}: "
                f"{_unseen_how(step.code)}, so values saved from it are not marked stale")
    if e.op in _FLAG_OPS and e.version_before == e.version_after and not e.via:
        return _flag(step, e)
    how = f" by {clean(e.op)}" if e.op else _inside(step.code)
    if e.values_kept:  # a view beside the one written: it shares the version counter, not the written elements
        text = (f"{tensor_ref(step, e.tensor)} keeps its values, but shares a version counter with "
                f"{_relation(step, e)}, written{how}: version {e.version_before} → {e.version_after}")
    else:
        text = (f"{tensor_ref(step, e.tensor)} changed in place{how}{_through(step, e)}: "
                f"version {e.version_before} → {e.version_after}")
    if e.grad_fn_before != e.grad_fn_after:
        text += f", grad_fn {e.grad_fn_before or 'None'} → {e.grad_fn_after or 'None'}"
    for node_id, saved in e.stale:
        text += f"; saved value {clean(saved)} of {node_ref(step, node_id)} is now stale"
    return text


@functools.lru_cache(maxsize=256)
def _inside(code: str) -> str:
    """`` inside opt.step()`` when the statement is one call (``opt.step()``, ``y = f(x)``) and the op that
    changed a tensor was not heard: the change happened in that call. Empty otherwise."""
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:  # a compound statement's header
        return ""
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.Expr, ast.Assign)):
        return ""
    call = tree.body[0].value
    if not isinstance(call, ast.Call) or any(isinstance(n, ast.Call) for n in ast.walk(call) if n is not call):
        return ""
    return f" inside {clean(ast.unparse(call.func))}()"


#: what a statement's text shows of a write the version counter missed, and how that is said
_UNSEEN_HOW = (
    (re.compile(r"\.\s*data\b"), "this statement writes through .data, which autograd does not count"),
    (re.compile(r"\bnumpy\b|\bnp\s*\.|from_numpy|__array__"),
     "written by NumPy through memory they share, which autograd does not count"),
)


def _unseen_how(code: str) -> str:
    """How a write the version counter missed happened, as far as the statement's text tells."""
    for pattern, words in _UNSEEN_HOW:
        if pattern.search(code):
            return words
    return ("written where autograd does not count it (.data =, set_, NumPy, another alias, a dispatch mode's "
            "handler, or an op's own kernel, as batch norm updates its running statistics)")


def _through(step: Step, e: Mutate) -> str:
    """How the tensor the call was made on (``via``) relates to the one that changed along with it."""
    return f" through {_relation(step, e)}" if e.via else ""


def _relation(step: Step, e: Mutate) -> str:
    """``via`` as seen from the tensor that changed along with it: its base, its view, a sibling view."""
    changed, called = step.tensors.get(e.tensor), step.tensors.get(e.via or "")
    if changed is not None and changed.base == e.via:
        return f"its base {e.via}"
    if called is not None and called.base == e.tensor:
        return f"its view {e.via}"
    if changed is not None and called is not None and changed.base and changed.base == called.base:
        return f"{e.via}, another view of the same base"
    return f"{e.via}, which shares its memory"


#: how each backward call is written
CALLS = {"backward": "backward()", "autograd.backward": "torch.autograd.backward()",
         "autograd.grad": "torch.autograd.grad()"}


def _backward(step: Step, e: Backward) -> str:
    parts = [f"{CALLS.get(e.call, e.call)} from {_start(step, Root(e.root, e.root_node, e.gradient))}"]
    parts.extend(f"and from {_start(step, r)}" for r in e.others)
    parts.extend(_grad_change(step, g) for g in e.grads[:MAX_LISTED])
    if len(e.grads) > MAX_LISTED:
        parts.append(f"... and {len(e.grads) - MAX_LISTED} more .grad changes (click a tensor for its grad)")
    if e.retain_graph:
        parts.append("graph kept (retain_graph=True)")
    elif e.freed:
        freed = ", ".join(f"{clean(s)} of {node_ref(step, n)}" for n, s in e.freed[:MAX_LISTED])
        if len(e.freed) > MAX_LISTED:
            nodes = len({n for n, _ in e.freed})
            freed += f" ... {len(e.freed)} saved values of {nodes} nodes in all"
        parts.append(f"saved values freed: {freed}")
    return "\n".join(parts)  # one fact a line: numbers end in "." and read badly before ";"


def _start(step: Step, r: Root) -> str:
    """A tensor a backward call starts from, and the gradient given for it."""
    if r.tensor is not None:
        text = tensor_ref(step, r.tensor)
    elif r.node is not None:
        text = f"a tensor no name holds (its grad_fn is {node_ref(step, r.node)})"
    else:
        text = "a tensor no name holds"
    return text + (f" with gradient {summary_text(r.gradient)}" if r.gradient is not None else "")


def _untracked(step: Step, e: Untracked) -> str:
    text = f"{e.tensor} was made outside the graph ({clean(e.reason)})"
    if e.shares_with:
        text += f"; it shares storage with {tensor_ref(step, e.shares_with)}"
    return text


def _error(e: Error) -> str:
    where = f" at line {e.lineno}" if e.lineno is not None else ""
    return f"{clean(e.type)}{where}: {clean(e.message)}"


def event_words(step: Step, event: Event) -> str:
    """One event as a sentence, in the terms of ``step``."""
    if isinstance(event, Create):
        return _create(step, event)
    if isinstance(event, Bind):
        return f"{clean(event.name)} now names {_tensor_kind(step, event.new)}"
    if isinstance(event, Rebind):
        held = _held(step, event.old, event.held_by_names, event.held_by_nodes, event.held_elsewhere)
        return f"{clean(event.name)} now names {event.new}; {held}"
    if isinstance(event, Unbind):
        held = _held(step, event.old, event.held_by_names, event.held_by_nodes, event.held_elsewhere)
        return f"{clean(event.name)} no longer names {event.old}; {held}"
    if isinstance(event, Mutate):
        return _mutate(step, event)
    if isinstance(event, Backward):
        return _backward(step, event)
    if isinstance(event, Grad):
        return _grad_change(step, event.change) + " (no backward pass)"
    if isinstance(event, Untracked):
        return _untracked(step, event)
    text = _error(event)
    involved = [node_ref(step, k) if k in step.nodes else tensor_ref(step, k) for k in culprits(step, event)]
    return text + (f"\ninvolved: {', '.join(involved)}" if involved else "")


def prediction_words(step: Step, p: Prediction) -> str:
    """``backward() from f will fail: ...``."""
    names = step.names_of(p.root)
    who = ", ".join(clean(n) for n in names) if names else p.root
    why = (
        f"saved value {clean(p.saved)} of {node_ref(step, p.node)} was saved at version "
        f"{p.saved_version} but {p.tensor or 'the tensor'} is now at version {p.version}"
    )
    return f"backward() from {who} will fail: {why}"

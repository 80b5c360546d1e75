"""Autograd errors and warnings explained: what happened, why, who is involved, how to fix it.

Place in the pipeline: tracer -> model -> **explain** -> render.

:func:`explain_error` reads an exception (or warning) raised by PyTorch and,
given the :class:`~gradtrace.model.Step` (or whole :class:`~gradtrace.model.Trace`)
where it happened, names the tensors and nodes involved: for a value "modified
by an inplace operation", the node that saved it and the line that changed it.
Messages are recognised by their stable wording; anything else is said to be
unrecognised, with PyTorch's own message kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model import FREED, STALE, Create, Mutate, NodeInfo, SavedValue, Step, TensorInfo, Trace, op_name


@dataclass(frozen=True)
class ErrorExplanation:
    """An error in plain words. ``culprits`` are tensor and node ids of the Step given."""

    kind: str
    title: str
    what: str
    why: str
    fix: str
    error_type: str
    message: str
    culprits: tuple[str, ...] = ()
    details: tuple[tuple[str, str], ...] = ()
    line: int | None = None
    code: str | None = None
    #: the index of the trace step that made the change (``trace.steps[step]``, as the stepper numbers it)
    step: int | None = None
    #: each culprit as the stepper names it: ``n3 (MulBackward0)``, ``t2 (b)``
    culprit_labels: tuple[str, ...] = ()

    @property
    def recognised(self) -> bool:
        return self.kind != "unknown"

    def detail(self, key: str) -> str | None:
        return dict(self.details).get(key)

    def to_text(self) -> str:
        lines = [self.title, f"  What happened: {self.what}", f"  Why: {self.why}"]
        if self.culprits:
            lines.append(f"  Involved: {', '.join(self.culprit_labels or self.culprits)}")
        lines += [f"  Saved by: {v}" for k, v in self.details if k == "saved_by"]
        if self.code is not None:
            # self.step is the position in Trace.steps; people read steps numbered from 1 (Step.number)
            at = f"step {self.step + 1}, line {self.line}" if self.step is not None else f"line {self.line}"
            lines.append(f"  Changed at {at}: {self.code}")
        lines.append(f"  Fix: {self.fix}")
        lines.append(f"  ({self.error_type}: {self.message.splitlines()[0] if self.message else ''})")
        return "\n".join(lines)

    __str__ = to_text


_VERSION_CHECK = ("Every in-place operation bumps a tensor's version; backward() checks the saved version and "
                  "refuses to use a value that has changed.")


@dataclass(frozen=True)
class _Known:
    kind: str
    pattern: str
    title: str
    what: str
    why: str
    fix: str


_KNOWN = (
    _Known("backward_twice", r"backward through the graph a second time",
           "backward() through a graph whose saved values were freed",
           "The graph was already used by a backward() call, which freed the values its nodes had saved.",
           "To save memory, backward() frees the intermediate values saved for the gradient as soon as it "
           "has used them. A second backward() through the same nodes finds them gone.",
           "Call backward(retain_graph=True) the first time if you really need a second pass, or rebuild "
           "the graph (run the forward computation again) before the next backward()."),
    _Known("inplace_leaf_view", r"a view of a leaf Variable that requires grad is being used in an in-place",
           "An in-place change through a view of a leaf that requires grad",
           "A view of a leaf tensor (for example x[0] or x[:2]) was changed in place, which changes the leaf.",
           "A leaf that requires grad is a starting point of the graph: autograd must know its value as it "
           "was. Writing into part of it would silently change that starting point.",
           "Change it under `with torch.no_grad():` (as an optimizer does), or work on a copy: "
           "y = x.clone(); y[0] = 3."),
    _Known("inplace_leaf", r"a leaf Variable that requires grad is being used in an in-place",
           "An in-place change of a leaf that requires grad",
           "A leaf tensor with requires_grad=True was changed in place (add_, mul_, x += 1, x[...] = ...).",
           "A leaf that requires grad is a starting point of the graph: autograd must know its value as it "
           "was. An in-place change would silently change that starting point.",
           "Write x = x + 1 (a new tensor: the name moves, the leaf stays), or change the leaf under "
           "`with torch.no_grad():` as an optimizer step does."),
    _Known("inplace_modified", r"modified by an inplace operation",
           "A value saved for backward was changed in place",
           "A node saved a tensor during the forward pass; the tensor was changed in place afterwards, so "
           "its version counter no longer matches the version the node saved.",
           "The node that saved it needs that exact value to compute the gradient: some nodes save their inputs "
           "(MulBackward0, PowBackward0), others their own output (ExpBackward0, SigmoidBackward0, "
           "TanhBackward0). " + _VERSION_CHECK,
           "Use an out-of-place operation (a = a + 1 instead of a.add_(1) or a += 1), or clone the tensor "
           "before changing it."),
    _Known("nonscalar_backward", r"grad can be implicitly created only for scalar outputs",
           "backward() on a tensor with more than one element",
           "backward() was called without a gradient argument on a tensor that is not a single number.",
           "backward() computes the gradient of one number. For a tensor of many values it needs to be told "
           "how to weigh them: the vector v in the vector-Jacobian product vᵀ·J.",
           "Reduce to a number first (y.sum().backward(), loss.mean().backward()), or pass the weights: "
           "y.backward(gradient=torch.ones_like(y))."),
    _Known("gradient_shape", r"Mismatch in shape: grad_output",
           "The gradient passed to backward() has the wrong shape",
           "backward(gradient=v) was given a v whose shape differs from the tensor's shape.",
           "v holds one weight per element of the output, so it must have exactly the output's shape.",
           "Pass a gradient shaped like the output, e.g. torch.ones_like(y)."),
    _Known("no_grad_fn", r"element \d+ of tensors does not require grad and does not have a grad_fn",
           "backward() on a tensor that is not connected to any tensor requiring grad",
           "The tensor backward() was called on has no grad_fn and does not require grad.",
           "Autograd only records operations on tensors with requires_grad=True. None of the inputs required "
           "grad (or the computation ran under torch.no_grad(), or a .detach() cut the graph).",
           "Create the inputs with requires_grad=True (or call x.requires_grad_()) before the computation, and "
           "do not run it under torch.no_grad() or through .detach()/.item()/.numpy()."),
    _Known("nonleaf_grad", r"\.grad attribute of a Tensor that is not a leaf Tensor is being accessed",
           ".grad of a non-leaf tensor is None",
           "The .grad of a tensor made by an operation (it has a grad_fn) was read; it is None.",
           "backward() only stores gradients in leaves (tensors created by you with requires_grad=True). "
           "Gradients of intermediate tensors pass through and are dropped, to save memory.",
           "Call y.retain_grad() before backward() to keep y.grad, or read the .grad of the leaf instead."),
    _Known("int_requires_grad", r"(?i)only Tensors of floating point (and complex )?dtype can require gradients",
           "requires_grad on an integer tensor",
           "requires_grad=True was asked for a tensor of integers (or booleans).",
           "Gradients are rates of change of real numbers; integer tensors cannot change by small amounts, "
           "so autograd does not track them.",
           "Make the tensor floating point: torch.tensor([1., 2.], requires_grad=True) or "
           "torch.tensor([1, 2], dtype=torch.float32, requires_grad=True)."),
    _Known("nonleaf_requires_grad", r"you can only change requires_grad flags of leaf variables",
           "requires_grad changed on a non-leaf tensor",
           "requires_grad_() (or .requires_grad = ...) was used on a tensor made by an operation.",
           "A tensor computed from tensors that require grad is part of the graph; its requires_grad follows "
           "from its inputs and cannot be switched off by hand.",
           "Use y.detach() for a copy outside the graph, or set requires_grad on the leaf before computing."),
    _Known("inference_saved", r"Inference tensors cannot be saved for backward",
           "A tensor made in inference mode was used in a graph",
           "A tensor created under torch.inference_mode() was needed by a node that saves its inputs.",
           "Inference tensors have no version counter, so autograd could not check later that the saved "
           "value was not changed; it refuses to save them.",
           "Clone it first (t = t.clone()), or create it under torch.no_grad() instead of "
           "torch.inference_mode()."),
    _Known("numpy_requires_grad", r"Can't call numpy\(\) on Tensor that requires grad",
           ".numpy() on a tensor that requires grad",
           ".numpy() was called on a tensor that is tracked by autograd.",
           "A NumPy array shares the tensor's memory but autograd cannot see what NumPy does with it, so the "
           "graph could be silently broken.",
           "Use t.detach().numpy() (shares memory, outside the graph) or t.detach().cpu().numpy()."),
    _Known("resize_requires_grad", r"cannot resize variables that require grad",
           "resize_() on a tensor that requires grad",
           "resize_() was called on a tensor tracked by autograd (a leaf with requires_grad=True, or a tensor "
           "computed from one); it is refused even under torch.no_grad().",
           "resize_() changes how many numbers a tensor holds, and may keep old memory or leave new memory "
           "unset. No gradient can pass through such a change, so autograd forbids it on tracked tensors.",
           "Make a new tensor instead: x.reshape(...), x[:n], or torch.cat; or resize a copy outside the graph: "
           "d = x.detach().clone(); d.resize_(n)."),
    _Known("deepcopy_nonleaf", r"graph leaves\) support the deepcopy protocol",
           "copy.deepcopy() of a tensor made by an operation",
           "copy.deepcopy() was called on a non-leaf tensor (it has a grad_fn); only leaves can be deep-copied.",
           "A deep copy would have to copy the graph behind the tensor too, which autograd does not do.",
           "Use y.clone() for a copy that stays in the graph, or y.detach().clone() for an independent copy "
           "(then .requires_grad_() if it should be a new leaf)."),
    _Known("bool_ambiguous", r"Boolean value of Tensor with more than one value is ambiguous",
           "A tensor of several values used as True/False",
           "A tensor with more than one element was used where Python needs one truth value (if, while, and, "
           "or, not, bool()); `if y > 0:` with y of several elements does this.",
           "`y > 0` is a tensor of booleans, one per element; Python cannot tell whether you mean all of "
           "them or any of them.",
           "Say which: `if (y > 0).all():` or `if (y > 0).any():`; to choose per element, use "
           "torch.where(y > 0, a, b)."),
    _Known("list_index", r"only integer tensors of a single element can be converted to an index",
           "A Python list was multiplied by a tensor",
           "An expression like 4 * x[1] * [1] multiplied a tensor by the list [1]; Python then tried to use "
           "the tensor as a count for repeating the list, which only works for one integer.",
           "[1] is a Python list, not x[1]: `tensor * list` becomes list repetition, which needs an integer. "
           "A float tensor that requires grad cannot be one.",
           "Write the element you meant: 4 * x[1] * x[1]."),
)


def explain_error(exc: BaseException | Warning | Any, step: Step | Trace | None = None) -> ErrorExplanation:
    """Explain an exception or warning from autograd.

    ``exc`` may also be a recorded :class:`~gradtrace.model.Error`, a
    ``warnings.WarningMessage``, or a whole Trace (the error it stopped on).
    With ``step`` (the Step where it happened, or a whole Trace, whose last
    step is used), the culprits are named by id.
    """
    if isinstance(exc, Trace):  # explain_error(trace): the error the traced run stopped on
        if exc.error is None:
            raise ValueError("explain_error(trace): this trace ran to the end without an error; "
                             "pass an exception, a recorded Error, or a warning to explain")
        if step is None:
            step = exc
        exc = exc.error
    error_type, message = _read(exc)
    trace = step if isinstance(step, Trace) else None
    at = trace.last if trace is not None else step
    for known in _KNOWN:
        if re.search(known.pattern, message):
            base = ErrorExplanation(known.kind, known.title, known.what, known.why, known.fix, error_type,
                                    message)
            finder = _FINDERS.get(known.kind)
            found = finder(base, at, trace) if finder is not None else base
            if isinstance(at, Step) and found.culprits:
                found = _with(found, culprit_labels=tuple(_label(at, c) for c in found.culprits))
            return found
    return ErrorExplanation("unknown", f"{error_type} (not one gradtrace recognises)",
                            message, "gradtrace has no explanation recorded for this message.",
                            "Read PyTorch's message above; the step view shows the tensors and nodes involved.",
                            error_type, message)


def _read(exc: Any) -> tuple[str, str]:
    if hasattr(exc, "message") and hasattr(exc, "category"):  # warnings.WarningMessage
        return exc.category.__name__, str(exc.message)
    if hasattr(exc, "type") and hasattr(exc, "message") and isinstance(exc.message, str):  # model.Error
        return str(exc.type), exc.message
    return type(exc).__name__, str(exc)


# ------------------------------------------------------------------ naming the culprits

_INPLACE = re.compile(r"\[(?P<type>[\w.]+) \[(?P<shape>[\d, ]*)\]\], which is output (?P<nr>\d+) of "
                      r"(?P<op>(?:\w+::)*\w+), is at version (?P<version>\d+); "
                      r"expected version (?P<expected>\d+)")


def _shape_text(dims: str) -> str:
    """A message's ``[2, 3]`` sizes spelt as Python prints the tuple: ``()``, ``(2,)``, ``(2, 3)``."""
    sizes = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
    return str(sizes)


def _label(step: Step, ident: str) -> str:
    """A node or tensor id with what the stepper shows beside it: the op, or the names."""
    node = step.nodes.get(ident)
    if node is not None:
        return f"{ident} ({node.name.rsplit('::', 1)[-1]})"
    names = step.names_of(ident)
    return f"{ident} ({', '.join(names)})" if names else ident


def _with(base: ErrorExplanation, **changes: Any) -> ErrorExplanation:
    from dataclasses import replace

    return replace(base, **changes)


def _names_in(code: str, step: Step) -> list[str]:
    """Tensor ids named in a line of code, in the order the names appear."""
    found: list[str] = []
    for word in re.findall(r"[A-Za-z_][\w.]*", code):
        parts = word.split(".")
        for n in range(len(parts), 0, -1):  # model.fc.weight before model.fc before model
            tid = step.bindings.get(".".join(parts[:n]))
            if tid is not None:
                if tid not in found:
                    found.append(tid)
                break
    return found


def _tensors_where(step: Step | None, test: Callable[[TensorInfo], bool]) -> tuple[str, ...]:
    if step is None:
        return ()
    return tuple(t for t in _names_in(step.code, step) if t in step.tensors and test(step.tensors[t]))


def _inplace_modified(base: ErrorExplanation, step: Step | None, trace: Trace | None) -> ErrorExplanation:
    m = _INPLACE.search(base.message)
    details: list[tuple[str, str]] = []
    if m:
        shape = _shape_text(m["shape"])
        details = [("tensor_type", m["type"]), ("shape", shape), ("output_nr", m["nr"]),
                   ("op", op_name(m["op"])), ("version", m["version"]), ("expected_version", m["expected"])]
        what = (f"A {m['type']} of shape {shape} (output {m['nr']} of {op_name(m['op'])}) was saved at version "
                f"{m['expected']}, but is now at version {m['version']}.")
        base = _with(base, what=base.what + " " + what)
    if step is None:
        return _with(base, details=tuple(details))
    culprits: list[str] = []
    stale_saves: list[tuple[NodeInfo, SavedValue]] = []
    reachable = _reachable_from_code(step)
    for node in step.nodes.values():
        if reachable and node.id not in reachable:
            continue  # stale, but not on the path of the backward() that failed
        for saved in node.saved:
            stale = saved.state == STALE or (saved.saved_version is not None and saved.version is not None
                                             and saved.saved_version != saved.version)
            if stale and (not m or saved.saved_version == int(m["expected"])):
                culprits += [c for c in (node.id, saved.tensor) if c and c not in culprits]
                details.append(("saved_by", f"{node.id} {node.name} saved {saved.name}"))
                stale_saves.append((node, saved))
    if stale_saves:
        base = _with(base, why=_why_saved(step, stale_saves))
    line, code, index = _mutation_line(trace, {s.tensor: s.saved_version for _, s in stale_saves if s.tensor})
    return _with(base, culprits=tuple(culprits), details=tuple(details), line=line, code=code, step=index)


def _saved_role(step: Step, node: NodeInfo, saved: SavedValue) -> str:
    """``output`` when a node saved its own result, ``input`` when one of its inputs, else ``""``."""
    if (saved.tensor is not None and saved.tensor == node.output) or saved.name.startswith("result"):
        return "output"
    inputs = set()
    for edge in node.inputs:
        feeder = step.nodes.get(edge.node) if edge is not None else None
        if feeder is not None:
            inputs.add(feeder.variable if feeder.is_accumulate else feeder.output)
    if saved.tensor is not None and saved.tensor in inputs:
        return "input"
    # a built-in node (MulBackward0) calls its inputs by the op's argument names: self, other
    return "input" if saved.name in ("self", "other") and node.name[-1:].isdigit() else ""


def _tensor_words(step: Step, tensor: str | None) -> str:
    if tensor is None:
        return "(a tensor no name holds)"
    names = step.names_of(tensor)
    return f"{tensor} ({', '.join(names)})" if names else tensor


def _why_saved(step: Step, stale: list[tuple[NodeInfo, SavedValue]]) -> str:
    """The culprit nodes by name: which tensor each saved, and whether it is an input or its own output."""
    grouped: dict[tuple[str, str | None], list[SavedValue]] = {}
    nodes: dict[str, NodeInfo] = {}
    for node, saved in stale:
        grouped.setdefault((node.id, saved.tensor), []).append(saved)
        nodes[node.id] = node
    clauses = []
    for (node_id, tensor), saves in grouped.items():
        node = nodes[node_id]
        op = node.name.rsplit("::", 1)[-1]
        as_ = " and ".join(s.name for s in saves)
        role = _saved_role(step, node, saves[0])
        what = _tensor_words(step, tensor)
        if role == "output":
            clauses.append(f"{node_id} {op} saved its own output {what} as {as_}: its gradient formula is "
                           "written with the result it computed, so it needs that result unchanged.")
        elif role == "input":
            clauses.append(f"{node_id} {op} saved its input {what} as {as_}: it needs the input's original "
                           "values to compute the gradient.")
        else:
            what = what if tensor is not None else "a tensor no name holds"
            clauses.append(f"{node_id} {op} saved {what} as {as_} to compute the gradient, and needs it unchanged.")
    kept = [t for (_n, t), saves in grouped.items() if t is not None and _kept_values(step, t, saves[0])]
    if kept and len(kept) == len(grouped):  # views whose own values stayed: the shared counter moved
        bases = {step.tensors[t].base for t in kept}
        shown = ", ".join(_tensor_words(step, t) for t in kept)
        base = _tensor_words(step, next(iter(bases))) if len(bases) == 1 else "their base"
        return (" ".join(clauses) + f" {shown} kept its values: it is a view, and every view shares the version "
                f"counter of its base {base}, so an in-place change of another part of {base} (another view of it, or "
                f"the base itself) moved the version it was saved at. backward() checks that version, not the "
                "values, and refuses it. Change a copy (a = a * 2), or clone() the view before saving it.")
    return " ".join(clauses) + " The tensor was changed in place after it was saved. " + _VERSION_CHECK


def _kept_values(step: Step, tensor: str | None, saved: SavedValue) -> bool:
    """The stale saved ``tensor`` is a view whose values, as shown, are those it was saved with (every element)."""
    info = step.tensors.get(tensor) if tensor is not None else None
    if info is None or info.base is None or info.value is None or saved.value is None:
        return False
    return info.value.values is not None and saved.value.values is not None and info.value.values == saved.value.values


def _reachable_from_code(step: Step) -> set[str]:
    """Nodes reachable from the tensors the failing statement names (what its backward() walks)."""
    return step.reachable(step.tensors[t].grad_fn for t in _names_in(step.code, step) if t in step.tensors)


def _mutation_line(trace: Trace | None, saved_at: dict[str, int | None]) -> tuple[int | None, str | None, int | None]:
    """Line, code and step index of the last in-place change of one of the tensors ``saved_at`` maps to the
    version a node saved.

    With no in-place event recorded, a tensor already past that version at the end of the statement that
    made it was changed by that same statement (``nn.ReLU(inplace=True)`` after a ``Sigmoid`` in one call).
    """
    if trace is None:
        return None, None, None
    found: tuple[int | None, str | None, int | None] = (None, None, None)
    made: tuple[int | None, str | None, int | None] = (None, None, None)
    for s in trace.steps:
        for e in s.events:
            if isinstance(e, Mutate) and e.tensor in saved_at:
                found = (s.lineno, s.code, s.index)
            elif isinstance(e, Create) and made[2] is None:
                for t in e.tensors:
                    info = s.tensors.get(t)
                    if t in saved_at and info is not None and saved_at[t] is not None and info.version != saved_at[t]:
                        made = (s.lineno, s.code, s.index)
    return found if found[2] is not None else made


def _backward_twice(base: ErrorExplanation, step: Step | None, _trace: Trace | None) -> ErrorExplanation:
    if step is None:
        return base
    freed = [n.id for n in step.nodes.values() if any(s.state == FREED for s in n.saved)]
    return _with(base, culprits=tuple(freed))


def _by_line(test: Callable[[TensorInfo], bool]) -> Callable[..., ErrorExplanation]:
    def finder(base: ErrorExplanation, step: Step | None, _trace: Trace | None) -> ErrorExplanation:
        return _with(base, culprits=_tensors_where(step, test))
    return finder


def _shape_mismatch(base: ErrorExplanation, step: Step | None, _trace: Trace | None) -> ErrorExplanation:
    m = re.search(r"grad_output\[0\] has a shape of torch.Size\(\[([\d, ]*)\]\) and output\[0\] has a shape "
                  r"of torch.Size\(\[([\d, ]*)\]\)", base.message)
    if m:
        grad, out = _shape_text(m[1]), _shape_text(m[2])
        base = _with(base, details=(("gradient_shape", grad), ("output_shape", out)),
                     what=f"{base.what} The gradient has shape {grad}, the output {out}.")
    return _with(base, culprits=_tensors_where(step, lambda t: t.grad_fn is not None))


_FINDERS: dict[str, Callable[..., ErrorExplanation]] = {
    "inplace_modified": _inplace_modified,
    "backward_twice": _backward_twice,
    "gradient_shape": _shape_mismatch,
    "inplace_leaf": _by_line(lambda t: t.is_leaf and t.requires_grad),
    "inplace_leaf_view": _by_line(lambda t: t.requires_grad),
    "nonscalar_backward": _by_line(lambda t: t.grad_fn is not None and len(t.shape) > 0),
    "no_grad_fn": _by_line(lambda t: not t.requires_grad),
    "nonleaf_grad": _by_line(lambda t: not t.is_leaf),
    "nonleaf_requires_grad": _by_line(lambda t: not t.is_leaf),
    "numpy_requires_grad": _by_line(lambda t: t.requires_grad),
    "list_index": _by_line(lambda t: t.requires_grad),
}


def culprits(step: Step, error: Any) -> tuple[str, ...]:
    """The tensors and nodes of ``step`` that the explanation of ``error`` names as involved.

    Never raises: a picture or a sentence that marks the culprits is drawn without them
    rather than not at all.
    """
    try:
        found = explain_error(error, step).culprits
    except Exception:
        return ()
    return tuple(k for k in found if k in step.tensors or k in step.nodes)

"""The trace model: plain, frozen snapshots of a traced program.

Place in the pipeline: tracer -> **model** -> explain -> render -> notebook/cli.

Everything here is plain data (strings, numbers, tuples): no torch objects, so a
:class:`Trace` can be saved as JSON, compared and rendered with torch absent.
Ids are assigned in creation order by the tracer: ``t1, t2, ...`` for tensor
objects and ``n1, n2, ...`` for backward nodes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 5

#: The model's conveniences drawn by the layers above it (``str(step)``, ``trace.to_text()``, ``to_json()``,
#: a trace shown in a notebook): name -> the function, or ``"module:function"`` imported on first use. The
#: model imports nothing above it: those layers are registered here from above, by :func:`register_view`
#: (the package root registers the built-in ones when ``gradtrace`` is imported).
_VIEWS: dict[str, Callable[..., Any] | str] = {}


def register_view(name: str, target: Callable[..., Any] | str) -> None:
    """Make ``target`` (a function, or ``"module:function"`` to import on first use) the view called ``name``."""
    _VIEWS[name] = target


def view(name: str) -> Callable[..., Any]:
    """The function registered as ``name`` (see :func:`register_view`)."""
    target = _VIEWS.get(name)
    if target is None:
        raise LookupError(f"gradtrace: no {name!r} view is registered; import gradtrace first")
    if isinstance(target, str):
        module, _, attr = target.partition(":")
        target = _VIEWS[name] = getattr(importlib.import_module(module), attr)
    return target


def id_order(xid: str) -> int:
    """The creation number in a tensor or node id (``t12`` -> 12, ``n7`` -> 7): the key that sorts ids in the
    order the tracer made them (``n2`` before ``n10``, which a plain string sort gets wrong).

    Every id a trace holds has this form (the tracer makes them, the JSON reader checks them), so anything
    else is a mistake of the caller: it raises ``ValueError`` naming the id."""
    digits = xid[1:]
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"gradtrace: {xid!r} is not a tensor or node id (t1, n1, ...)")
    return int(digits)


#: The C++ namespace PyTorch puts before the names of its own backward nodes (``torch::autograd::AccumulateGrad``).
AUTOGRAD_PREFIX = "torch::autograd::"


def op_name(name: str) -> str:
    """A backward node's name as learners know it: ``AccumulateGrad``, not ``torch::autograd::AccumulateGrad``.

    PyTorch spells its C++ nodes with their namespace (``torch::autograd::CopySlices``); that namespace is
    dropped, and a template argument is kept whole (``torch::autograd::CppNode<ns::F>`` -> ``CppNode<ns::F>``).
    Every other name is returned as it is."""
    if not name.startswith("torch::"):
        return name
    head, bracket, rest = name.partition("<")
    return head.rsplit("::", 1)[-1] + bracket + rest


#: How many steps a trace records unless asked otherwise (the rest of the program runs unrecorded).
DEFAULT_MAX_STEPS = 1000

#: States of a value saved by a backward node.
ALIVE, FREED, STALE = "alive", "freed", "stale"


@dataclass(frozen=True)
class Summary:
    """A tensor's values in a form that prints and serialises.

    ``values`` holds every element (nested lists of Python numbers, or a single
    number for a 0-d tensor) when the tensor has at most 16 elements; otherwise
    it is ``None`` and ``stats`` holds ``(min, mean, max)`` when they could be
    computed. ``text`` is the short form shown in pictures.

    ``layout`` is the tensor's memory layout as PyTorch names it without the
    ``torch.`` prefix (``strided``, ``sparse_coo``, ``sparse_csr``...). A sparse
    tensor's ``values`` and ``stats`` are ``None``: what it holds (its indices and
    stored values) is in ``text``.
    """

    text: str
    values: Any = None
    stats: tuple[float, float, float] | None = None
    layout: str = "strided"


@dataclass(frozen=True)
class TensorInfo:
    """One tensor object as it is at one step."""

    id: str
    shape: tuple[int, ...]
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    version: int
    grad_fn: str | None
    base: str | None
    value: Summary
    grad: Summary | None
    is_param: bool = False
    #: PyTorch forbids this tensor in autograd and raises when asked its ``grad_fn`` or ``is_leaf``: a view
    #: made under ``no_grad`` whose base (or another view of it) was then changed in place. ``is_leaf``
    #: and ``grad_fn`` then say nothing (False, None); :attr:`kind` is ``forbidden``.
    forbidden: bool = False
    #: Which output of :attr:`grad_fn` this tensor is (``b`` of ``a, b = h.unbind(0)`` is output 1 of its
    #: UnbindBackward0); 0 for a node of one output and for a tensor without a ``grad_fn``.
    output_nr: int = 0

    @property
    def layout(self) -> str:
        """The tensor's memory layout (``strided`` for an ordinary tensor, ``sparse_coo``...)."""
        return getattr(self.value, "layout", "strided")

    @property
    def kind(self) -> str:
        """``leaf`` (requires grad, no grad_fn), ``nonleaf``, ``retained``, ``const`` or ``forbidden`` (PyTorch
        refuses to tell its ``grad_fn``: see :attr:`forbidden`)."""
        if not self.requires_grad:
            return "const"
        if self.forbidden:
            return "forbidden"
        if self.is_leaf:
            return "leaf"
        return "retained" if self.retains_grad else "nonleaf"


@dataclass(frozen=True)
class Edge:
    """An input of a backward node: the node it feeds, and which of its outputs."""

    node: str
    output_nr: int


@dataclass(frozen=True)
class SavedValue:
    """A value a backward node saved during the forward pass.

    ``tensor`` names the tensor object it refers to (when it is a tensor the
    trace knows), ``value`` summarises it; ``state`` is ``alive``, ``freed``
    (released by a ``backward()`` without ``retain_graph``) or ``stale``
    (changed in place since it was saved: ``saved_version`` differs from
    ``version``).
    """

    name: str
    tensor: str | None
    value: Summary | None
    state: str = ALIVE
    saved_version: int | None = None
    version: int | None = None


@dataclass(frozen=True)
class NodeInfo:
    """One backward node (an entry of the ``grad_fn`` chain) at one step.

    ``module`` is the path of the innermost ``nn.Module`` whose forward created
    it (``model.layer1.0.conv1``), empty outside any module.
    """

    id: str
    name: str
    inputs: tuple[Edge | None, ...]
    attrs: tuple[tuple[str, str], ...] = ()
    saved: tuple[SavedValue, ...] = ()
    variable: str | None = None
    output: str | None = None
    value: Summary | None = None
    module: str = ""

    @property
    def is_accumulate(self) -> bool:
        return self.variable is not None


# --------------------------------------------------------------------- events


@dataclass(frozen=True)
class Create:
    """New tensor objects and backward nodes made by the step.

    ``existing_grads`` lists ``(tensor, owner)`` for tensors the step shows for the first time that it did not
    make: the ``.grad`` ``owner`` already had (``g = w.grad``). ``shares`` lists ``(tensor, other)`` for new
    tensors that are no view yet use the memory of a tensor shown before (``p = nn.Parameter(h)``,
    ``d = w.data``, ``torch.from_numpy(h.numpy())``): writing to one changes the other.
    """

    tensors: tuple[str, ...]
    nodes: tuple[str, ...]
    existing_grads: tuple[tuple[str, str], ...] = ()
    shares: tuple[tuple[str, str], ...] = ()
    kind: str = field(default="create", init=False)


@dataclass(frozen=True)
class Bind:
    """A name that did not name a tensor before now names one."""

    name: str
    new: str
    kind: str = field(default="bind", init=False)


@dataclass(frozen=True)
class Rebind:
    """A name moved from tensor ``old`` to tensor ``new``; ``old`` is unchanged.

    ``held_by`` says what still holds ``old``: other names, and the nodes that
    saved it or accumulate into it. When both are empty, ``held_elsewhere`` says
    whether ``old`` is still alive, held by something the step does not show (the
    tuple a ``for v in x:`` loop walks, a container or closure); if not, it is gone.
    """

    name: str
    old: str
    new: str
    held_by_names: tuple[str, ...]
    held_by_nodes: tuple[str, ...]
    held_elsewhere: bool = False
    kind: str = field(default="rebind", init=False)


@dataclass(frozen=True)
class Unbind:
    """A name that named a tensor was deleted (``del``) or stopped naming one (holders: as :class:`Rebind`)."""

    name: str
    old: str
    held_by_names: tuple[str, ...]
    held_by_nodes: tuple[str, ...]
    held_elsewhere: bool = False
    kind: str = field(default="unbind", init=False)


#: ``Mutate.op`` of a change that left the version counter alone: autograd does not see it
UNSEEN_WRITE = "a write autograd does not see"
#: ``Mutate.op`` of a write made while torch runs an op, below autograd (a ``__torch_dispatch__`` handler): the
#: version counter moves only when that op returns, and only if the op itself is in place
IN_OP_WRITE = "a write inside a running op, below autograd"


@dataclass(frozen=True)
class Mutate:
    """A tensor changed in place: the same object, a new version.

    ``stale`` lists ``(node, saved name)`` pairs whose saved value the change
    made stale. ``via`` names the tensor the in-place call was made on when this one
    changed along with it (a base through its view, a view or a detached alias through its base).
    ``values_kept``: such a tensor's version moved but its values did not.
    """

    tensor: str
    version_before: int
    version_after: int
    grad_fn_before: str | None
    grad_fn_after: str | None
    stale: tuple[tuple[str, str], ...] = ()
    via: str | None = None
    op: str = ""
    #: changed along with ``via`` by the version counter only: its own values are the same as before
    #: (a view beside the one written, as ``q`` of ``p, q = t`` after ``p += 1``)
    values_kept: bool = False
    kind: str = field(default="mutate", init=False)

    @property
    def unseen(self) -> bool:
        """The values changed where autograd does not count it (``.data =``, ``set_``, NumPy, another alias, or a
        kernel's own update, as batch norm's running statistics)."""
        return self.op == UNSEEN_WRITE


@dataclass(frozen=True)
class GradChange:
    """How one tensor's ``.grad`` changed."""

    tensor: str
    before: Summary | None
    after: Summary | None


@dataclass(frozen=True)
class Flow:
    """The gradients through one backward node, in the order the engine ran the nodes.

    ``grad_in`` is what entered the node (the gradient of the root with respect
    to the node's forward outputs; for ``AccumulateGrad`` the already summed
    fan-in), ``grad_out`` what it sent along each input edge (None where an
    input needs no gradient).
    """

    node: str
    grad_in: tuple[Summary | None, ...]
    grad_out: tuple[Summary | None, ...]


@dataclass(frozen=True)
class Root:
    """A tensor a backward call starts from besides its first: ``torch.autograd.backward([l1, l2])``."""

    tensor: str | None
    #: its ``grad_fn`` (None for a leaf)
    node: str | None
    gradient: Summary | None


@dataclass(frozen=True)
class Backward:
    """A ``backward()`` (or ``torch.autograd.backward``/``torch.autograd.grad``) call and what it changed.

    ``call`` is ``backward``, ``autograd.backward`` or ``autograd.grad``; ``root``,
    ``root_node`` and ``gradient`` tell the first tensor it starts from, ``others``
    the rest. ``flow`` records the reverse pass node by node (empty when the graph was
    too large to watch, or past the first few backward calls of a trace: see
    ``gradtrace.tracer.watch``).
    """

    root: str | None
    gradient: Summary | None
    retain_graph: bool
    grads: tuple[GradChange, ...]
    freed: tuple[tuple[str, str], ...]
    call: str = "backward"
    root_node: str | None = None
    flow: tuple[Flow, ...] = ()
    others: tuple[Root, ...] = ()
    kind: str = field(default="backward", init=False)


@dataclass(frozen=True)
class Grad:
    """``.grad`` changed without a backward pass (assignment, ``zero_()``, ``None``)."""

    change: GradChange
    kind: str = field(default="grad", init=False)


@dataclass(frozen=True)
class Untracked:
    """A tensor made outside the graph: under ``no_grad``/``inference_mode`` or by ``detach()``."""

    tensor: str
    reason: str
    shares_with: str | None = None
    kind: str = field(default="untracked", init=False)


@dataclass(frozen=True)
class Error:
    """The learner's code raised."""

    type: str
    message: str
    lineno: int | None
    kind: str = field(default="error", init=False)


Event = Create | Bind | Rebind | Unbind | Mutate | Backward | Grad | Untracked | Error


@dataclass(frozen=True)
class Prediction:
    """A ``backward()`` that will fail, said before it runs."""

    root: str
    node: str
    saved: str
    tensor: str | None
    saved_version: int
    version: int
    message: str


# ---------------------------------------------------------------------- steps


def reachable(nodes: Mapping[str, NodeInfo], starts: Iterable[str | None]) -> set[str]:
    """The ids in ``nodes`` a backward() from the nodes ``starts`` walks through, following each node's
    inputs (``None`` starts nothing; an id ``nodes`` lacks is not entered)."""
    seen: set[str] = set()
    todo = [n for n in starts if n is not None]
    while todo:
        nid = todo.pop()
        if nid in seen or nid not in nodes:
            continue
        seen.add(nid)
        todo.extend(e.node for e in nodes[nid].inputs if e is not None)
    return seen


@dataclass(frozen=True)
class Step:
    """The state right after one executed statement.

    ``bindings`` maps each Python name that refers to a tensor to that tensor's
    id (in order of appearance); names local to a traced function are written
    ``func().name``, tensors inside containers ``xs[0]``, ``d['w']`` and module
    parameters ``model.fc.weight``. ``tensors`` and ``nodes`` hold every object
    that is alive and reachable from a name at this step.
    """

    index: int
    lineno: int
    code: str
    frame: str
    bindings: Mapping[str, str]
    tensors: Mapping[str, TensorInfo]
    nodes: Mapping[str, NodeInfo]
    events: tuple[Event, ...] = ()
    predictions: tuple[Prediction, ...] = ()

    @property
    def number(self) -> int:
        """The step's number as every view shows it to a person: 1 for the first step (``index`` + 1).

        ``index`` stays the position in ``Trace.steps`` (and the JSON's ``index``)."""
        return self.index + 1

    def names_of(self, tensor_id: str) -> list[str]:
        """The names that refer to ``tensor_id`` at this step."""
        return [n for n, t in self.bindings.items() if t == tensor_id]

    def events_of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    def reachable(self, starts: Iterable[str | None]) -> set[str]:
        """The node ids a backward() from the nodes ``starts`` walks through (``None`` starts nothing)."""
        return reachable(self.nodes, starts)

    def __str__(self) -> str:
        return str(view("step_text")(self))


@dataclass(frozen=True)
class Trace:
    """Every recorded step of one traced program, plus how it ended."""

    source: str
    filename: str
    steps: tuple[Step, ...]
    error: Error | None = None
    steps_unrecorded: int = 0
    max_steps: int = DEFAULT_MAX_STEPS
    final: Step | None = None

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __getitem__(self, i: int) -> Step:
        return self.steps[i]

    @property
    def last(self) -> Step | None:
        """The final state: after the last statement, recorded or not."""
        if self.final is not None:
            return self.final
        return self.steps[-1] if self.steps else None

    def events(self, kind: str | None = None) -> list[tuple[int, Event]]:
        """All ``(step index, event)`` pairs, optionally of one kind."""
        return [(s.index, e) for s in self.steps for e in s.events if kind is None or e.kind == kind]

    def grad(self, name: str) -> Any:
        """The final ``.grad`` values of the tensor ``name`` names (nested lists)."""
        step = self.last
        if step is None or name not in step.bindings:
            raise KeyError(f"no tensor named {name!r} at the end of the trace")
        info = step.tensors[step.bindings[name]]
        return None if info.grad is None else info.grad.values

    def to_text(self) -> str:
        return str(view("trace_text")(self))

    def to_json(self) -> str:
        return str(view("trace_json")(self))

    @staticmethod
    def from_json(text: str | bytes) -> Trace:
        """The trace :meth:`to_json` wrote, read back (torch is not needed to read, render or explain it).

        Raises ``ValueError`` with a one-line reason when ``text`` is not such a trace.
        """
        trace: Trace = view("trace_from_json")(text)
        return trace

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = view("trace_mimebundle")(self, include, exclude)
        return bundle

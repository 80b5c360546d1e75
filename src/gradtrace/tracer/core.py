"""Running learner code one statement at a time (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The code runs with ``exec`` in the learner's namespace, exactly as it would
without gradtrace; the run driver (:mod:`.driver`: ``sys.monitoring`` on Python
3.12+, ``sys.settrace`` otherwise) reports each line of the traced source, and
the state right after each statement is recorded as a :class:`~gradtrace.model.Step`
(ids and plain values only). A torch function mode (:mod:`.recorder`) tells
which torch calls the statement made. Past ``max_steps`` the code runs on with
only a line counter attached, and one last snapshot records the final state.
"""

from __future__ import annotations

import ast
import functools
import gc
import linecache
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..model import (
    FREED,
    STALE,
    UNSEEN_WRITE,
    Backward,
    Bind,
    Create,
    Error,
    Event,
    Grad,
    GradChange,
    Mutate,
    NodeInfo,
    Prediction,
    Rebind,
    Step,
    Summary,
    TensorInfo,
    Trace,
    Unbind,
    Untracked,
)
from . import safe
from .driver import RunDriver, _last_trace
from .flow import MAX_WATCHED_CALLS, watched
from .graph import GraphBook, data_ptr_of, grad_fn_of, is_leaf_of, storage_of, version_of
from .ids import Ids
from .quiet import quiet
from .recorder import BackwardCall, Recorder
from .statements import Statement, statement_map
from .summary import summarize

DEFAULT_MAX_STEPS = 1000
MAX_CONTAINER_ITEMS = 64


@dataclass
class _Cached:
    key: tuple[Any, ...]
    info: TensorInfo


@dataclass
class _Scope:
    """Where the names of one step come from."""

    globals_ns: dict[str, Any] | None
    frames: list[types.FrameType] = field(default_factory=list)


class Tracer(RunDriver):
    """Records one run of traced code. Use :func:`trace_code` or :func:`trace`.

    ``line_events`` picks how lines are heard: ``"monitoring"`` (:mod:`sys.monitoring`,
    Python 3.12+), ``"settrace"``, or ``"auto"``/None (the environment variable
    ``GRADTRACE_LINE_EVENTS``, else monitoring where Python has it); see :mod:`.driver`.
    """

    def __init__(
        self,
        source: str,
        filename: str,
        max_steps: int = DEFAULT_MAX_STEPS,
        globals_ns: dict[str, Any] | None = None,
        first_line: int = 1,
        line_range: tuple[int, int] | None = None,
        line_events: str | None = None,
    ) -> None:
        self._init_driver(line_events)
        self.source = source
        self.filename = filename
        self.max_steps = max_steps
        self.globals_ns = globals_ns
        self.statements = statement_map(source, first_line)
        self.line_range = line_range
        self.ids = Ids()
        self.book = GraphBook(self.ids)
        self.recorder = Recorder(self._module_path)
        self.recorder.watch = self._watch_backward
        self.recorder.on_node = self._new_node
        self._watched_calls = 0
        self._module_paths: dict[int, str] = {}
        self.steps: list[Step] = []
        self.cache: dict[str, _Cached] = {}
        self.prev: Step | None = None
        #: ids of named tensors whose memory torch did not allocate (``from_numpy``, ``frombuffer``)
        self.foreign: list[str] = []
        #: tensor and node counts when the statement being run began
        self._counts = (0, 0)

    # ------------------------------------------------------------ snapshot
    def _snapshot(
        self, frame: types.FrameType | None, stmt: Statement, frame_name: str, error: Error | None,
        recorded: bool = True,
    ) -> Step:
        collecting = gc.isenabled()
        grad_mode = torch.is_grad_enabled()
        # An interrupt (Ctrl-C, a signal) must never leave grad mode or gc off: both are
        # set and restored inside try blocks, by C calls that no torch function mode sees
        # (torch.no_grad().__exit__ ran through our own mode: Python code, a window).
        try:
            gc.disable()  # a snapshot allocates many small acyclic records: collections would only cost time
            with quiet():
                try:
                    torch._C._set_grad_enabled(False)
                    return self._take(frame, stmt, frame_name, error)
                finally:
                    torch._C._set_grad_enabled(grad_mode)
        finally:
            if collecting:
                gc.enable()

    def _take(self, frame: types.FrameType | None, stmt: Statement, frame_name: str, error: Error | None) -> Step:
        rec, ids, book = self.recorder, self.ids, self.book
        book.touched([t for _op, t in rec.inplace] + rec.written + self._outside_writers())
        tensor_count, node_count = self._counts  # as the statement began: its calls stamp as they run
        for _name, out, module in rec.ops:
            book.walk(grad_fn_of(out), output=out, module=module)
        named = self._names(frame)
        bindings: dict[str, str] = {}
        for name, t in named:
            tid, new = ids.stamp(t)
            bindings[name] = tid
            if new and _foreign_memory(t):
                self.foreign.append(tid)
        for _name, out, _module in rec.ops:
            nid = ids.node(grad_fn_of(out))
            if nid is not None and ids.tensor(out) is not None:
                book.link_output(nid, out)
        for _name, t in named:
            book.walk(grad_fn_of(t), output=t)
        for _op, t in rec.inplace:  # changed in place by this statement: saved copies made before go stale
            changed = ids.tensor(t)
            if changed is not None:
                book.mark_versions(changed, version_of(t))
        same = self._unchanged(bindings, error)
        if same is not None:
            rec.clear()
            book.done()
            self._counts = (ids.tensor_count, len(book.nodes))
            return self._record(same, stmt, frame_name, bindings)
        events: list[Event] = []
        backward_events, backward_roots = self._backwards()
        mutated = self._mutations(bindings)
        # a backward from a temporary root (``y[0].backward()``) shows that root's graph for the step
        extra = [f.node for call in self.recorder.backwards for f in call.flow[:1]]
        tensors, nodes = self._visible(bindings, extra)
        new_tensors = [t for t in tensors if _num(t) > tensor_count]
        new_nodes = [n for n in nodes if int(n[1:]) > node_count]
        if new_tensors or new_nodes:
            events.append(Create(tuple(new_tensors), tuple(new_nodes)))
        events += self._binding_events(bindings, tensors, nodes, frame)
        events += self._mutate_events(mutated, tensors)
        events += self._grad_events(tensors, backward_events)
        events += self._untracked_events(tensors)
        if error is not None:
            events.append(error)
        step = Step(
            index=len(self.steps),
            lineno=stmt.lineno,
            code=stmt.code,
            frame=frame_name,
            bindings=bindings,
            tensors=tensors,
            nodes=nodes,
            events=tuple(events),
            predictions=self._predictions(bindings, nodes),
        )
        del backward_roots
        rec.clear()
        book.done()
        self.prev = step
        self._counts = (ids.tensor_count, len(book.nodes))
        return step

    def _unchanged(self, bindings: dict[str, str], error: Error | None) -> Step | None:
        """The previous step, when this statement changed nothing it records; else None.

        Nothing changed when the statement made no torch call that creates, mutates,
        detaches or runs backward, raised nothing, left every name on the same object,
        and every visible tensor has the same version, grad_fn, ``.grad`` and flags.
        """
        prev, rec = self.prev, self.recorder
        if prev is None or error is not None or rec.ops or rec.inplace or rec.backwards or rec.untracked \
                or rec.written or self.book.dirty:
            return None
        if len(bindings) != len(prev.bindings) or list(bindings.items()) != list(prev.bindings.items()):
            return None
        cache = self.cache
        for tid in prev.tensors:
            t = self.ids.obj(tid)
            cached = cache.get(tid)
            if t is None or cached is None or cached.key != self._key(t):
                return None
        return prev

    def _record(self, same: Step, stmt: Statement, frame_name: str, bindings: dict[str, str]) -> Step:
        step = Step(
            index=len(self.steps),
            lineno=stmt.lineno,
            code=stmt.code,
            frame=frame_name,
            bindings=bindings,
            tensors=same.tensors,
            nodes=same.nodes,
            events=(),
            predictions=same.predictions,
        )
        self.prev = step
        return step

    def _outside_writers(self) -> list[torch.Tensor]:
        """Live tensors whose memory NumPy (or another owner) can write without torch knowing."""
        out = []
        for tid in self.foreign:
            t = self.ids.obj(tid)
            if t is not None:
                out.append(t)
        live = []
        for ref in self.recorder.shared:
            t = ref()
            if t is not None:
                out.append(t)
                live.append(ref)
        self.recorder.shared[:] = live
        return out

    def _module_path(self, module: torch.nn.Module) -> str:
        """``model.layer1.0`` for a module reachable from a traced name, else its class name."""
        key = id(module)
        path = self._module_paths.get(key)
        if path is None:
            for name, value in safe.name_items(self.globals_ns or {}):
                if safe.is_a(value, torch.nn.Module) and not name.startswith("_"):
                    for sub, m in safe.named_modules(value, prefix=name):
                        self._module_paths.setdefault(id(m), sub)
            path = self._module_paths.setdefault(key, type(module).__name__)
        return path

    # names ------------------------------------------------------------------
    def _names(self, frame: types.FrameType | None) -> list[tuple[str, torch.Tensor]]:
        out: list[tuple[str, torch.Tensor]] = []
        if self.globals_ns is not None:
            _collect(self.globals_ns, "", out)
        frames = []
        labels = self._labels
        while frame is not None:
            if frame in labels:
                frames.append(frame)
            frame = frame.f_back
        for f in reversed(frames):
            _collect(f.f_locals, labels[f] + ".", out)
        return out

    # graph changes ----------------------------------------------------------
    def _new_node(self, out: torch.Tensor, module: str) -> None:
        """A call just made ``out`` and its node: read what the node saved, now, before the
        statement can change it in place (``x.exp().add_(1)``), and note hook-packed values."""
        if self.recorder.in_backward:
            return
        packed = torch._C._autograd._top_saved_tensors_default_hooks(False) is not None
        with quiet():
            grad_mode = torch.is_grad_enabled()
            try:
                torch._C._set_grad_enabled(False)
                self.book.walk(grad_fn_of(out), output=out, module=module, packed=packed)
            finally:
                torch._C._set_grad_enabled(grad_mode)

    def _watch_backward(self, call: BackwardCall, run: Callable[[], Any]) -> Any:
        """Run the learner's backward call with its nodes watched (see :mod:`.flow`)."""
        self._watched_calls += 1
        if self._watched_calls > MAX_WATCHED_CALLS:
            return run()
        try:
            with quiet():
                for _name, out, module in self.recorder.ops:  # this statement's nodes first, in creation order
                    self.book.walk(grad_fn_of(out), output=out, module=module)
                fns = [grad_fn_of(r) for r in call.roots]
                for root, fn in zip(call.roots, fns, strict=True):
                    self.book.walk(fn, output=root)
        except Exception:  # watching is best effort: the call itself must run as written
            return run()
        return watched(fns, self.ids, run, call.flow)

    def _backwards(self) -> tuple[list[tuple[Any, list[tuple[str, str]]]], list[Any]]:
        found = []
        roots = []
        for call in self.recorder.backwards:
            freed: list[tuple[str, str]] = []
            for root in call.roots:
                roots.append(root)
                fn = grad_fn_of(root)
                if fn is not None:
                    self.book.walk(fn, output=root)
                    if not call.retain_graph:
                        freed += self.book.refresh_freed(fn)
            found.append((call, freed))
        return found, roots

    def _mutations(self, bindings: dict[str, str]) -> list[tuple[str, int, int]]:
        """(tensor id, version before, version after) for every tensor changed in place."""
        prev = self.prev.tensors if self.prev is not None else {}
        changed = []
        for tid, info in prev.items():
            t = self.ids.obj(tid)
            if t is None:
                continue
            v = version_of(t)
            if v != info.version:
                changed.append((tid, info.version, v))
                self.book.mark_versions(tid, v)
        return changed

    def _visible(
        self, bindings: dict[str, str], extra_nodes: list[str] | None = None
    ) -> tuple[dict[str, TensorInfo], dict[str, NodeInfo]]:
        ids, book = self.ids, self.book
        seen_t: set[str] = set()
        seen_n: set[str] = set()
        todo_t = list(dict.fromkeys(bindings.values()))
        todo_n: list[str] = list(extra_nodes or ())
        while todo_t or todo_n:
            while todo_t:
                tid = todo_t.pop()
                if tid in seen_t:
                    continue
                t = ids.obj(tid)
                if t is None:
                    continue
                seen_t.add(tid)
                fn = grad_fn_of(t)
                nid = ids.node(fn) if fn is not None else None
                if nid is not None:
                    todo_n.append(nid)
                base = t._base
                if base is not None:
                    todo_t.append(ids.stamp(base)[0])
            while todo_n:
                nid = todo_n.pop()
                if nid in seen_n or nid not in book.nodes:
                    continue
                seen_n.add(nid)
                info = book.nodes[nid]
                todo_n.extend(e.node for e in info.inputs if e is not None)
                if info.variable is not None:
                    todo_t.append(info.variable)
                todo_t.extend(s.tensor for s in info.saved if s.tensor is not None and s.state != FREED)
        tensors = {tid: self._tensor_info(tid) for tid in sorted(seen_t, key=_num)}
        nodes = {nid: book.nodes[nid] for nid in sorted(seen_n, key=_num)}
        return tensors, nodes

    def _key(self, t: torch.Tensor) -> tuple[Any, ...]:
        """What a :class:`TensorInfo` depends on, besides values changed behind the version counter."""
        leaf = is_leaf_of(t)
        retains = t.retains_grad
        grad = t.grad if (leaf or retains) else None
        grad_key = None if grad is None else (id(grad), version_of(grad))
        fn = grad_fn_of(t)
        base = t._base
        return (
            version_of(t), None if fn is None else self.ids.node(fn), grad_key, t.requires_grad,
            leaf, retains, None if base is None else self.ids.tensor(base), tuple(t.shape), data_ptr_of(t),
        )

    def _tensor_info(self, tid: str) -> TensorInfo:
        t = self.ids.obj(tid)
        key = self._key(t)
        grad = t.grad if (key[4] or key[5]) else None
        dirty = self.book.dirty
        written = bool(dirty) and storage_of(t) in dirty  # changed through an alias, version unchanged
        grad_written = bool(dirty) and grad is not None and storage_of(grad) in dirty
        cached = self.cache.get(tid)
        if cached is not None and cached.key == key and not written and not grad_written:
            return cached.info
        old_grad = None
        if cached is not None and key[2] is not None and cached.key[2] == key[2] and not grad_written:
            old_grad = cached.info.grad  # the same .grad object at the same version
        info = TensorInfo(
            id=tid,
            shape=tuple(int(s) for s in t.shape),
            dtype=_dtype_text(t.dtype),
            device=str(t.device),
            requires_grad=bool(t.requires_grad),
            is_leaf=bool(is_leaf_of(t)),
            retains_grad=bool(t.retains_grad),
            version=key[0],
            grad_fn=key[1],
            base=key[6],
            value=self.book.summary(tid, t, key[0]),
            grad=old_grad if old_grad is not None or grad is None else self.book.summary(None, grad),
            is_param=isinstance(t, torch.nn.Parameter),
        )
        self.cache[tid] = _Cached(key, info)
        return info

    # events -----------------------------------------------------------------
    def _holders(
        self, tid: str, bindings: dict[str, str], nodes: dict[str, NodeInfo]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        names = tuple(n for n, t in bindings.items() if t == tid)
        held = tuple(
            nid for nid, info in nodes.items()
            if info.variable == tid or any(s.tensor == tid and s.state != FREED for s in info.saved)
        )
        return names, held

    def _binding_events(
        self, bindings: dict[str, str], tensors: dict[str, TensorInfo], nodes: dict[str, NodeInfo],
        frame: types.FrameType | None,
    ) -> list[Event]:
        prev = self.prev.bindings if self.prev is not None else {}
        scopes = {""} | {_scope_of(name) for name in bindings}
        live_scopes = self._frame_scopes(frame)
        out: list[Event] = []
        for name, tid in bindings.items():
            old = prev.get(name)
            if old is None:
                out.append(Bind(name, tid))
            elif old != tid:
                names, held = self._holders(old, bindings, nodes)
                out.append(Rebind(name, old, tid, names, held))
        for name, old in prev.items():
            if name in bindings:
                continue
            scope = _scope_of(name)
            if scope and scope not in live_scopes and scope not in scopes:
                continue  # the function returned: its names went with it
            names, held = self._holders(old, bindings, nodes)
            out.append(Unbind(name, old, names, held))
        return out

    def _frame_scopes(self, frame: types.FrameType | None) -> set[str]:
        scopes = set()
        labels = self._labels
        while frame is not None:
            label = labels.get(frame)
            if label is not None:
                scopes.add(label)
            frame = frame.f_back
        return scopes

    def _mutate_events(self, mutated: list[tuple[str, int, int]], tensors: dict[str, TensorInfo]) -> list[Event]:
        prev = self.prev.tensors if self.prev is not None else {}
        direct: dict[str, str] = {}
        for op, target in self.recorder.inplace:
            tid = self.ids.tensor(target)
            if tid is not None:
                direct.setdefault(tid, op)
        out: list[Event] = []
        for tid, v0, v1 in mutated:
            info = tensors.get(tid)
            before = prev[tid]
            stale = self._stale(tid, v1)
            via = None
            if tid not in direct:
                via = next(iter(direct), None)
            out.append(
                Mutate(
                    tensor=tid,
                    version_before=v0,
                    version_after=v1,
                    grad_fn_before=before.grad_fn,
                    grad_fn_after=None if info is None else info.grad_fn,
                    stale=stale,
                    via=via,
                    op=direct.get(tid, direct.get(via, "") if via else ""),
                )
            )
        done = {tid for tid, _v0, _v1 in mutated}
        for tid, op in direct.items():  # in place on the flags, not the values: no version bump
            was, now = prev.get(tid), tensors.get(tid)
            if tid in done or op not in _FLAG_OPS or was is None or now is None:
                continue
            if (was.grad_fn, was.requires_grad) != (now.grad_fn, now.requires_grad):
                out.append(Mutate(tid, was.version, now.version, was.grad_fn, now.grad_fn, op=op))
                done.add(tid)
        done.update(direct)
        for tid, now in tensors.items():  # new values, same version: .data =, set_, NumPy, an alias
            was = prev.get(tid)
            if was is None or now is was or tid in done or now.version != was.version or now.value == was.value \
                    or now.value.text == was.value.text:  # NaN != NaN: equal as shown is equal
                continue
            out.append(Mutate(tid, was.version, now.version, was.grad_fn, now.grad_fn, op=UNSEEN_WRITE))
        return out

    def _stale(self, tid: str, version: int) -> tuple[tuple[str, str], ...]:
        """``(node, saved name)`` of every saved value of ``tid`` now stale at ``version``, in node order."""
        nodes = self.book.nodes
        out = []
        for nid in dict.fromkeys(nid for nid, _ in self.book.saved_by.get(tid, ())):
            out += [(nid, s.name) for s in nodes[nid].saved if s.tensor == tid and s.state == STALE
                    and s.version == version]
        return tuple(out)

    def _grad_events(
        self, tensors: dict[str, TensorInfo], backward_events: list[tuple[Any, list[tuple[str, str]]]]
    ) -> list[Event]:
        prev = self.prev.tensors if self.prev is not None else {}
        changes = []
        for tid, info in tensors.items():
            old = prev.get(tid)
            before = None if old is None else old.grad
            if before != info.grad and (old is not None or info.grad is not None):
                changes.append(GradChange(tid, before, info.grad))
        if not backward_events:
            return [Grad(c) for c in changes]
        out: list[Event] = []
        for i, (call, freed) in enumerate(backward_events):
            root = call.roots[0] if call.roots else None
            root_fn = None if root is None else grad_fn_of(root)
            out.append(
                Backward(
                    root=None if root is None else self.ids.tensor(root),
                    gradient=_gradient_summary(call.gradient),
                    retain_graph=call.retain_graph,
                    grads=tuple(changes) if i == len(backward_events) - 1 else (),
                    freed=tuple(freed),
                    call=call.call,
                    root_node=None if root_fn is None else self.ids.node(root_fn),
                    flow=tuple(call.flow),
                )
            )
        return out

    def _untracked_events(self, tensors: dict[str, TensorInfo]) -> list[Event]:
        out: list[Event] = []
        for t, reason, source in self.recorder.untracked:
            tid = self.ids.tensor(t)
            if tid is None or tid not in tensors:
                continue
            shares = None
            if source is not None:
                shares = self.ids.stamp(source)[0]
            out.append(Untracked(tid, reason, shares))
        return out

    def _predictions(self, bindings: dict[str, str], nodes: dict[str, NodeInfo]) -> tuple[Prediction, ...]:
        stale = [(nid, s) for nid, n in nodes.items() for s in n.saved if s.state == STALE]
        if not stale:
            return ()
        out = []
        for name, tid in bindings.items():
            t = self.ids.obj(tid)
            fn = None if t is None else grad_fn_of(t)
            if fn is None:
                continue
            root = self.ids.node(fn)
            reach = _reachable(root, nodes)
            for nid, s in stale:
                if nid not in reach:
                    continue
                holder = nodes[nid]
                who = s.tensor or "a saved tensor"
                message = (
                    f"{name}.backward() will fail: {holder.name} ({nid}) saved {s.name} = {who} "
                    f"at version {s.saved_version}, and {who} has since been changed in place "
                    f"(now version {s.version})."
                )
                out.append(Prediction(name, nid, s.name, s.tensor, s.saved_version or 0, s.version or 0, message))
        return tuple(out)


# ------------------------------------------------------------------ helpers
#: in-place calls that change a tensor's autograd flags and leave its version alone
_FLAG_OPS = frozenset({"detach_", "requires_grad_"})

#: names a notebook shell keeps for itself (``Out`` holds every displayed result)
_SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit"})


def _collect(ns: dict[str, Any], prefix: str, out: list[tuple[str, torch.Tensor]]) -> None:
    # every read is defensive (see .safe): a learner's namespace may hold anything
    for name, value in safe.name_items(ns):
        if name.startswith("_") or (not prefix and name in _SHELL_NAMES):
            continue
        try:
            _collect_one(prefix + name, value, out)
        except Exception:  # a container that cannot be read shows no tensors; the trace goes on
            continue


def _collect_one(name: str, value: Any, out: list[tuple[str, torch.Tensor]]) -> None:
    if safe.is_a(value, torch.Tensor):
        if not safe.is_lazy(value):
            out.append((name, value))
    elif safe.is_a(value, torch.nn.Module):
        for pname, p in safe.named_parameters(value):
            out.append((f"{name}.{pname}", p))
        for bname, b in safe.named_buffers(value):  # running statistics, register_buffer
            out.append((f"{name}.{bname}", b))
    elif safe.is_a(value, (list, tuple)):
        for i, item in enumerate(list(value[:MAX_CONTAINER_ITEMS])):
            if safe.is_a(item, torch.Tensor) and not safe.is_lazy(item):
                out.append((f"{name}[{i}]", item))
    elif safe.is_a(value, dict):
        for i, (key, item) in enumerate(list(value.items())):
            if i >= MAX_CONTAINER_ITEMS:
                break
            if safe.is_a(item, torch.Tensor) and safe.is_a(key, (str, int)) and not safe.is_lazy(item):
                out.append((f"{name}[{safe.safe_repr(key)}]", item))


def _foreign_memory(t: torch.Tensor) -> bool:
    """True when ``t``'s memory belongs to NumPy or a buffer (torch cannot resize it)."""
    try:
        return not t.untyped_storage().resizable()
    except Exception:
        return False


def _scope_of(name: str) -> str:
    """``fib()#3`` for ``fib()#3.a``, ``f()`` for ``f().xs[0]``, ``""`` for a module-level name."""
    i = name.find("().")
    j = name.find("()#")
    if i < 0 and j < 0:
        return ""
    if j < 0 or 0 <= i < j:
        return name[: i + 2]
    k = j + 3
    while k < len(name) and name[k].isdigit():
        k += 1
    return name[:k]


def _reachable(root: str | None, nodes: dict[str, NodeInfo]) -> set[str]:
    seen: set[str] = set()
    todo = [root] if root is not None else []
    while todo:
        nid = todo.pop()
        if nid in seen or nid not in nodes:
            continue
        seen.add(nid)
        todo.extend(e.node for e in nodes[nid].inputs if e is not None)
    return seen


def _gradient_summary(g: Any) -> Summary | None:
    if isinstance(g, torch.Tensor):
        return summarize(g)
    if isinstance(g, (list, tuple)) and g and isinstance(g[0], torch.Tensor):
        return summarize(g[0])
    return None


@functools.cache
def _dtype_text(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _num(xid: str) -> int:
    return int(xid[1:])


# ---------------------------------------------------------------- public API
def run_code(source: str, namespace: dict[str, Any] | None = None, filename: str = "<gradtrace>",
             max_steps: int = DEFAULT_MAX_STEPS,
             keep_last: bool = False) -> tuple[Trace, BaseException | None, list[Any]]:
    """Run ``source`` as ``exec`` would, recording every statement; never raises the code's exception.

    Returns the trace, the exception the code raised (None if it ran to the end) and, with
    ``keep_last``, the value of a final expression statement in a list (empty when there is none).
    """
    if namespace is None:
        namespace = {}
    code = compile_source(source, filename, keep_last)
    if filename.startswith("<"):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tracer = Tracer(source, filename, max_steps, globals_ns=namespace)
    values: list[Any] = []
    if keep_last:
        namespace[LAST_VALUE] = values.append
    try:
        trace = tracer.run(lambda: exec(code, namespace))
    finally:
        if keep_last:
            namespace.pop(LAST_VALUE, None)
    return trace, tracer.exception, values


def trace_code(
    source: str,
    namespace: dict[str, Any] | None = None,
    filename: str = "<gradtrace>",
    max_steps: int = DEFAULT_MAX_STEPS,
    raise_errors: bool = True,
    last_value: list[Any] | None = None,
) -> Trace:
    """Run ``source`` in ``namespace`` as ``exec`` would, recording every statement.

    The namespace ends up exactly as plain ``exec`` leaves it. If the code
    raises, the exception is recorded in the trace and then re-raised (with
    ``raise_errors=False`` it is only recorded, except ``KeyboardInterrupt``,
    which always propagates; :func:`last_trace` gives the trace after a
    re-raised error). With ``last_value`` (a list), a final expression
    statement's value is appended to it, as a notebook cell shows ``Out``.
    """
    trace, exception, values = run_code(source, namespace, filename, max_steps, last_value is not None)
    if last_value is not None:
        last_value.extend(values)
    if exception is not None and (raise_errors or isinstance(exception, KeyboardInterrupt)):
        raise exception  # an interrupt always stops the caller too, as it would without gradtrace
    return trace


#: the name a compiled final expression hands its value to (see :func:`compile_source`)
LAST_VALUE = "__gradtrace_last_value__"


def compile_source(source: str, filename: str, keep_last: bool) -> types.CodeType:
    """The code object; with ``keep_last``, a final expression statement (one not ended by ``;``,
    as in a notebook cell) hands its value to ``LAST_VALUE``, so a caller can show it as ``Out``."""
    if not keep_last:
        return compile(source, filename, "exec")
    tree = ast.parse(source, filename)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and not source.rstrip().endswith(";"):
        call = ast.Call(func=ast.Name(LAST_VALUE, ast.Load()), args=[last.value], keywords=[])
        tree.body[-1] = ast.copy_location(ast.Expr(ast.copy_location(call, last.value)), last)
        ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


def trace(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Trace:
    """Call ``fn(*args, **kwargs)``, recording every statement of ``fn`` (and functions it defines)."""
    import inspect
    import textwrap

    code = getattr(fn, "__code__", None)
    if code is None:
        raise TypeError(f"gradtrace.trace needs a Python function, got {type(fn).__name__}; "
                        "for a source string use gradtrace.trace_code")
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise ValueError(f"cannot read the source of {fn.__name__}: {exc}; use gradtrace.trace_code") from exc
    source = textwrap.dedent("".join(lines))
    last = first + len(lines) - 1
    tracer = Tracer(source, code.co_filename, DEFAULT_MAX_STEPS, None, first, (first, last))
    tracer.entry = code
    if code.co_name == "<lambda>":
        _lambda_statement(tracer, source, first, code)
    result = tracer.run(lambda: fn(*args, **kwargs))
    if tracer.exception is not None:
        raise tracer.exception
    return result


def _lambda_statement(tracer: Tracer, source: str, first: int, code: types.CodeType) -> None:
    """A lambda's one step is its expression (the line around it may hold more)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and node.lineno + first - 1 == code.co_firstlineno:
            text = ast.get_source_segment(source, node.body) or ast.unparse(node.body)
            stmt = Statement(code.co_firstlineno, text, False)
            end = (node.body.end_lineno or node.body.lineno) + first - 1
            for line in range(code.co_firstlineno, end + 1):
                tracer.statements[line] = stmt
            return


def last_trace() -> Trace | None:
    """The most recent trace, also when its code raised."""
    return _last_trace[0] if _last_trace else None

"""Running learner code one statement at a time (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The code runs with ``exec`` in the learner's namespace, exactly as it would
without gradtrace; ``sys.settrace`` reports each line of the traced source, and
the state right after each statement is recorded as a :class:`~gradtrace.model.Step`
(ids and plain values only). A torch function mode (:mod:`.recorder`) tells
which torch calls the statement made. Past ``max_steps`` the code runs on with
only a line counter attached, and one last snapshot records the final state.
"""

from __future__ import annotations

import ast
import dis
import gc
import inspect
import linecache
import operator
import sys
import threading
import types
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from ..model import (
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
from .flow import MAX_WATCHED_CALLS, watched
from .graph import GraphBook, grad_fn_of, version_of
from .ids import Ids
from .quiet import quiet
from .recorder import BackwardCall, Recorder
from .scene import Scene, num
from .stack import ensure_deep_stack
from .statements import Statement, statement_map
from .summary import summarize

DEFAULT_MAX_STEPS = 1000
MAX_CONTAINER_ITEMS = 64
_last_trace: list[Trace] = []


@dataclass
class _Pending:
    stmt: Statement
    lasti: int
    error: Error | None = None


_Names = dict[str, str]


class _Source:
    """One scope's names (the module's, or one running function's), as last read."""

    __slots__ = ("containers", "entries", "keys", "lasti", "names", "values")

    def __init__(self) -> None:
        self.keys: list[Any] | None = None
        self.values: list[Any] = []
        self.lasti = -1
        #: (name, value, is a container read again every step) for each name shown
        self.entries: list[tuple[str, Any, bool]] = []
        self.containers = False
        self.names: dict[str, str] = {}


class Tracer:
    """Records one run of traced code. Use :func:`trace_code` or :func:`trace`."""

    def __init__(
        self,
        source: str,
        filename: str,
        max_steps: int = DEFAULT_MAX_STEPS,
        globals_ns: dict[str, Any] | None = None,
        first_line: int = 1,
        line_range: tuple[int, int] | None = None,
    ) -> None:
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
        self.recorder.ours = self._global
        self._watched_calls = 0
        self._module_paths: dict[int, str] = {}
        self.steps: list[Step] = []
        self.pending: dict[types.FrameType, _Pending] = {}
        self.prev: Step | None = None
        self.capped = False
        self.unrecorded = 0
        self.error: Error | None = None
        self.exception: BaseException | None = None
        self._seen_exc: list[BaseException] = []
        self._last_line: dict[types.FrameType, tuple[int, int]] = {}
        self._mode_on = False
        self.internal_error: Exception | None = None
        #: each running traced call's label (``fib()``, ``fib()#3``) and per-function counts
        self._labels: dict[types.FrameType, str] = {}
        #: ids of named tensors whose memory torch did not allocate (``from_numpy``, ``frombuffer``)
        self.foreign: list[str] = []
        #: the code of the function handed to :func:`trace` (traced even when it is a lambda)
        self.entry: types.CodeType | None = None
        #: tensor and node counts when the statement being run began
        self._counts = (0, 0)
        self._calls: dict[types.CodeType, int] = {}
        self._live: dict[types.CodeType, int] = {}
        #: work done, counted (tests compare it across sizes): frames read, tensors read, nodes added, ...
        self.work: Counter[str] = Counter()
        self.scene = Scene(self.ids, self.book, self.work)
        self._globals_src = _Source()
        #: the labelled frames running at the last snapshot (outermost first), their positions, their names
        self._stack: list[types.FrameType] = []
        self._stack_pos: dict[types.FrameType, int] = {}
        self._sources: dict[types.FrameType, _Source] = {}
        self._cells: dict[types.CodeType, bool] = {}
        #: the threads running when the trace began (a notebook kernel's own), and others seen at the last step
        self._threads = {t.ident for t in threading.enumerate()}
        self._threads_seen: frozenset[int | None] | None = None
        #: id(module) -> (module, name, its tree as last listed, its (name, tensor) pairs)
        self._modules_seen: dict[int, tuple[Any, str, list[Any], list[tuple[str, torch.Tensor]]]] = {}
        self._cold = True
        self.recorder.on_stop = self._release

    # ------------------------------------------------------------- running
    def run(self, call: Callable[[], Any]) -> Trace:
        """Run ``call`` with tracing on; the code's exception is kept, not raised."""
        ensure_deep_stack()
        if self.globals_ns is not None and self.prev is None:
            # what the namespace already holds is the baseline, not news of the first step
            try:
                self.prev = self._snapshot(None, Statement(0, "<start>", False), "<module>", None)
            except Exception as exc:  # never stop the learner's code from running
                self._internal_failure(exc)
        old = sys.gettrace()
        self.recorder.__enter__()
        self.recorder.watch_modules()
        self._mode_on = True
        sys.settrace(self._global)
        try:
            call()
        except BaseException as exc:  # the learner's exception: recorded, re-raised by the caller
            self.exception = exc
        finally:
            taken = sys.gettrace() != self._global
            sys.settrace(old)
            self._stop_mode()
        if self.exception is not None:  # read untraced: its __str__ may be the learner's code
            raised = self.exception
            self.error = Error(type(raised).__name__, safe.exception_message(raised),
                               _lineno_in(raised, self.filename))
        try:
            for frame in list(self.pending):
                self._finish(frame)
        except Exception as exc:
            self._internal_failure(exc)
        if taken and self.internal_error is None:
            last = self.steps[-1].lineno if self.steps else 0
            warnings.warn(
                "the program replaced the trace function (sys.settrace) while it ran, so gradtrace could "
                f"not follow it after line {last}: what ran later is credited to that line's step. The code "
                "itself ran unchanged; take the sys.settrace call out to see every step.",
                RuntimeWarning, stacklevel=3,
            )
        final = None
        if self.capped and self.internal_error is None:
            try:
                final = self._snapshot(None, Statement(0, "<end>", False), "<module>", None, recorded=False)
            except Exception as exc:
                self._internal_failure(exc)
        if self.internal_error is not None:
            warnings.warn(self._failure_words(self.internal_error), RuntimeWarning, stacklevel=3)
        self._seen_exc.clear()
        trace = Trace(
            source=self.source,
            filename=self.filename,
            steps=tuple(self.steps),
            error=self.error,
            steps_unrecorded=self.unrecorded,
            max_steps=self.max_steps,
            final=final,
        )
        _last_trace[:] = [trace]
        return trace

    def _failure_words(self, err: BaseException) -> str:
        """Why recording stopped, in words a learner can act on."""
        where = f"gradtrace stopped recording after step {len(self.steps)}"
        if isinstance(err, RecursionError):
            return (f"{where}: the program's recursion went so deep that the tracer had no room left to "
                    "record it; the code itself ran on unchanged. Trace a smaller input to see every step.")
        return (f"{where} because the tracer failed ({type(err).__name__}: {err}); the code itself ran on "
                "unchanged. Please report this with the code that caused it.")

    def _stop_mode(self) -> None:
        self.recorder.active = False
        self.recorder.unwatch_modules()
        if self._mode_on:
            self._mode_on = False
            _remove_mode(self.recorder)

    def _traced(self, frame: types.FrameType) -> bool:
        code = frame.f_code
        if code.co_filename != self.filename:
            return False
        if self.line_range is not None and not self.line_range[0] <= code.co_firstlineno <= self.line_range[1]:
            return False
        if frame.f_globals is frame.f_locals:
            return self.globals_ns is not None  # module level
        if code is self.entry:
            return True  # the function handed to trace(), also a lambda
        if code.co_name.startswith("<"):
            return False  # comprehensions, lambdas, generator expressions: one step with their statement
        return bool(code.co_flags & 0x1)  # CO_OPTIMIZED: a function, not a class body

    def _global(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "call" and self._traced(frame):
            self._enter_frame(frame)
            return self._local
        return None

    def _enter_frame(self, frame: types.FrameType) -> None:
        """Name the call: ``fib()``, or ``fib()#2`` for a call made while ``fib`` is already running."""
        if frame in self._labels or frame.f_globals is frame.f_locals:
            return
        code = frame.f_code
        calls = self._calls[code] = self._calls.get(code, 0) + 1
        live = self._live.get(code, 0)
        self._live[code] = live + 1
        self._labels[frame] = f"{code.co_name}()" if live == 0 else f"{code.co_name}()#{calls}"

    def _leave_frame(self, frame: types.FrameType) -> None:
        if self._labels.pop(frame, None) is not None:
            self._live[frame.f_code] -= 1

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        try:
            if event == "line":
                self._line(frame)
            elif event == "opcode":
                self._opcode(frame)
            elif event == "return":
                self._finish(frame)
                self._last_line.pop(frame, None)
                self._leave_frame(frame)
            elif event == "exception":
                self._exception(frame, arg)
        except Exception as exc:  # a tracer failure must never surface in the learner's code
            self._internal_failure(exc)
        return self._local

    def _internal_failure(self, exc: Exception) -> None:
        """Stop recording after a failure of the tracer itself; the code runs on untouched."""
        if self.internal_error is None:
            self.internal_error = exc
        self.pending.clear()
        self._cap()

    def _line(self, frame: types.FrameType) -> None:
        if self.recorder.in_backward:
            return
        stmt = self.statements.get(frame.f_lineno)
        if stmt is None:
            return
        if stmt.shared:  # several statements on this line: follow it instruction by instruction
            frame.f_trace_opcodes = True
            stmt = self.statements.at(frame.f_code, frame.f_lasti, frame.f_lineno)
            if stmt is None:
                return
        elif frame.f_trace_opcodes:
            frame.f_trace_opcodes = False
        lasti = frame.f_lasti
        pending = self.pending.get(frame)
        if pending is not None and pending.stmt is stmt and lasti > pending.lasti:
            pending.lasti = lasti
            return  # the same statement, continued on another line (or a decorated def's next line)
        if pending is not None:
            self._finish(frame)
        self.pending[frame] = _Pending(stmt, lasti)

    def _opcode(self, frame: types.FrameType) -> None:
        """An instruction on a line shared by several statements: a new step when it starts another."""
        if self.recorder.in_backward:
            return
        stmt = self.statements.get(frame.f_lineno)
        if stmt is None or not stmt.shared:
            return
        stmt = self.statements.at(frame.f_code, frame.f_lasti, frame.f_lineno)
        if stmt is None:
            return
        pending = self.pending.get(frame)
        if pending is not None and pending.stmt is stmt:
            pending.lasti = frame.f_lasti
            return
        if pending is not None:
            self._finish(frame)
        self.pending[frame] = _Pending(stmt, frame.f_lasti)

    def _exception(self, frame: types.FrameType, arg: Any) -> None:
        exc = arg[1]
        if any(exc is e for e in self._seen_exc):
            return
        pending = self.pending.get(frame)
        if pending is not None:  # else (a hook or custom backward run by backward()) an outer step gets it
            self._seen_exc.append(exc)
            pending.error = Error(type(exc).__name__, safe.exception_message(exc), frame.f_lineno)

    def _finish(self, frame: types.FrameType) -> None:
        pending = self.pending.pop(frame, None)
        if pending is None:
            return
        if self.capped:
            self.unrecorded += 1
            return
        name = "<module>" if frame.f_globals is frame.f_locals else frame.f_code.co_name
        step = self._snapshot(frame, pending.stmt, name, pending.error)
        self.steps.append(step)
        if len(self.steps) >= self.max_steps:
            self._cap()

    def _cap(self) -> None:
        """Stop recording: the code runs on, counted, with no torch mode."""
        self.capped = True
        self._stop_mode()
        self.recorder.clear()

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
        rec, ids, book, scene = self.recorder, self.ids, self.book, self.scene
        prev = self.prev
        book.touched([t for _op, t in rec.inplace] + rec.written + self._outside_writers())
        tensor_count, node_count = self._counts  # as the statement began: its calls stamp as they run
        for _name, out, module in rec.ops:
            book.walk(grad_fn_of(out), output=out, module=module)
        bindings, olds, news = self._names(frame)
        for scope in news:  # new names' graphs, in name order: node ids follow the order of the names
            for tid in scope.values():
                t = ids.obj(tid)
                if t is not None:
                    book.walk(grad_fn_of(t), output=t)
        for _name, out, _module in rec.ops:
            nid = ids.node(grad_fn_of(out))
            if nid is not None and ids.tensor(out) is not None:
                book.link_output(nid, out)
        for _op, t in rec.inplace:  # changed in place by this statement: saved copies made before go stale
            changed = ids.tensor(t)
            if changed is not None:
                book.mark_versions(changed, version_of(t))
        backward_events, backward_roots = self._backwards()
        mutated, dead = scene.scan()
        for tid, _v0, v1 in mutated:
            book.mark_versions(tid, v1)
        # a backward from a temporary root (``y[0].backward()``) shows that root's graph for the step
        roots: dict[str, int] = {}
        for tid in bindings.values():
            roots[tid] = roots.get(tid, 0) + 1
        for call in rec.backwards:
            for f in call.flow[:1]:
                roots[f.node] = roots.get(f.node, 0) + 1
        scene.update(roots, self._rechecks(mutated), book.changed, dead)
        book.changed = set()
        same_t = prev is not None and not any(x[0] == "t" for x in (*scene.added, *scene.dropped, *scene.changed))
        same_n = prev is not None and not any(x[0] == "n" for x in (*scene.added, *scene.dropped, *scene.changed))
        tensors = prev.tensors if same_t and prev is not None else dict(scene.tensors)
        nodes = prev.nodes if same_n and prev is not None else dict(scene.nodes)
        events: list[Event] = []
        new_tensors = sorted((x for x in scene.added if x[0] == "t" and _num(x) > tensor_count), key=_num)
        new_nodes = sorted((x for x in scene.added if x[0] == "n" and _num(x) > node_count), key=_num)
        if new_tensors or new_nodes:
            events.append(Create(tuple(new_tensors), tuple(new_nodes)))
        events += self._binding_events(bindings, olds, news, frame)
        events += self._mutate_events(mutated, tensors)
        events += self._grad_events(tensors, backward_events)
        events += self._untracked_events(tensors)
        if error is not None:
            events.append(error)
        if prev is not None and same_t and same_n and bindings is prev.bindings and not events:
            predictions = prev.predictions
        else:
            predictions = self._predictions(bindings, nodes)
        step = Step(
            index=len(self.steps),
            lineno=stmt.lineno,
            code=stmt.code,
            frame=frame_name,
            bindings=bindings,
            tensors=tensors,
            nodes=nodes,
            events=tuple(events),
            predictions=predictions,
        )
        del backward_roots
        rec.clear()
        book.done()
        self.prev = step
        self._counts = (ids.tensor_count, len(book.nodes))
        return step

    def _rechecks(self, mutated: list[tuple[str, int, int]]) -> set[str] | None:
        """The shown tensors this statement may have changed; None: any of them.

        A tensor's version, liveness and memory are checked every step (:meth:`Scene.scan`,
        the written storages); its flags and ``.grad`` change without a version bump only
        through calls the recorder notes (``t.grad = ...``, ``requires_grad_``, ``detach_``,
        ``retain_grad``), a backward pass (the leaves and retained tensors), or code the recorder
        does not see: another thread, or everything run after recording stopped.
        """
        rec, ids, scene = self.recorder, self.ids, self.scene
        if self._other_threads() or self.capped or self.prev is None:
            return None
        out = {tid for tid, _v0, _v1 in mutated}
        if rec.backwards:  # the tensors a backward pass gives a .grad (its hooks' writes are noted below)
            out.update(tid for tid, info in scene.tensors.items()
                       if info.requires_grad and (info.is_leaf or info.retains_grad))
        for t in [*rec.flagged, *(t for _op, t in rec.inplace), *rec.written]:
            tid = ids.tensor(t)
            if tid is not None:
                out.add(tid)
        by_storage = scene.by_storage
        for s in self.book.dirty:
            held = by_storage.get(s)
            if held:
                out.update(held)
        return out

    def _other_threads(self) -> bool:
        """True when a thread started since the trace began runs, or ran since the last snapshot
        (its torch calls reach no torch function mode: nothing tells what it changed)."""
        seen = self._threads_seen
        if threading.active_count() == 1 and seen is None:
            return False
        alive = {t.ident for t in threading.enumerate()}
        extra = alive - self._threads
        self._threads_seen = frozenset(extra) if extra else None
        return bool(extra) or seen is not None

    def _release(self) -> None:
        """Recording stopped: drop the frames and values held for the name caches."""
        self._sources.clear()
        self._stack.clear()
        self._stack_pos.clear()
        self._globals_src = _Source()
        self._modules_seen.clear()
        self._cold = True

    def _outside_writers(self) -> list[torch.Tensor]:
        """Live tensors whose memory NumPy (or another owner) can write without torch knowing."""
        out = []
        kept = []
        for tid in self.foreign:
            t = self.ids.obj(tid)
            if t is not None:
                out.append(t)
                kept.append(tid)
        self.foreign[:] = kept
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
    def _names(self, frame: types.FrameType | None) -> tuple[dict[str, str], list[_Names], list[_Names]]:
        """The bindings, and the per-scope bindings that changed: before (old order) and now (new order).

        The module's names are read each step (compared by identity: a statement in any frame
        can rebind a global). A function's names are read when it is the running frame, when it
        ran since it was last read (``f_lasti`` moved: a call made mid-statement) or when its
        code shares cells with other code; otherwise they are as they were. Containers (lists,
        dicts, modules) are read again every step: any code can change them.
        """
        olds: list[dict[str, str]] = []
        news: list[dict[str, str]] = []
        changed = False
        if self.globals_ns is not None:
            g = self._globals_src
            before = g.names
            if self._refresh(g, self.globals_ns, "", True, None):
                olds.append(before)
                news.append(g.names)
                changed = True
        stack, pos = self._stack, self._stack_pos
        labels = self._labels
        fresh = []
        keep = 0
        f = frame
        while f is not None:
            i = pos.get(f)
            if i is not None and not f.f_code.co_flags & _GENERATOR_FLAGS:
                keep = i + 1
                break
            if f in labels:
                fresh.append(f)
            f = f.f_back
        sources = self._sources
        popped = stack[keep:]
        del stack[keep:]
        for p in popped:
            del pos[p]
        for p in reversed(fresh):
            pos[p] = len(stack)
            stack.append(p)
        gone = []
        for p in popped:
            src = sources.get(p)
            if src is None:
                continue
            gone.append(src.names)
            if p not in labels:
                del sources[p]
        for f in stack:
            src = sources.get(f)
            if src is None:
                src = sources[f] = _Source()
            read = src.keys is None or f is frame or f.f_lasti != src.lasti or self._shares_cells(f.f_code)
            before = src.names
            if (read or src.containers) and self._refresh(src, None, labels[f] + ".", read, f):
                olds.append(before)
                news.append(src.names)
                changed = True
        olds += gone
        if gone:
            changed = True
        prev = self.prev
        if not changed and prev is not None and not self._cold:
            return prev.bindings, [], []  # type: ignore[return-value]
        bindings: dict[str, str] = {}
        if self.globals_ns is not None:
            bindings.update(self._globals_src.names)
        for f in stack:
            bindings.update(sources[f].names)
        if self._cold:  # nothing cached to compare with: compare every name
            self._cold = False
            return bindings, [dict(prev.bindings)] if prev is not None else [], [bindings]
        return bindings, olds, news

    def _module_tensors(self, name: str, module: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
        """``name.param`` and ``name.buffer`` pairs of a module, listed again only when its tree changed."""
        shape = _module_shape(module)
        hit = self._modules_seen.get(id(module))
        if shape is not None and hit is not None and hit[0] is module and hit[1] == name \
                and len(hit[2]) == len(shape) and all(map(operator.is_, shape, hit[2])):
            return hit[3]
        found: list[tuple[str, torch.Tensor]] = []
        _collect_one(name, module, found)
        if shape is not None:
            self._modules_seen[id(module)] = (module, name, shape, found)
        return found

    def _shares_cells(self, code: types.CodeType) -> bool:
        """True when code run in another frame can rebind this code's locals (closures, ``nonlocal``;
        on 3.12+ also an inlined comprehension, whose loop rebinds locals within one statement)."""
        found = self._cells.get(code)
        if found is None:
            found = bool(code.co_cellvars or code.co_freevars) or (
                _INLINED is not None and _INLINED in code.co_code[::2])
            self._cells[code] = found
        return found

    def _refresh(self, src: _Source, ns: dict[str, Any] | None, prefix: str, read: bool,
                 frame: types.FrameType | None) -> bool:
        """Bring one scope's names up to date; True when they changed."""
        if read:
            if frame is not None:
                ns = frame.f_locals
                src.lasti = frame.f_lasti
            self.work["frames"] += 1
            try:
                keys, values = list(ns), list(ns.values())  # type: ignore[arg-type, union-attr]
            except Exception:
                keys, values = [], []
            if src.keys is None or len(keys) != len(src.keys) or keys != src.keys \
                    or not all(map(operator.is_, values, src.values)):
                src.keys, src.values = keys, values
                src.entries = _entries(ns, prefix)
                src.containers = any(c for _n, _v, c in src.entries)
            elif not src.containers:
                return False
        elif not src.containers:
            return False
        names: dict[str, str] = {}
        stamp, foreign = self.ids.stamp, self.foreign
        for name, value, container in src.entries:
            if not container:
                found = [(name, value)]
            else:
                found = []
                try:
                    if safe.is_a(value, torch.nn.Module):
                        found = self._module_tensors(name, value)
                    else:
                        _collect_one(name, value, found)
                except Exception:  # a container that cannot be read shows no tensors; the trace goes on
                    continue
            for n, t in found:
                tid, new = stamp(t)
                names[n] = tid
                if new and _foreign_memory(t):
                    foreign.append(tid)
        if names == src.names:
            return False
        src.names = names
        return True

    # graph changes ----------------------------------------------------------
    def _new_node(self, out: torch.Tensor, module: str) -> None:
        """A call just made ``out`` and its node: read what the node saved, now, before the
        statement can change it in place (``x.exp().add_(1)``), and note hook-packed values."""
        if self.recorder.in_backward:
            return
        packed = torch._C._autograd._top_saved_tensors_default_hooks(False) is not None
        # called from the torch function mode, where the line hook still sees every call: our own
        # calls would each go through it (on 3.12+ switching it costs more than it saves)
        hook = sys.gettrace() if sys.version_info < (3, 12) else None
        with quiet():
            grad_mode = torch.is_grad_enabled()
            try:
                if hook is not None:
                    sys.settrace(None)
                torch._C._set_grad_enabled(False)
                self.book.walk(grad_fn_of(out), output=out, module=module, packed=packed)
            finally:
                torch._C._set_grad_enabled(grad_mode)
                if hook is not None:
                    sys.settrace(hook)

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

    # events -----------------------------------------------------------------
    def _holders(self, tid: str, bindings: dict[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        names = tuple(n for n, t in bindings.items() if t == tid)
        return names, self.scene.holders(tid)

    def _binding_events(
        self, bindings: dict[str, str], olds: list[dict[str, str]], news: list[dict[str, str]],
        frame: types.FrameType | None,
    ) -> list[Event]:
        """Bind, Rebind, Unbind for the scopes whose names changed (``olds``: as they were, ``news``: now)."""
        if not olds and not news:
            return []
        prev = self.prev.bindings if self.prev is not None else {}
        out: list[Event] = []
        for scope in news:
            for name, tid in scope.items():
                old = prev.get(name)
                if old is None:
                    out.append(Bind(name, tid))
                elif old != tid:
                    names, held = self._holders(old, bindings)
                    out.append(Rebind(name, old, tid, names, held))
        live_scopes: set[str] | None = None
        for scope in olds:
            for name, old in scope.items():
                if name in bindings or prev.get(name) != old:
                    continue
                label = _scope_of(name)
                if label:
                    if live_scopes is None:
                        live_scopes = self._frame_scopes(frame)
                    if label not in live_scopes:
                        continue  # the function returned: its names went with it
                names, held = self._holders(old, bindings)
                out.append(Unbind(name, old, names, held))
        return out

    def _frame_scopes(self, frame: types.FrameType | None) -> set[str]:
        labels = self._labels
        return {labels[f] for f in self._stack if f in labels} if frame is not None else set()

    def _mutate_events(self, mutated: list[tuple[str, int, int]], tensors: Mapping[str, TensorInfo]) -> list[Event]:
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
        for tid in sorted((x for x in self.scene.changed if x[0] == "t"), key=_num):
            # new values, same version: .data =, set_, NumPy, an alias
            was, now = prev.get(tid), tensors.get(tid)
            if now is None:
                continue
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
        self, tensors: Mapping[str, TensorInfo], backward_events: list[tuple[Any, list[tuple[str, str]]]]
    ) -> list[Event]:
        prev = self.prev.tensors if self.prev is not None else {}
        changes = []
        scene = self.scene
        for tid in sorted({x for x in (*scene.changed, *scene.added) if x[0] == "t" and x in tensors}, key=_num):
            info = tensors[tid]
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

    def _untracked_events(self, tensors: Mapping[str, TensorInfo]) -> list[Event]:
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

    def _predictions(self, bindings: dict[str, str], nodes: Mapping[str, NodeInfo]) -> tuple[Prediction, ...]:
        book = self.book
        book.stale = {nid for nid in book.stale if any(s.state == STALE for s in book.nodes[nid].saved)}
        shown = sorted((nid for nid in book.stale if nid in nodes), key=_num)
        stale = [(nid, s) for nid in shown for s in nodes[nid].saved if s.state == STALE]
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
def _remove_mode(mode: Any) -> None:
    """Take ``mode`` off the torch function mode stack; modes the learner pushed above it stay."""
    above = []
    try:
        while torch._C._len_torch_function_stack() > 0:
            top = torch._C._pop_torch_function_stack()
            if top is mode:
                break
            above.append(top)
    finally:
        for m in reversed(above):
            torch._C._push_on_torch_function_stack(m)


#: in-place calls that change a tensor's autograd flags and leave its version alone
_FLAG_OPS = frozenset({"detach_", "requires_grad_"})

#: names a notebook shell keeps for itself (``Out`` holds every displayed result)
_SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit"})


_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
#: the opcode of a comprehension inlined in its function (3.12+), whose loop rebinds the function's locals
_INLINED = dis.opmap.get("LOAD_FAST_AND_CLEAR")


def _entries(ns: Any, prefix: str) -> list[tuple[str, Any, bool]]:
    """The names of a namespace that show tensors: ``(name, value, True for a container)``."""
    # every read is defensive (see .safe): a learner's namespace may hold anything
    out: list[tuple[str, Any, bool]] = []
    for name, value in safe.name_items(ns):
        if name.startswith("_") or (not prefix and name in _SHELL_NAMES):
            continue
        full = prefix + name
        if safe.is_a(value, torch.Tensor):
            if not safe.is_lazy(value):
                out.append((full, value, False))
        elif safe.is_a(value, tuple):  # cannot change: read once
            found: list[tuple[str, torch.Tensor]] = []
            try:
                _collect_one(full, value, found)
            except Exception:
                continue
            out += [(n, t, False) for n, t in found]
        elif safe.is_a(value, (torch.nn.Module, list, dict)):
            out.append((full, value, True))
    return out


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


_MODULE_LISTING = (torch.nn.Module.named_parameters, torch.nn.Module.named_buffers, torch.nn.Module.named_modules,
                   torch.nn.Module._named_members)


def _module_shape(module: torch.nn.Module) -> list[Any] | None:
    """Every submodule, parameter and buffer of ``module`` with their names, flat: compared by identity
    to tell that ``named_parameters()`` would list the same. None when a class lists its own way."""
    out: list[Any] = []
    todo = [module]
    while todo:
        m = todo.pop()
        cls = type(m)
        if (cls.named_parameters, cls.named_buffers, cls.named_modules, cls._named_members) != _MODULE_LISTING:
            return None
        d = m.__dict__
        out.append(m)
        for field in ("_parameters", "_buffers", "_non_persistent_buffers_set", "_modules"):
            items = d.get(field)
            if items is None:
                out.append(None)
                continue
            out.append(len(items))
            out.extend(items)
            if field != "_non_persistent_buffers_set":
                out.extend(items.values())
                out.extend(map(type, items.values()))  # a lazy parameter changes class when it gets its shape
        todo.extend(v for v in d.get("_modules", {}).values() if v is not None)
    return out


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


def _reachable(root: str | None, nodes: Mapping[str, NodeInfo]) -> set[str]:
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


_num = num


def _lineno_in(exc: BaseException, filename: str) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


# ---------------------------------------------------------------- public API
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
    if namespace is None:
        namespace = {}
    code = compile_source(source, filename, last_value is not None)
    if filename.startswith("<"):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tracer = Tracer(source, filename, max_steps, globals_ns=namespace)
    if last_value is not None:
        namespace[LAST_VALUE] = last_value.append
    try:
        trace = tracer.run(lambda: exec(code, namespace))
    finally:
        if last_value is not None:
            namespace.pop(LAST_VALUE, None)
    if tracer.exception is not None and (raise_errors or isinstance(tracer.exception, KeyboardInterrupt)):
        raise tracer.exception  # an interrupt always stops the caller too, as it would without gradtrace
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

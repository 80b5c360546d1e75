"""One traced run, composed of its parts; a step is built read -> diff -> assemble (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The code runs with ``exec`` in the learner's namespace, exactly as it would
without gradtrace; the run driver (:mod:`.driver`: ``sys.monitoring`` on Python
3.12+, ``sys.settrace`` otherwise) reports each line of the traced source, and
the state right after each statement is recorded as a :class:`~gradtrace.model.Step`
(ids and plain values only). :class:`Tracer` owns the parts and has no base class:
the driver, the recorder, the names (:mod:`.names`), the graph book
(:mod:`.graph`), what is shown (:mod:`.shown`); it reads what a statement did,
diffs it into events (:mod:`.events`, :mod:`.predict`) and assembles the step.
The recorder (:mod:`.recorder`) tells what the statement did: ``backward()``
calls heard from their frames (:mod:`.watch`), modules' forward calls from global
hooks, and, only for statements whose text needs it, every torch call through a
torch function mode. Past ``max_steps`` the code runs on with only a line counter
attached, and one last snapshot records the final state.
"""

from __future__ import annotations

import gc
import threading
import types
import weakref
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import torch

from ..model import (
    DEFAULT_MAX_STEPS,
    Error,
    Event,
    NodeInfo,
    Prediction,
    Rebind,
    Step,
    TensorInfo,
    Trace,
    Unbind,
)
from . import safe
from .changes import Changes
from .driver import Driver
from .events import binding_events
from .graph import GraphBook, grad_fn_of, storage_of, version_of
from .hooks import NodeHooks
from .ids import Ids
from .layers import Layered
from .names import Names
from .predict import predictions, take_back
from .quiet import quiet
from .recorder import Recorder
from .shown import Shown, num
from .statements import Statement, statement_map
from .watch import unwatch_nodes

_ADInplaceOrView = torch._C.DispatchKey.ADInplaceOrView
_excluded = torch._C._dispatch_tls_is_dispatch_key_excluded
_dispatch_modes = torch._C._len_torch_dispatch_stack


def _inside_op() -> bool:
    """True while torch's dispatcher is inside an op, below autograd: the code running is a
    ``__torch_dispatch__`` handler (a dispatch mode's, a tensor subclass's) or an op's own implementation.
    There an in-place write bumps no version: the op's autograd layer bumps it (and gives the output its
    ``grad_fn``) when the op returns, and only for the op's own in-place target."""
    return _excluded(_ADInplaceOrView)


class Tracer:
    """Records one run of traced code. Built by :mod:`gradtrace.run` (``run_traced``, ``trace``).

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
        self.source = source
        self.filename = filename
        self.max_steps = max_steps
        self.globals_ns = globals_ns
        self.statements = statement_map(source, first_line)
        self.line_range = line_range
        self.ids = Ids()
        self.book = GraphBook(self.ids)
        self.recorder = Recorder(self._module_path)
        #: what the recorder calls while a statement runs (and what to put back when an interrupt lands)
        self.hooks = NodeHooks(self.ids, self.book, self.recorder)
        self._attach_recorder()
        self._module_paths: dict[int, tuple[Callable[[], Any], str]] = {}
        self.steps: list[Step] = []
        self.prev: Step | None = None
        #: runs the code, and calls :meth:`on_statement` after each statement
        self.driver = Driver(self, source, filename, max_steps, globals_ns, self.statements, line_range,
                             self.recorder, self.book, self.steps, line_events)
        #: ids of named tensors whose memory torch did not allocate (``from_numpy``, ``frombuffer``)
        self.foreign: list[str] = []
        #: work done, counted (tests compare it across sizes): frames read, tensors read, nodes added, ...
        self.work: Counter[str] = Counter()
        self.shown = Shown(self.ids, self.book, self.work)
        #: the events that need the live tensors to tell
        self.changes = Changes(self.ids, self.book, self.shown, self.recorder)
        #: the names of every scope, read incrementally
        self.names = Names(globals_ns, self.ids, self.driver._labels, self.foreign, self.work)
        self._init_step_state()

    def _attach_recorder(self) -> None:
        """The recorder calls the hooks while a statement runs, and :meth:`_release` when recording stops."""
        rec, hooks = self.recorder, self.hooks
        rec.watch = hooks.watch_backward
        rec.unwatch = unwatch_nodes
        rec.on_node = hooks.new_node
        rec.on_view_write = hooks.view_write
        rec.known_node = self.ids.node
        rec.on_stop = self._release

    def _init_step_state(self) -> None:
        """What one step leaves for the next to compare with."""
        #: storages of tensors handed to NumPy (``x.detach().numpy()``): NumPy can write them unseen
        self._numpy_storages: set[int] = set()
        #: tensor and node counts when the statement being run began
        self._counts = (0, 0)
        #: the bindings the shown roots were counted from (None: they were not theirs alone)
        self._roots_of: dict[str, str] | None = None
        #: the update of what is shown the last step's tensors and nodes mappings show
        self._views_at = -1
        #: the threads running when the trace began (a notebook kernel's own), and others seen at the last step
        self._threads = {t.ident for t in threading.enumerate()}
        self._threads_seen: frozenset[int | None] | None = None
        #: tensors read inside a function before autograd may have set their flags -> the stack depth then
        self._unsettled: dict[str, int] = {}
        #: the step being taken: torch is inside an op (see :func:`_inside_op`); a dispatch mode is on (whose
        #: handler may have written, below autograd, with no step of its own: during ``backward()``, from code
        #: not traced). Either way a write may have moved no version.
        self._below = (False, False)

    # ------------------------------------------------------------ the run, as its driver tells it
    def run(self, call: Callable[[], Any]) -> Trace:
        """Run ``call`` with tracing on; the code's exception is kept (:attr:`exception`), not raised."""
        return self.driver.run(call)

    @property
    def exception(self) -> BaseException | None:
        """The exception the traced code raised (None when it ran to the end)."""
        return self.driver.exception

    @property
    def entry(self) -> types.CodeType | None:
        """The code of the function handed to :func:`trace` (traced even when it is a lambda)."""
        return self.driver.entry

    @entry.setter
    def entry(self, code: types.CodeType | None) -> None:
        self.driver.entry = code

    @property
    def capped(self) -> bool:
        """True once ``max_steps`` steps were recorded (the code then runs on, counted only)."""
        return self.driver.capped

    @property
    def unrecorded(self) -> int:
        """How many statements ran past ``max_steps``."""
        return self.driver.unrecorded

    @property
    def line_events(self) -> str | None:
        """``"monitoring"`` or ``"settrace"``: how the run hears lines (see :mod:`.driver`)."""
        return self.driver.line_events

    @property
    def foreign_codes(self) -> int:
        """How many times another code object's start was heard on the monitoring path."""
        return self.driver.foreign_codes

    # ------------------------------------------------------------ a step
    def on_statement(
        self, frame: types.FrameType | None, stmt: Statement, frame_name: str, error: Error | None,
    ) -> Step:
        # An interrupt (Ctrl-C, a signal) must never leave grad mode or gc off. Both are set and
        # put back by C calls, but Python runs a signal handler after any C call: one landing
        # between two of the putting-back calls is caught here and finishes the job.
        collecting = gc.isenabled()
        grad_mode = torch.is_grad_enabled()
        hooks = self.hooks
        hooks.undo = (collecting, grad_mode, None)
        self._below = (_inside_op(), _dispatch_modes() > 0)  # (read before quiet() takes the modes off)
        try:
            gc.disable()  # a snapshot allocates many small acyclic records: collections would only cost time
            with quiet():
                torch._C._set_grad_enabled(False)
                step = self._take(frame, stmt, frame_name, error)
                torch._C._set_grad_enabled(grad_mode)  # inside: a learner's torch function mode sees it otherwise
            if collecting:
                gc.enable()
            hooks.undo = None
            return step
        except BaseException:
            hooks.put_back()
            raise

    def _take(self, frame: types.FrameType | None, stmt: Statement, frame_name: str, error: Error | None) -> Step:
        """The step after ``stmt``: read (what the statement did, the names, the graph), diff (the events),
        assemble (the step)."""
        rec, book = self.recorder, self.book
        book.module = rec.running_module()  # the statement's own new nodes were made in it
        heard, outside = self._heard()
        counts = self._counts  # as the statement began: its calls stamp as they run
        for _name, out, module in rec.ops:
            book.walk(grad_fn_of(out), output=out, module=module)
        bindings, olds, news = self.names.read(frame, self.prev)
        mutated, dead = self.shown.scan()
        others = self._other_threads()
        if not (heard or olds or news or mutated or dead or book.changed or error is not None or self._unsettled) \
                and self._same_picture(bindings, others):
            return self._unchanged_step(stmt, frame_name, bindings)
        backward_events = self._read_graph(bindings, olds, news, mutated)
        self._update_shown(bindings, mutated, dead, others)
        tensors, nodes = self._views(self.prev)
        events = self._events(frame, error, counts, bindings, olds, news, mutated, backward_events)
        predictions = self._step_predictions(bindings, tensors, nodes, events, error)
        # let go of the tensors these held: a tensor told gone or held must be held by the program alone
        out = None  # type: ignore[assignment]
        del outside
        if heard:
            rec.clear()
        book.done()
        if olds or news:  # (asked only now that the statement's records, which hold its tensors, are let go)
            events = self._gone_or_held(events)
        return self._assemble(stmt, frame_name, bindings, tensors, nodes, tuple(events), predictions)

    def _heard(self) -> tuple[bool, list[torch.Tensor]]:
        """Whether the recorder (or a state that hides writes) heard anything of the statement, and the tensors
        written outside torch's sight; the storages written are marked for reading again."""
        rec, book = self.recorder, self.book
        outside = self._outside_writers()
        numpy_held = self._numpy_storages
        in_op, modes_on = self._below
        heard = bool(rec.ops or rec.inplace or rec.written or rec.backwards or rec.flagged or rec.untracked or outside
                     or numpy_held or in_op or modes_on)
        if rec.inplace or rec.written or outside:
            book.touched([t for _op, t in rec.inplace] + rec.written + outside)
        if numpy_held:  # memory a NumPy array writes may have changed with no torch call: read again
            book.dirty = book.dirty | numpy_held
        if in_op or modes_on:  # the version counters tell nothing: every shown tensor's memory is read again
            book.dirty = book.dirty | self.shown.by_storage.keys()
        return heard, outside

    def _same_picture(self, bindings: dict[str, str], others: bool) -> bool:
        """True when the step before's picture is this one's, given that the statement changed nothing seen."""
        prev = self.prev
        return prev is not None \
            and bindings is prev.bindings and self._roots_of is bindings and self._views_at == self.shown.updates \
            and not self.driver.capped and not others

    def _unchanged_step(self, stmt: Statement, frame_name: str, bindings: dict[str, str]) -> Step:
        """Nothing the statement did can show: the step before's picture, shared."""
        prev = self.prev
        assert prev is not None
        self.work["unchanged steps"] += 1
        self.book.done()
        return self._assemble(stmt, frame_name, bindings, prev.tensors, prev.nodes, (), prev.predictions)

    def _read_graph(self, bindings: dict[str, str], olds: list[dict[str, str]], news: list[dict[str, str]],
                    mutated: list[tuple[str, int, int]]) -> list[tuple[Any, list[tuple[str, str]]]]:
        """Walk what the statement added to the graph and mark what it changed; the backward calls it made,
        each with the saved values it freed."""
        rec, ids, book = self.recorder, self.ids, self.book
        self._walk_new_names(olds, news)
        for _name, out, _module in rec.ops:
            nid = ids.node(grad_fn_of(out))
            if nid is not None and ids.tensor(out) is not None:
                book.link_output(nid, out)
        for _op, t in rec.inplace:  # changed in place by this statement: saved copies made before go stale
            changed = ids.tensor(t)
            if changed is not None:
                book.mark_versions(changed, version_of(t))
        backward_events = self.hooks.backwards() if rec.backwards else []
        for tid, _v0, v1 in mutated:
            book.mark_versions(tid, v1)
        if book.untracked and (book.dirty or mutated):  # saved values no id follows, in written storages
            written = [*book.dirty, *(storage_of(t) for t in map(ids.obj, (m[0] for m in mutated)) if t is not None)]
            book.check_untracked((grad_fn_of(t) for t in map(ids.obj, bindings.values()) if t is not None), written)
        return backward_events

    def _walk_new_names(self, olds: list[dict[str, str]], news: list[dict[str, str]]) -> None:
        """New names' graphs, in name order: node ids follow the order of the names."""
        ids, book = self.ids, self.book
        for i, scope in enumerate(news):
            was = olds[i] if i < len(olds) else {}  # (a tensor a name held before was walked then)
            for name, tid in scope.items():
                if was.get(name) == tid:
                    continue
                t = ids.obj(tid)
                if t is not None:
                    book.walk(grad_fn_of(t), output=t)

    def _update_shown(self, bindings: dict[str, str], mutated: list[tuple[str, int, int]], dead: list[str],
                      others: bool) -> None:
        """Bring what is shown to the names (and a temporary backward root) now."""
        rec, book, shown, prev = self.recorder, self.book, self.shown, self.prev
        # a backward from a temporary root (``y[0].backward()``) shows that root's graph for the step
        extra = [f.node for call in rec.backwards for f in call.flow[:1]]
        if prev is not None and bindings is prev.bindings and not extra and self._roots_of is bindings:
            roots = shown.roots  # the same names as at the step before, and nothing else: the same roots
        else:
            roots = {}
            for tid in bindings.values():
                roots[tid] = roots.get(tid, 0) + 1
            for nid in extra:
                roots[nid] = roots.get(nid, 0) + 1
            self._roots_of = None if extra else bindings
        shown.update(roots, self._rechecks(mutated, others), book.changed, dead)
        if self.names.stack:
            self._note_unsettled()
        if book.changed:
            book.changed = set()

    def _events(self, frame: types.FrameType | None, error: Error | None, counts: tuple[int, int],
                bindings: dict[str, str], olds: list[dict[str, str]], news: list[dict[str, str]],
                mutated: list[tuple[str, int, int]],
                backward_events: list[tuple[Any, list[tuple[str, str]]]]) -> list[Event]:
        """What the statement did, as events (see :mod:`.events`): the diff of the step before and this one."""
        rec, shown = self.recorder, self.shown
        events: list[Event] = []
        added = shown.added
        if added:
            create = self.changes.create(added, counts)
            if create is not None:
                events.append(create)
        if olds or news:
            events += self._binding_events(bindings, olds, news, frame)
        if mutated or rec.inplace or shown.changed:
            events += self.changes.mutations(mutated, shown.tensors, self._below[0])
        if backward_events or shown.changed or added:
            events += self.changes.grads(shown.tensors, backward_events)
        if rec.untracked:
            events += self.changes.untracked(shown.tensors)
        if error is not None:
            events.append(error)
        return events

    def _step_predictions(self, bindings: dict[str, str], tensors: Mapping[str, TensorInfo],
                          nodes: Mapping[str, NodeInfo], events: list[Event],
                          error: Error | None) -> tuple[Prediction, ...]:
        """The step's predictions: the step before's when nothing moved, else made again."""
        prev = self.prev
        if prev is not None and nodes is prev.nodes and tensors is prev.tensors and bindings is prev.bindings \
                and not events:
            return prev.predictions
        return self._predictions(bindings, self.shown.nodes, error)

    def _assemble(self, stmt: Statement, frame_name: str, bindings: dict[str, str],
                  tensors: Mapping[str, TensorInfo], nodes: Mapping[str, NodeInfo], events: tuple[Event, ...],
                  predictions: tuple[Prediction, ...]) -> Step:
        """The step, which becomes the one before the next."""
        step = _step(len(self.steps), stmt.lineno, stmt.code, frame_name, bindings, tensors, nodes, events,
                     predictions)
        self.prev = step
        self._counts = (self.ids.tensor_count, len(self.book.nodes))
        return step

    def _views(self, prev: Step | None) -> tuple[Mapping[str, TensorInfo], Mapping[str, NodeInfo]]:
        """The step's tensors and nodes: the previous step's mappings plus what the last update of what is shown changed
        (a :class:`Layered` builds its plain dict when first read), or a copy when they do not follow."""
        shown = self.shown
        follows = prev is not None and self._views_at == shown.updates - 1  # prev shows the update before
        self._views_at = shown.updates
        touched_t: list[str] = []
        touched_n: list[str] = []
        for x in (*shown.added, *shown.dropped, *shown.changed):
            (touched_t if x[0] == "t" else touched_n).append(x)
        out: list[Any] = []
        pairs: tuple[tuple[list[str], dict[str, Any], Mapping[str, Any] | None], ...] = (
            (touched_t, shown.tensors, None if prev is None else prev.tensors),
            (touched_n, shown.nodes, None if prev is None else prev.nodes))
        for touched, live, before in pairs:
            if follows and not touched:
                out.append(before)
                continue
            view = Layered.after(before if follows else None, live, touched)
            if view.built:
                self.work["copied"] += len(view)
            out.append(view)
        return out[0], out[1]

    def _rechecks(self, mutated: list[tuple[str, int, int]], others: bool) -> set[str] | None:
        """The shown tensors this statement may have changed; None: any of them.

        A tensor's version, liveness and memory are checked every step (:meth:`Shown.scan`,
        the written storages); its flags and ``.grad`` change without a version bump only
        through calls the recorder notes (``t.grad = ...``, ``requires_grad_``, ``detach_``,
        ``retain_grad``), a backward pass (the leaves and retained tensors), or code the recorder
        does not see: another thread (``others``: see :meth:`_other_threads`), or everything run after
        recording stopped.
        """
        rec, ids, shown = self.recorder, self.ids, self.shown
        if others or self.driver.capped or self.prev is None:
            return None
        out = {tid for tid, _v0, _v1 in mutated}
        if rec.backwards:  # the tensors a backward pass gives a .grad (its hooks' writes are noted below)
            out.update(tid for tid, info in shown.tensors.items()
                       if info.requires_grad and (info.is_leaf or info.retains_grad))
        for t in [*rec.flagged, *(t for _op, t in rec.inplace), *rec.written]:
            tid = ids.tensor(t)
            if tid is not None:
                out.add(tid)
        by_storage = shown.by_storage
        for s in self.book.dirty:
            held = by_storage.get(s)
            if held:
                out.update(held)
        unsettled = self._unsettled
        if unsettled:  # read again now; those read in a call that has since returned for the last time
            out.update(unsettled)
            depth = len(self.names.stack)
            self._unsettled = {tid: d for tid, d in unsettled.items() if d <= depth and tid in shown.tensors}
        return out

    def _note_unsettled(self) -> None:
        """Tensors read inside a function showing no ``grad_fn`` and no ``requires_grad``: the call may be one
        that torch made from within an op (a Function's ``setup_context``, a dispatch mode's
        ``__torch_dispatch__``), and autograd gives the op's outputs their ``grad_fn`` only when it returns.
        They are read again at each step until a step outside the function."""
        tensors = self.shown.tensors
        depth = len(self.names.stack)
        for x in (*self.shown.added, *self.shown.changed):
            if x[0] == "t" and x not in self._unsettled:
                info = tensors.get(x)
                if info is not None and info.grad_fn is None and not info.requires_grad:
                    self._unsettled[x] = depth
                    self.work["unsettled"] += 1

    def _other_threads(self) -> bool:
        """True when a thread started since the trace began runs, or ran since the last snapshot
        (its torch calls reach no torch function mode: nothing tells what it changed)."""
        seen = self._threads_seen
        if seen is None and _thread_count() == 1:
            return False
        alive = {t.ident for t in threading.enumerate()}
        extra = alive - self._threads
        self._threads_seen = frozenset(extra) if extra else None
        return bool(extra) or seen is not None

    def _release(self) -> None:
        """Recording stopped: drop the frames and values held for the name caches."""
        self.names.release()
        self._unsettled.clear()

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
        fresh = self.recorder.shared_storages
        if fresh or self._numpy_storages:  # kept while a shown tensor holds that memory, and for the statement
            held = self.shown.by_storage  # that handed it out (its names are read after this)
            self._numpy_storages = {s for s in self._numpy_storages if held.get(s)}
            self._numpy_storages.update(fresh)
            fresh.clear()
        out += self._grads_changed()
        return out

    def _grads_changed(self) -> list[torch.Tensor]:
        """After ``opt.zero_grad()`` (run with no torch function mode): every shown tensor that had a
        ``.grad`` may have lost it or had it zeroed; they are read again (flagged). After ``opt.step()``
        their values may have changed with no version bump (a fused optimizer's kernel): they are
        returned, as written, for their memory to be read again too."""
        rec = self.recorder
        if not rec.grads_changed:
            return []
        values = rec.grads_changed == "values"
        rec.grads_changed = ""
        obj = self.ids.obj
        written = []
        for tid, info in self.shown.tensors.items():
            if info.grad is not None:
                t = obj(tid)
                if t is not None:
                    rec.flagged.append(t)
                    if values:
                        written.append(t)
        return written

    def _module_path(self, module: torch.nn.Module) -> str:
        """``model.layer1.0`` for a module reachable from a traced name, else its class name."""
        paths = self._module_paths  # by id(), each with a weak reference: a dead module's address is reused
        entry = paths.get(id(module))
        if entry is not None and entry[0]() is module:
            return entry[1]
        for name, value in safe.name_items(self.globals_ns or {}):
            if safe.is_a(value, torch.nn.Module) and not name.startswith("_"):
                for sub, m in safe.named_modules(value, prefix=name):
                    had = paths.get(id(m))
                    if had is None or had[0]() is not m:
                        paths[id(m)] = (_weak(m), sub)
        entry = paths.get(id(module))
        if entry is None or entry[0]() is not module:
            entry = paths[id(module)] = (_weak(module), type(module).__name__)
        return entry[1]

    # events (see .events) -----------------------------------------------------
    def _binding_events(
        self, bindings: dict[str, str], olds: list[dict[str, str]], news: list[dict[str, str]],
        frame: types.FrameType | None,
    ) -> list[Event]:
        prev = self.prev.bindings if self.prev is not None else {}
        return binding_events(prev, bindings, olds, news, self.shown.holders, lambda: self._frame_scopes(frame))

    def _gone_or_held(self, events: list[Event]) -> list[Event]:
        """A tensor a name left that no name or shown node holds is gone, or held by something not shown."""
        obj = self.ids.obj
        for i, e in enumerate(events):
            if isinstance(e, (Rebind, Unbind)) and not e.held_by_names and not e.held_by_nodes \
                    and obj(e.old) is not None:
                events[i] = replace(e, held_elsewhere=True)
        return events

    def _frame_scopes(self, frame: types.FrameType | None) -> set[str]:
        return self.names.scopes() if frame is not None else set()

    def _predictions(
        self, bindings: dict[str, str], nodes: Mapping[str, NodeInfo], error: Error | None = None,
    ) -> tuple[Prediction, ...]:
        """Each named root whose ``backward()`` will fail on a stale saved value (see :mod:`.predict`).

        A call this statement made from such a root that ran without the stale node
        (``backward(inputs=...)``, ``autograd.grad``) takes back what the steps before it said.
        """
        if self.recorder.backwards:
            take_back(self.steps, self.recorder.backwards, self.ids, error)
        return predictions(self.book, self.ids, bindings, nodes)


# ------------------------------------------------------------------ helpers
def _thread_count() -> int:
    """``threading.active_count()`` without taking the threading module's lock (read at every step: a
    thread starting meanwhile is seen at the next step, as it would be with the lock)."""
    try:
        return len(threading._active) + len(threading._limbo)  # type: ignore[attr-defined]
    except Exception:  # another Python's threading module
        return threading.active_count()


def _never() -> None:
    return None


def _weak(obj: Any) -> Callable[[], Any]:
    """A weak reference to ``obj``; for an object that takes none, one that never gives it (so never matches)."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return _never


_num = num
_new = object.__new__


def _step(index: int, lineno: int, code: str, frame: str, bindings: Mapping[str, str],
          tensors: Mapping[str, TensorInfo], nodes: Mapping[str, NodeInfo], events: tuple[Event, ...],
          predictions: tuple[Prediction, ...]) -> Step:
    """``Step(...)`` with these fields, made without the frozen dataclass's per-field ``__setattr__``
    (one per statement): the same object the constructor makes (a test compares them)."""
    step = _new(Step)
    step.__dict__.update(index=index, lineno=lineno, code=code, frame=frame, bindings=bindings, tensors=tensors,
                         nodes=nodes, events=events, predictions=predictions)
    return step

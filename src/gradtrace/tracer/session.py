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
import sys
import threading
import types
import weakref
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import torch

from ..model import (
    IN_OP_WRITE,
    UNSEEN_WRITE,
    Backward,
    Create,
    Error,
    Event,
    NodeInfo,
    Prediction,
    Rebind,
    Root,
    Step,
    TensorInfo,
    Trace,
    Unbind,
    Untracked,
)
from . import safe
from .driver import Driver, _real_gettrace, _real_settrace
from .events import binding_events, grad_changes, make_grad, mutate_events
from .graph import GraphBook, ViewWrite, grad_fn_of, storage_of, version_of
from .ids import Ids
from .layers import Layered
from .names import Names
from .predict import predictions, stale_saves, take_back
from .quiet import quiet
from .recorder import Recorder
from .shown import Shown, num
from .statements import Statement, statement_map
from .summary import summarize
from .watch import MAX_WATCHED_CALLS, BackwardCall, unwatch_nodes, watch_nodes

DEFAULT_MAX_STEPS = 1000
#: Python 3.11 and before: the line hook is a sys.settrace function, which sees every call (see _new_node)
_SETTRACE_LINES = sys.version_info < (3, 12)

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
        self.recorder.unwatch = unwatch_nodes
        self.recorder.on_node = self._new_node
        self.recorder.on_view_write = self._view_write
        self.recorder.known_node = self.ids.node
        self._watched_calls = 0
        self._module_paths: dict[int, tuple[Callable[[], Any], str]] = {}
        self.steps: list[Step] = []
        self.prev: Step | None = None
        #: runs the code, and calls :meth:`on_statement` after each statement
        self.driver = Driver(self, source, filename, max_steps, globals_ns, self.statements, line_range,
                             self.recorder, self.book, self.steps, line_events)
        #: ids of named tensors whose memory torch did not allocate (``from_numpy``, ``frombuffer``)
        self.foreign: list[str] = []
        #: storages of tensors handed to NumPy (``x.detach().numpy()``): NumPy can write them unseen
        self._numpy_storages: set[int] = set()
        #: tensor and node counts when the statement being run began
        self._counts = (0, 0)
        #: gc, grad mode and line hook to put back when an interrupt cuts our own putting-back short
        self._undo: tuple[bool, bool, Any] | None = None
        #: work done, counted (tests compare it across sizes): frames read, tensors read, nodes added, ...
        self.work: Counter[str] = Counter()
        self.shown = Shown(self.ids, self.book, self.work)
        #: the bindings the shown roots were counted from (None: they were not theirs alone)
        self._roots_of: dict[str, str] | None = None
        #: the update of what is shown the last step's tensors and nodes mappings show
        self._views_at = -1
        #: the names of every scope, read incrementally
        self.names = Names(globals_ns, self.ids, self.driver._labels, self.foreign, self.work)
        #: the threads running when the trace began (a notebook kernel's own), and others seen at the last step
        self._threads = {t.ident for t in threading.enumerate()}
        self._threads_seen: frozenset[int | None] | None = None
        #: tensors read inside a function before autograd may have set their flags -> the stack depth then
        self._unsettled: dict[str, int] = {}
        #: the step being taken: torch is inside an op (see :func:`_inside_op`); a dispatch mode is on (whose
        #: handler may have written, below autograd, with no step of its own: during ``backward()``, from code
        #: not traced). Either way a write may have moved no version.
        self._below = (False, False)
        self.recorder.on_stop = self._release

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
        self._undo = (collecting, grad_mode, None)
        self._below = (_inside_op(), _dispatch_modes() > 0)  # (read before quiet() takes the modes off)
        try:
            gc.disable()  # a snapshot allocates many small acyclic records: collections would only cost time
            with quiet():
                torch._C._set_grad_enabled(False)
                step = self._take(frame, stmt, frame_name, error)
                torch._C._set_grad_enabled(grad_mode)  # inside: a learner's torch function mode sees it otherwise
            if collecting:
                gc.enable()
            self._undo = None
            return step
        except BaseException:
            self._put_back()
            raise

    def _put_back(self) -> None:
        """Grad mode, gc and the line hook as they were before our own code changed them."""
        undo, self._undo = self._undo, None
        if undo is None:
            return
        collecting, grad_mode, hook = undo
        torch._C._set_grad_enabled(grad_mode)
        if collecting:
            gc.enable()
        if hook is not None and _real_gettrace() is None:
            _real_settrace(hook)

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
        backward_events = self._backwards() if rec.backwards else []
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
            create = self._create(added, counts)
            if create is not None:
                events.append(create)
        if olds or news:
            events += self._binding_events(bindings, olds, news, frame)
        if mutated or rec.inplace or shown.changed:
            events += self._mutate_events(mutated, shown.tensors, self._below[0])
        if backward_events or shown.changed or added:
            events += self._grad_events(shown.tensors, backward_events)
        if rec.untracked:
            events += self._untracked_events(shown.tensors)
        if error is not None:
            events.append(error)
        return events

    def _create(self, added: list[str], counts: tuple[int, int]) -> Create | None:
        """The tensors and nodes the statement made (``counts``: how many there were as it began), if any."""
        tensor_count, node_count = counts
        new_tensors = sorted((x for x in added if x[0] == "t" and _num(x) > tensor_count), key=_num)
        new_nodes = sorted((x for x in added if x[0] == "n" and _num(x) > node_count), key=_num)
        grads = self._existing_grads(new_tensors) if new_tensors else {}
        if grads:
            new_tensors = [t for t in new_tensors if t not in grads]
        if not (new_tensors or new_nodes or grads):
            return None
        shares = self._shared_memory(new_tensors, tensor_count) if new_tensors else ()
        return Create(tuple(new_tensors), tuple(new_nodes), tuple(grads.items()), shares)

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

    def _existing_grads(self, new: list[str]) -> dict[str, str]:
        """Of the tensors first shown at this step, those that are the ``.grad`` a tensor shown before already
        had, unchanged, at the step before (``g = w.grad``): the statement made none of them. Id -> owner.
        Owners are looked up by memory (``Shown.by_storage``): the work is that of the new tensors."""
        shown, obj = self.shown, self.ids.obj
        out: dict[str, str] = {}
        touched: set[int] | None = None  # ``w.grad = g = ...``: this statement set that .grad itself
        for tid in new:
            info, t = shown.tensors.get(tid), obj(tid)
            if t is None or info is None or info.requires_grad or info.grad_fn is not None:
                continue
            for owner in sorted(shown.by_storage.get(storage_of(t), ()), key=_num):
                now = shown.tensors.get(owner)
                was = shown.before(owner) if owner not in new and now is not None and now.grad is not None else None
                if was is None or was.grad is None or (was.grad != now.grad and was.grad.text != now.grad.text):  # type: ignore[union-attr]
                    continue
                o = obj(owner)
                if touched is None:
                    touched = {id(x) for x in self.recorder.flagged}
                if o is not None and id(o) not in touched and o.grad is t:
                    out[tid] = owner
                    break
        return out

    def _shared_memory(self, new: list[str], known: int) -> tuple[tuple[str, str], ...]:
        """Of the tensors made by this step, those that are no view yet use the memory of a tensor shown before
        (``nn.Parameter(h)``, ``w.data``, ``torch.from_numpy(h.numpy())``), each with the first such tensor.
        A ``detach()`` is left out: its own event says it. Looked up by memory: the work is that of the new ones."""
        shown, obj = self.shown, self.ids.obj
        detached = {id(t) for t, _reason, source in self.recorder.untracked if source is not None}
        out = []
        for tid in new:
            info, t = shown.tensors.get(tid), obj(tid)
            if t is None or info is None or info.base is not None or id(t) in detached or not t.numel():
                continue
            s = storage_of(t)
            if not s:
                continue
            for other in sorted(shown.by_storage.get(s, ()), key=_num):
                o = obj(other) if _num(other) <= known else None
                if o is not None and storage_of(o) == s:  # its own memory, not its .grad's
                    out.append((tid, other))
                    break
        return tuple(out)

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

    # graph changes ----------------------------------------------------------
    def _new_node(self, out: torch.Tensor, module: str) -> None:
        """A call just made ``out`` and its node: read what the node saved, now, before the
        statement can change it in place (``x.exp().add_(1)``), and note hook-packed values."""
        if self.recorder.in_backward:
            return
        # called while the line hook still sees every call (Python 3.11): it is switched off first, so
        # that none of our own calls goes through it (on 3.12+ switching it costs more than it saves)
        # (the interpreter's own settrace and gettrace: the program's stand-ins pass gradtrace's calls on to them)
        hook = _real_gettrace() if _SETTRACE_LINES else None
        self._undo = (gc.isenabled(), torch.is_grad_enabled(), hook)
        try:  # an interrupt between the putting-back calls below: see on_statement
            if hook is not None:
                _real_settrace(None)
            self._read_new_node(out, module)
        except BaseException:
            self._put_back()
            raise

    def _view_write(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], before: ViewWrite,
                    module: Any = None) -> None:
        """A call on a view returned: what the node it hid inside ``CopySlices`` saved (see
        :meth:`.graph.GraphBook.view_write`), with the line hook off as in :meth:`_new_node`."""
        if self.recorder.in_backward:
            return
        hook = _real_gettrace() if _SETTRACE_LINES else None
        self._undo = (gc.isenabled(), torch.is_grad_enabled(), hook)
        try:  # an interrupt between the putting-back calls: see on_statement
            if hook is not None:
                _real_settrace(None)
            with quiet():
                self.book.view_write(func, args, kwargs, before, module)
            if hook is not None:
                _real_settrace(hook)
            self._undo = None
        except BaseException:
            self._put_back()
            raise

    def _read_new_node(self, out: torch.Tensor, module: str, fn: Any = None) -> None:
        """Walk the new nodes behind ``out`` (``fn``: its grad_fn, when read), with gc, grad mode and the
        line hook off, once for all the nodes the walk finds; nothing when its node was read already
        (a module's input, an output walked from another)."""
        collecting, grad_mode, hook = self._undo or (gc.isenabled(), torch.is_grad_enabled(), None)
        try:
            with quiet():  # the learner's subclass or mode sees none of our reads
                if fn is None:
                    try:
                        fn = out.grad_fn
                    except RuntimeError:  # see graph.grad_fn_of
                        fn = None
                if fn is not None and self.ids.node(fn) is None:
                    packed = torch._C._autograd._top_saved_tensors_default_hooks(False) is not None
                    gc.disable()  # as in a snapshot: small acyclic records, and a collection would walk the whole trace
                    torch._C._set_grad_enabled(False)
                    self.book.walk(fn, output=out, module=module, packed=packed)
        finally:
            torch._C._set_grad_enabled(grad_mode)
            if collecting:
                gc.enable()
            if hook is not None:
                _real_settrace(hook)
            self._undo = None

    def _watch_backward(self, call: BackwardCall) -> list[Any] | None:
        """A backward call starts: hooks on its nodes (see :mod:`.watch`); None when not watched."""
        self._watched_calls += 1
        if self._watched_calls > MAX_WATCHED_CALLS:
            return None
        collecting = gc.isenabled()
        try:
            with quiet():
                gc.disable()
                for _name, out, module in self.recorder.ops:  # this statement's nodes first, in creation order
                    self.book.walk(grad_fn_of(out), output=out, module=module)
                fns = [grad_fn_of(r) for r in call.roots]
                for root, fn in zip(call.roots, fns, strict=True):
                    self.book.walk(fn, output=root)
                return watch_nodes(fns, self.ids, call.flow)
        except Exception:  # watching is best effort: the call itself must run as written
            return None
        finally:
            if collecting:
                gc.enable()

    def _backwards(self) -> list[tuple[Any, list[tuple[str, str]]]]:
        found = []
        for call in self.recorder.backwards:
            freed: list[tuple[str, str]] = []
            for root in call.roots:
                fn = grad_fn_of(root)
                if fn is not None:
                    self.book.walk(fn, output=root)
                    if not call.retain_graph:  # a watched call's hooks told which nodes ran: only those freed
                        freed += self.book.refresh_freed(fn, {f.node for f in call.flow} if call.flow else None)
            found.append((call, freed))
        return found

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

    def _mutate_events(self, mutated: list[tuple[str, int, int]], tensors: Mapping[str, TensorInfo],
                       in_op: bool = False) -> list[Event]:
        direct: dict[str, str] = {}
        where: dict[str, int | None] = {}  # storage of each tensor changed directly
        for op, target in self.recorder.inplace:
            tid = self.ids.tensor(target)
            if tid is not None:
                direct.setdefault(tid, op)
                where.setdefault(tid, storage_of(target))

        def shares(tid: str, other: str) -> bool:  # changed through a view: the two share memory
            t = self.ids.obj(tid)
            mine = None if t is None else storage_of(t)
            return mine is not None and where[other] == mine

        made, made_from = self._made_and_changed(mutated, tensors)
        return mutate_events(mutated + made, direct, self.shown.before, tensors, self.shown.changed, self._stale,
                             shares, IN_OP_WRITE if in_op else UNSEEN_WRITE, made_from)

    def _made_and_changed(
        self, mutated: list[tuple[str, int, int]], tensors: Mapping[str, TensorInfo]
    ) -> tuple[list[tuple[str, int, int]], dict[str, str | None]]:
        """Tensors shown for the first time that the statement's in-place calls changed (``y = x.exp().add_(1)``,
        ``ReLU(inplace=True)`` of a new tensor): ``(tid, version before, now)`` and the node each had before."""
        out: list[tuple[str, int, int]] = []
        nodes: dict[str, str | None] = {}
        done = {tid for tid, _v0, _v1 in mutated}
        before, ids = self.shown.before, self.ids
        for t, v0, fn in self.recorder.changed_from:  # in call order: the first change of each tensor counts
            tid = ids.tensor(t)
            if tid is None or tid in done or tid not in tensors or before(tid) is not None:
                continue
            done.add(tid)
            v1 = version_of(t)
            if v1 != v0:
                out.append((tid, v0, v1))
                nodes[tid] = None if fn is None else ids.node(fn)
        return out, nodes

    def _stale(self, tid: str, version: int) -> tuple[tuple[str, str], ...]:
        return stale_saves(self.book, tid, version)

    def _grad_events(
        self, tensors: Mapping[str, TensorInfo], backward_events: list[tuple[Any, list[tuple[str, str]]]]
    ) -> list[Event]:
        shown = self.shown
        changes = grad_changes((*shown.changed, *shown.added), shown.before, tensors)
        if not backward_events:
            return [make_grad(c) for c in changes]
        out: list[Event] = []
        for i, (call, freed) in enumerate(backward_events):
            first, *others = self._roots(call) or [Root(None, None, None)]
            out.append(
                Backward(
                    root=first.tensor,
                    gradient=first.gradient,
                    retain_graph=call.retain_graph,
                    grads=tuple(changes) if i == len(backward_events) - 1 else (),
                    freed=tuple(freed),
                    call=call.call,
                    root_node=first.node,
                    flow=tuple(call.flow),
                    others=tuple(others),
                )
            )
        return out

    def _roots(self, call: BackwardCall) -> list[Root]:
        """Each tensor ``call`` starts from, with its node and the gradient given for it."""
        grads = call.gradient if isinstance(call.gradient, (list, tuple)) else [call.gradient]
        out = []
        for k, root in enumerate(call.roots):
            fn = grad_fn_of(root)
            g = grads[k] if k < len(grads) else None
            out.append(Root(self.ids.tensor(root), None if fn is None else self.ids.node(fn),
                            summarize(g) if isinstance(g, torch.Tensor) else None))
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

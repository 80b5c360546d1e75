"""Running the learner's code and turning line events into statements (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

:class:`Driver` is the part of a :class:`~gradtrace.tracer.session.Tracer` that runs
the code: it hears which line of the traced source is about to run, groups lines
into statements (:mod:`.statements`), names each running call (``fib()``,
``fib()#3`` while another ``fib`` runs), and calls its owner's ``on_statement``
each time a statement finishes. It hears lines one of two ways:

``monitoring`` (Python 3.12 and later, the default there)
    :mod:`sys.monitoring` with a tool id of its own. Line, return, yield and jump
    events are switched on for the learner's code objects only, so PyTorch's own
    Python code runs at full speed: a call of any other code object costs one
    callback the first time and nothing after (the callback disables itself
    there). A program's own ``sys.settrace(...)`` leaves it untouched, and its
    trace function is called through a stand-in that hides gradtrace's own code
    (snapshots run inside the monitoring callbacks). When no
    tool id is free (a debugger or profiler holds all six), the run falls back to
    ``settrace``.
``settrace`` (Python 3.11, and the fallback)
    :func:`sys.settrace`: the global trace function is called on every Python
    call, PyTorch's included. While the run goes on, the program's own
    ``sys.settrace``/``sys.gettrace`` (on the run's thread) set and read a trace
    function of the program's that the tracer calls in turn, as Python would: the
    program sees its own function (or the one installed before the run), never
    the tracer's, and gets the events of its own calls and of PyTorch's, none of
    gradtrace's own code. A program that still replaces the trace function (a
    ``settrace`` it saved before the run) blinds the tracer from there on; the
    run then warns where following stopped.

Both give the same trace for the same program (``tests/test_tracer_paths.py``
compares them). The path is chosen by the ``line_events`` argument of
:class:`~gradtrace.tracer.session.Tracer` (``"auto"``, ``"monitoring"`` or
``"settrace"``), else by the environment variable ``GRADTRACE_LINE_EVENTS``
(same values), else automatically by the Python version. Asking for
``monitoring`` on a Python without it is an error as an argument and falls back
to ``settrace`` as an environment setting.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..model import Error, Step, Trace
from . import safe
from .chained import ProgramTrace
from .monitoring import HAS_MONITORING, MonitoringLines, take_tool
from .monitoring import TOOL_NAME as TOOL_NAME  # (named here too: the id a run holds)
from .recorder import Recorder, drop_left_hooks
from .stack import nodes_before_raise
from .statement_text import called_names, calls_in_place, grads_may_change, held_calls, needs_mode
from .statements import Statement, Statements
from .systrace import _real_gettrace as _real_gettrace  # the interpreter's own (see .systrace)
from .systrace import _real_settrace as _real_settrace
from .watch import BACKWARD_CODES
from .watch import compiled_code as _compiled_code
from .watch import compiling as _compiling

if TYPE_CHECKING:
    from .graph import GraphBook

#: the environment variable that picks the line-event path when no argument does
LINE_EVENTS_ENV = "GRADTRACE_LINE_EVENTS"
#: the values ``line_events`` takes
LINE_EVENT_PATHS = ("auto", "monitoring", "settrace")
_CO_OPTIMIZED = 0x1
#: gradtrace's own source files start with this: a program's trace function never sees their frames
_get_ident = threading.get_ident
_grad_enabled = torch.is_grad_enabled
_inference_mode = torch.is_inference_mode_enabled
_saved_hooks = torch._C._autograd._top_saved_tensors_default_hooks
_mode_stack_size = torch._C._len_torch_function_stack
_BACKWARD_KIND = BACKWARD_CODES
#: what :meth:`Driver._kind` says of a code object, besides None and a backward call's kind
_UNSEEN = object()
_FUNCTION = object()
_OTHER = object()

_last_trace: list[Trace] = []


def choose_line_events(requested: str | None = None) -> str:
    """``"monitoring"`` or ``"settrace"``: the argument, else ``GRADTRACE_LINE_EVENTS``, else by Python version."""
    from_env = requested is None
    value = os.environ.get(LINE_EVENTS_ENV, "") if from_env else requested
    value = (value or "auto").strip().lower()
    if value not in LINE_EVENT_PATHS:
        where = f"the environment variable {LINE_EVENTS_ENV}" if from_env else "line_events"
        raise ValueError(f"gradtrace: {where} is {value!r}; use one of " + ", ".join(map(repr, LINE_EVENT_PATHS)))
    if value == "auto":
        return "monitoring" if HAS_MONITORING else "settrace"
    if value == "monitoring" and not HAS_MONITORING:
        if from_env:
            return "settrace"
        raise ValueError(f"gradtrace: line_events='monitoring' needs Python 3.12 or later (this is "
                         f"{sys.version_info[0]}.{sys.version_info[1]}); use 'settrace' or 'auto'")
    return value


@dataclass(slots=True)
class _Pending:
    stmt: Statement
    lasti: int
    error: Error | None = None
    #: True while this statement runs with the recorder's torch function mode pushed
    mode: bool = False


#: the drivers running now, innermost last: a run started inside another pauses the outer one
_RUNNING: list[Driver] = []


class Owner(Protocol):
    """What a driver's owner gives it: the step before, and a step after each statement."""

    prev: Step | None

    def on_statement(
        self, frame: types.FrameType | None, stmt: Statement, frame_name: str, error: Error | None,
    ) -> Step: ...


class Driver:
    """Runs traced code and calls its owner's ``on_statement`` after each statement."""

    def __init__(self, owner: Owner, source: str, filename: str, max_steps: int, globals_ns: dict[str, Any] | None,
                 statements: Statements, line_range: tuple[int, int] | None, recorder: Recorder, book: GraphBook,
                 steps: list[Step], line_events: str | None) -> None:
        self.owner = owner
        self.source = source
        self.filename = filename
        self.max_steps = max_steps
        self.globals_ns = globals_ns
        self.statements = statements
        self.line_range = line_range
        self.recorder = recorder
        self.book = book
        #: the owner's list of steps (each statement's is appended here)
        self.steps = steps
        #: ``"monitoring"`` or ``"settrace"``: how this run hears lines (see the module's text); an
        #: argument is checked now, the environment variable when the run starts (None until then)
        self.line_events: str | None = None if line_events is None else choose_line_events(line_events)
        self.pending: dict[types.FrameType, _Pending] = {}
        self.capped = False
        self.unrecorded = 0
        self.error: Error | None = None
        self.exception: BaseException | None = None
        #: the exceptions on their way out of the program's frames, told once (at the frame that raised)
        self._seen_exc: list[BaseException] = []
        #: by id(statement) (the map keeps each alive): whether its text asks for the torch function mode, whether
        #: it may change grads, the bare names it calls, what it calls from a list, tuple or instance
        self._needs: dict[int, tuple[bool, str, tuple[str, ...], tuple[tuple[str, int | str], ...]]] = {}
        self.internal_error: Exception | None = None
        #: each running traced call's label (``fib()``, ``fib()#3``) and counts per function name
        self._labels: dict[types.FrameType, str] = {}
        self._calls: dict[str, int] = {}
        self._live: dict[str, int] = {}
        #: id(code object) -> what a call of it is to the run (settrace path, see :meth:`_kind`), and
        #: the code objects, kept so that their ids stay theirs
        self._kinds: dict[int, Any] = {}
        self._local_fn = self._local  # one bound method, handed back on every event
        #: per frame whose statement runs without the mode it asked for: the tensors it names (weakly)
        self._suspects: dict[types.FrameType, list[weakref.ref[Any]]] = {}
        #: the files whose code the settrace path looks at: the learner's, the backward calls'
        self._files: frozenset[str] = frozenset()
        self._kept: list[types.CodeType] = []
        #: the code of the function handed to :func:`trace` (traced even when it is a lambda)
        self.entry: types.CodeType | None = None
        #: > 0 while a run started inside this one is going on
        self._paused = 0
        self._settrace = True  # whether the run in progress sets f_trace_opcodes (settrace path)
        #: the program's own sys.settrace while a run goes on, and what the per-event code needs of it, bound
        #: once: its local trace functions per frame that both follow (the same dict), the call passing an
        #: event on to them, the global trace function calling ours and then the program's
        self._chained = ProgramTrace(self)
        self._their_locals = self._chained.their_locals
        self._pass_on = self._chained.pass_on
        self._global_chained = self._chained.global_chained
        #: the run's thread, and the listener of the monitoring path (made at its first run, kept: it
        #: holds the line tables of the code it met)
        self._thread = 0
        self._monitor: MonitoringLines | None = None

    @property
    def foreign_codes(self) -> int:
        """How many times another code object's start was heard (and switched off) on the monitoring path."""
        return 0 if self._monitor is None else self._monitor.foreign_codes

    def _pause(self, by: int) -> None:
        """A run started inside this one on its thread (``by`` 1), or ended (-1): this one hears nothing meanwhile."""
        self._paused += by
        if self._monitor is not None:
            self._monitor.paused = self._paused

    # ------------------------------------------------------------- running
    def run(self, call: Callable[[], Any]) -> Trace:
        """Run ``call`` with tracing on; the code's exception is kept, not raised."""
        if self.line_events is None:
            self.line_events = choose_line_events(None)
        rec = self.recorder
        rec.nodes_read, rec.deep_at = self.book.nodes, nodes_before_raise()
        if self.globals_ns is not None and self.owner.prev is None:
            # what the namespace already holds is the baseline, not news of the first step
            try:
                self.owner.prev = self.owner.on_statement(None, Statement(0, "<start>", False), "<module>", None)
            except Exception as exc:  # never stop the learner's code from running
                self._internal_failure(exc)
            if len(rec.nodes_read) > rec.deep_at:
                rec.deepen()
        taken = self._run_inside(call)
        self._wind_down(taken)
        final = None
        if self.capped and self.internal_error is None:
            try:
                final = self.owner.on_statement(None, Statement(0, "<end>", False), "<module>", None)
            except Exception as exc:
                self._internal_failure(exc)
        if len(rec.nodes_read) > rec.deep_at:  # the final snapshot's reads
            rec.deepen()
        if self.internal_error is not None:
            # (stack levels: the warnings point where the entry function was called, past Tracer.run)
            warnings.warn(self._failure_words(self.internal_error), RuntimeWarning, stacklevel=4)
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

    def _run_inside(self, call: Callable[[], Any]) -> bool:
        """Run ``call`` on one of the two paths, the runs of this thread it started inside paused; True when
        the program replaced the trace function (settrace path)."""
        self._thread = self.recorder.thread = _get_ident()
        outers = [d for d in _RUNNING if d._thread == self._thread]
        paused: list[Driver] = []
        taken = False
        try:  # all set-up inside: an interrupt landing there leaves no run listed as running, no run paused
            for outer in outers:
                outer._pause(1)
                paused.append(outer)
            _RUNNING.append(self)
            tool = take_tool() if self.line_events == "monitoring" else None
            if tool is None:
                taken = self._run_settrace(call)
            else:
                if self._monitor is None:
                    self._monitor = MonitoringLines(self)
                self._monitor.paused = self._paused
                self._monitor.run(call, tool)
        finally:
            if self in _RUNNING:
                _RUNNING.remove(self)
            for outer in paused:
                outer._pause(-1)
        return taken

    def _wind_down(self, taken: bool) -> None:
        """The run ended: its error noted, the statements still running finished, the running calls let go
        (``taken``: the program replaced the trace function, which it is warned of)."""
        if self.exception is not None:  # read untraced: its __str__ may be the learner's code
            raised = self.exception
            self.error = Error(type(raised).__name__, safe.exception_message(raised),
                               _lineno_in(raised, self.filename))
        try:
            for frame in list(self.pending):
                self._finish(frame)
        except Exception as exc:
            self._internal_failure(exc)
        self._labels.clear()
        self._suspects.clear()
        if taken and self.internal_error is None:
            last = self.steps[-1].lineno if self.steps else 0
            warnings.warn(
                "the program replaced the trace function (sys.settrace) while it ran, so gradtrace could "
                f"not follow it after line {last}: what ran later is credited to that line's step. The code "
                "itself ran unchanged; take the sys.settrace call out to see every step.",
                RuntimeWarning, stacklevel=5,
            )

    def _start_recording(self) -> None:
        drop_left_hooks({id(d.recorder) for d in _RUNNING})
        self.recorder.watch_modules()
        if self.capped:  # the baseline snapshot failed: run plainly, counting
            self._stop_recording()

    def _run_settrace(self, call: Callable[[], Any]) -> bool:
        """Run under :func:`sys.settrace`; True when the program replaced the trace function."""
        self._settrace = True
        self.line_events = "settrace"
        self._files = frozenset({self.filename, *(code.co_filename for code in _BACKWARD_KIND)})
        old = _real_gettrace()
        chained = self._chained
        chained.shown = sys.gettrace()  # an outer run's stand-in, when this run is started inside one
        chained.theirs = None
        self.recorder.ours = self._global
        stand_ins = None
        started = False
        try:  # set-up inside: an interrupt landing there still leaves no hook or stand-in behind
            self._start_recording()
            if sys.version_info[:2] == (3, 12) and any(s.shared for s in self.statements.values()):
                # Python 3.12 delivers opcode events only if some frame asked for them before
                # sys.settrace was called: ask once, so lines holding several statements are followed.
                here = sys._getframe()
                here.f_trace_opcodes = True
                here.f_trace_opcodes = False
            stand_ins = chained.stand_in()
            _real_settrace(self._global)
            started = True
            call()
        except BaseException as exc:  # the learner's exception: recorded, re-raised by the caller
            self.exception = exc
        finally:
            now = _real_gettrace()
            # Python drops a trace function that raises: an interrupt (Ctrl-C, a signal handler's
            # exception) landing inside ours leaves None, which is not the program's doing
            dropped = now is None and self.exception is not None and not isinstance(self.exception, Exception)
            taken = started and now != self._global and now != self._global_chained and not dropped
            _real_settrace(old)
            if stand_ins is not None:
                chained.stand_down(stand_ins)
            self._stop_recording()
            self._kinds.clear()
            self._kept.clear()
        return taken

    def _failure_words(self, err: BaseException) -> str:
        """Why recording stopped, in words a learner can act on."""
        where = f"gradtrace stopped recording after step {len(self.steps)}"
        if isinstance(err, RecursionError):
            return (f"{where}: the program's recursion went so deep that the tracer had no room left to "
                    "record it; the code itself ran on unchanged. Trace a smaller input to see every step.")
        return (f"{where} because the tracer failed ({type(err).__name__}: {err}); the code itself ran on "
                "unchanged. Please report this with the code that caused it.")

    def _stop_recording(self) -> None:
        self.recorder.active = False
        self.recorder.unwatch_modules()  # also takes the torch function mode off, if on

    def _traced(self, frame: types.FrameType) -> bool:
        code = frame.f_code
        if code.co_filename != self.filename:
            return False
        if self.line_range is not None and not self.line_range[0] <= code.co_firstlineno <= self.line_range[1]:
            return False
        if not code.co_flags & _CO_OPTIMIZED and frame.f_globals is frame.f_locals:
            return self.globals_ns is not None  # module level
        if code is self.entry:
            return True  # the function handed to trace(), also a lambda
        if code.co_name.startswith("<"):
            return False  # comprehensions, lambdas, generator expressions: one step with their statement
        return bool(code.co_flags & _CO_OPTIMIZED)  # a function, not a class body

    # ------------------------------------------------- settrace's callbacks
    def _global(self, frame: types.FrameType, _event: str, _arg: Any) -> Any:
        """``sys.settrace``'s call event, for every Python call the program makes, PyTorch's own included:
        a set lookup by file name (its hash is kept) for most, a dict lookup per code object already met
        for the rest (:meth:`_kind`)."""
        if frame.f_code.co_filename not in self._files:
            return None
        kind = self._kinds.get(id(frame.f_code), _UNSEEN)  # by id: hashing a code object hashes its constants
        if kind is None or self._paused:
            return None
        try:
            if kind is _UNSEEN:
                kind = self._kind(frame.f_code)
                if kind is None:
                    return None
            if kind is _FUNCTION or kind is _OTHER and self._traced(frame):
                self._enter_frame(frame)
                return self._local_fn
            if kind is not _FUNCTION and kind is not _OTHER:  # a backward call's code
                if _compiling():
                    return None
                return self._backward_local if self.recorder.begin_backward(frame, kind) else None
        except Exception as exc:  # e.g. no room left on the stack for the tracer's own calls
            self._internal_failure(exc)
        return None

    def _kind(self, code: types.CodeType) -> Any:
        """What a call of ``code`` is to the run: None (not followed), a backward call's kind,
        ``_FUNCTION`` (one of the learner's functions, followed), ``_OTHER`` (code that is not a
        function: followed when its frame is the module's, see :meth:`_traced`)."""
        kind: Any = _BACKWARD_KIND.get(code)
        if kind is not None:
            pass
        elif code.co_filename != self.filename or _compiled_code(code) or (
                self.line_range is not None and not self.line_range[0] <= code.co_firstlineno <= self.line_range[1]):
            kind = None
        elif not code.co_flags & _CO_OPTIMIZED:
            kind = _OTHER  # a module, a class body: told by the frame
        elif code is self.entry or not code.co_name.startswith("<"):
            kind = _FUNCTION
        self._kinds[id(code)] = kind
        self._kept.append(code)  # alive while its id is a key
        return kind

    def _backward_local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        """The trace function of a backward call's frame: its end ends the watch."""
        if event == "return":
            try:
                self.recorder.end_backward(frame)
            except Exception as exc:
                self._internal_failure(exc)
        if self._their_locals:
            self._pass_on(frame, event, arg)
        return self._backward_local

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        try:
            if event == "line":
                self._line(frame)
            elif event == "opcode":
                self._opcode(frame)
            elif event == "return":
                self._return(frame)
            elif event == "exception":
                self._exception(frame, arg[1])
        except Exception as exc:  # a tracer failure must never surface in the learner's code
            self._internal_failure(exc)
        if self._their_locals:
            self._pass_on(frame, event, arg)
        return self._local_fn

    # ------------------------------------------- the events, either path
    def _enter_frame(self, frame: types.FrameType) -> None:
        """Name the call: ``fib()``, or ``fib()#2`` for a call made while ``fib`` is already running."""
        code = frame.f_code
        if frame in self._labels or not code.co_flags & _CO_OPTIMIZED and frame.f_globals is frame.f_locals:
            return
        name = code.co_name  # (two functions of one name running at once, nested modules' ``forward``, are told
        calls = self._calls[name] = self._calls.get(name, 0) + 1  # apart as one function's nested calls are)
        live = self._live.get(name, 0)
        self._live[name] = live + 1
        self._labels[frame] = f"{name}()" if live == 0 else f"{name}()#{calls}"

    def _leave_frame(self, frame: types.FrameType) -> None:
        if self._labels.pop(frame, None) is not None:
            self._live[frame.f_code.co_name] -= 1

    def _return(self, frame: types.FrameType) -> None:
        """The frame returned, yielded or was left by an exception."""
        self._finish(frame)
        self._leave_frame(frame)

    def _internal_failure(self, exc: Exception) -> None:
        """Stop recording after a failure of the tracer itself; the code runs on untouched."""
        if self.internal_error is None:
            self.internal_error = exc
        self.pending.clear()
        self._suspects.clear()
        self._cap()

    def _line(self, frame: types.FrameType) -> None:
        if self.recorder.in_backward:
            return
        if self._seen_exc:  # a statement runs: no exception is on its way out any more (holding one would keep
            self._seen_exc.clear()  # its traceback's frames, and their tensors, alive past the handler)
        stmt = self.statements.get(frame.f_lineno)
        if stmt is None:
            return
        if stmt.shared:  # several statements on this line: follow it instruction by instruction
            if self._settrace:
                frame.f_trace_opcodes = True
            stmt = self.statements.at(frame.f_code, frame.f_lasti)
            if stmt is None:
                return
        elif self._settrace and frame.f_trace_opcodes and frame not in self._their_locals:
            frame.f_trace_opcodes = False
        lasti = frame.f_lasti
        pending = self.pending.get(frame)
        if pending is not None and pending.stmt is stmt and (lasti > pending.lasti or not stmt.compound):
            # the same statement, continued on another line (or a decorated def's next line), or going
            # round a comprehension's loop (inlined in its statement since Python 3.12): a simple
            # statement runs again only after another statement's line (its loop's header)
            pending.lasti = lasti
            return
        if pending is not None:
            self._finish(frame)
        self._begin(frame, stmt, lasti)

    def _begin(self, frame: types.FrameType, stmt: Statement, lasti: int) -> None:
        """A statement starts: with the torch function mode on when its text or the state asks for it,
        and the program's own instrumentation is not listening (:meth:`_learner_listens`)."""
        need = self._needs.get(id(stmt))
        if need is None:
            code = stmt.code
            mode = needs_mode(code)
            need = self._needs[id(stmt)] = (mode, grads_may_change(code), () if mode else called_names(code),
                                            () if mode else held_calls(code))
        pending = self.pending[frame] = _Pending(stmt, lasti)
        if self.capped:
            return
        # (or a call the text does not tell: the bare names and the items or attributes, in one scope read)
        asked = need[0] or bool(need[2] or need[3]) and calls_in_place(frame, need[2], need[3])
        if asked or not _grad_enabled() or _inference_mode() or _saved_hooks(False) is not None:
            # (the state it starts in asks for the mode too: grad off, inference mode, saved-tensor hooks, whose
            # packed values are only the learner's to unpack)
            listens = self._learner_listens()
            if listens != "trace":  # under the program's own mode the recorder goes below it
                pending.mode = True
                self.recorder.mode_on(below=listens == "mode")
            elif asked:  # what the mode would have told: the tensors it names may change unseen
                self._suspects[frame] = _named_tensors(frame, stmt.code)
        if need[1] and self.recorder.grads_changed != "values":
            self.recorder.grads_changed = need[1]

    def _note_suspects(self) -> None:
        """Before a snapshot: the tensors named by running statements that ran without the mode they
        asked for (:meth:`_learner_listens`) are read again, as written (``w.data = ...``, ``detach_()``
        leave the version alone), at every step until their statement ends."""
        written = self.recorder.written
        for refs in self._suspects.values():
            for ref in refs:
                t = ref()
                if t is not None:
                    written.append(t)

    def _learner_listens(self) -> str:
        """``"trace"`` while a trace function the mode's frames cannot be hidden from is on, ``"mode"``
        while the program's own torch function mode is, else ``""``.

        The recorder's mode is Python code between the program's calls and torch. A trace function
        the program set through ``sys.settrace`` (the stand-in) is called by gradtrace's own, which
        hides from it the mode's frames and torch's dispatcher leading to them; the call the mode
        passes on is not heard again, and what it calls is (:meth:`.ProgramTrace.global_chained`). So the mode
        still goes on, and an in-place call on a view still tells what its hidden node saved, until
        that function asks to follow the lines of a function not the program's: with the mode on,
        torch's Python functions take their dispatching branch, so their lines would differ. From
        then on, and under any other trace function (one set before the run and left on), the
        statement runs with no mode, as most do, and what it changes is read from version bumps and
        node names. A learner's
        ``TorchFunctionMode`` below the recorder would be handed calls the program never made (the
        recorder's own reads): so the recorder is pushed below the program's modes instead. Theirs see
        each call first, exactly as without tracing (their handlers' lines are steps as usual), and
        the recorder sees what their handlers pass on.
        """
        rec = self.recorder
        tracer = _real_gettrace()
        chained = self._chained
        if chained.theirs is not None:  # set through the stand-in: gradtrace's frames, the mode's included, are hidden
            if chained.their_lines or tracer != self._global_chained \
                    or _mode_stack_size() > (1 if rec.pushed else 0):  # (see ProgramTrace.global_chained)
                return "trace"
            return ""
        if tracer is not None and tracer != rec.ours:
            return "trace"
        if _mode_stack_size() > (1 if rec.pushed else 0):
            return "mode"
        return ""

    def _opcode(self, frame: types.FrameType) -> None:
        """An instruction on a line shared by several statements: a new step when it starts another."""
        if self.recorder.in_backward:
            return
        stmt = self.statements.get(frame.f_lineno)
        if stmt is None or not stmt.shared:
            return
        stmt = self.statements.at(frame.f_code, frame.f_lasti)
        if stmt is None:
            return
        pending = self.pending.get(frame)
        if pending is not None and pending.stmt is stmt:
            pending.lasti = frame.f_lasti
            return
        if pending is not None:
            self._finish(frame)
        self._begin(frame, stmt, frame.f_lasti)

    def _exception(self, frame: types.FrameType, exc: BaseException) -> None:
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
        if pending.mode:
            self.recorder.mode_off()
        if self.capped:
            self.unrecorded += 1
            return
        name = "<module>" if _module_level(frame) else frame.f_code.co_name
        if self._suspects:
            self._note_suspects()
            self._suspects.pop(frame, None)
        step = self.owner.on_statement(frame, pending.stmt, name, pending.error)
        self.steps.append(step)
        rec = self.recorder
        if len(rec.nodes_read) > rec.deep_at:
            rec.deepen()
        if len(self.steps) >= self.max_steps:
            self._cap()

    def _cap(self) -> None:
        """Stop recording: the code runs on, counted, with no torch function mode and no module hooks."""
        self.capped = True
        self._stop_recording()
        self.recorder.clear()
        # The rest runs unread, so no read can ask for room any more: a graph it builds past what the
        # limit can free (and walks, giving its nodes Python wrappers) would crash when freed.
        if self.recorder.deep_at != float("inf"):
            self.recorder.deepen()


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _named_tensors(frame: types.FrameType, code: str) -> list[weakref.ref[Any]]:
    """Weak references to the tensors the names in a statement's text hold in ``frame``."""
    local, glob = frame.f_locals, frame.f_globals
    out = []
    for name in dict.fromkeys(_IDENTIFIER.findall(code)):
        value = local.get(name, glob.get(name))
        if isinstance(value, torch.Tensor):
            out.append(weakref.ref(value))
    return out


def _module_level(frame: types.FrameType) -> bool:
    """True for a module's (or ``exec``'d source's) frame; a function's frame is never one."""
    return not frame.f_code.co_flags & _CO_OPTIMIZED and frame.f_globals is frame.f_locals


def _lineno_in(exc: BaseException, filename: str) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line

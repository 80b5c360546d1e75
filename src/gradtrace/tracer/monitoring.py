"""Hearing the learner's lines through :mod:`sys.monitoring` (tracer layer, Python 3.12 and later).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

:class:`MonitoringLines` is the listener a :class:`~gradtrace.tracer.driver.Driver` picks when
its run hears lines the ``monitoring`` way (the driver's module text tells the two ways apart).
It holds a tool id of its own for the run, switches line, return, yield and jump events on for
the learner's code objects only, and hands each event of a followed frame to the driver's
handlers, bound once when the listener is made: a line event costs one frame lookup and one
call. Any other code object's start is heard once and switched off for the rest of the run.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .systrace import _real_gettrace
from .watch import BACKWARD_CODES, compiled_code, compiling

if TYPE_CHECKING:
    from .driver import Driver

#: :mod:`sys.monitoring`, where it exists (Python 3.12 and later)
_MON: Any = getattr(sys, "monitoring", None)
HAS_MONITORING = _MON is not None
#: the name gradtrace's tool id carries while a run holds it
TOOL_NAME = "gradtrace"
#: tool ids tried in turn: the unassigned ones first, then the ones Python suggests for others
_TOOL_IDS = (3, 4, 5, 2, 1, 0)
_CO_OPTIMIZED = 0x1
_DISABLE = _MON.DISABLE if HAS_MONITORING else None
_get_ident = threading.get_ident
_getframe = sys._getframe
#: the backward calls' code objects by id (torch's own, alive for good): a lookup by code object hashes its constants
_BACKWARD_BY_ID = {id(code): kind for code, kind in BACKWARD_CODES.items()}


def take_tool() -> int | None:
    """A free :mod:`sys.monitoring` tool id, now ours; None when all are taken."""
    mon = _MON
    for tool in _TOOL_IDS:
        if mon.get_tool(tool) is None:
            try:
                mon.use_tool_id(tool, TOOL_NAME)
            except ValueError:  # taken meanwhile
                continue
            return tool
    return None


class MonitoringLines:
    """A driver's :mod:`sys.monitoring` listener: the events of the learner's frames, passed on."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.statements = driver.statements
        self.filename = driver.filename
        self.line_range = driver.line_range
        self.recorder = driver.recorder
        # the driver's handlers, bound once
        self._line = driver._line
        self._opcode = driver._opcode
        self._exception = driver._exception
        self._return = driver._return
        self._enter_frame = driver._enter_frame
        self._traced = driver._traced
        self._internal_failure = driver._internal_failure
        #: > 0 while a run started inside the driver's is going on (kept by the driver)
        self.paused = 0
        # the tool id held, the run's thread, the traced frames of that thread, the learner's code
        # objects with local events on (by id, see _BACKWARD_BY_ID), and their line tables
        self.tool: int | None = None
        self.thread = 0
        self.frames: dict[types.FrameType, bool] = {}
        self.codes: dict[int, types.CodeType] = {}
        self.line_of: dict[types.CodeType, dict[int, int | None]] = {}
        #: how many times another code object's start was heard (and switched off)
        self.foreign_codes = 0

    def run(self, call: Callable[[], Any], tool: int) -> None:
        """Run ``call`` with the events on (``tool``: the id :func:`take_tool` gave); its exception is kept."""
        mon = _MON
        ev = mon.events
        driver = self.driver
        driver._settrace = False
        self.tool = tool
        self.thread = driver._thread
        self.recorder.ours = None  # any trace function installed is someone else's
        chained = driver._chained
        chained.shown = _real_gettrace()  # left on: the program's code runs under it as without gradtrace
        chained.theirs = None
        stand_ins = chained.stand_in()
        callbacks = {
            ev.PY_START: self._mon_start, ev.PY_RESUME: self._mon_start, ev.PY_THROW: self._mon_throw,
            ev.PY_RETURN: self._mon_return, ev.PY_YIELD: self._mon_return, ev.PY_UNWIND: self._mon_unwind,
            ev.RAISE: self._mon_raise, ev.STOP_ITERATION: self._mon_raise, ev.LINE: self._mon_line,
            ev.JUMP: self._mon_jump, ev.INSTRUCTION: self._mon_instruction,
        }
        try:
            # A code object disabled for this tool id by an earlier run (another filename, another
            # function) stays disabled until events are restarted.
            mon.restart_events()
            for event, callback in callbacks.items():
                mon.register_callback(tool, event, callback)
            driver._start_recording()
            for code in BACKWARD_CODES:  # a backward call's end (its start is a global PY_START)
                mon.set_local_events(tool, code, ev.PY_RETURN)
            mon.set_events(tool, ev.PY_START | ev.PY_RESUME | ev.PY_THROW | ev.PY_UNWIND | ev.RAISE)
            try:
                call()
            except BaseException as exc:  # the learner's exception: recorded, re-raised by the caller
                driver.exception = exc
        finally:
            try:  # callbacks first: an event left on (an interrupt landing here) then calls nothing
                for event in callbacks:
                    mon.register_callback(tool, event, None)
                mon.set_events(tool, 0)
                for code in [*self.codes.values(), *BACKWARD_CODES]:
                    mon.set_local_events(tool, code, 0)
            finally:
                mon.free_tool_id(tool)
                mon.restart_events()  # leave no disabled events behind for the next holder of the id
                self.tool = None
                chained.stand_down(stand_ins)
                driver._stop_recording()
                self.frames.clear()
                self.codes.clear()

    def _watch_code(self, code: types.CodeType) -> None:
        """Switch on the local events of one of the learner's code objects."""
        ev = _MON.events
        events = ev.LINE | ev.PY_RETURN | ev.PY_YIELD | ev.JUMP | ev.STOP_ITERATION
        lines = self._lines(code)
        if any((s := self.statements.get(line)) is not None and s.shared for line in set(lines.values()) if line):
            events |= ev.INSTRUCTION
        assert self.tool is not None
        _MON.set_local_events(self.tool, code, events)
        self.codes[id(code)] = code

    def _lines(self, code: types.CodeType) -> dict[int, int | None]:
        """Instruction offset -> line number, for one code object."""
        table = self.line_of.get(code)
        if table is None:
            table = {}
            for start, end, line in code.co_lines():
                for offset in range(start, end, 2):
                    table[offset] = line
            self.line_of[code] = table
        return table

    def _mon_start(self, code: types.CodeType, _offset: int) -> Any:
        """A call starts or a generator resumes: ``settrace``'s ``call`` event."""
        kind = _BACKWARD_BY_ID.get(id(code))
        if kind is not None:
            if not self.paused and _get_ident() == self.thread and not compiling():
                try:
                    self.recorder.begin_backward(_getframe(1), kind)
                except Exception as exc:
                    self._internal_failure(exc)
            return None
        watched = id(code) in self.codes
        if not watched:
            if code.co_filename != self.filename or compiled_code(code) or (
                    self.line_range is not None and not self.line_range[0] <= code.co_firstlineno
                    <= self.line_range[1]):
                self.foreign_codes += 1
                return _DISABLE  # PyTorch's code, the standard library's: never again in this run
            if code.co_flags & _CO_OPTIMIZED and code is not self.driver.entry and code.co_name.startswith("<"):
                self.foreign_codes += 1
                return _DISABLE  # a comprehension or lambda: part of its statement
        if not self.paused and _get_ident() == self.thread:
            try:
                self._start(_getframe(1), watched)
            except Exception as exc:
                self._internal_failure(exc)
        return None

    def _start(self, frame: types.FrameType, watched: bool) -> None:
        try:
            if (not watched or not frame.f_code.co_flags & _CO_OPTIMIZED) and not self._traced(frame):
                return  # a module's code is traced as a module only (its frame tells)
            if not watched:
                self._watch_code(frame.f_code)
            self.frames[frame] = True
            self._enter_frame(frame)
        except Exception as exc:
            self._internal_failure(exc)

    def _mon_throw(self, code: types.CodeType, _offset: int, _exc: BaseException) -> Any:
        """A generator resumed by ``throw()`` (a global event: any code's)."""
        if id(code) in self.codes and not self.paused and _get_ident() == self.thread:
            try:
                self._start(_getframe(1), True)
            except Exception as err:
                self._internal_failure(err)
        return None

    def _mon_return(self, code: types.CodeType, _offset: int, _value: Any) -> Any:
        frame = _getframe(1)
        if self.frames.pop(frame, None) is not None:
            self._left(frame)
        elif id(code) in _BACKWARD_BY_ID:
            self._backward_left(frame)
        return None

    def _backward_left(self, frame: types.FrameType) -> None:
        try:
            self.recorder.end_backward(frame)
        except Exception as exc:
            self._internal_failure(exc)

    def _mon_unwind(self, code: types.CodeType, _offset: int, _exc: BaseException) -> Any:
        """A frame left by an exception (a global event: any code's)."""
        if id(code) in self.codes:
            frame = _getframe(1)
            if self.frames.pop(frame, None) is not None:
                self._left(frame)
        elif id(code) in _BACKWARD_BY_ID:
            self._backward_left(_getframe(1))
        return None

    def _left(self, frame: types.FrameType) -> None:
        try:
            self._return(frame)
        except Exception as exc:
            self._internal_failure(exc)

    def _mon_raise(self, code: types.CodeType, _offset: int, exc: BaseException) -> Any:
        """An exception raised in or passing through a frame: ``settrace``'s ``exception`` event."""
        if id(code) in self.codes:
            frame = _getframe(1)
            if frame in self.frames:
                try:
                    self._exception(frame, exc)
                except Exception as err:
                    self._internal_failure(err)
        return None

    def _mon_line(self, _code: types.CodeType, _line: int) -> Any:
        return self._line_heard(_getframe(1))

    def _line_heard(self, frame: types.FrameType) -> Any:
        """A line event (or a backward jump within one line) in ``frame``, when it is one of ours."""
        if frame in self.frames:
            try:
                self._line(frame)
            except Exception as exc:
                self._internal_failure(exc)
        return None

    def _mon_jump(self, code: types.CodeType, source: int, target: int) -> Any:
        """A backward jump within one line (a loop written on one line) is a line event, as for settrace."""
        if target > source:
            return _DISABLE
        lines = self._lines(code)
        if lines.get(target) != lines.get(source):
            return _DISABLE  # the line event at the target tells
        return self._line_heard(_getframe(1))

    def _mon_instruction(self, code: types.CodeType, offset: int) -> Any:
        line = self._lines(code).get(offset)
        stmt = None if line is None else self.statements.get(line)
        if stmt is None or not stmt.shared:
            return _DISABLE  # only lines holding several statements are followed this closely
        frame = _getframe(1)
        if frame in self.frames:
            try:
                self._opcode(frame)
            except Exception as exc:
                self._internal_failure(exc)
        return None

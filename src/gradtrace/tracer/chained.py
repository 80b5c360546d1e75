"""The program's own trace function, called in turn by the tracer's (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

A program traced by gradtrace may call ``sys.settrace`` itself (a debugger, a coverage tool,
``threading.settrace``). :class:`ProgramTrace` is the part of a
:class:`~gradtrace.tracer.driver.Driver` that keeps such a function working while a run goes
on: it puts stand-ins for ``sys.settrace``/``sys.gettrace`` in place on the run's thread, so
the program sets and reads its own function (or the one installed before the run), never the
tracer's; on the ``settrace`` path the tracer's global and local trace functions call the
program's in turn, with gradtrace's own frames hidden from it; on the ``monitoring`` path the
program's function is installed alone, behind a global function that hides gradtrace's code.
The driver makes one when it is made and binds what its per-event code needs once.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from typing import TYPE_CHECKING, Any

import torch

from .recorder import _DISPATCHER, _SHIELDED
from .systrace import _real_gettrace, _real_settrace

if TYPE_CHECKING:
    from .driver import Driver

#: gradtrace's own source directory: its frames are hidden from the program's trace function
_OWN_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep
_get_ident = threading.get_ident
_mode_stack_size = torch._C._len_torch_function_stack


class ProgramTrace:
    """A driver's handling of the trace function the program itself sets while a run goes on."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        #: what the program's sys.gettrace() gives (the trace function before the run, or the program's own),
        #: the program's own one set during the run (called in turn by the tracer's), its local trace
        #: functions per frame that both follow
        self.shown: Any = None
        self.theirs: Any = None
        self.their_locals: dict[types.FrameType, Any] = {}
        self.standing_in = False
        self.own_local_fn = self.own_local
        #: the program's trace function asked to hear the lines of a function not its own: from then on no
        #: statement runs with the mode under it (see the driver's ``_learner_listens``)
        self.their_lines = False

    def stand_in(self) -> tuple[Any, Any, Any, Any]:
        """Put stand-ins for ``sys.settrace``/``sys.gettrace`` in place; what to put back after the run."""
        outer_set, outer_get = sys.settrace, sys.gettrace
        part = self
        driver = self.driver

        def settrace(function: Any) -> None:
            if part.standing_in and _get_ident() == driver._thread \
                    and not sys._getframe(1).f_code.co_filename.startswith(_OWN_DIR):
                part.program_settrace(function)
            else:
                outer_set(function)

        def gettrace() -> Any:
            if part.standing_in and _get_ident() == driver._thread \
                    and not sys._getframe(1).f_code.co_filename.startswith(_OWN_DIR):
                return part.shown
            return outer_get()

        for stand_in, real in ((settrace, outer_set), (gettrace, outer_get)):
            stand_in.__name__ = stand_in.__qualname__ = real.__name__
            stand_in.__doc__ = real.__doc__
            stand_in.__module__ = "sys"
        self.standing_in = True
        sys.settrace, sys.gettrace = settrace, gettrace
        return outer_set, outer_get, settrace, gettrace

    def stand_down(self, stand_ins: tuple[Any, Any, Any, Any]) -> None:
        """Put back what :meth:`stand_in` replaced (the program's function stays on after a monitoring run)."""
        outer_set, outer_get, settrace, gettrace = stand_ins
        self.standing_in = False
        if not self.driver._settrace and _real_gettrace() == self.global_chained:
            _real_settrace(self.theirs)  # the program's function stays on after its run, as without gradtrace
        if sys.settrace is settrace:
            sys.settrace = outer_set
        if sys.gettrace is gettrace:
            sys.gettrace = outer_get
        self.theirs = None
        self.their_locals.clear()

    def program_settrace(self, function: Any) -> None:
        """The program called ``sys.settrace(function)``: its function gets the events Python would give it."""
        driver = self.driver
        self.shown = function
        self.theirs = function
        if function is None:  # Python stops calling the local trace functions too
            self.their_locals.clear()
        if not driver._settrace:  # sys.monitoring hears the lines: the program's function alone, with our code hidden
            _real_settrace(None if function is None else self.global_chained)
        elif _real_gettrace() in (driver._global, self.global_chained):  # else someone else's (see _run_settrace)
            _real_settrace(driver._global if function is None else self.global_chained)
            if function is not None:
                self._keep_ours(sys._getframe(1))

    def _keep_ours(self, outer: types.FrameType | None) -> None:
        """A debugger (pdb's set_trace) first gives the running frames its own local trace function: in the
        frames the driver follows, its own stays and calls that one in turn; gradtrace's own frames, running
        the program from ``outer`` out, stay unseen."""
        driver = self.driver
        for frame in [*driver.pending, *driver._labels]:
            local = frame.f_trace
            if local is not None and local != driver._local_fn:
                self.their_locals[frame] = local
                frame.f_trace = driver._local_fn
        while outer is not None:
            if outer.f_code.co_filename.startswith(_OWN_DIR) and outer.f_trace is not None:
                outer.f_trace = None
            outer = outer.f_back

    def global_chained(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        """The global trace function while the program's own one is set: ours, then the program's,
        except for gradtrace's own code and what it calls."""
        driver = self.driver
        ours = driver._global(frame, event, arg) if driver._settrace else None
        theirs = self.theirs
        if theirs is None:
            return ours
        back = frame.f_back
        code = frame.f_code
        rec = driver.recorder
        if back is not None and back.f_code is _SHIELDED and code is rec.passing:
            # the Python function the recorder's mode passes a call on to, with the program's trace function on:
            # the program heard the call as it was made, before the mode had it; what it calls is heard as usual
            # (as is what a built-in one passed on calls: a subclass's __torch_function__, a __float__)
            return ours
        if code.co_filename.startswith(_OWN_DIR) or back is not None and back.f_trace is self.own_local_fn \
                or code is _DISPATCHER and rec.pushed and _mode_stack_size() == 1:  # the mode's way in
            if ours is not None:
                return ours
            frame.f_trace_lines = False
            return self.own_local_fn  # the mark its callees are known by
        try:
            mine = theirs(frame, event, arg)
        except BaseException:  # Python then stops tracing, and the exception goes on into the program
            self.program_settrace(None)
            raise
        if mine is not None and code.co_filename != driver.filename and not self.their_lines:
            # The program hears the lines of a function not its own (torch's Python code): with the mode on,
            # such a function takes its dispatching branch (``has_torch_function`` is true), so its lines
            # would differ. The mode leaves, before the function runs a line, and stays off under the
            # program's trace function from now on.
            self.their_lines = True
            rec.mode_off_all()
        if mine is None:
            return ours
        if ours is None:
            return mine
        self.their_locals[frame] = mine  # called in turn by ours (pass_on)
        return ours

    def own_local(self, _frame: types.FrameType, _event: str, _arg: Any) -> Any:
        """The local trace function of gradtrace's own frames (and those they call) while the program traces:
        it hears nothing, and marks the frame as one whose calls the program's trace function does not see."""
        return None

    def pass_on(self, frame: types.FrameType, event: str, arg: Any) -> None:
        """An event of a frame both follow: the program's local trace function gets it too."""
        theirs = self.their_locals.get(frame)
        if theirs is None:
            return
        if event == "return":
            del self.their_locals[frame]
        try:
            mine = theirs(frame, event, arg)
        except BaseException:
            self.program_settrace(None)
            raise
        if mine is not None and event != "return":
            self.their_locals[frame] = mine

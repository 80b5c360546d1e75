"""A program's own ``sys.settrace``: it sees what plain Python shows it, on both line-event paths.

While a run goes on, ``sys.settrace``/``sys.gettrace`` called by the program set and read a
trace function of the program's; on the settrace path the tracer's own one stays installed and
calls it in turn, on the monitoring path a stand-in calls it (``tracer/driver.py``). So the
program's function gets the events of its own calls and of PyTorch's, never gradtrace's, and the
tracer keeps following every statement.
"""

from __future__ import annotations

import gc
import os
import sys
import warnings
from typing import Any

import pytest

import gradtrace
from gradtrace.tracer.driver import HAS_MONITORING

PATHS = ["settrace", *(["monitoring"] if HAS_MONITORING else [])]

#: a program whose trace function records every event it gets: calls of all code, lines and returns of its own
#: functions; ``backward()`` runs gradtrace's backward hooks, learner functions run under both trace functions
PROGRAM = """\
import sys
import torch
events = []
def local(frame, event, arg):
    events.append((event, frame.f_code.co_name, frame.f_lineno))
    return local
def watch(frame, event, arg):
    events.append((event, frame.f_code.co_name, frame.f_code.co_filename))
    return local if frame.f_code.co_name in ("f", "g") else None
def g(t):
    u = t * 3
    return u.sum()
def f(t):
    s = g(t)
    return s + 1
x = torch.ones(3, 2, requires_grad=True)
shown = sys.gettrace()
sys.settrace(watch)
seen = sys.gettrace() is watch
z = f(x)
z.backward()
sys.settrace(None)
after = sys.gettrace()
w = f(x)
"""


@pytest.fixture(autouse=True)
def _no_gc_callbacks() -> Any:
    """gc callbacks left by other code in this process (torch's cycle observer) run at whichever
    allocation starts a collection, which differs from run to run: the program's trace function would
    see their calls at random. Off while each test runs, and put back after."""
    kept = gc.callbacks[:]
    gc.callbacks.clear()
    try:
        yield
    finally:
        gc.callbacks[:] = kept


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GRADTRACE_LINE_EVENTS", request.param)
    return str(request.param)


def _plain(source: str) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    old = sys.gettrace()
    try:
        exec(compile(source, "<plain>", "exec"), ns)
    finally:
        sys.settrace(old)
    return ns


def _traced(source: str) -> tuple[gradtrace.Trace, dict[str, Any], list[str]]:
    ns: dict[str, Any] = {}
    before = sys.gettrace()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trace = gradtrace.trace_code(source, ns)
    finally:
        left = sys.gettrace()
        sys.settrace(before)
    # the settrace path puts back what was on before the run; the monitoring path never took it off, and
    # leaves on what the program left on, as plain Python does
    assert left is (before if os.environ["GRADTRACE_LINE_EVENTS"] == "settrace" else ns.get("left_on"))
    return trace, ns, [str(w.message) for w in caught]


def _named(events: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The events without file names (the plain run's program file is another)."""
    return [e[:2] if e[0] == "call" and len(e) == 3 and isinstance(e[2], str) else e for e in events]


@pytest.mark.usefixtures("path")  # parametrized: runs under each line-event path
def test_a_program_s_trace_function_gets_the_events_plain_python_gives() -> None:
    plain = _plain(PROGRAM)
    trace, ns, said = _traced(PROGRAM)
    assert not [s for s in said if "sys.settrace" in s]
    assert _named(ns["events"]) == _named(plain["events"])
    assert [ns["shown"], ns["seen"], ns["after"]] == [plain["shown"], plain["seen"], plain["after"]]
    # the tracer still followed every statement, in the functions called with the program's function on too
    assert [(s.lineno, s.frame) for s in trace.steps if s.frame != "<module>"] == [
        (11, "g"), (12, "g"), (14, "f"), (15, "f")] * 2
    assert [s.lineno for s in trace.steps if s.frame == "<module>"] == [
        1, 2, 3, 4, 7, 10, 13, 16, 17, 18, 19, 20, 21, 22, 23, 24]


@pytest.mark.usefixtures("path")  # parametrized: runs under each line-event path
def test_gradtrace_s_own_code_is_never_seen() -> None:
    # a module's forward runs gradtrace's module hooks; backward() its node hooks and reads
    source = PROGRAM.replace("z = f(x)\n", "layer = torch.nn.Linear(2, 1)\nz = f(layer(x))\n")
    _trace, ns, _said = _traced(source)
    own = os.path.dirname(gradtrace.__file__)
    files = {e[2] for e in ns["events"] if e[0] == "call"}
    assert files and not [f for f in files if f.startswith(own)]
    assert ("call", "forward") in _named(ns["events"])


@pytest.mark.usefixtures("path")  # parametrized: runs under each line-event path
def test_sys_is_left_as_it_was() -> None:
    settrace, gettrace = sys.settrace, sys.gettrace
    _traced("import sys\nleft_on = lambda *a: None\nsys.settrace(left_on)\nx = 1\n")
    assert sys.settrace is settrace and sys.gettrace is gettrace


#: what a debugger's ``set_trace`` does (``bdb``): its local trace function on every running frame, then its global one
DEBUGGER = """\
import sys
import torch
events = []
def local(frame, event, arg):
    events.append((event, frame.f_code.co_name, frame.f_lineno))
    return local
def watch(frame, event, arg):
    return None
def stop_here():
    frame = sys._getframe(1)
    while frame is not None:
        frame.f_trace = local
        frame = frame.f_back
    sys.settrace(watch)
x = torch.ones(2, requires_grad=True)
stop_here()
y = x * 2
z = y.sum()
sys.settrace(None)
w = z + 1
"""


@pytest.mark.usefixtures("path")  # parametrized: runs under each line-event path
def test_a_debugger_s_set_trace_keeps_both_following_the_program() -> None:
    plain = _plain(DEBUGGER)
    trace, ns, said = _traced(DEBUGGER)
    assert not said
    assert ns["events"] == plain["events"] and plain["events"]  # only the program's lines, none of gradtrace's frames
    assert [s.lineno for s in trace.steps][-5:] == [16, 17, 18, 19, 20]

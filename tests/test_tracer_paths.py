"""The two ways the tracer hears lines give the same trace (issue 9).

On Python 3.12+ the run driver (``gradtrace/tracer/driver.py``) listens with
``sys.monitoring``, scoped to the learner's code objects; ``sys.settrace`` is the
fallback and the only path on 3.11. Every corpus program and a run of generated
programs is traced both ways here, and the JSON of the two traces must be equal.
The fidelity invariants themselves are checked on the default path (monitoring
on 3.12) by ``test_fidelity.py``; CI runs both files under 3.12 (``.ci/py312.sh``).

The rest checks what only one path does: the tool id is always given back (also
after an exception, ``sys.exit``, an interrupt, a nested run, a repeated cell),
a program's own ``sys.settrace`` blinds only the settrace path, foreign code costs
the monitoring path one callback per code object, and past ``max_steps`` neither
path records. Nothing here times anything: work is counted.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings

import gradtrace
from gradtrace.model import Trace
from gradtrace.tracer import Tracer
from gradtrace.tracer.driver import HAS_MONITORING, LINE_EVENTS_ENV, TOOL_NAME, choose_line_events

from fuzz_programs import FUZZ, module_programs, programs

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))
needs_monitoring = pytest.mark.skipif(
    not HAS_MONITORING,
    reason=f"sys.monitoring needs Python 3.12+; Python {sys.version_info[0]}.{sys.version_info[1]} has only "
           "the settrace path, so there is nothing to compare it with",
)
PATHS = [pytest.param("settrace"), pytest.param("monitoring", marks=needs_monitoring)]


@contextlib.contextmanager
def line_events(path: str) -> Iterator[None]:
    old = os.environ.get(LINE_EVENTS_ENV)
    os.environ[LINE_EVENTS_ENV] = path
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(LINE_EVENTS_ENV, None)
        else:
            os.environ[LINE_EVENTS_ENV] = old


def traced(source: str, path: str, max_steps: int = 1000) -> tuple[Trace, str, BaseException | None]:
    """The trace, the printed output and the exception of one traced run, from fixed seeds."""
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    ns: dict[str, Any] = {"__name__": "__main__"}
    out = io.StringIO()
    exc: BaseException | None = None
    with line_events(path), warnings.catch_warnings(), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            trace = gradtrace.trace_code(source, ns, filename="<paths>", max_steps=max_steps, raise_errors=False)
        except BaseException as e:  # noqa: BLE001 - an interrupt reaches the caller; its trace is kept
            exc = e
            found = gradtrace.last_trace()
            assert found is not None
            trace = found
    torch.set_grad_enabled(True)
    return trace, out.getvalue(), exc


def monitoring_clean() -> None:
    """No tool id is left with gradtrace's name, and no event of any tool is left on."""
    if not HAS_MONITORING:
        return
    mon = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    for tool in range(6):
        assert mon.get_tool(tool) != TOOL_NAME, f"tool id {tool} still held"
        if mon.get_tool(tool) is None:
            assert mon.get_events(tool) == 0


def _differences(a: Any, b: Any, where: str = "") -> set[str]:
    """JSON paths at which two parsed JSON documents differ."""
    if type(a) is not type(b):
        return {where}
    if isinstance(a, dict):
        out = {f"{where}.{k}" for k in set(a) ^ set(b)}
        for k in set(a) & set(b):
            out |= _differences(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return {where}
        out = set()
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out |= _differences(x, y, f"{where}[{i}]")
        return out
    return set() if a == b else {where}


#: (node name prefix, saved value): scratch memory PyTorch saves without writing it first. Two runs
#: on one path can read the same bytes by chance while the other path reads others.
WORKSPACES = (("MkldnnRnnLayerBackward", "result3"),)


def _without_workspace(doc: Any) -> Any:
    """The trace's JSON with the values of saved scratch buffers left out (see WORKSPACES)."""
    for node in doc.get("nodes", []):
        for saved in node.get("saved", []):
            if any(node["name"].startswith(prefix) and saved["name"] == name for prefix, name in WORKSPACES):
                saved["value"] = None
    return doc


def assert_same_trace(source: str, max_steps: int = 1000) -> Trace:
    a, out_a, exc_a = traced(source, "settrace", max_steps)
    b, out_b, exc_b = traced(source, "monitoring", max_steps)
    assert out_a == out_b
    assert type(exc_a) is type(exc_b)
    if a.to_json() != b.to_json():
        got = [(s.lineno, s.frame, s.code) for s in b.steps]
        want = [(s.lineno, s.frame, s.code) for s in a.steps]
        assert got == want, "the monitoring path's steps differ from the settrace path's"
        # Memory PyTorch leaves uninitialised (an LSTM's workspace, saved for backward) differs from
        # run to run on one path too: only what is the same in two settrace runs must match.
        again, _out, _exc = traced(source, "settrace", max_steps)
        ja, jb, jagain = (_without_workspace(json.loads(t.to_json())) for t in (a, b, again))
        noise = _differences(ja, jagain)
        differ = _differences(ja, jb) - noise
        assert not differ, f"the paths' traces differ at {sorted(differ)[:5]}"
    monitoring_clean()
    return b


# -------------------------------------------------------------------- same trace
@needs_monitoring
@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_program_same_trace_both_ways(path: Path) -> None:
    assert_same_trace(path.read_text())


@needs_monitoring
@settings(FUZZ, max_examples=120)
@given(programs())
def test_generated_program_same_trace_both_ways(source: str) -> None:
    assert_same_trace(source)


@needs_monitoring
@settings(FUZZ, max_examples=25)
@given(module_programs())
def test_generated_module_program_same_trace_both_ways(source: str) -> None:
    assert_same_trace(source)


CASES = {
    "shared_lines": "import torch\nh = torch.ones(2, requires_grad=True)\nfor i in range(3): h = h * 2\n"
                    "a = h + 1; b = a * 2; c = b - a\nwhile c.sum() < 80: c = c * 2\n",
    "recursion": "import torch\ndef fib(n, t):\n    a = t * n\n    if n < 2:\n        return a\n"
                 "    return fib(n - 1, a) + fib(n - 2, a)\ny = fib(4, torch.ones(1, requires_grad=True))\n",
    "generator_throw": "import torch\ndef gen(t):\n    while True:\n        try:\n            u = yield t\n"
                       "        except ValueError:\n            t = t * 3\nx = torch.ones(1, requires_grad=True)\n"
                       "g = gen(x)\na = next(g)\nb = g.throw(ValueError())\nc = g.send(None)\ng.close()\n",
    "hook_raises": "import torch\nx = torch.ones(2, requires_grad=True)\ndef hook(g):\n    h = g * 2\n"
                   "    raise RuntimeError('in the hook')\nx.register_hook(hook)\ntry:\n"
                   "    (x * 3).sum().backward()\nexcept RuntimeError as e:\n    msg = str(e)\ny = x + 1\n",
    "class_and_comprehensions": "import torch\nclass Box:\n    scale = 2\n    def grow(self, t):\n"
                                "        u = t * self.scale\n        return u\n"
                                "xs = [torch.ones(1) * i for i in range(3)]\n"
                                "b = Box()\nys = [b.grow(x) for x in xs]\nf = lambda t: t + 1\nz = f(ys[0])\n",
    "no_grad_function": "import torch\n@torch.no_grad()\ndef step(w):\n    w -= 0.1\n    return w\n"
                        "w = torch.ones(2, requires_grad=True)\nstep(w)\nv = w * 2\n",
    "exit_in_function": "import sys, torch\ndef leave(t):\n    u = t * 2\n    sys.exit(4)\n"
                        "x = torch.ones(2)\nleave(x)\n",
}


@needs_monitoring
@pytest.mark.parametrize("source", list(CASES.values()), ids=list(CASES))
def test_hand_written_cases_same_trace_both_ways(source: str) -> None:
    assert_same_trace(source)


@needs_monitoring
def test_a_capped_run_counts_the_same_unrecorded_steps_both_ways() -> None:
    source = "import torch\nx = torch.ones(2)\nfor i in range(40):\n    x = x * 1.5\n    y = x.sum()\nz = x + 1\n"
    trace = assert_same_trace(source, max_steps=10)
    assert len(trace.steps) == 10 and trace.steps_unrecorded > 0 and trace.final is not None


# ------------------------------------------------------------ choosing the path
def test_the_path_is_chosen_by_argument_then_environment_then_python() -> None:
    with line_events(""):
        assert choose_line_events(None) == ("monitoring" if HAS_MONITORING else "settrace")
    with line_events("settrace"):
        assert choose_line_events(None) == "settrace"
        assert choose_line_events("auto") == ("monitoring" if HAS_MONITORING else "settrace")
    with pytest.raises(ValueError, match="line_events is 'fast'; use one of 'auto', 'monitoring', 'settrace'"):
        Tracer("x = 1\n", "<paths>", line_events="fast")
    with line_events("fast"), pytest.raises(ValueError, match=LINE_EVENTS_ENV):
        gradtrace.trace_code("x = 1\n", {})


@pytest.mark.skipif(HAS_MONITORING, reason="Python 3.12+ has sys.monitoring")
def test_asking_for_monitoring_without_it_is_a_one_line_error_or_a_fallback() -> None:
    with pytest.raises(ValueError) as info:
        Tracer("x = 1\n", "<paths>", line_events="monitoring")
    assert "needs Python 3.12 or later" in str(info.value) and "\n" not in str(info.value)
    with line_events("monitoring"):  # an environment setting is a preference: the run goes on with settrace
        tracer = Tracer("import torch\nx = torch.ones(1)\n", "<paths>", globals_ns={})
        trace = tracer.run(lambda: exec(compile(tracer.source, "<paths>", "exec"), {}))
    assert tracer.line_events == "settrace" and len(trace.steps) == 2


@pytest.mark.parametrize("path", PATHS)
def test_the_path_asked_for_is_the_path_taken(path: str) -> None:
    source = "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum(); y.backward()\n"
    tracer = Tracer(source, "<paths>", globals_ns={}, line_events=path)
    ns: dict[str, Any] = {}
    tracer.run(lambda: exec(compile(source, "<paths>", "exec"), ns))
    assert tracer.line_events == path
    plain: dict[str, Any] = {}
    exec(compile(source, "<plain>", "exec"), plain)
    assert [s.code for s in tracer.steps] == ["import torch", "x = torch.ones(2, requires_grad=True)",
                                            "y = (x * 2).sum()", "y.backward()"]
    assert torch.equal(ns["x"].grad, plain["x"].grad)
    monitoring_clean()


# ------------------------------------------------------ the tool id is given back
@needs_monitoring
@pytest.mark.parametrize("tail", ["", "raise ValueError('no')\n", "import sys\nsys.exit(2)\n",
                                  "raise KeyboardInterrupt\n"], ids=["plain", "raises", "exit", "interrupt"])
def test_the_tool_id_is_given_back_however_the_program_ends(tail: str) -> None:
    trace, _out, _exc = traced("import torch\nx = torch.ones(2)\n" + tail, "monitoring")
    assert len(trace.steps) == 2 + tail.count("\n")
    monitoring_clean()


@needs_monitoring
def test_a_run_inside_a_run_and_a_cell_traced_again() -> None:
    inner = "import torch\\nq = torch.ones(1) * 3\\n"
    source = (f"import gradtrace, torch\nx = torch.ones(1)\nt = gradtrace.trace_code('{inner}', {{}})\n"
              "y = x + 1\nn = len(t.steps)\n")
    for _ in range(3):
        ns: dict[str, Any] = {}
        trace = gradtrace.trace_code(source, ns, filename="<outer>")
        assert [s.lineno for s in trace.steps] == [1, 2, 3, 4, 5]
        assert ns["n"] == 2  # the inner run saw its own two statements, the outer one none of them
        monitoring_clean()


@needs_monitoring
def test_with_every_tool_id_taken_the_run_falls_back_to_settrace() -> None:
    mon = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    taken = [tool for tool in range(6) if mon.get_tool(tool) is None]
    for tool in taken:
        mon.use_tool_id(tool, "someone else")
    try:
        tracer = Tracer("import torch\nx = torch.ones(1)\n", "<paths>", globals_ns={}, line_events="monitoring")
        trace = tracer.run(lambda: exec(compile(tracer.source, "<paths>", "exec"), {}))
        assert tracer.line_events == "settrace" and len(trace.steps) == 2
        assert all(mon.get_tool(tool) == "someone else" for tool in taken)
    finally:
        for tool in taken:
            mon.free_tool_id(tool)


@needs_monitoring
def test_trace_of_a_function_twice_each_sees_its_own_code() -> None:
    """A code object disabled in one run (outside that run's lines) is heard again in the next."""

    def helper(t: torch.Tensor) -> torch.Tensor:
        u = t * 2
        return u

    def outer(t: torch.Tensor) -> torch.Tensor:
        v = helper(t)
        return v + 1

    with line_events("monitoring"):
        first = gradtrace.trace(outer, torch.ones(1))
        second = gradtrace.trace(helper, torch.ones(1))
    assert [s.code for s in first.steps] == ["v = helper(t)", "return v + 1"]
    assert [s.code for s in second.steps] == ["u = t * 2", "return u"]
    monitoring_clean()


# ---------------------------------------------- a program's own sys.settrace
SETTRACE_NONE = "import sys, torch\na = torch.ones(1) * 2\nsys.settrace(None)\nb = a * 3\nc = b + 1\n"


@pytest.mark.parametrize("path", PATHS)
def test_a_program_turning_settrace_off_blinds_no_path(path: str) -> None:
    # on the settrace path the program's sys.settrace sets its own trace function, not the tracer's
    with line_events(path), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = gradtrace.trace_code(SETTRACE_NONE, {})
    assert not [w for w in caught if "sys.settrace" in str(w.message)]
    assert [s.lineno for s in trace.steps] == [1, 2, 3, 4, 5]


@needs_monitoring
def test_a_program_s_own_trace_function_sees_its_calls_under_monitoring() -> None:
    """With monitoring, the learner's trace function is theirs alone: it sees the program's calls as plain."""
    source = ("import sys, torch\ncalls = []\ndef watch(frame, event, arg):\n    calls.append(frame.f_code.co_name)\n"
              "    return None\ndef f(t):\n    return t * 2\nsys.settrace(watch)\ny = f(torch.ones(1))\n"
              "sys.settrace(None)\nz = y + 1\n")
    plain: dict[str, Any] = {}
    old = sys.gettrace()
    exec(compile(source, "<plain>", "exec"), plain)
    sys.settrace(old)
    ns: dict[str, Any] = {}
    with line_events("monitoring"):
        trace = gradtrace.trace_code(source, ns)
    sys.settrace(old)
    assert [s.lineno for s in trace.steps][-3:] == [9, 10, 11]
    assert "f" in ns["calls"] and "f" in plain["calls"]


# ------------------------------------------------------------- counted work
FOREIGN = ("import torch\nimport torch.nn.functional as F\nx = torch.ones(3)\nfor i in range({n}):\n"
           "    y = F.relu(x)\n    z = F.softmax(x, 0)\n")


@needs_monitoring
def test_foreign_code_costs_the_monitoring_path_once_per_code_object() -> None:
    """``F.relu`` and ``F.softmax`` are Python: each call is a callback for settrace, one in all for monitoring."""
    counts = {}
    for n in (5, 200):
        tracer = Tracer(FOREIGN.format(n=n), "<paths>", globals_ns={}, line_events="monitoring")
        tracer.run(lambda t=tracer: exec(compile(t.source, "<paths>", "exec"), {}))
        counts[n] = tracer.foreign_codes
        assert len(tracer.steps) == 4 + 3 * n  # the loop's header runs n + 1 times
    # 400 more Python calls of F.relu and F.softmax, each one a callback if they were heard per call; code run
    # at moments of its own (a garbage collector's callback) may add one or two
    assert 0 < counts[5] and counts[200] - counts[5] <= 3


@needs_monitoring
def test_past_the_cap_the_torch_mode_is_off_and_foreign_code_is_not_heard() -> None:
    tracer = Tracer(FOREIGN.format(n=300), "<paths>", globals_ns={}, line_events="monitoring", max_steps=5)
    tracer.run(lambda: exec(compile(tracer.source, "<paths>", "exec"), {}))
    assert tracer.capped and not tracer.recorder.active and len(tracer.steps) == 5
    assert tracer.unrecorded == 4 + 3 * 300 - 5
    assert tracer.foreign_codes < 100
    monitoring_clean()


# ------------------------------------------------------------- notebook cells
CELL = "def grow(t):\n    u = t * 2\n    return u\nw = grow(w) if 'w' in dir() else torch.ones(2)\nw.sum()\n"


@pytest.mark.parametrize("path", PATHS)
def test_a_cell_traced_again_and_again_in_one_namespace(path: str) -> None:
    """``%%gradtrace`` runs a cell through ``trace_cell``: a cell re-run redefines its function and goes on."""
    pytest.importorskip("IPython")
    from gradtrace.notebook.magic import trace_cell

    plain: dict[str, Any] = {"torch": torch}
    traced_ns: dict[str, Any] = {"torch": torch}
    with line_events(path):
        for run in range(3):
            exec(compile(CELL, "<plain-cell>", "exec"), plain)
            shown: list[Any] = []
            trace = trace_cell(CELL, traced_ns, f"<cell-{run}>", 1000, shown)
            assert torch.equal(traced_ns["w"], plain["w"])
            assert torch.equal(shown[-1], plain["w"].sum())
            frames = [s.frame for s in trace.steps]
            assert frames == ["<module>"] + (["grow"] * 2 if run else []) + ["<module>"] * 2
            monitoring_clean()


COMPREHENSIONS = """\
import torch
xs = [torch.ones(2) * i for i in range(3)]
y = sum(
    [x.sum()
     for x in xs])
for i in range(2):
    z = {k: x * k for k, x in enumerate(xs)}
"""


@pytest.mark.parametrize("path", PATHS)
def test_a_comprehension_is_one_step_of_its_statement(path: str) -> None:
    """Python 3.12 inlines list, set and dict comprehensions into their statement's code: going round
    their loop is not a new step (found: one step per item, and on the settrace path a RuntimeWarning
    about an unbound local written to the program's stderr)."""
    plain: dict[str, object] = {}
    exec(compile(COMPREHENSIONS, "<plain>", "exec"), plain)
    ns: dict[str, object] = {}
    with line_events(path), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = gradtrace.trace_code(COMPREHENSIONS, ns)
    assert not caught, [str(w.message) for w in caught]
    assert [s.lineno for s in trace.steps] == [1, 2, 3, 6, 7, 6, 7, 6]
    assert torch.equal(ns["y"], plain["y"])  # type: ignore[arg-type]
    assert trace.steps[-1].bindings.keys() >= {"xs[0]", "y"}

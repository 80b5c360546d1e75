"""Running a learner's code under the tracer: the one place a tracer is built.

Place in the pipeline: user code -> **run** -> tracer -> model; explain and render
only read the :class:`~gradtrace.model.Trace` a :class:`Run` holds.

:func:`run_traced` runs source code as ``exec`` would and returns the trace, the
exception the code raised (the learner's own, never a gradtrace one) and the value
of a final expression statement, as a notebook cell shows ``Out``. The public
:func:`trace_code`, :func:`trace` and :func:`last_trace`, the ``gradtrace`` command,
the ``%%gradtrace`` magic, quizzes and comparisons all run code through it.
:func:`backward_traced` runs one ``backward()`` on tensors the caller already has,
under the same tracer, so its reverse pass is recorded as plain data with the ids
a trace of the caller's names gives.

torch is imported (through the tracer) only when code is run, never by importing this module.

:func:`learner_frames` is the one rule for the traceback a learner sees (the command's report, the
magic's, a script's own ``sys.excepthook``): the frames a plain run of the code has, none of gradtrace's.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import os
import sysconfig
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .model import DEFAULT_MAX_STEPS

if TYPE_CHECKING:
    from .model import Backward, Step, Trace
    from .tracer import Tracer

__all__ = ["DEFAULT_MAX_STEPS", "Run", "backward_traced", "compile_source", "last_trace", "learner_frames",
           "learner_tb", "learner_traceback", "ours", "run_traced", "trace", "trace_code"]


@dataclass(frozen=True)
class Run:
    """What running code under the tracer gave.

    ``exception`` is what the code raised (None when it ran to the end); the
    trace records it too, as ``trace.error``. ``last_value`` is the value of a
    final expression statement (None otherwise). ``namespace`` is the dict the
    code ran in, left exactly as plain ``exec`` leaves it.
    """

    trace: Trace
    exception: BaseException | None = None
    last_value: Any = None
    namespace: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.exception is None


#: the start of the name a compiled final expression hands its value to (see :func:`compile_source`)
LAST_VALUE = "__gradtrace_last_value__"
_runs = itertools.count(1)


def last_value_slot() -> str:
    """A name for one run's final value, its own: a run inside a run (a cell that runs a
    ``%%gradtrace`` cell) binds and removes its own, never the outer run's."""
    return f"{LAST_VALUE}{next(_runs)}"


def compile_source(source: str, filename: str, keep_last: bool, slot: str = LAST_VALUE) -> types.CodeType:
    """The code object; with ``keep_last``, a final expression statement (one not ended by ``;``,
    as in a notebook cell) hands its value to the function named ``slot``, so a caller can show it as ``Out``."""
    if not keep_last:
        return compile(source, filename, "exec")
    tree = ast.parse(source, filename)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and not source.rstrip().endswith(";"):
        call = ast.Call(func=ast.Name(slot, ast.Load()), args=[last.value], keywords=[])
        tree.body[-1] = ast.copy_location(ast.Expr(ast.copy_location(call, last.value)), last)
        ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


def run_traced(code: str, ns: dict[str, Any] | None = None, *, view: Mapping[str, Any] | None = None,
               filename: str = "<gradtrace>", max_steps: int = DEFAULT_MAX_STEPS, keep_last: bool = True,
               import_torch: bool = False, raise_interrupt: bool = True, deep_stack: bool = False) -> Run:
    """Run ``code`` in ``ns`` under the tracer (with no ``ns``, a fresh one as a script's, ``__name__ == "__main__"``).

    ``view`` is what the trace shows of the names (``ns`` itself by default; the
    ``%%gradtrace`` magic passes the names its cell touches). The learner's exception
    is returned, not raised, except ``KeyboardInterrupt``, which stops the caller too
    (unless ``raise_interrupt=False``: a script runner reports it as the script's own
    end). A ``SyntaxError`` in ``code`` is raised before anything runs. ``import_torch``
    runs ``import torch`` in ``ns`` first (quiz code may use ``torch`` without importing
    it). ``deep_stack`` gives the process room for deep graphs again afterwards (a child
    process the code started may have lowered the stack limit). Nothing here reads or
    depends on :func:`last_trace`.
    """
    from .tracer import Tracer

    namespace: dict[str, Any] = {"__name__": "__main__"} if ns is None else ns
    slot = last_value_slot()
    compiled = compile_source(code, filename, keep_last, slot)  # a SyntaxError is the caller's, before anything runs
    if filename.startswith("<"):
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    if import_torch and "torch" not in namespace:
        exec("import torch", namespace)  # the learner's namespace gets torch as an import would give it
    tracer = Tracer(code, filename, max_steps, globals_ns=namespace if view is None else dict_view(view))
    values: list[Any] = []
    if keep_last:
        namespace[slot] = values.append
    try:
        trace = tracer.run(lambda: exec(compiled, namespace))
    finally:
        if keep_last:
            namespace.pop(slot, None)
        if deep_stack:
            from .tracer.stack import ensure_deep_stack

            ensure_deep_stack()
    exception = tracer.exception
    if isinstance(exception, KeyboardInterrupt) and raise_interrupt:
        raise exception
    return Run(trace, exception, values[-1] if values and exception is None else None, namespace)


def dict_view(view: Mapping[str, Any]) -> dict[str, Any]:
    """``view`` as the tracer's ``globals_ns`` (it reads names from any mapping; the type says dict)."""
    return view  # type: ignore[return-value]


def trace_code(
    source: str,
    namespace: dict[str, Any] | None = None,
    filename: str = "<gradtrace>",
    max_steps: int = DEFAULT_MAX_STEPS,
    raise_errors: bool = True,
    last_value: list[Any] | None = None,
) -> Trace:
    """Run ``source`` in ``namespace`` as ``exec`` would, recording every statement.

    The namespace ends up exactly as plain ``exec`` leaves it. With no namespace the code runs
    in a fresh one as a script does, with ``__name__ == "__main__"``. If the code
    raises, the exception is recorded in the trace and then re-raised (with
    ``raise_errors=False`` it is only recorded, except ``KeyboardInterrupt``,
    which always propagates; :func:`last_trace` gives the trace after a
    re-raised error). With ``last_value`` (a list), a final expression
    statement's value is appended to it, as a notebook cell shows ``Out``.
    """
    keep = last_value is not None
    run = run_traced(source, namespace, filename=filename, max_steps=max_steps, keep_last=keep)
    if keep and run.exception is None and _ends_in_expression(source):
        last_value.append(run.last_value)  # type: ignore[union-attr]
    if run.exception is not None and raise_errors:
        raise run.exception
    return run.trace


def _ends_in_expression(source: str) -> bool:
    """Whether :func:`compile_source` hands the source's final statement's value on (so None is a value)."""
    body = ast.parse(source).body
    return bool(body) and isinstance(body[-1], ast.Expr) and not source.rstrip().endswith(";")


def trace(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Trace:
    """Call ``fn(*args, **kwargs)``, recording every statement of ``fn`` (and functions it defines)."""
    import inspect
    import textwrap

    from .tracer import Tracer

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
    from .tracer.statements import Statement

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
    from .tracer.driver import _last_trace

    return _last_trace[0] if _last_trace else None


_ROOT, _GRADIENT, _RETAIN, _INPUTS = "_gradtrace_root", "_gradtrace_gradient", "_gradtrace_retain", "_gradtrace_inputs"


def backward_traced(root: Any, gradient: Any = None, retain_graph: bool = False, inputs: Any = None, *,
                    names: Mapping[str, Any] | None = None) -> tuple[Step, Backward | None, BaseException | None]:
    """Run ``root.backward(gradient, retain_graph, inputs=inputs)`` under the tracer.

    ``names`` (for example the caller's ``globals()``) are the names the step shows;
    they are read, never changed (the tracer sees a copy of the mapping; the tensors
    are the caller's own, so ``.grad`` accumulates where the caller expects it).
    Returns the recorded step, its ``Backward`` event (None if none was recorded) and
    the exception ``backward()`` raised, if any.
    """
    from .model import Backward

    ns: dict[str, Any] = {k: v for k, v in (names or {}).items() if isinstance(k, str)}
    ns.update({_ROOT: root, _GRADIENT: gradient, _RETAIN: retain_graph, _INPUTS: inputs})
    code = f"{_ROOT}.backward({_GRADIENT}, retain_graph={_RETAIN}, inputs={_INPUTS})\n"
    run = run_traced(code, ns, filename="<explain>", keep_last=False)
    step = run.trace.steps[-1] if run.trace.steps else run.trace.last
    if step is None:
        raise RuntimeError("gradtrace recorded no step for backward(); nothing to explain")
    event = next((e for e in step.events if isinstance(e, Backward)), None)
    return step, event, run.exception


# ---------------------------------------------------------------- the learner's traceback
#: gradtrace's package folder, as Python names its files (and with links resolved)
_PACKAGE_DIRS = tuple({os.path.join(os.path.dirname(os.path.abspath(__file__)), ""),
                       os.path.join(os.path.dirname(os.path.realpath(__file__)), "")})
_STDLIB = os.path.join(sysconfig.get_paths()["stdlib"], "")
_SITE = tuple(os.path.join(sysconfig.get_paths()[k], "") for k in ("purelib", "platlib"))


def ours(filename: str) -> bool:
    """A file of gradtrace's own."""
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE_DIRS)


def _helper_file(filename: str) -> bool:
    """Generated code (``<string>``, a dataclass's methods), frozen or standard-library modules: what gradtrace's
    own code calls into. Not the learner's code, whatever its file is called (``<ipython-input-3-...>``)."""
    if filename.startswith("<"):
        return filename == "<string>" or filename.startswith("<frozen ")
    path = os.path.abspath(filename)
    return path.startswith(_STDLIB) and not path.startswith(_SITE)


def _torch_detour(filename: str) -> bool:
    """torch's dispatch to a torch function mode (``handle_torch_function``), which the tracer's mode adds."""
    return filename.replace("\\", "/").endswith("torch/overrides.py")


def learner_frames(frames: Sequence[tuple[str, str]]) -> list[int]:
    """Which frames (``(file name, function name)``, outermost first) a plain run of the learner's code has.

    The one rule set for every traceback gradtrace shows (the command's, the magic's, a script's own
    ``sys.excepthook``): gradtrace's frames go, with the stand-in ``<torch call>`` frames and the
    generated or standard-library code gradtrace's own frames called into (an interrupt can land there).
    Under a torch function mode, a torch function written in Python calls ``handle_torch_function``,
    which calls the mode, which calls the same function again: Python alone shows that function once,
    so the detour and the first of the two frames go.
    """
    kept: list[int] = []
    called_by_us = False
    for i, (filename, name) in enumerate(frames):
        if ours(filename) or name == "<torch call>":
            called_by_us = True
        elif not (called_by_us and _helper_file(filename)):
            called_by_us = False
            kept.append(i)
    out: list[int] = []
    for j, i in enumerate(kept):
        if _torch_detour(frames[i][0]):
            after = frames[kept[j + 1]] if j + 1 < len(kept) else None
            if out and after is not None and frames[out[-1]] == after:
                out.pop()
            continue
        out.append(i)
    return out


def learner_tb(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback chain ``tb`` without the frames :func:`learner_frames` leaves out (relinked in place)."""
    chain: list[types.TracebackType] = []
    while tb is not None:
        chain.append(tb)
        tb = tb.tb_next
    keep = [chain[i] for i in learner_frames([(t.tb_frame.f_code.co_filename, t.tb_frame.f_code.co_name)
                                              for t in chain])]
    for a, b in zip(keep, keep[1:], strict=False):
        a.tb_next = b
    if keep:
        keep[-1].tb_next = None
    return keep[0] if keep else None


def learner_traceback(exc: BaseException) -> str:
    """The traceback Python would print for ``exc``, without gradtrace's own frames (:func:`learner_frames`)."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    seen: set[int] = set()
    todo = [te]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        frames = list(t.stack)
        keep = learner_frames([(f.filename, f.name) for f in frames])
        t.stack = traceback.StackSummary.from_list([frames[i] for i in keep])
        todo += [c for c in (t.__cause__, t.__context__) if c is not None]
    return "".join(te.format())

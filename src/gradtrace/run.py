"""Running a learner's code under the tracer: the one way quiz, compare and ``explain(root)`` run code.

Place in the pipeline: user code -> **run** -> tracer -> model; explain and render
only read the :class:`~gradtrace.model.Trace` a :class:`Run` holds.

:func:`run_traced` runs source code as ``exec`` would and returns the trace, the
exception the code raised (the learner's own, never a gradtrace one) and the value
of a final expression statement, as a notebook cell shows ``Out``.
:func:`backward_traced` runs one ``backward()`` on tensors the caller already has,
under the same tracer, so its reverse pass is recorded as plain data with the ids
a trace of the caller's names gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Backward, Step, Trace

__all__ = ["Run", "backward_traced", "run_traced"]


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


def run_traced(code: str, ns: dict[str, Any] | None = None, *, filename: str = "<gradtrace>",
               max_steps: int | None = None, keep_last: bool = True, import_torch: bool = False,
               raise_interrupt: bool = True) -> Run:
    """Run ``code`` in ``ns`` (a fresh dict by default) under the tracer.

    The learner's exception is returned, not raised, except ``KeyboardInterrupt``,
    which stops the caller too (unless ``raise_interrupt=False``: a script runner
    reports it as the script's own end). A ``SyntaxError`` in ``code`` is raised
    before anything runs. ``import_torch`` runs ``import torch`` in ``ns`` first
    (quiz code may use ``torch`` without importing it). Nothing here reads or
    depends on :func:`gradtrace.last_trace`.
    """
    from .tracer import DEFAULT_MAX_STEPS
    from .tracer.core import run_code

    namespace: dict[str, Any] = {} if ns is None else ns
    compile(code, filename, "exec")  # a SyntaxError is the caller's to see, before anything runs
    if import_torch and "torch" not in namespace:
        exec("import torch", namespace)  # the learner's namespace gets torch as an import would give it
    trace, exception, values = run_code(code, namespace, filename,
                                        DEFAULT_MAX_STEPS if max_steps is None else max_steps, keep_last)
    if isinstance(exception, KeyboardInterrupt) and raise_interrupt:
        raise exception
    return Run(trace, exception, values[-1] if values and exception is None else None, namespace)


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

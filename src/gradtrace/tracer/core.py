"""Running learner code one statement at a time: the entry functions (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The code runs with ``exec`` in the learner's namespace, exactly as it would
without gradtrace, under a :class:`~gradtrace.tracer.session.Tracer` (the parts
that record each statement; re-exported here).
"""

from __future__ import annotations

import ast
import linecache
import types
from collections.abc import Callable
from typing import Any

from ..model import Trace
from .driver import _last_trace
from .session import DEFAULT_MAX_STEPS, Tracer
from .statements import Statement


# ---------------------------------------------------------------- public API
def run_code(source: str, namespace: dict[str, Any] | None = None, filename: str = "<gradtrace>",
             max_steps: int = DEFAULT_MAX_STEPS,
             keep_last: bool = False) -> tuple[Trace, BaseException | None, list[Any]]:
    """Run ``source`` as ``exec`` would, recording every statement; never raises the code's exception.

    Returns the trace, the exception the code raised (None if it ran to the end) and, with
    ``keep_last``, the value of a final expression statement in a list (empty when there is none).
    """
    if namespace is None:  # a fresh namespace is a script's: ``if __name__ == "__main__": main()`` runs main()
        namespace = {"__name__": "__main__"}
    code = compile_source(source, filename, keep_last)
    if filename.startswith("<"):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tracer = Tracer(source, filename, max_steps, globals_ns=namespace)
    values: list[Any] = []
    if keep_last:
        namespace[LAST_VALUE] = values.append
    try:
        trace = tracer.run(lambda: exec(code, namespace))
    finally:
        if keep_last:
            namespace.pop(LAST_VALUE, None)
    return trace, tracer.exception, values


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
    trace, exception, values = run_code(source, namespace, filename, max_steps, last_value is not None)
    if last_value is not None:
        last_value.extend(values)
    if exception is not None and (raise_errors or isinstance(exception, KeyboardInterrupt)):
        raise exception  # an interrupt always stops the caller too, as it would without gradtrace
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

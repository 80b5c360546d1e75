"""Run a program under the tracer directly and keep the tracer, shared by the tracer step tests."""

from __future__ import annotations

from typing import Any

from gradtrace.tracer.session import Tracer


def _run(source: str) -> tuple[Any, Tracer, dict[str, Any]]:
    ns: dict[str, Any] = {}
    tracer = Tracer(source, "<steps>", 10**9, globals_ns=ns)
    code = compile(source, "<steps>", "exec")
    trace = tracer.run(lambda: exec(code, ns))
    assert tracer.exception is None
    return trace, tracer, ns

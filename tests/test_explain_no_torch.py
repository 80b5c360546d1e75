"""A trace saved as JSON is read, rendered and explained in a process where torch cannot be imported.

The parent traces real programs with real torch and writes each trace with ``Trace.to_json()``;
a child process with ``sys.modules['torch'] = None`` (set before gradtrace is imported) reads the
JSON back and makes the text twin, the HTML page, the film and the walkthrough of every watched
``backward()``. Each must be exactly what the parent makes from the original trace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from explain_programs import PROGRAMS

import gradtrace
from gradtrace.explain import explain_error, walkthrough_of
from gradtrace.model import Backward, Trace
from gradtrace.render import film, trace_html, trace_text
from gradtrace.render.json import TraceFormatError, trace_from_json, trace_json

SRC = Path(__file__).resolve().parent.parent / "src"

CHILD = r"""
import json, sys
sys.modules["torch"] = None  # any `import torch` now raises ImportError
from gradtrace.model import Backward, Trace
from gradtrace.explain import explain_error, walkthrough_of
from gradtrace.render import film, trace_html, trace_text

out = {}
for name, text in json.loads(sys.stdin.read()).items():
    trace = Trace.from_json(text)
    out[name] = views = {"text": trace_text(trace), "html": str(trace_html(trace)), "film": film(trace)}
    views["walks"] = [walkthrough_of(s, e).to_text() for s in trace.steps for e in s.events
                      if isinstance(e, Backward) and e.flow]
    views["error"] = None if trace.error is None else explain_error(trace.error, trace).to_text()
assert sys.modules["torch"] is None, "something imported torch"
print(json.dumps(out, ensure_ascii=False))
"""


def _views(trace: Trace) -> dict:
    views = {"text": trace_text(trace), "html": str(trace_html(trace)), "film": film(trace)}
    views["walks"] = [walkthrough_of(s, e).to_text() for s in trace.steps for e in s.events
                      if isinstance(e, Backward) and e.flow]
    views["error"] = None if trace.error is None else explain_error(trace.error, trace).to_text()
    return json.loads(json.dumps(views, ensure_ascii=False))


@pytest.fixture(scope="module")
def traces() -> dict[str, Trace]:
    return {name: gradtrace.trace_code(p.source, {}, raise_errors=False) for name, p in PROGRAMS.items()}


def test_views_with_torch_not_importable_equal_the_originals(traces):
    docs = {name: trace.to_json() for name, trace in traces.items()}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(docs), capture_output=True, text=True,
                          env=env, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    for name, trace in traces.items():
        want = _views(trace)
        assert want["walks"], f"{name}: no watched backward() to explain"
        for view in ("text", "html", "film", "walks", "error"):
            assert got[name][view] == want[view], f"{name}: the {view} differs without torch"
    assert "1·(3·42²) + 1·(2·42) = 5292 + 84 = 5376" in got["lesson01"]["walks"][0]
    assert got["stale"]["error"] and "a.add_(1)" in got["stale"]["error"]


def test_json_reads_back_to_an_equal_trace(traces):
    for trace in traces.values():
        again = trace_from_json(trace_json(trace))
        assert again == trace
        assert trace_json(again) == trace_json(trace)


@pytest.mark.parametrize("text, words", [
    ("[1, 2]", "not a gradtrace trace"),
    ('{"schema": "gradtrace.trace", "version": 99}', "version 99"),
    ('{"schema": "gradtrace.trace", "version": 2, "steps": [{}]}', "damaged"),
    ("{not json", "not JSON"),
])
def test_a_bad_document_gets_one_clear_line(text, words):
    with pytest.raises(TraceFormatError) as info:
        Trace.from_json(text)
    message = str(info.value)
    assert words in message and "\n" not in message

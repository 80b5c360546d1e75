"""One id and one step numbering everywhere.

For a few programs, the ids every view shows are collected and compared: the trace
itself, its JSON, the text twin, the stepper's film, the walkthrough of its
``backward()`` (``explain``), a quiz's explanation, ``compare`` and ``explain_error``.
Every view must call a node by the same id (``n2`` is the same ``AccumulateGrad``
everywhere) and number steps alike: the data (the JSON's and the film's ``index``) by
``Step.index``, what a person reads ("step 5, line 6") by ``Step.number`` (``index`` + 1).
"""

from __future__ import annotations

import re

import pytest
from explain_programs import PROGRAMS, WORKING

import gradtrace
from gradtrace.explain import compare, explain_error, walkthrough_of
from gradtrace.model import Backward, Step, Trace
from gradtrace.render import film
from gradtrace.render.json import trace_dict


@pytest.fixture(scope="module", params=WORKING)
def traced(request) -> tuple[str, Trace]:
    return request.param, gradtrace.trace_code(PROGRAMS[request.param].source, {})


def _backward_step(trace: Trace) -> tuple[Step, Backward]:
    step = next(s for s in trace.steps if any(isinstance(e, Backward) for e in s.events))
    return step, next(e for e in step.events if isinstance(e, Backward))


def _nodes_of(step: Step) -> dict[str, str]:
    """node id -> node name, as the trace records them (``torch::autograd::`` left off)."""
    return {nid: n.name.replace("torch::autograd::", "") for nid, n in step.nodes.items()}


def test_json_names_nodes_and_steps_as_the_trace(traced):
    _, trace = traced
    doc = trace_dict(trace)
    assert [s["index"] for s in doc["steps"]] == [s.index for s in trace.steps]
    for step, row in zip(trace.steps, doc["steps"], strict=True):
        ids = {nid: doc["nodes"][i]["name"].replace("torch::autograd::", "") for nid, i in row["nodes"].items()}
        assert ids == _nodes_of(step)


def test_text_twin_names_nodes_and_steps_as_the_trace(traced):
    _, trace = traced
    text = trace.to_text()
    headers = [int(m) for m in re.findall(r"^step (\d+), line \d+:", text, re.M)]
    assert headers == [s.number for s in trace.steps]  # shown from 1: Step.number (index + 1)
    blocks = re.split(r"^step \d+, line \d+:", text, flags=re.M)[1:]
    for step, block in zip(trace.steps, blocks, strict=True):
        nodes = block.split("\nnodes\n", 1)[1].split("\nevents\n", 1)[0]
        shown = dict(re.findall(r"^  (n\d+)\s+(\S+)", nodes, re.M))
        assert shown == _nodes_of(step)


def test_film_names_nodes_and_steps_as_the_trace(traced):
    _, trace = traced
    data = film(trace)
    assert [s["index"] for s in data["steps"]] == [s.index for s in trace.steps]
    for step, entry in zip(trace.steps, data["steps"], strict=True):
        dom = {k[len("gt-"):] for k in entry["details"] if re.fullmatch(r"gt-n\d+", k)}
        assert dom == set(step.nodes)
    step, event = _backward_step(trace)
    entry = data["steps"][trace.steps.index(step)]
    assert [f["node"] for f in entry["flow"]] == [f"gt-{f.node}" for f in event.flow]
    names = _nodes_of(step)
    for sub in entry["flow"]:
        nid, name = sub["text"].split(":")[0].split()
        assert f"gt-{nid}" == sub["node"] and names[nid] == name


def test_explain_names_nodes_as_the_trace(traced):
    _, trace = traced
    step, event = _backward_step(trace)
    walk = walkthrough_of(step, event)
    names = _nodes_of(step)
    assert [s.node for s in walk.steps] == [f.node for f in event.flow]
    for s in walk.steps:
        assert names[s.node] == s.name.replace("torch::autograd::", "")
        assert all(out.target in names for out in s.outputs)
    text = walk.to_text()
    for nid, name in re.findall(r"^\s+\d+\. (n\d+) (\S+)", text, re.M):
        assert names[nid] == name
    leaf_nodes = {leaf.node for leaf in walk.leaves}
    assert leaf_nodes == {nid for nid, n in step.nodes.items() if n.variable is not None and nid in
                          {f.node for f in event.flow}}


def test_quiz_names_nodes_as_the_trace(traced):
    name, trace = traced
    step, event = _backward_step(trace)
    code = PROGRAMS[name].source.replace("import torch\n", "", 1)
    verdict = gradtrace.quiz(code, ask=PROGRAMS[name].ask).check("0")
    names = _nodes_of(step)
    shown = re.findall(r"^\s+\d+\. (n\d+) (\S+)", verdict.explanation, re.M)
    assert shown, verdict.explanation
    for nid, op in shown:
        assert names[nid] == op


def test_compare_names_nodes_as_the_trace(traced):
    _, trace = traced
    last = trace.last
    assert last is not None
    result = compare(trace, trace, PROGRAMS[traced[0]].output)
    assert result.same
    names = _nodes_of(last)
    for node in result.a:
        assert node.node in names
        if not node.op.startswith("leaf"):
            assert names[node.node] == node.op
        assert node.describe().startswith(f"{node.node} ")


def test_explain_error_numbers_steps_as_the_trace():
    trace = gradtrace.trace_code("import torch\na = torch.ones(2, requires_grad=True) * 1\nb = a * a\n"
                                 "a.add_(1)\nb.sum().backward()\n", {}, raise_errors=False)
    text = explain_error(trace.error, trace).to_text()
    changed = next(s for s in trace.steps if s.code == "a.add_(1)")
    assert f"Changed at step {changed.number}, line {changed.lineno}: a.add_(1)" in text
    assert f"step {changed.number}, line {changed.lineno}: a.add_(1)" in trace.to_text()

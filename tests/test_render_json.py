"""Strict JSON of a trace: versioned, deduplicated, no NaN/Infinity literals."""

from __future__ import annotations

import json

import pytest

from gradtrace import trace_code
from gradtrace.render.json import trace_dict, trace_json

from real_traces import traced
from render_cases import PAYLOADS, evil_trace


def strict(text: str):
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("name", ["forum", "rebind", "mutate", "vector"])
def test_round_trip_is_strict_and_equal(name):
    trace = traced(name)
    data = strict(trace.to_json())
    assert data == trace_dict(trace)
    assert data["schema"] == "gradtrace.trace" and data["version"] == 5
    assert [s["code"] for s in data["steps"]] == [s.code for s in trace.steps]


def test_tables_are_deduplicated_and_resolve():
    trace = traced("forum")
    data = trace_dict(trace)
    refs = sum(len(s["tensors"]) for s in data["steps"])
    assert len(data["tensors"]) < refs
    for step, s in zip(trace.steps, data["steps"], strict=True):
        for tid, ref in s["tensors"].items():
            row = data["tensors"][ref]
            assert row["id"] == tid and row["version"] == step.tensors[tid].version
            assert row["kind"] == step.tensors[tid].kind
    assert data["grads"] == {"x": trace.grad("x")}


def test_events_keep_kind_and_fields():
    data = trace_dict(traced("mutate"))
    kinds = [e["kind"] for s in data["steps"] for e in s["events"]]
    assert "mutate" in kinds and "error" in kinds
    mutate = next(e for s in data["steps"] for e in s["events"] if e["kind"] == "mutate")
    assert mutate["version_before"] == 0 and mutate["version_after"] == 1
    assert mutate["stale"] == [["n3", "self"]]
    pred = next(s["predictions"] for s in data["steps"] if s["predictions"])
    assert pred[0]["saved"] == "self"
    assert data["error"]["type"] == "RuntimeError"


def test_non_finite_and_complex_values_are_strings():
    trace = trace_code(
        "import torch\n"
        "a = torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5], requires_grad=True)\n"
        "z = torch.tensor([1 + 2j, 3 - 1j])\n"
    )
    text = trace_json(trace)
    data = strict(text)
    last = data["steps"][-1]
    a = data["tensors"][last["tensors"][last["bindings"]["a"]]]
    assert a["value"]["values"] == ["nan", "inf", "-inf", 1.5]
    z = data["tensors"][last["tensors"][last["bindings"]["z"]]]
    assert z["value"]["values"] == [str(complex(1, 2)), str(complex(3, -1))]


def test_payloads_survive_exactly():
    data = strict(trace_json(evil_trace()))
    assert list(data["steps"][0]["bindings"]) == list(PAYLOADS)

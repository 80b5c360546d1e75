"""The hand-made render cases of render_cases.py hold together: every bound name's tensor is in its step."""

from __future__ import annotations

from render_cases import evil_trace, forum_trace, mutate_trace


def test_cases_are_consistent():
    for trace in (forum_trace(), mutate_trace(), evil_trace()):
        for step in trace:
            assert set(step.bindings.values()) <= set(step.tensors)

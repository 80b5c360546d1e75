"""The text twin: exact golden files, and learner text kept on one line."""

from __future__ import annotations

import pytest
from test_render_cases import PAYLOADS, check_golden, evil_trace, forum_trace, mutate_trace

from gradtrace.render.text import step_text, trace_text


@pytest.mark.parametrize("make", [forum_trace, mutate_trace], ids=["forum", "mutate"])
def test_handmade_trace_text_golden(request, make):
    check_golden(request, f"handmade_{make.__name__}.txt", trace_text(make()))


def test_step_str_is_step_text():
    step = forum_trace()[1]
    assert str(step) == step_text(step)
    assert "x2 -> t2" in str(step)


def test_rebind_and_mutation_read_differently():
    text = mutate_trace().to_text()
    assert "x now names t3; t1 is unchanged and still held by n2 (AccumulateGrad)" in text
    assert (
        "t2 (y) changed in place by add_: version 0 → 1, grad_fn n1 → n4; "
        "saved value self of n3 (PowBackward0) is now stale"
    ) in text
    assert "backward() from z will fail" in text


def test_control_characters_never_break_lines():
    text = trace_text(evil_trace())
    step_lines = text.splitlines()
    names = step_lines[step_lines.index("names") + 1 : step_lines.index("tensors")]
    assert len(names) == len(PAYLOADS)
    assert "\x1b" not in text and "\x00" not in text and "\u2028" not in text and "\u202e" not in text
    assert "ctl\\x00\\x07\\x1b[31m\\u2028\\u202e" in text

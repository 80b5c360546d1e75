"""The text twin: exact golden files, and learner text kept on one line."""

from __future__ import annotations

import pytest

from gradtrace.render.text import step_text, trace_text

from render_cases import PAYLOADS, check_golden, evil_trace, forum_trace, mutate_trace


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


def test_a_stale_saved_value_is_said_as_what_its_tensor_was():
    # the saved figures are the ones PyTorch saved; the tensor holds new ones now, and the text must not say
    # it equals the old ones (``t2 = [1., -2.]`` beside a row showing t2 as [2., -1.])
    import torch

    import gradtrace

    src = "import torch\na = torch.tensor([0.5, -1.], requires_grad=True)\nx = a * 2\ny = x ** 2\nx += 1\n"
    ns: dict = {}
    exec(src.rsplit("x += 1", 1)[0], ns)
    saved = ns["y"].grad_fn._saved_self.tolist()
    ns2: dict = {}
    step = gradtrace.trace_code(src, ns2)[-1]
    now = ns2["x"].tolist()
    assert saved != now
    tid = step.bindings["x"]
    text = step_text(step)
    fmt = lambda v: "[" + ", ".join(f"{f:g}." if f == int(f) else f"{f:g}" for f in v) + "]"  # noqa: E731
    assert f"saved self: {tid} was {fmt(saved)} (stale: saved at version 0, now 1)" in text
    assert f"saved self: {tid} = " not in text and f"value {fmt(now)}" in text
    assert isinstance(ns2["x"], torch.Tensor) and ns2["x"]._version == 1

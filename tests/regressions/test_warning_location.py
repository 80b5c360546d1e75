"""Warnings from torch ops pointed at gradtrace's recorder, not the learner's line.

PyTorch's C++ warnings (``.grad`` of a non-leaf tensor, ...) are attributed to
the innermost Python frame, which under tracing was the torch function mode's
``__torch_function__``. The learner saw ``recorder.py:126`` instead of their
line, and Python's default once-per-location filter then hid the warning on
every later line and every later trace in the same kernel. Found by test_faults.
"""

from __future__ import annotations

import warnings

import gradtrace

from .differential import check_program

SOURCE = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\ng = y.grad\nh = (y * 3).grad\n"


def _caught(run) -> list[tuple[str, int]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        run()
    return [(w.filename, w.lineno) for w in caught]


def test_warnings_point_at_the_learners_line_every_time() -> None:
    plain = _caught(lambda: exec(compile(SOURCE, "<gradtrace>", "exec"), {}))
    assert [line for _, line in plain] == [4, 5]
    for _ in range(3):
        assert _caught(lambda: gradtrace.trace_code(SOURCE, {})) == plain


def test_warning_inside_a_traced_function() -> None:
    check_program("import torch\ndef f(t):\n    u = t * 2\n    return u.grad\nx = torch.ones(2, requires_grad=True)\n"
                  "g = f(x)\n")

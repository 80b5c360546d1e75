"""A new tensor that is no view yet uses another's memory is said to share it (and only such a tensor).

``p = nn.Parameter(h)`` makes a new tensor over ``h``'s memory: ``p.data.mul_(2)`` then changes ``h``.
The create event said only "new tensor t2 (leaf)". Whether two tensors share memory is asked of
PyTorch in the test (their storages' addresses), in a plain run of the same lines.
"""

from __future__ import annotations

import pytest

import gradtrace
from gradtrace.model import Create
from gradtrace.render.words import event_words as event_text

SETUP = ("import numpy as np\nimport torch\nimport torch.nn as nn\n"
         "h = torch.ones(3)\nw = torch.ones(2, requires_grad=True)\n")
# (the statement, the name it makes, the name whose memory it may use)
CASES = [
    ("p = nn.Parameter(h)", "p", "h"),
    ("s = torch.from_numpy(h.numpy())", "s", "h"),
    ("d = w.data", "d", "w"),
    ("r = h.detach()", "r", "h"),
    ("c = h.clone()", "c", "h"),
    ("f = h.float()", "f", "h"),  # the same object back: no new tensor at all
    ("g = h.double()", "g", "h"),
    ("e = torch.zeros(0)", "e", "h"),
    ("n = torch.tensor(h.tolist())", "n", "h"),
]


def _plain(statement: str, made: str, other: str) -> tuple[bool, bool]:
    """(a new tensor object, sharing ``other``'s memory), as PyTorch has them."""
    ns: dict = {}
    exec(SETUP + statement, ns)
    a, b = ns[made], ns[other]
    new = a is not b
    return new, new and a.numel() > 0 and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.parametrize(("statement", "made", "other"), CASES, ids=[c[0] for c in CASES])
def test_a_new_tensor_over_another_s_memory_is_said_to_share_it(statement: str, made: str, other: str) -> None:
    new, shares = _plain(statement, made, other)
    trace = gradtrace.trace_code(SETUP + statement, {})
    step = trace.steps[-1]
    tid, oid = step.bindings[made], step.bindings[other]
    creates = [e for e in step.events if isinstance(e, Create)]
    said = [pair for e in creates for pair in e.shares]
    assert (tid in [t for e in creates for t in e.tensors]) is new
    detach = any(e.kind == "untracked" and getattr(e, "shares_with", None) == oid for e in step.events)
    if shares and not detach:
        assert said == [(tid, oid)], step.events
        (text,) = [event_text(step, e) for e in creates]
        assert f"shares memory with {oid} ({other})" in text and "writing to one changes the other" in text, text
    else:  # no sharing, or detach()'s own event says it (never twice)
        assert said == [], step.events


def test_the_detach_of_a_tensor_that_requires_grad_is_said_once() -> None:
    trace = gradtrace.trace_code(SETUP + "d = w.detach()", {})
    step = trace.steps[-1]
    texts = [event_text(step, e) for e in step.events]
    assert sum("shar" in t for t in texts) == 1, texts


def test_sharing_survives_the_json_round_trip() -> None:
    from gradtrace.render.json import trace_from_json, trace_json

    trace = gradtrace.trace_code(SETUP + "p = nn.Parameter(h)", {})
    back = trace_from_json(trace_json(trace))
    (create,) = [e for e in back.steps[-1].events if isinstance(e, Create)]
    assert create.shares == (("t3", "t1"),) == next(e for e in trace.steps[-1].events if isinstance(e, Create)).shares

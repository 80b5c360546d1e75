"""What a step says of a tensor whose version or flags moved, checked against PyTorch run plainly.

Each test is a defect a learner's program showed (``tests/corpus/requires_grad_nonleaf_error.py``,
``tests/corpus/unpack_tensor_rows.py``): the words claimed a change PyTorch did not make. Every
expected figure comes from PyTorch in the test.
"""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.model import Mutate, Step
from gradtrace.render.words import event_words

FLAGS = """\
import pytest
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
h.detach_()
c = torch.ones(2)
c.requires_grad_()
x.requires_grad_(False)
"""


def _plain(source: str) -> dict[str, object]:
    ns: dict[str, object] = {}
    exec(compile(source, "<plain>", "exec"), ns)
    return ns


def _mutate_words(step: Step, tensor: str) -> list[str]:
    return [event_words(step, e) for e in step.events if isinstance(e, Mutate) and e.tensor == tensor]


def _step_of(trace: gradtrace.Trace, code: str) -> Step:
    return next(s for s in trace.steps if s.code.strip() == code)


def test_a_flag_set_in_place_is_not_said_to_change_the_tensor_in_place() -> None:
    # ``c.requires_grad_()`` read "t3 (c) changed in place by requires_grad_: version 0 → 0": the values
    # and the version stay, only the flag moves. Say what moved, and that the values and version did not.
    plain = _plain(FLAGS)
    trace = gradtrace.trace_code(FLAGS, {})
    for code, name in (("h.detach_()", "h"), ("c.requires_grad_()", "c"), ("x.requires_grad_(False)", "x")):
        step = _step_of(trace, code)
        live = plain[name]
        assert isinstance(live, torch.Tensor)
        words = _mutate_words(step, step.bindings[name])
        assert len(words) == 1, (code, words)
        said = words[0]
        assert "changed in place" not in said and "→ " + str(live._version) not in said, said
        assert f"version {live._version} unchanged" in said and "values" in said, said
        if code.startswith("h."):
            assert live.grad_fn is None and "grad_fn" in said and "→ None" in said, said
        else:
            assert ("now requires grad" if live.requires_grad else "no longer requires grad") in said, said


SIBLINGS = """\
import pytest
import torch
base = torch.zeros(4)
p, q = base.view(2, 2)
p += 1
a = base[0:3]
b = base[1:4]
a += 1
"""


def test_a_sibling_view_whose_values_stay_is_not_said_to_change() -> None:
    # ``p, q = t.detach().clone(); p += 100`` read "t6 (q) changed in place by add_ through t5, another
    # view of the same base": q shares the version counter, so its version moves, but its values do not.
    # An overlapping sibling (``b`` after ``a += 1``) does change and is still said to.
    q = _plain(SIBLINGS.split("a = ")[0])["q"]  # as it is just after ``p += 1``
    trace = gradtrace.trace_code(SIBLINGS, {})
    assert isinstance(q, torch.Tensor)
    step = _step_of(trace, "p += 1")
    words = _mutate_words(step, step.bindings["q"])
    assert len(words) == 1, words
    assert torch.equal(q, torch.zeros(2)) and q._version > 0  # PyTorch: same values, a new version
    assert "changed in place" not in words[0] and "keeps its values" in words[0], words[0]
    assert f"→ {q._version}" in words[0], words[0]
    step = _step_of(trace, "a += 1")
    words = _mutate_words(step, step.bindings["b"])
    assert len(words) == 1 and "changed in place" in words[0] and "keeps its values" not in words[0], words


def test_the_rebind_or_mutate_answer_says_what_moved_too() -> None:
    # the quiz's answer for a line read the same words: "changed in place by requires_grad_: version 0 → 0"
    from gradtrace.explain.quiz import _rebind_details

    plain = _plain(FLAGS)
    trace = gradtrace.trace_code(FLAGS, {})
    c = plain["c"]
    assert isinstance(c, torch.Tensor)
    truth, lines = _rebind_details(trace, _step_of(trace, "c.requires_grad_()").lineno)
    assert truth == "mutation" and len(lines) == 1, lines
    assert "changed in place" not in lines[0] and f"version {c._version} are unchanged" in lines[0], lines
    q = _plain(SIBLINGS.split("a = ")[0])["q"]
    assert isinstance(q, torch.Tensor)
    trace = gradtrace.trace_code(SIBLINGS, {})
    _truth, lines = _rebind_details(trace, _step_of(trace, "p += 1").lineno)
    said = [line for line in lines if f"({'q'})" in line]
    assert len(said) == 1 and "keeps its values" in said[0] and f"→ {q._version}" in said[0], lines


STALE_SIBLING = """\
import pytest
import torch
x = torch.tensor([0.5, 1.0, 1.5, 2.0], requires_grad=True)
h = x * 1.0
a, b = h[:2], h[2:]
y = b.sin()
a.mul_(2)
y.sum().backward()
"""


def test_a_stale_view_that_kept_its_values_is_explained_by_the_shared_version_counter() -> None:
    # ``tests/corpus/sibling_chunk_stale.py``: the explanation said of b "The tensor was changed in place after it
    # was saved" and that SinBackward0 "needs the input's original values": b's values never changed (a was
    # written); b's version moved with the counter it shares with its base h, which is what backward() checks
    from gradtrace.explain.errors import explain_error

    ns: dict[str, object] = {}
    exec(compile(STALE_SIBLING.replace("y.sum().backward()\n", ""), "<plain>", "exec"), ns)
    b, h = ns["b"], ns["h"]
    assert isinstance(b, torch.Tensor) and isinstance(h, torch.Tensor) and b._base is h
    assert torch.equal(b, torch.tensor([1.5, 2.0])) and b._version == 1  # same values, a new version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ns["y"].sum().backward()  # type: ignore[attr-defined]
    trace = gradtrace.trace_code(STALE_SIBLING, {}, raise_errors=False)
    step = trace.last
    why = explain_error(trace.error, step).why
    tb, th = step.bindings["b"], step.bindings["h"]
    assert "was changed in place after it was saved" not in why, why
    assert f"{tb} (b) kept its values" in why and f"version counter of its base {th} (h)" in why, why
    overlapping = STALE_SIBLING.replace("h[2:]", "h[1:3]")  # b shares an element with a: its values change
    ns = {}
    exec(compile(overlapping.replace("y.sum().backward()\n", ""), "<plain>", "exec"), ns)
    b = ns["b"]
    assert isinstance(b, torch.Tensor) and not torch.equal(b, torch.tensor([1.0, 1.5]))
    trace = gradtrace.trace_code(overlapping, {}, raise_errors=False)
    why = explain_error(trace.error, trace.last).why
    assert "was changed in place after it was saved" in why and "kept its values" not in why, why


STEP = """\
import torch
torch.manual_seed(0)
w = torch.nn.Parameter(torch.ones(2))
opt = torch.optim.SGD([w], lr=0.5)
(w * 3).sum().backward()
opt.step()
s = opt.step() or w.sum()
"""


def test_a_change_whose_op_was_not_heard_names_the_one_call_that_made_it() -> None:
    # opt.step() changes w in place inside torch's code: the step said "changed in place: version 0 → 1"
    # with no word of where; it is said to happen inside that call, and only for a statement of one call
    w = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([w], lr=0.5)
    (w * 3).sum().backward()
    before = w._version
    opt.step()
    after = w._version
    trace = gradtrace.trace_code(STEP, {})
    step = next(s for s in trace.steps if s.code == "opt.step()")
    (mutate,) = [e for e in step.events if isinstance(e, Mutate)]
    assert (mutate.op, mutate.version_before, mutate.version_after) == ("", before, after)
    assert event_words(step, mutate) == f"t1 (w) changed in place inside opt.step(): version {before} → {after}"
    two = next(s for s in trace.steps if s.code.startswith("s = opt.step() or"))
    (again,) = [e for e in two.events if isinstance(e, Mutate)]
    assert "inside" not in event_words(two, again)  # two calls: which one changed w is not said

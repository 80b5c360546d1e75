"""Quizzes: answers come from PyTorch, typed predictions are read and compared, explanations carry the numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import gradtrace
from gradtrace.explain.quiz import EPS, GRAPH_LINES, REBIND_OR_MUTATE, RTOL, Verdict, parse_answer

FORUM = """
x = torch.tensor(42., requires_grad=True)
x2 = x ** 2
x3 = x ** 3
f = x2 + x3
f.backward()
"""

WHATIF1 = """
x = torch.tensor(42., requires_grad=True)
x = x ** 2
x3 = x ** 3
f = x + x3
x.retain_grad()
f.backward()
"""

BLOG_VJP = """
import numpy as np
x = torch.from_numpy(np.array([1., 2., 3.])).requires_grad_()
y = x * x + 4
y.backward(x)
"""

BLOG_TYPO = """
x = torch.tensor([1., 2.], requires_grad=True)
y = 2 * x[0] * x[0] + 4 * x[1] * [1]
y.backward()
"""

MUTATE = """
a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a * 2
b.add_(1)
b += 1
b = b + 1
"""


def forum_grad() -> float:
    x = torch.tensor(42.0, requires_grad=True)
    (x ** 2 + x ** 3).backward()
    assert x.grad is not None
    return x.grad.item()


def whatif1_grad() -> float:
    x = torch.tensor(42.0, requires_grad=True)
    x = x ** 2
    x3 = x ** 3
    f = x + x3
    x.retain_grad()
    f.backward()
    assert x.grad is not None
    return x.grad.item()


def vjp_grad() -> torch.Tensor:
    x = torch.from_numpy(np.array([1.0, 2.0, 3.0])).requires_grad_()
    y = x * x + 4
    y.backward(x)
    assert x.grad is not None
    return x.grad


def as_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


# --------------------------------------------------------------------------- value questions


def test_forum_answer_is_pytorchs_and_accepts_usual_spellings():
    q = gradtrace.quiz(FORUM, ask="x.grad")
    expected = forum_grad()
    for spelling in (as_text(expected), f"{expected:.1f}", f"tensor({expected:.0f}.)", f"  {expected:.0f}  "):
        verdict = q.check(spelling)
        assert verdict.correct, spelling
        assert bool(verdict) is True
        assert verdict.to_text().startswith("Right!")


def test_forum_typo_is_wrong_and_explanation_shows_the_sum():
    q = gradtrace.quiz(FORUM, ask="x.grad")
    verdict = q.check("53376")  # the forum's typo, as the forum wrote it
    assert not verdict.correct
    assert verdict.to_text().startswith("Not quite.")
    expected = as_text(forum_grad())
    assert verdict.expected == expected
    parts = (as_text(3 * 42.0 ** 2), as_text(2 * 42.0))
    # the walkthrough's result line ends on torch's number, built from the two paths in the order they reached x
    # (x³'s node ran first: tests/test_accumulation_order.py)
    assert f"{parts[0]} + {parts[1]} = {expected}" in verdict.explanation


def test_shape_must_match():
    q = gradtrace.quiz(FORUM)
    verdict = q.check(f"[{as_text(forum_grad())}]")
    assert not verdict.correct
    assert "shape" in verdict.message


def test_retained_nonleaf_grad_whatif1():
    q = gradtrace.quiz(WHATIF1, ask="x.grad")
    assert q.check(as_text(whatif1_grad())).correct
    assert not q.check(as_text(forum_grad())).correct
    assert "retain_grad" in q.check("0").explanation


def test_vector_answer_float64_vjp():
    q = gradtrace.quiz(BLOG_VJP, ask="x.grad")
    grad = vjp_grad()
    assert grad.dtype == torch.float64
    ints = "[" + ", ".join(as_text(v) for v in grad.tolist()) + "]"
    assert q.check(ints).correct
    assert q.check(str(grad.tolist())).correct
    assert q.check(repr(grad)).correct  # pasted "tensor([ 2.,  8., 18.], dtype=torch.float64)"
    wrong = grad.clone()
    wrong[-1] += 1
    assert not q.check(str(wrong.tolist())).correct
    assert not q.check(str(grad.tolist()[:2])).correct
    assert "vector-Jacobian" in q.check(ints).explanation


def test_error_is_the_answer_when_the_code_fails():
    with pytest.raises(TypeError) as info:
        exec(BLOG_TYPO, {"torch": torch})
    name = type(info.value).__name__
    q = gradtrace.quiz(BLOG_TYPO, ask="x.grad")
    assert q.check(name).correct
    assert q.check("it raises an error").correct
    assert not q.check("RuntimeError" if name != "RuntimeError" else "TypeError").correct
    assert not q.check("[4, 16]").correct
    assert "4 * x[1] * x[1]" in q.check(name).explanation  # explain_error's fix


def test_no_error_answer_when_code_runs():
    verdict = gradtrace.quiz(FORUM).check("RuntimeError")
    assert not verdict.correct
    assert "without an error" in verdict.message


def test_whole_numbers_exact_others_within_dtype_tolerance():
    code = "x = torch.tensor(2., requires_grad=True)\nx.exp().backward()"
    x = torch.tensor(2.0, requires_grad=True)
    x.exp().backward()
    assert x.grad is not None
    truth = x.grad.item()
    q = gradtrace.quiz(code)
    near = truth * (1 + RTOL["float32"] / 2)
    far = truth * (1 + RTOL["float32"] * 4)
    verdict = q.check(repr(near))
    assert verdict.correct and "tolerance" in verdict.message
    assert not q.check(repr(far)).correct
    # whole numbers get no tolerance at all
    exact = gradtrace.quiz(FORUM)
    assert not exact.check(repr(forum_grad() * (1 + 1e-7))).correct


def test_tolerance_is_never_finer_than_the_dtype():
    """What a learner types is right when the value's dtype stores it as PyTorch's value, whatever rtol says."""
    for name in ("float16", "bfloat16", "float32", "float64"):
        assert EPS[name] == torch.finfo(getattr(torch, name)).eps
    for name in ("float16", "bfloat16"):
        dtype = getattr(torch, name)
        stored = torch.tensor(1.7, dtype=dtype).item()
        assert abs(stored - 1.7) > 1e-5 * stored  # the tolerance asked for alone would reject "1.7"
        q = gradtrace.quiz(f"x = torch.tensor(1.7, dtype=torch.{name})", ask="x", rtol=1e-5)
        verdict = q.check("1.7")
        assert verdict.correct and f"tolerance of {EPS[name]:g} for {name}" in verdict.message, verdict.message
        step = torch.tensor(1.7, dtype=dtype).nextafter(torch.tensor(2.0, dtype=dtype)).item()
        assert not q.check(repr(stored + 2 * (step - stored))).correct  # two steps of the dtype away is wrong


def test_large_whole_float32_uses_tolerance():
    # 42**6 is not exactly representable in float32: the learner's exact integer is accepted
    q = gradtrace.quiz("x = torch.tensor(42.)\ny = x ** 6", ask="y")
    assert (torch.tensor(42.0) ** 6).item() != 42 ** 6
    assert q.check(str(42 ** 6)).correct


def test_none_bool_int_and_text_answers():
    code = "x = torch.tensor(1., requires_grad=True)\ny = x * 2\ny.backward()"
    q_none = gradtrace.quiz(code, ask="y.grad")  # PyTorch's warning is caught and shown in the explanation
    assert q_none.check("None").correct
    assert not q_none.check("2").correct
    assert "not a leaf" in q_none.check("None").explanation
    assert gradtrace.quiz(code, ask="y.requires_grad").check("True").correct
    assert gradtrace.quiz(code, ask="y.is_leaf").check("false").correct
    assert gradtrace.quiz(code, ask="y.grad_fn.name()").check("MulBackward0").correct
    assert gradtrace.quiz(MUTATE, ask="b._version").check("0").correct
    assert gradtrace.quiz(MUTATE + "c = b\n", ask="c._version").check("0").correct


def test_version_after_two_inplace_changes():
    b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True) * 2
    b.add_(1)
    b += 1
    q = gradtrace.quiz(MUTATE.replace("b = b + 1\n", ""), ask="b._version")
    assert q.check(str(b._version)).correct


def test_ask_that_cannot_be_evaluated_is_the_authors_error():
    with pytest.raises(ValueError, match="could not be evaluated"):
        gradtrace.quiz(FORUM, ask="nope.grad")


def test_namespace_adds_names_and_code_is_dedented():
    q = gradtrace.quiz("""
        y = w * 3
        y.backward()
    """, ask="w.grad", namespace={"w": torch.tensor(1.0, requires_grad=True)})
    assert q.check("3").correct


def test_unreadable_answer():
    verdict = gradtrace.quiz(FORUM).check("five thousand!")
    assert not verdict.correct
    assert "Could not read" in verdict.message


@pytest.mark.parametrize("text, value", [
    ("5376", 5376), ("5376.0", 5376.0), ("[2, 8, 18]", [2, 8, 18]), ("(1, 2)", [1, 2]),
    ("tensor([2., 0.])", [2.0, 0.0]), ("tensor(5376., grad_fn=<AddBackward0>)", 5376.0),
    ("None", None), ("TRUE", True), ("TypeError", "TypeError"),
])
def test_parse_answer(text, value):
    assert parse_answer(text) == value


# --------------------------------------------------------------------------- questions from a trace


def test_which_line_changes_the_graph():
    q = gradtrace.quiz(WHATIF1, ask=GRAPH_LINES)
    trace = gradtrace.trace_code(WHATIF1.strip("\n") + "\n", {"torch": torch})
    lines = sorted({s.lineno for s in trace.steps for e in s.events if e.kind == "create" and e.nodes})
    assert q.answer == ", ".join(map(str, lines))
    assert q.check(", ".join(map(str, lines))).correct
    assert q.check(" and ".join(map(str, lines))).correct
    verdict = q.check(str(lines[0]))
    assert not verdict.correct and "left out" in verdict.message
    assert "PowBackward0" in verdict.explanation


def test_inplace_lines_change_the_graph_too():
    q = gradtrace.quiz(MUTATE, ask="which line changes the graph?")
    assert q.answer == "2, 3, 4, 5"  # every line after the leaf adds a node, the in-place ones included
    assert "AddBackward0" in q.check("2").explanation


@pytest.mark.parametrize("line, truth", [
    ("b = a * 2", "neither"), ("b.add_(1)", "mutation"), ("b += 1", "mutation"), ("b = b + 1", "rebinding"),
])
def test_rebinding_or_mutation(line, truth):
    q = gradtrace.quiz(MUTATE, ask=REBIND_OR_MUTATE, line=line)
    assert q.answer == truth
    assert q.check(truth).correct
    others = {"neither", "mutation", "rebinding", "both"} - {truth}
    assert not any(q.check(o).correct for o in others)


def test_rebinding_details_name_the_objects():
    q = gradtrace.quiz(WHATIF1, ask=REBIND_OR_MUTATE, line=2)
    verdict = q.check("rebinding")
    assert verdict.correct
    assert "unchanged" in verdict.explanation and "PowBackward0" in verdict.explanation
    mutation = gradtrace.quiz(MUTATE, ask=REBIND_OR_MUTATE, line=3).check("in-place")
    assert mutation.correct and "version 0 → 1" in mutation.explanation


def test_both_in_one_line():
    code = "a = torch.tensor([1., 2.], requires_grad=True)\nb = a * 2\nc = a * 3\nc = b.mul_(2)\n"
    q = gradtrace.quiz(code, ask=REBIND_OR_MUTATE, line=4)
    assert q.answer == "both"
    assert q.check("both").correct


def test_line_must_exist():
    with pytest.raises(ValueError):
        gradtrace.quiz(MUTATE, ask=REBIND_OR_MUTATE, line=99)
    with pytest.raises(ValueError):
        gradtrace.quiz(MUTATE, ask=REBIND_OR_MUTATE, line="z = 1")
    with pytest.raises(ValueError):
        gradtrace.quiz(MUTATE, ask=REBIND_OR_MUTATE)


# --------------------------------------------------------------------------- display


def test_mimebundles_without_a_kernel():
    q = gradtrace.quiz(FORUM)
    bundle = q._repr_mimebundle_()
    assert bundle["text/plain"] == q.prompt
    assert "What is x.grad" in bundle["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert q.widget() is None
    assert as_text(forum_grad()) not in q.prompt  # the question does not give the answer away
    verdict = q.check("1")
    assert isinstance(verdict, Verdict)
    vb = verdict._repr_mimebundle_()
    assert vb["text/plain"] == verdict.to_text()
    assert "Not quite." in vb["text/html"]


@pytest.mark.parametrize("code, line", [
    ("a = torch.rand(3)\nc = torch.empty(3)\ntorch.cumsum(a.mul_(2), 0, out=c)\n", 3),
    ("a = torch.rand(3)\nv = a[:2]\nv.mul_(2)\n", 3),
    ("a = torch.rand(3)\nv = a.view(3)[1:]\nw = v[:1]\nw.add_(1)\n", 4),
])
def test_through_a_view_only_for_real_views(code, line):
    ns: dict = {"torch": torch}
    exec(code, ns)
    tensors = {k: v for k, v in ns.items() if isinstance(v, torch.Tensor)}
    views = {(k, j) for k, v in tensors.items() for j, w in tensors.items()
             if k != j and v.untyped_storage().data_ptr() == w.untyped_storage().data_ptr()
             and (v._base is w or w._base is v or (v._base is not None and v._base is w._base))}
    text = gradtrace.quiz(code, ask=REBIND_OR_MUTATE, line=line).check("mutation").explanation
    assert ("view" in text) == bool(views), text


# ------------------------------------------------------------------ retries, hints and the answer box


def _forum_grad() -> torch.Tensor:
    x = torch.tensor(42.0, requires_grad=True)
    (x**2 + x**3).backward()
    assert x.grad is not None
    return x.grad


def test_a_wrong_answer_gets_a_hint_that_does_not_give_the_answer_away():
    truth = _forum_grad().item()
    q = gradtrace.quiz(FORUM, ask="x.grad")
    low, high = q.check(str(truth - 1000)), q.check(str(truth + 1000))
    assert not low and not high
    assert "too low" in low.hint and "too high" in high.hint
    for verdict in (low, high):
        assert f"{truth:g}" not in verdict.hint and "product of the local derivatives" in verdict.hint
        assert "Hint: " + verdict.hint in verdict.to_text()
    right = q.check(f"{truth:g}")
    assert right and right.hint == "" and "Hint" not in right.to_text()


def test_hints_for_shapes_errors_lines_and_rebinding():
    x = torch.from_numpy(np.array([1.0, 2.0, 3.0])).requires_grad_()
    (x * x + 4).backward(x)
    q = gradtrace.quiz(BLOG_VJP, ask="x.grad")
    assert f"shape {tuple(x.grad.shape)}" in q.check("5").hint
    typo = gradtrace.quiz(BLOG_TYPO, ask="x.grad")
    # the failing line runs and raises; what does not run is what comes after it
    assert "one of them raises an error, and nothing after it runs" in typo.check("[4, 16]").hint
    lines = gradtrace.quiz(FORUM, ask=GRAPH_LINES)
    wrong = lines.check("1")
    assert not wrong and "requires grad" in wrong.hint and lines.answer not in wrong.hint
    rebind = gradtrace.quiz(WHATIF1, ask=REBIND_OR_MUTATE, line=3)
    verdict = rebind.check("mutation")
    assert not verdict and "line 3" in verdict.hint and "rebinding" in verdict.hint


def test_attempts_retry_then_reveal():
    from gradtrace.notebook.quizbox import Attempts

    truth = _forum_grad().item()
    attempts = Attempts(gradtrace.quiz(FORUM, ask="x.grad"))
    assert "Type an answer" in attempts.submit("  ")
    first = attempts.submit("1")
    assert "Not quite" in first and "first try" in first and f"{truth:g}" not in first
    assert attempts.submit("1") == first and attempts.tries == 1  # Enter then Check: one try
    second = attempts.submit("2")
    assert "try 2" in second and not attempts.solved
    shown = attempts.reveal()
    assert f"{truth:g}" in shown and "Answer:" in shown
    assert "Right!" in attempts.submit(f"{truth:g}") and attempts.solved


def test_answer_box_enter_submits_retries_and_shows_the_answer():
    w = pytest.importorskip("ipywidgets")
    from gradtrace.notebook.quizbox import answer_box

    truth = _forum_grad().item()
    view = answer_box(gradtrace.quiz(FORUM, ask="x.grad"), w)
    _prompt, row, result = view.children
    box, check, show = row.children
    assert box.continuous_update is False  # the value reaches Python on Enter
    assert show.layout.display == "none"
    box.value = "3"  # what Enter does in the browser
    assert "Not quite" in result.value and f"{truth:g}" not in result.value
    assert show.layout.display != "none"
    check.click()  # the same answer again counts once
    assert "first try" in result.value
    show.click()
    assert f"{truth:g}" in result.value and show.layout.display == "none"
    box.value = f"{truth:g}"
    assert "Right!" in result.value


def test_quiz_explanations_have_no_placeholders():
    programs = [FORUM, WHATIF1, BLOG_VJP]
    for code in programs:
        for ask, line in (("x.grad", None), (GRAPH_LINES, None), (REBIND_OR_MUTATE, 3)):
            q = gradtrace.quiz(code, ask=ask, line=line)
            text = q.check("0").to_text() + q.check(q.answer).to_text()
            assert "<" not in text.replace("<=", ""), text


def test_the_html_prompt_says_what_to_do_without_a_kernel():
    bundle = gradtrace.quiz(FORUM, ask="x.grad")._repr_mimebundle_()
    assert "run this cell again" in bundle["text/html"] and "press Enter" in bundle["text/html"]


def test_quiz_box_grades_in_the_kernel_and_answers_hello():
    pytest.importorskip("anywidget")
    from gradtrace.notebook.quizbox import QuizBox

    truth = _forum_grad().item()
    box = QuizBox(gradtrace.quiz(FORUM, ask="x.grad"), uid="gt-quiz-test")
    sent: list[Any] = []
    box.send = sent.append  # what goes back to the front end
    box._message(box, {"kind": "hello"}, [])
    assert sent[-1] == {"kind": "alive"} and box.result == ""
    box._message(box, {"kind": "check", "answer": "1"}, [])
    assert "Not quite" in box.result and box.revealable and f"{truth:g}" not in box.result
    assert sent[-1] == {"kind": "checked"}
    box._message(box, {"kind": "reveal"}, [])
    assert f"{truth:g}" in box.result and not box.revealable
    box._message(box, {"kind": "check", "answer": f"{truth:g}"}, [])
    assert "Right!" in box.result and not box.revealable
    box._message(box, "not a dict", [])  # anything else is a hello: the kernel says it is there
    assert sent[-1] == {"kind": "alive"}
    box.close()


def test_dead_note_names_the_cells_to_run():
    from gradtrace.notebook.quizbox import dead_note

    assert "run cell [1] (it imports gradtrace), then this cell, [7]" in dead_note(7, 1)
    assert "run this cell, [3];" in dead_note(3, None) and "Run All Cells" in dead_note(3, None)
    assert "run this cell, [3];" in dead_note(3, 3)

"""What a learner reads in a walkthrough, the text twin's reverse pass and explain_error is true and said once.

Node names, which tensors a node saved, and the gradients come from PyTorch run plainly in each test.
"""

from __future__ import annotations

import pytest
import torch

import gradtrace
from gradtrace.explain.errors import explain_error
from gradtrace.explain.reverse import reverse_lines
from gradtrace.explain.walkthrough import walkthrough_of
from gradtrace.model import Backward
from gradtrace.render.text import step_text


class Double(torch.autograd.Function):
    @staticmethod
    def forward(_ctx, t):
        return t * 2

    @staticmethod
    def backward(_ctx, g):
        return g * 2


def _backward_steps(trace):
    return [(s, e) for s in trace.steps for e in s.events if isinstance(e, Backward)]


def test_custom_function_node_is_said_to_be_its_python_backward_once():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    op = Double.apply(x).grad_fn.name()
    y = Double.apply(x)
    w = gradtrace.explain(y.sum())
    step = next(s for s in w.steps if s.name == op)
    assert f"the backward() of the autograd.Function {Double.__name__}" in step.rule
    text = w.to_text()
    assert "no formula recorded" not in text and text.count(step.rule) == 1
    assert torch.equal(x.grad, torch.full_like(x, 2.0))  # what Double.backward returned, as shown
    assert step.outputs[0].grad.values == x.grad.tolist()


def test_module_full_backward_hook_node_says_what_runs_there():
    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda _m, gin, _gout: (gin[0] * 0.5,))
    x = torch.ones(1, 2, requires_grad=True)
    out = lin(x)
    op = out.grad_fn.name()
    w = gradtrace.explain(out.sum())
    hooked = [s for s in w.steps if s.name == op]
    assert hooked and all("register_full_backward_hook" in s.rule for s in hooked)
    assert "no formula recorded" not in w.to_text()


AUTOGRAD_GRAD = ("import torch\n"
                 "x = torch.tensor([1., 2.], requires_grad=True)\n"
                 "y = (x ** 3).sum()\n"
                 "g, = torch.autograd.grad(y, x, create_graph=True)\n"
                 "g.sum().backward()\n")


TWO_ROOTS = ("import torch\n"
             "w = torch.tensor([1., 2.], requires_grad=True)\n"
             "l1 = (w * 3).sum()\n"
             "l2 = (w ** 2).sum()\n"
             "torch.autograd.backward([l1, l2], [torch.tensor(1.), torch.tensor(2.)])\n")


def test_autograd_backward_is_said_as_itself_from_every_root():
    # torch.autograd.backward fills .grad like backward() does, from each tensor it is given, with its own gradient
    ns: dict = {}
    exec(TWO_ROOTS, ns)
    want = ns["w"].grad
    assert want is not None and want.tolist() == [7.0, 11.0]  # 3·1 + 2·2w
    trace = gradtrace.trace_code(TWO_ROOTS)
    ((step, call),) = _backward_steps(trace)
    assert call.call == "autograd.backward" and [r.tensor for r in call.others] == [step.bindings["l2"]]
    assert call.gradient is not None and call.gradient.values == 1.0
    assert call.others[0].gradient is not None and call.others[0].gradient.values == 2.0
    assert step.tensors[step.bindings["w"]].grad.values == want.tolist()
    text = step_text(step)
    assert f"torch.autograd.backward() from {step.bindings['l1']} (l1) with gradient 1.\n" in text
    assert f"and from {step.bindings['l2']} (l2) with gradient 2." in text
    both = f"l1 ({step.bindings['l1']}) and l2 ({step.bindings['l2']})"
    assert f"reverse pass from {both}" in text and "torch.autograd.grad()" not in text
    walk = walkthrough_of(step, call).to_text()
    assert f"Reverse pass from {both}" in walk
    assert f"It also starts from l2 ({step.bindings['l2']}), with gradient 2" in walk
    assert "adds nothing" not in walk


def test_autograd_grad_walkthrough_says_no_grad_is_filled():
    ns: dict = {}
    exec(AUTOGRAD_GRAD.rsplit("g.sum()", 1)[0], ns)
    assert ns["x"].grad is None  # torch.autograd.grad filled no .grad
    trace = gradtrace.trace_code(AUTOGRAD_GRAD)
    (grad_step, grad_call), (back_step, back_call) = _backward_steps(trace)
    assert grad_call.call != "backward" and back_call.call == "backward"
    grad_text = walkthrough_of(grad_step, grad_call).to_text()
    assert "torch.autograd.grad() returns these gradients; it adds nothing to any .grad." in grad_text
    assert "adds nothing" not in walkthrough_of(back_step, back_call).to_text()
    # create_graph=True keeps the graph: the walkthrough says why it is kept
    assert "create_graph=True also sets" in grad_text


STOPPED = ("import torch\n"
           "x = torch.tensor([1., 2.], requires_grad=True)\n"
           "a = x * 1\n"
           "b = a * a\n"
           "a.add_(1)\n"
           "b.sum().backward()\n")


def test_a_backward_that_raised_says_it_stopped():
    with pytest.raises(RuntimeError) as info:
        exec(STOPPED, {})
    trace = gradtrace.trace_code(STOPPED, raise_errors=False)
    ((step, event),) = _backward_steps(trace)
    assert event.flow  # some nodes ran before the failure
    said = f"(the statement stopped with {type(info.value).__name__} after the nodes above ran)"
    assert said in walkthrough_of(step, event).to_text()
    head = reverse_lines(step)[0]  # the stepper splits the lines below the head into one block per node
    assert f"in the order PyTorch ran them (the statement stopped with {type(info.value).__name__} after the " \
           "last of them):" in head
    ok = gradtrace.trace_code(STOPPED.replace("a.add_(1)\n", ""))
    ((step, event),) = _backward_steps(ok)
    assert "stopped with" not in walkthrough_of(step, event).to_text() + "\n".join(reverse_lines(step))


UNNAMED = ("import torch, types\n"
           "box = types.SimpleNamespace()\n"  # (a library's object: not looked into, so box.h is no name)
           "x = torch.tensor([1., 2.], requires_grad=True)\n"
           "box.h = x * 1\n"
           "y = box.h * box.h\n"
           "box.h.add_(1)\n"
           "y.sum().backward()\n")


def test_a_stale_input_no_name_holds_is_still_called_an_input():
    ns: dict = {}
    exec(UNNAMED.rsplit("box.h.add_", 1)[0], ns)
    node = ns["y"].grad_fn
    assert node._saved_self.data_ptr() == ns["box"].h.data_ptr()  # PyTorch saved the input box.h
    trace = gradtrace.trace_code(UNNAMED, raise_errors=False)
    e = explain_error(trace)
    nid = next(c for c in e.culprits if c.startswith("n"))
    assert trace.last.nodes[nid].name == node.name()
    assert f"{nid} {node.name()} saved its input (a tensor no name holds)" in e.why


def test_a_stale_input_an_object_of_the_program_holds_is_called_by_its_name():
    source = UNNAMED.replace("import torch, types\n", "import torch\nclass Box:\n    pass\n").replace(
        "types.SimpleNamespace()", "Box()")
    trace = gradtrace.trace_code(source, raise_errors=False)
    e = explain_error(trace)
    nid = next(c for c in e.culprits if c.startswith("n"))
    tid = trace.last.bindings["box.h"]
    assert f"{nid} {trace.last.nodes[nid].name} saved its input {tid} (box.h)" in e.why, e.why


@pytest.mark.parametrize("make", ["torch.tensor(2., requires_grad=True)", "torch.tensor([2.], requires_grad=True)",
                                  "torch.ones(2, 3, requires_grad=True)"])
def test_compare_spells_leaf_shapes_as_python_does(make):
    x = eval(make, {"torch": torch})
    c = gradtrace.compare(f"x = {make}\ny = (x ** 2).sum()", f"x = {make}\ny = (x * x).sum()")
    text = c.to_text()
    assert f"leaf {str(x.dtype).removeprefix('torch.')} shape {tuple(x.shape)} = " in text
    assert f"{list(x.shape)} =" not in text


def test_result_of_a_large_gradient_shows_its_figures_not_only_its_shape():
    from gradtrace.explain._numbers import MAX_ELEMENTS

    side = int(MAX_ELEMENTS ** 0.5) + 2
    x = torch.linspace(-1.0, 1.0, side * side).reshape(side, side).requires_grad_()
    loss = (x * x).sum()
    w = gradtrace.explain(loss)
    (leaf,) = w.leaves
    assert leaf.label == "x" and leaf.after is not None and leaf.after.values is None  # too large to list
    assert leaf.chain != f"shape {tuple(x.shape)}"
    assert leaf.chain == f"{leaf.after.text} (shape {tuple(x.shape)})"
    figures = dict(zip(leaf.after.text.split()[::2], map(float, leaf.after.text.split()[1::2]), strict=True))
    g = x.grad
    assert figures["min"] == pytest.approx(g.min().item(), rel=1e-6)
    assert figures["max"] == pytest.approx(g.max().item(), rel=1e-6)
    assert figures["mean"] == pytest.approx(g.mean().item(), rel=1e-5, abs=1e-7)
    assert f"x.grad = {leaf.chain}" in w.to_text()


def test_graph_lines_explanation_counts_nodes_in_words():
    from gradtrace.explain.quiz import GRAPH_LINES

    src = "x = torch.tensor([1., 2.], requires_grad=True)\ny = x * 2\ny.add_(1)\ny.sum().backward()"
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    first = [y.grad_fn.name(), y.grad_fn.next_functions[0][0].name().rsplit("::", 1)[-1]]
    y.add_(1)
    added = y.grad_fn.name()
    text = gradtrace.quiz(src, ask=GRAPH_LINES).check("2, 3, 4").to_text()
    line3 = next(line for line in text.splitlines() if "y.add_(1)" in line)
    assert line3.rstrip().endswith(added) and "new node n" in line3 and "new nodes" not in line3
    line2 = next(line for line in text.splitlines() if "y = x * 2" in line)
    assert "new nodes n" in line2 and all(name in line2 for name in first)


def test_a_leaf_grad_cleared_by_a_post_accumulate_hook_is_not_shown_as_kept():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []

    def take(p):
        seen.append(p.grad.clone())
        p.grad = None

    w.register_post_accumulate_grad_hook(take)
    loss = (w * w).sum()
    walk = gradtrace.explain(loss)
    assert w.grad is None and len(seen) == 1  # PyTorch: the gradient arrived, then the hook cleared it
    (leaf,) = walk.leaves
    assert leaf.chain.startswith("None: ") and "set .grad back to None" in leaf.chain
    arrived = seen[0].tolist()
    assert leaf.incoming is not None and leaf.incoming.values == arrived
    text = walk.to_text()
    assert f"w.grad = {leaf.chain}" in text
    assert "w.grad = None   (.grad was None)" not in text


def test_a_saved_value_packed_by_a_hook_is_not_called_too_large():
    src = ("import torch\n"
           "x = torch.tensor([1., 2.], requires_grad=True)\n"
           "with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):\n"
           "    c = x * x\n"
           "c.sum().backward()\n")
    ns: dict = {}
    exec(src, ns)
    assert ns["x"].numel() <= 16  # small: nothing is too large to show
    trace = gradtrace.trace_code(src)
    ((step, event),) = _backward_steps(trace)
    text = walkthrough_of(step, event).to_text()
    assert "more than" not in text
    assert "is not visible here" in text

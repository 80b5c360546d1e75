"""The walkthrough runs the real backward(), changes nothing, and ends on PyTorch's own figures."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

import gradtrace
from gradtrace.explain._numbers import fmt_values
from gradtrace.live import walkthrough


def forum():
    x = torch.tensor(42.0, requires_grad=True)
    x2 = x ** 2
    x3 = x ** 3
    f = x2 + x3
    return dict(x=x, x2=x2, x3=x3, f=f), "f", "x"


def whatif1():
    x = torch.tensor(42.0, requires_grad=True)
    x = x ** 2
    x3 = x ** 3
    f = x + x3
    x.retain_grad()
    return dict(x=x, x3=x3, f=f), "f", "x"


def whatif2():
    x = torch.tensor(42.0, requires_grad=True)
    y = x ** 2
    x = y ** 3
    f = y + x
    x.retain_grad()
    return dict(x=x, y=y, f=f), "f", "x"


def blog_vjp():
    x = torch.from_numpy(np.array([1.0, 2.0, 3.0])).requires_grad_()
    y = x * x + 4
    return dict(x=x, y=y), "y", "x"


def blog_select():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x + 2
    return dict(x=x, y0=y[0]), "y0", "x"


def blog_fixed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = 2 * x[0] * x[0] + 4 * x[1] * x[1]
    return dict(x=x, y=y), "y", "x"


def mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    xs = torch.randn(5, 3)
    target = torch.tensor([0, 1, 1, 0, 1])
    loss = torch.nn.functional.cross_entropy(model(xs), target)
    names = {f"model.{k}": v for k, v in model.named_parameters()}
    names["loss"] = loss
    return names, "loss", "model.0.weight"


SEEDS = [forum, whatif1, whatif2, blog_vjp, blog_select, blog_fixed, mlp]


def _gradient(names, root):
    return names["x"].detach().clone() if root == "y" and names[root].dim() else None


def _grads(names):
    return {k: (v.grad.clone() if v.grad is not None else None) for k, v in names.items()
            if isinstance(v, torch.Tensor) and (v.is_leaf or v.retains_grad)}


@pytest.mark.parametrize("program", SEEDS, ids=lambda p: p.__name__)
def test_final_figures_equal_pytorch_and_nothing_changes(program):
    plain, root, _ = program()
    plain[root].backward(_gradient(plain, root))
    expected = _grads(plain)

    names, root, leaf = program()
    w = walkthrough(names[root], _gradient(names, root), names=names)
    got = _grads(names)
    assert expected.keys() == got.keys()
    for k in expected:
        assert torch.equal(expected[k], got[k]), k  # bit-identical to a run without hooks
    for leaf_grad in w.leaves:
        if leaf_grad.label in names:
            after = names[leaf_grad.label].grad
            assert leaf_grad.after is not None
            if after.numel() <= 16:
                assert leaf_grad.after.values == after.tolist()
                assert leaf_grad.chain.endswith(fmt_values(after.tolist(), str(after.dtype)))
    assert all(out.matches is not False for s in w.steps for out in s.outputs)
    assert str(w)


def test_forum_reads_as_the_chain_rule_in_numbers():
    names, _, _ = forum()
    w = walkthrough(names["f"], names=names)
    x = names["x"]
    with torch.no_grad():
        a, b = 1 * (2 * x), 1 * (3 * x ** 2)
    assert x.grad == a + b
    # the paths in the order they reached x (x³'s node ran first: tests/test_accumulation_order.py)
    assert w.leaf("x").chain == f"1·(3·42²) + 1·(2·42) = {int(b)} + {int(a)} = {int(x.grad)}"
    assert f"x.grad = 1·(3·42²) + 1·(2·42) = {int(b)} + {int(a)} = {int(x.grad)}" in str(w)


def test_retained_nonleaf_is_shown_where_its_gradient_arrives():
    names, _, _ = whatif1()
    w = walkthrough(names["f"], names=names)
    kept = [(s.node, label, g.values) for s in w.steps for label, g in s.retained]
    assert kept == [(kept[0][0], "x", names["x"].grad.item())]
    assert "x.grad is kept (retain_grad): 9335089" in str(w)  # the figure is checked just above
    assert str(int(names["x"].grad.item())) == "9335089"


def test_vector_jacobian_product_is_named():
    names, _, _ = blog_vjp()
    w = walkthrough(names["y"], names["x"].detach(), names=names)
    assert w.vjp and "vector-Jacobian product" in str(w)
    assert w.leaf("x").after.values == names["x"].grad.tolist()


def test_accumulation_across_two_backward_calls():
    names, _, _ = forum()
    f, x = names["f"], names["x"]
    walkthrough(f, retain_graph=True, names=names)
    first = x.grad.clone()
    w = walkthrough(f, names=names)
    leaf = w.leaf("x")
    assert leaf.before.values == first.item()
    assert leaf.after.values == x.grad.item() == (first + first).item()
    assert "adds to .grad" in str(w)


def test_backward_errors_propagate_and_hooks_are_removed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    calls = []

    def fail_once(grad):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("boom")
        return grad

    y.register_hook(fail_once)
    f = y.sum()
    with pytest.raises(ValueError, match="boom"):
        walkthrough(f, retain_graph=True, names={"x": x, "y": y, "f": f})
    assert len(calls) == 1  # the learner's hook ran once, as in plain PyTorch
    f.backward()
    assert len(calls) == 2
    assert x.grad.tolist() == (2 * x).tolist()


def test_backward_error_from_walkthrough_is_torchs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        walkthrough(y)


def test_hooks_do_not_keep_the_graph_alive():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    ref = weakref.ref(y)
    f = (y * y).sum()
    w = walkthrough(f, retain_graph=True)
    del f, y
    gc.collect()
    assert ref() is None
    assert w.steps


@pytest.mark.slow  # over 10 s on two loaded cores
def test_deep_chain_is_walked_without_recursion():
    x = torch.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    w = walkthrough(y, names={"x": x})
    assert len(w.steps) == 3001
    assert w.leaf("x").after.values == x.grad.item()


def test_too_large_graph_runs_and_says_it_was_not_watched():
    x = torch.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(6000):
        y = y + 1.0
    w = walkthrough(y)
    assert x.grad is not None and x.grad.item() == 1.0
    assert not w.steps and w.note and "not watched" in w.to_text()


FORUM_SOURCE = """import torch
x = torch.tensor(42.0, requires_grad=True)
x2 = x ** 2
x3 = x ** 3
f = x2 + x3
"""


def test_node_ids_are_the_traces():
    names, _, _ = forum()
    w = walkthrough(names["f"], names=names)
    text = gradtrace.trace_code(FORUM_SOURCE).to_text()
    by_label = {s.label: (s.node, s.name) for s in w.steps}
    assert set(by_label) == {"f", "x3", "x2", "x"}
    for node, name in by_label.values():
        assert f"{node}  {name}" in text  # the same node under the same id in the text twin

def _hooked(on_leaf: bool):
    x = torch.tensor([7.0, 13.0], requires_grad=True)
    y = x * 3
    (x if on_leaf else y).register_hook(lambda g: g * 10)
    return x, y, (y * x).sum()


@pytest.mark.parametrize("on_leaf", [False, True], ids=["nonleaf_hook", "leaf_hook"])
def test_a_hook_that_changes_a_gradient_is_said_and_the_arithmetic_holds(on_leaf):
    x, y, f = _hooked(on_leaf)
    w = walkthrough(f, names={"x": x, "y": y, "f": f})
    plain_x, plain_y, plain_f = _hooked(on_leaf)
    plain_f.backward()
    assert torch.equal(x.grad, plain_x.grad)
    text = w.to_text()
    assert "hook" in text
    # what the node sent before the hook, and what arrived after it, both as PyTorch computes them
    sent = plain_x.detach() if not on_leaf else (plain_y.detach() + plain_x.detach() * 3)
    assert fmt_values(sent.tolist()) in text
    hooked = next(s for s in w.steps if s.hook is not None)
    assert hooked.hook.startswith("a hook")
    assert w.leaf("x").chain.endswith(fmt_values(x.grad.tolist()))
    if on_leaf:  # the leaf's own line says what was sent and what the hook made of it
        assert f"{fmt_values(sent.tolist())}, which a hook changed to {fmt_values(x.grad.tolist())}" \
            in w.leaf("x").chain


def test_sparse_gradients_are_explained_not_crashed_on():
    torch.manual_seed(0)
    emb = torch.nn.Embedding(5, 2, sparse=True)
    idx = torch.tensor([1, 3, 1])
    out = (emb(idx) * torch.arange(6.0).reshape(3, 2)).sum()
    torch.manual_seed(0)
    plain = torch.nn.Embedding(5, 2, sparse=True)
    (plain(idx) * torch.arange(6.0).reshape(3, 2)).sum().backward()
    w = walkthrough(out, names={"emb.weight": emb.weight, "out": out})
    assert emb.weight.grad.is_sparse
    assert torch.equal(emb.weight.grad.to_dense(), plain.weight.grad.to_dense())
    assert fmt_values(plain.weight.grad.to_dense().tolist()) in w.to_text()


def test_a_hook_on_the_root_is_said():
    x = torch.tensor([7.0, 13.0], requires_grad=True)
    f = (x * x).sum()
    f.register_hook(lambda g: g * 3)
    w = walkthrough(f, names={"x": x, "f": f})
    plain = torch.tensor([7.0, 13.0], requires_grad=True)
    (plain * plain).sum().backward()
    assert torch.equal(x.grad, plain.grad * 3)
    first = w.steps[0]
    assert first.hook is not None and "f" in first.hook
    assert first.hook.startswith(f"a hook changed the gradient on its way to f: {w.seed.text} was sent")


def test_complex_numbers_are_written_in_their_precision_and_not_filled_in_with_real_rules():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.view(3)[1:]
    f = (y.sum() * (1 + 2j)).abs()
    w = walkthrough(f, names={"x": x, "y": y})
    plain = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (plain.view(3)[1:].sum() * (1 + 2j)).abs().backward()
    assert torch.equal(x.grad, plain.grad)
    text = w.to_text()
    assert "the formula gives" not in text and "Wirtinger" in text
    sent = torch.sgn(plain.detach().view(3)[1:].sum() * (1 + 2j))  # what AbsBackward0 sends, from PyTorch
    assert sent.dtype == torch.complex64
    assert fmt_values(sent.item(), "complex64") in text  # both parts in float32's shortest digits
    assert repr(sent.item()) not in text
    assert w.leaf("x").chain.endswith(fmt_values(x.grad.tolist()))

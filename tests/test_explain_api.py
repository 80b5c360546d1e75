"""The public API is one lazy table; ``import gradtrace`` stays cheap; explain reads traces with their ids."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
import torch

import gradtrace
from gradtrace.explain import walkthrough_of
from gradtrace.explain._numbers import fmt_values


def test_every_public_name_resolves_to_its_table_entry():
    for name, target in gradtrace._API.items():
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(module_name)
        assert getattr(gradtrace, name) is (getattr(module, attr) if attr else module), name
    assert set(gradtrace.__all__) == {"__version__", *gradtrace._API}
    assert set(gradtrace.__all__) <= set(dir(gradtrace))
    assert "importlib" not in dir(gradtrace)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        gradtrace.nope  # noqa: B018


def test_import_is_cheap_and_explain_does_not_need_torch():
    code = ("import sys, gradtrace\n"
            "assert 'torch' not in sys.modules and 'graphviz' not in sys.modules\n"
            "import gradtrace.explain, gradtrace.explain.quiz, gradtrace.explain.compare, gradtrace.render.text\n"
            "assert 'torch' not in sys.modules, 'explain imported torch'\n")
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def test_the_explain_package_is_callable_and_keeps_its_functions():
    x = torch.tensor(3.0, requires_grad=True)
    y = x * x
    w = gradtrace.explain(y)
    assert w.leaf("x").after.values == x.grad.item()
    from gradtrace.explain.compare import compare
    from gradtrace.explain.errors import explain_error

    assert gradtrace.explain.compare is compare
    assert gradtrace.explain.explain_error is explain_error


#: Statements making several nodes (``lin(xs)`` makes TBackward0, then AddmmBackward0): a trace and the
#: tracer's first snapshot of existing tensors (what explain(root) starts from) both number them in creation order.
SOURCES = [
    "import torch\nx = torch.tensor(42., requires_grad=True)\nx2 = x ** 2\nx3 = x ** 3\nf = x2 + x3\n",
    "import torch\nx = torch.tensor(42., requires_grad=True)\nx = x ** 2\nx3 = x ** 3\nf = x + x3\nx.retain_grad()\n",
    "import torch\nx = torch.tensor([7., 13.], requires_grad=True)\ny = x * 3\nf = (y * x).sum()\n",
    "import torch\ntorch.manual_seed(0)\nlin = torch.nn.Linear(3, 2)\nxs = torch.randn(4, 3)\n"
    "f = lin(xs).tanh().sum()\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_explain_root_uses_the_ids_the_trace_shows(source):
    """explain(f) after plain code names each node as the trace of the same code does."""
    text = gradtrace.trace_code(source).to_text()
    ns: dict = {}
    exec(source, ns)
    w = gradtrace.explain(ns["f"], names={k: v for k, v in ns.items() if not k.startswith("__")})
    assert w.steps
    for step in w.steps:
        assert f"{step.node}  {step.name}" in text, (step.node, step.name)
        for out in step.outputs:
            assert f" {out.target}  " in text


@pytest.mark.parametrize("source", SOURCES)
def test_quiz_and_the_trace_agree_on_ids_and_steps(source):
    code = source + "f.backward()\n"
    trace = gradtrace.trace_code(code)
    text = trace.to_text()
    verdict = gradtrace.quiz(code.replace("import torch\n", "", 1), ask="x.grad" if "x =" in code
                             else "lin.weight.grad").check("0")
    for line in verdict.explanation.splitlines():
        words = line.strip().split()
        if len(words) > 2 and words[0].rstrip(".").isdigit() and words[1].startswith("n"):
            assert f"{words[1]}  {words[2]}" in text, line
    backward_steps = [s for s in trace.steps if any(e.kind == "backward" for e in s.events)]
    assert backward_steps and f"step {backward_steps[0].index}," in text


NO_TORCH = r'''
import pickle, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, Block())
from gradtrace.explain import compare, explain_error, walkthrough_of
good, bad = pickle.loads(sys.stdin.buffer.read())
step = next(s for s in good.steps if any(e.kind == "backward" for e in s.events))
event = next(e for e in step.events if e.kind == "backward")
walk = walkthrough_of(step, event)
print(walk.to_text())
print("=====")
print(good.to_text())
print("=====")
print(explain_error(bad.error, bad).to_text())
print("=====")
print(compare(good, good).same)
assert "torch" not in sys.modules
'''


def test_a_trace_is_explained_with_torch_not_importable():
    import pickle

    good = gradtrace.trace_code(SOURCES[0] + "f.backward()\n")
    bad = gradtrace.trace_code("import torch\na = torch.ones(3, requires_grad=True) * 1\nb = a * a\na.add_(1)\n"
                               "b.sum().backward()\n", raise_errors=False)
    done = subprocess.run([sys.executable, "-c", NO_TORCH], input=pickle.dumps((good, bad)), capture_output=True,
                          env=_env(), check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    walk, text, error, same = out.split("=====\n")
    x = torch.tensor(42.0, requires_grad=True)
    paths = [torch.autograd.grad(x ** k, x)[0].item() for k in (2, 3)]  # what each path sends, from PyTorch
    # the paths in the order they reached x (x³'s node ran first: tests/test_accumulation_order.py)
    assert f"= {fmt_values(paths[1])} + {fmt_values(paths[0])} = {fmt_values(good.grad('x'))}" in walk
    assert "1·(3·42²) + 1·(2·42)" in walk  # the arithmetic is filled in without torch
    step = next(s for s in good.steps if any(e.kind == "backward" for e in s.events))
    event = next(e for e in step.events if e.kind == "backward")
    assert walk == walkthrough_of(step, event).to_text() + "\n"  # the same text as with torch importable
    assert "reverse pass from f" in text
    assert "a.add_(1)" in error and "Changed at step" in error
    assert same.strip() == "True"

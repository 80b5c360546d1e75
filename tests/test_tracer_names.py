"""The names panel's shortcuts (issue 9): a scope or a module is read again only when it changed.

Each program here changes names, modules and containers in the ways the shortcuts must notice;
the names and values shown at every step are checked against the same program run plainly,
statement by statement.
"""

from __future__ import annotations

import ast
from typing import Any

import torch

import gradtrace
from gradtrace.tracer.core import Tracer

MODULES = """\
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
i = 0
i = 1
model[0].weight = nn.Parameter(torch.ones(2, 3))
model[0].register_buffer("scale", torch.full((2,), 3.0))
del model[2].bias
model._modules["extra"] = nn.Linear(1, 1)
model[1]._parameters = {"w": nn.Parameter(torch.zeros(1))}
model[0]._parameters["weight"] = nn.Parameter(torch.full((2, 3), 2.0))
with torch.no_grad():
    model[0].bias.add_(1)
lazy = nn.LazyLinear(2)
y = lazy(torch.ones(1, 4))
class Quiet(nn.Linear):
    def named_parameters(self, *args, **kwargs):
        return iter(())
model[2].__class__ = Quiet
i = 2
box = [torch.ones(1)]
box.append(torch.zeros(1))
box[0] = torch.full((1,), 5.0)
d = {"a": torch.ones(1)}
d["a"] = torch.zeros(2)
i = 3
i = torch.full((1,), 7.0)
i = 4
_hidden = torch.ones(1)
j = (torch.ones(1), 2)
i = 5
class Box(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.full((2,), 6.0))
boxed = Box()
i = 6
Box.named_parameters = lambda self, *args, **kwargs: iter(())
i = 7
"""


def _plain_names(ns: dict[str, Any]) -> dict[str, list[float]]:
    """What a names panel should show for ``ns``, read plainly: each name and its tensor's values."""
    out: dict[str, list[float]] = {}
    for name, value in ns.items():
        if name.startswith("_"):
            continue
        if isinstance(value, torch.Tensor):
            out[name] = value.tolist()
        elif isinstance(value, torch.nn.Module):
            for pname, p in list(value.named_parameters()) + list(value.named_buffers()):
                if not isinstance(p, torch.nn.parameter.UninitializedTensorMixin):
                    out[f"{name}.{pname}"] = p.tolist()
        elif isinstance(value, list):
            out.update({f"{name}[{i}]": t.tolist() for i, t in enumerate(value) if isinstance(t, torch.Tensor)})
        elif isinstance(value, tuple):
            out.update({f"{name}[{i}]": t.tolist() for i, t in enumerate(value) if isinstance(t, torch.Tensor)})
        elif isinstance(value, dict):
            out.update({f"{name}[{k!r}]": t.tolist() for k, t in value.items() if isinstance(t, torch.Tensor)})
    return out


def _each_statement(source: str) -> list[dict[str, list[float]]]:
    """The plain names after each top-level statement, run one at a time."""
    ns: dict[str, Any] = {}
    out = []
    for node in ast.parse(source).body:
        exec(compile(ast.Module([node], []), "<plain>", "exec"), ns)
        out.append(_plain_names(ns))
    return out


def _shown(step: Any) -> dict[str, list[float]]:
    out = {}
    for name, tid in step.bindings.items():
        info = step.tensors[tid]
        out[name] = info.value.values
    return out


def test_every_change_to_a_module_or_container_is_shown_at_its_step() -> None:
    expected = _each_statement(MODULES)
    trace = gradtrace.trace_code(MODULES, {})
    tops = [s for s in trace.steps if s.frame == "<module>" and s.code != "with torch.no_grad():"
            and not s.code.startswith("def named_parameters") and not s.code.startswith("return iter")]
    # the class body's statement runs once inside the class: keep the module-level steps, in order
    tops = [s for s in tops if not s.code.startswith(("return", "def ", "super()", "self."))]
    assert len(tops) == len(expected), [s.code for s in tops]
    for step, plain in zip(tops, expected, strict=True):
        assert _shown(step) == plain, step.code


def test_a_training_loop_lists_its_model_once() -> None:
    source = (
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 1))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(8, 3)\n"
        "for i in range({n}):\n"
        "    opt.zero_grad()\n"
        "    loss = model(x).pow(2).mean()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    works = []
    for n in (5, 20):
        ns: dict[str, Any] = {}
        tracer = Tracer(source.format(n=n), "<loop>", 10**6, globals_ns=ns)
        code = compile(source.format(n=n), "<loop>", "exec")
        trace = tracer.run(lambda code=code, ns=ns: exec(code, ns))
        assert tracer.exception is None
        last = trace.steps[-1]
        assert last.tensors[last.bindings["model.1.running_mean"]].value.values == ns["model"][1].running_mean.tolist()
        works.append(tracer.work)
    # listed when first seen (and when the statement that made it ran); never again while it stays the same
    assert works[0]["module listings"] == works[1]["module listings"] <= 2
    # the loop counter changes every iteration and shows no tensor: the names are not made again for it
    assert works[1]["names made"] - works[0]["names made"] <= 2 * 15 + 2


MAIN_GUARDED = ("import torch\n\n"
                "def main():\n"
                "    x = torch.tensor([1., 2.], requires_grad=True)\n"
                "    (x ** 2).sum().backward()\n"
                "    return x\n\n"
                "if __name__ == '__main__':\n"
                "    x = main()\n")


def test_a_script_guarded_by_main_runs_its_main_when_traced_with_no_namespace() -> None:
    # a learner's script ends in ``if __name__ == "__main__": main()``: run as a script, main() runs;
    # traced with no namespace of its own, the trace must not stop at the guard with nothing recorded
    plain: dict[str, Any] = {"__name__": "__main__"}
    exec(MAIN_GUARDED, plain)
    trace = gradtrace.trace_code(MAIN_GUARDED)
    assert any(s.frame == "main" for s in trace.steps)
    last = trace.last
    assert last.tensors[last.bindings["x"]].grad.values == plain["x"].grad.tolist()
    ns: dict[str, Any] = {}  # a namespace the caller gives is used as given, as exec uses it
    assert not any(s.frame == "main" for s in gradtrace.trace_code(MAIN_GUARDED, ns).steps) and "x" not in ns

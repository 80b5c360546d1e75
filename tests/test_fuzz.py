"""Differential fuzzing: traced runs must compute exactly what plain runs compute.

Hypothesis writes small PyTorch programs (straight-line code, small loops,
``no_grad`` blocks) over 40-odd tensor operations, in-place changes, views,
rebinding, ``del``, ``detach``, ``retain_grad`` and ``backward`` in its variants,
including programs that fail (second backward, stale saved values, a leaf
changed in place, shape mismatches). Each program runs plain, traced and
statement by statement (see ``regressions/differential.py``); any difference
is a tracer bug. A shrunk failing program goes to ``tests/regressions/``.

The run is derandomized (same examples on every CI run) and sized to stay
well under a minute on two cores.

The second half widens what a program can be (issue 12, item 9): ``nn.Module``s
(``Linear``, a small ``Sequential``) with a hand-written SGD step, float64 /
float16 / bfloat16 / complex64 tensors, ``create_graph=True`` double backward,
tensor hooks (on leaves and non-leaves, changing or watching the gradient, removed
again), views of views changed in place, and the learner's own wrappers of torch
functions (which must run exactly as often as without gradtrace). Each family is
derandomized and bounded; the long runs are marked ``slow``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from regressions.differential import check_program

from gradtrace.explain import explain_error, walkthrough_of
from gradtrace.explain._numbers import same_values
from gradtrace.model import Backward, Trace

from fuzz_programs import DTYPES, FUZZ, module_programs, programs, wide_programs


def check_explained(trace: Trace) -> None:
    """Invariant 4, explain side: every recorded backward() is explained with PyTorch's own figures.

    A filled-in rule never disagrees with the gradient PyTorch sent, each leaf's final figure is
    the ``.grad`` the trace recorded, and an error is explained without raising.
    """
    if trace.error is not None:
        assert explain_error(trace.error, trace).to_text()
    for step in trace.steps:
        for event in step.events:
            if not isinstance(event, Backward) or not event.flow:
                continue
            walk = walkthrough_of(step, event)
            assert walk.to_text()
            for ws in walk.steps:
                assert all(out.matches is not False for out in ws.outputs), (ws.node, ws.name, ws.outputs)
            after = {c.tensor: c.after for c in event.grads}
            for ws in walk.steps:
                var = step.nodes[ws.node].variable
                if ws.is_accumulate and var in after and after[var] is not None and ws.grad_after is not None:
                    assert same_values(ws.grad_after.values, after[var].values), (ws.node, ws.grad_after)


@FUZZ
@given(programs())
@pytest.mark.slow  # over 10 s on two loaded cores
def test_traced_run_matches_plain_run(source: str) -> None:
    check_explained(check_program(source))


@settings(FUZZ, max_examples=60)
@given(st.lists(programs(), min_size=2, max_size=2))
def test_tracing_twice_in_one_process_gives_the_same_trace(sources: list[str]) -> None:
    """Ids and events do not depend on what was traced before (deterministic output)."""
    first = check_program(sources[0], renderers=False)
    check_program(sources[1], renderers=False)
    again = check_program(sources[0], renderers=False)
    assert repr(first) == repr(again)



# ----------------------------------------------------------------------------- the widened generator
#: fewer examples: each family adds kinds of statements rather than more of the same
WIDE = settings(FUZZ, max_examples=60)


def check_wide(source: str) -> None:
    # backward(create_graph=True) warns once per process (the plain run uses the warning up)
    check_explained(check_program(source, warnings_too=".backward(create_graph=True)" not in source))


@WIDE
@given(wide_programs())
def test_hooks_views_of_views_and_double_backward(source: str) -> None:
    check_wide(source)


@pytest.mark.slow
@settings(WIDE, max_examples=40)
@given(st.sampled_from(DTYPES).flatmap(lambda d: wide_programs(d)))
def test_every_dtype(source: str) -> None:
    check_wide(source)


@settings(WIDE, max_examples=15)
@given(st.sampled_from(DTYPES).flatmap(lambda d: wide_programs(d)))
def test_every_dtype_quick(source: str) -> None:
    check_wide(source)


@settings(WIDE, max_examples=25)
@given(module_programs())
def test_modules_and_training_steps(source: str) -> None:
    check_explained(check_program(source))


def test_value_saved_after_an_inplace_change_in_the_same_statement() -> None:
    source = ("import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Sequential(torch.nn.Linear(3, 3, bias=False), "
              "torch.nn.ReLU(inplace=True), torch.nn.Linear(3, 2))\nxs = torch.randn(5, 3)\nout = model(xs)\n"
              "loss = out.pow(2).mean()\nloss.backward()\n")
    check_explained(check_program(source))


def test_training_step_through_data() -> None:
    check_program("import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(3, 2)\nxs = torch.randn(5, 3)\n"
                  "loss = model(xs).pow(2).mean()\nloss.backward()\nfor p in model.parameters():\n"
                  "    p.data = p.data - 0.1 * p.grad.data\n")


#: The learner wraps a torch function; the wrapper counts its calls, and the count is compared like any
#: other value of the namespace. Every program puts the original back, even when it fails.
WRAPPED = {
    "Tensor.backward": ("torch.Tensor.backward", "lambda self, *a, **k: (calls.append(1), orig(self * 2, *a, **k))[1]",
                        "y = (x * x).sum()\ny.backward()"),
    "F.relu": ("torch.nn.functional.relu", "lambda t, *a, **k: (calls.append(1), orig(t, *a, **k) * 3)[1]",
               "y = torch.nn.functional.relu(x - 1).sum()\ny.backward()"),
    "torch.sigmoid": ("torch.sigmoid", "lambda t: (calls.append(1), orig(t) + 1)[1]",
                      "y = torch.sigmoid(x).sum()\ny.backward()"),
    "Tensor.exp": ("torch.Tensor.exp", "lambda self: (calls.append(1), orig(self) * 2)[1]",
                   "y = x.exp().sum()\ny.backward()"),
    "torch.add": ("torch.add", "lambda *a, **k: (calls.append(1), orig(*a, **k))[1]",
                  "y = torch.add(x, x, alpha=2).sum()\ny.backward()"),
}


def wrapper_program(name: str) -> str:
    target, wrapper, body = WRAPPED[name]
    lines = ["import torch", "calls = []", "x = torch.tensor([1.5, -2.0, 3.0], requires_grad=True)",
             f"orig = {target}", "try:", f"    {target} = {wrapper}"]
    lines += ["    " + line for line in body.splitlines()]
    lines += ["finally:", f"    {target} = orig"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", list(WRAPPED))
def test_learner_wrappers_of_torch_functions(name: str) -> None:
    check_program(wrapper_program(name))

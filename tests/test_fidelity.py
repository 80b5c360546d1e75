"""Invariants 1-4 over a hand-written corpus and over generated programs.

Each program in ``tests/corpus/`` runs plain, traced and under an independent
line hook (``regressions/fidelity.py``): tracing must change nothing, every
statement that ran must be a step credited to its line and function, every
value, version, ``grad_fn`` and ``.grad`` a step shows must be the live
object's at that moment, and a failing ``backward()`` on a stale saved value
must be predicted (and a successful one not).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from regressions.fidelity import _same_stats, check_fidelity, run_watched

import gradtrace

from fuzz_programs import FUZZ, programs

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))


#: programs that still show a known difference, with why (each one is issue 9's to fix)
KNOWN: dict[str, str] = {}


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.xfail(reason=KNOWN[p.stem], strict=True)) if p.stem in KNOWN else p
     for p in CORPUS],
    ids=[p.stem for p in CORPUS],
)
def test_corpus_program(path: Path) -> None:
    check_fidelity(path.read_text())


@settings(FUZZ, max_examples=300)
@given(programs())
@pytest.mark.slow  # over 10 s on two loaded cores
def test_generated_program(source: str) -> None:
    check_fidelity(source)


def test_watcher_tells_apart_statements_of_one_line() -> None:
    # the oracle itself: ``g(); g()`` is two statements, each finishing after its own call, exactly as
    # when they stand on two lines (Python 3.12 gave no opcode events, and the first one went unseen)
    one, _ = run_watched("def g():\n    a = 1\ng(); g()\nx = 1\n")
    two, _ = run_watched("def g():\n    a = 1\ng()\ng()\nx = 1\n")
    assert [m.frame for m in one.moments] == [m.frame for m in two.moments]
    assert len({m.lineno for m in one.moments if m.frame == "<module>"}) == 3


def test_oracle_checks_large_tensors_by_their_stats() -> None:
    # a tensor of more than 16 elements is shown as (min, mean, max): the oracle compares those too
    ns: dict[str, object] = {}
    trace = gradtrace.trace_code("import torch\ny = torch.arange(40.)\n", ns)
    shown = trace.last.tensors[trace.last.bindings["y"]].value
    y = ns["y"]
    assert isinstance(y, torch.Tensor) and shown is not None and shown.values is None
    assert _same_stats(shown, y)
    y[5] += 1  # min and max stay: the mean tells
    assert not _same_stats(shown, y)
    y[5] -= 1
    y[0] = -1.0
    assert not _same_stats(shown, y)


def test_oracle_checks_predictions_for_a_root_made_by_the_backward_statement() -> None:
    # ``h.sum().backward()`` names no root: the failure must still have been predicted for ``h``,
    # and a success must not have been. A trace whose prediction is taken away fails the check.
    import dataclasses

    from regressions.fidelity import check_predictions

    failing = ("import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nh = x.exp()\n"
               "h.add_(1)\nh.sum().backward()\n")
    trace = check_fidelity(failing)
    before = trace[-2]
    assert before.predictions and {p.root for p in before.predictions} == {"h"}
    blind = dataclasses.replace(trace, steps=(*trace.steps[:-2], dataclasses.replace(before, predictions=()),
                                              trace.steps[-1]))
    with pytest.raises(AssertionError, match="no prediction for h"):
        check_predictions(blind)
    fine = "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nh = x * 2\nh.add_(1)\nh.sum().backward()\n"
    trace = check_fidelity(fine)
    before = trace[-2]
    told = dataclasses.replace(before, predictions=trace[-2].predictions or (_made_up_prediction("h"),))
    wrong = dataclasses.replace(trace, steps=(*trace.steps[:-2], told, trace.steps[-1]))
    with pytest.raises(AssertionError, match="ran fine"):
        check_predictions(wrong)


def _made_up_prediction(root: str):
    from gradtrace.model import Prediction

    return Prediction(root=root, node="n1", saved="self", tensor=None, saved_version=0, version=1, message="")


def test_oracle_checks_what_a_step_says_changed_in_place() -> None:
    # a view beside the one written keeps its values (its version moves with the shared counter), and a flag
    # set in place moves no version: a step saying either "changed in place" fails, and so does one saying
    # values were kept when they were not
    import dataclasses

    from regressions.fidelity import check_mutations

    from gradtrace.model import Mutate

    source = ("import torch\nbase = torch.zeros(4)\np, q = base.view(2, 2)\np += 1\n"
              "c = torch.ones(2)\nc.requires_grad_()\n")
    trace = check_fidelity(source)
    watcher, _ = run_watched(source)
    steps, moments = list(trace.steps), watcher.moments
    for code, field, value in (("p += 1", "values_kept", False), ("p += 1", "tensor", None),
                               ("c.requires_grad_()", "op", "")):
        i = next(k for k, s in enumerate(steps) if s.code.strip() == code)
        step = steps[i]
        events = [e for e in step.events if isinstance(e, Mutate)]
        target = next(e for e in events if e.values_kept) if field != "op" else events[0]
        if field == "tensor":  # p, written directly, said to keep its values
            target = dataclasses.replace(next(e for e in events if not e.values_kept and e.via is None),
                                         values_kept=True, via=target.tensor)
            wrong = dataclasses.replace(step, events=(*step.events, target))
        else:
            wrong = dataclasses.replace(step, events=tuple(dataclasses.replace(e, **{field: value})
                                                           if e is target else e for e in step.events))
        check_mutations(step, moments[i - 1], moments[i])
        with pytest.raises(AssertionError):
            check_mutations(wrong, moments[i - 1], moments[i])

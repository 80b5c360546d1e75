"""The corpus programs' walkthroughs read back: every filled-in formula shown beside a gradient evaluates, with
its printed numbers in the dtype its node ran in, to that gradient (the one the tracer recorded PyTorch sending),
and none is shown as giving other figures than PyTorch's.

Only programs that meet rules with dtypes or attributes of their own (losses, activations, powers, half
precision, autocast) are run, to keep the file quick; tests/test_explain_formula_readback.py sweeps the table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from formula_eval import Unreadable, evaluate, split_result

import gradtrace
from gradtrace.explain.walkthrough import walkthrough_of
from gradtrace.model import Backward

_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
           "float64": torch.float64}
_WORDS = re.compile(r"cross_entropy|nll_loss|binary_cross|gelu|softplus|half|bfloat16|autocast|float16|\*\* ")
CORPUS = [p for p in sorted((Path(__file__).parent / "corpus").glob("*.py")) if _WORDS.search(p.read_text())]


def _formulas(source):
    """(formula text, dtype name, PyTorch's values) for every formula a walkthrough of the program shows."""
    trace = gradtrace.trace_code(source, {}, raise_errors=False)
    for step in trace.steps:
        for event in step.events:
            if not isinstance(event, Backward) or not event.flow:
                continue
            for walk_step in walkthrough_of(step, event).steps:
                got = next((g for g in walk_step.grad_in if g is not None), None)
                for out in walk_step.outputs:
                    # a formula shown beside other figures ("torch computed ... (the formula gives ...)")
                    assert out.formula is None or out.matches is not False, (walk_step.name, out.formula)
                    if out.formula is not None and out.matches and out.grad is not None and got is not None:
                        yield out.formula, got.dtype, out.grad.values


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_formulas_read_back(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text, dtype_name, values in _formulas(path.read_text()):
        shown, _, note = text.partition("   (")
        ran = re.search(r"computed in (\w+)", note)
        dtype = _DTYPES.get(ran[1] if ran else dtype_name)
        if dtype is None:
            continue
        want = torch.tensor(values, dtype=torch.float64)
        try:
            expr, _ = split_result(shown)
            value = evaluate(expr, dtype, want.shape[-1] if want.dim() else 0, tuple(want.shape))
        except Unreadable:
            continue
        eps = torch.finfo(dtype).eps
        scale = float(want.abs().nan_to_num(0, 0, 0).max()) if want.numel() else 0.0
        got = value.double().reshape(want.shape)
        assert torch.allclose(got, want, rtol=16 * eps, atol=16 * eps * scale, equal_nan=True), (
            f"{text}\n  the left side evaluates to {got.tolist()}")

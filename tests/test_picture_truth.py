"""What a learner reads equals what the trace holds, over every corpus program and generated ones.

See ``regressions/picture.py``: value texts read back to the recorded values in
their own dtype, each step's picture draws exactly the step's names, tensors,
nodes and arrows with their own texts, the film's frames show exactly those
pictures, and the JSON reads back to the same trace. With the fidelity oracle
(records equal the live objects) this closes the chain from PyTorch to the page.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from regressions.fidelity import _run
from regressions.picture import check_picture, check_scene, check_summary

from gradtrace import trace_code
from gradtrace.model import Summary
from gradtrace.render.scene import Box, Row, Scene, scene

from fuzz_programs import FUZZ, programs

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))


def _trace(source: str):
    run = _run(source, traced=True, max_steps=1000)
    assert run.trace is not None
    return run.trace


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_picture(path: Path) -> None:
    check_picture(_trace(path.read_text()))


@pytest.mark.slow
@settings(FUZZ, max_examples=60)
@given(programs())
def test_generated_picture(source: str) -> None:
    check_picture(_trace(source))


# ------------------------------------------------------------ the checks can fail
def test_a_value_text_that_does_not_read_back_is_caught():
    with pytest.raises(AssertionError, match="shows"):
        check_summary("t1", Summary("[0.1, 0.3]", [0.1, 0.2]), "float32")
    check_summary("t1", Summary("[0.1, 0.2]", [0.1, 0.2]), "float32")


def test_a_half_value_reads_back_in_its_own_dtype():
    import torch

    from gradtrace.tracer.summary import summarize

    t = torch.tensor([1.4765625, -0.47900390625], dtype=torch.float16)
    s = summarize(t)
    check_summary("t", s, "float16")
    with pytest.raises(AssertionError):
        check_summary("t", Summary("[1.47, -0.479]", s.values), "float16")


def test_a_box_showing_another_records_value_is_caught():
    trace = trace_code("import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x * 3\n")
    step = trace[-1]
    sc = scene(step)
    boxes = list(sc.boxes)
    i = next(k for k, b in enumerate(boxes) if b.key == "t2")
    b = boxes[i]
    boxes[i] = Box(b.key, b.group, b.kind, (b.rows[0], Row("data [1., 2.]"), *b.rows[2:]), b.marks, b.label)
    check_scene(step, sc)
    with pytest.raises(AssertionError, match="shows"):
        check_scene(step, Scene(tuple(boxes), sc.links, sc.names))
    with pytest.raises(AssertionError, match="arrows"):
        check_scene(step, Scene(sc.boxes, sc.links[:-1], sc.names))


def test_the_corpus_check_reads_numbers_back():
    from regressions import picture

    before = picture.CHECKED[0]
    check_picture(_trace((Path(__file__).parent / "corpus" / "adam.py").read_text()))
    assert picture.CHECKED[0] - before > 10

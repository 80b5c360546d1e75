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
from hypothesis import given, settings
from regressions.fidelity import check_fidelity
from test_fuzz import FUZZ, programs

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_program(path: Path) -> None:
    check_fidelity(path.read_text())


@settings(FUZZ, max_examples=120)
@given(programs())
def test_generated_program(source: str) -> None:
    check_fidelity(source)

"""The explain layer: derivative formulas, backward walkthroughs, error explanations, graph comparison.

Place in the pipeline: tracer -> model -> **explain** -> render.

``gradtrace.explain(root)`` is the walkthrough itself: the package is callable. The
call runs ``root.backward()``, so it is :func:`gradtrace.live.walkthrough`'s work: the
package calls the ``explain_root`` view the package root registers in the model
(:func:`gradtrace.model.register_view`), and imports nothing that runs code.

Everything returned here is plain, frozen data with a text rendering, built from a
:class:`~gradtrace.model.Trace`. Nothing here runs code (quizzes, comparisons of source
code and ``explain(root)`` run in :mod:`gradtrace.live`) or imports torch, the tracer or
the runner (the import contracts in pyproject.toml hold it to that):
filled-in formulas redo their arithmetic with plain Python numbers rounded to the
tensor's dtype (:mod:`._arith`), and the figures they show are the ones the tracer
recorded PyTorch computing, so a trace read back from JSON explains with torch absent.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..model import view
from .compare import Comparison, compare
from .errors import ErrorExplanation, explain_error
from .formulas import FORMULAS, Filled, FilledPart, Formula, Rule, fill_in, formula_for, rule_text
from .walkthrough import GradValue, LeafGrad, WalkStep, Walkthrough, walkthrough_of

__all__ = [
    "Comparison",
    "ErrorExplanation",
    "FORMULAS",
    "Filled",
    "FilledPart",
    "GradValue",
    "LeafGrad",
    "WalkStep",
    "Walkthrough",
    "Formula",
    "Rule",
    "compare",
    "explain_error",
    "fill_in",
    "formula_for",
    "rule_text",
    "walkthrough_of",
]


class _ExplainModule(types.ModuleType):
    """Lets ``gradtrace.explain(root)`` run the walkthrough while ``gradtrace.explain`` stays this package."""

    def __call__(self, root: Any, gradient: Any = None, retain_graph: bool = False, inputs: Any = None,
                 **kwargs: Any) -> Walkthrough:
        if kwargs.get("names") is None:  # name tensors as the caller does
            caller = sys._getframe(1)
            kwargs["names"] = {**caller.f_globals, **caller.f_locals}
        walk: Walkthrough = view("explain_root")(root, gradient, retain_graph, inputs, **kwargs)
        return walk


sys.modules[__name__].__class__ = _ExplainModule

"""The explain layer: derivative formulas, backward walkthroughs, error explanations, graph comparison.

Place in the pipeline: tracer -> model -> **explain** -> render.

Everything returned here is plain, frozen data with a text rendering. torch is
imported only where code must run (the walkthrough runs ``backward()``; filled-in
formulas compute their figures with torch in the tensor's dtype).
"""

from __future__ import annotations

from .compare import Comparison, compare
from .errors import ErrorExplanation, explain_error
from .formulas import FORMULAS, Filled, FilledPart, Formula, Rule, fill_in, formula_for, rule_text
from .walkthrough import GradValue, GraphTooLarge, LeafGrad, WalkStep, Walkthrough, walkthrough

__all__ = [
    "Comparison",
    "ErrorExplanation",
    "FORMULAS",
    "Filled",
    "FilledPart",
    "GradValue",
    "GraphTooLarge",
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
    "walkthrough",
]

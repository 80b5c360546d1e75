"""One snapshot of a tensor's whole graph, without running code (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.
Used by :func:`gradtrace.make_dot` and :func:`gradtrace.show`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from .._gc import paused_gc
from ..model import Step
from .core import Tracer
from .graph import grad_fn_of
from .stack import ensure_deep_stack


def snapshot(var: Any, params: Mapping[str, torch.Tensor] | None = None, name: str = "output") -> Step:
    """A :class:`~gradtrace.model.Step` holding everything reachable from ``var``.

    ``var`` is a tensor or a sequence of tensors; ``params`` names tensors
    (as ``dict(model.named_parameters())`` does) so leaves are labelled.
    """
    outputs = list(var) if isinstance(var, (list, tuple)) else [var]
    if not all(isinstance(v, torch.Tensor) for v in outputs):
        raise TypeError("gradtrace needs a tensor (or a list of tensors) to draw; got "
                        + ", ".join(sorted({type(v).__name__ for v in outputs})))
    ensure_deep_stack()
    tracer = Tracer("", "<snapshot>")
    ids, book = tracer.ids, tracer.book
    book.lazy = True  # a value is read when the picture draws it: most of a huge graph is folded away
    bindings: dict[str, str] = {}
    with paused_gc(), torch._C.DisableTorchFunction(), torch.no_grad():
        for i, v in enumerate(outputs):
            label = name if len(outputs) == 1 else f"{name}[{i}]"
            bindings[label] = ids.stamp(v)[0]
            book.walk(grad_fn_of(v), output=v)
        for pname, p in (params or {}).items():
            if isinstance(p, torch.Tensor):
                bindings.setdefault(str(pname), ids.stamp(p)[0])
        roots: dict[str, int] = {}
        for tid in bindings.values():
            roots[tid] = roots.get(tid, 0) + 1
        tracer.scene.update(roots, None, set(), [])
        tensors, nodes = dict(tracer.scene.tensors), dict(tracer.scene.nodes)
    tracer.scene.clear()
    return Step(index=0, lineno=0, code="", frame="<snapshot>", bindings=bindings, tensors=tensors, nodes=nodes)

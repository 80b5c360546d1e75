"""A picture object for notebooks: DOT source, SVG on demand, a text twin.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.
"""

from __future__ import annotations

from typing import Any

from ..model import Step
from .dot import graph_dot, step_dot
from .fold import MAX_NODES, fold, folded_text, plan_dot, unfold_path
from .svg import LayoutError, dot_to_svg
from .text import step_text

__all__ = ["Graph", "step_graph", "Page"]


class Graph:
    """One graph: ``source`` (DOT), ``svg()`` (laid out once, then cached) and ``text``.

    Displays itself in Jupyter through ``_repr_mimebundle_``: always ``text/plain``
    (the text twin), plus ``image/svg+xml`` when a layout binary is available.
    """

    def __init__(self, source: str, text: str = "") -> None:
        self.source = source
        self.text = text
        self._svg: str | None = None

    def svg(self) -> str:
        if self._svg is None:
            self._svg = dot_to_svg(self.source)
        return self._svg

    def save(self, path: str) -> str:
        """Write the SVG (``.svg``) or the DOT source (any other suffix) to ``path``."""
        data = self.svg() if path.endswith(".svg") else self.source
        with open(path, "w", encoding="utf-8") as f:
            f.write(data)
        return path

    def __repr__(self) -> str:
        return f"<gradtrace Graph: {self.source.count(' -> ')} edges>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        bundle = {"text/plain": self.text or repr(self)}
        try:
            bundle["image/svg+xml"] = self.svg()
        except LayoutError as exc:
            bundle["text/plain"] += f"\n(no picture: {exc})"
        return bundle


def step_graph(step: Step, *, compact: bool = False, max_nodes: int | None = MAX_NODES,
               unfold: str | list[str] | tuple[str, ...] | None = None, **options: Any) -> Graph:
    """The picture of ``step`` (``compact`` gives the make_dot-style graph).

    A step with more than ``max_nodes`` objects (tensors, nodes and names;
    default :data:`~gradtrace.render.fold.MAX_NODES`) is drawn folded: repeated
    op runs as counted blocks, modules collapsed, the rest counted in a note
    (see :mod:`gradtrace.render.fold`); ``max_nodes=None`` always draws it all.
    ``unfold`` opens folded groups, the rest folded as before: a module path
    (``"model.layer1.0"``, the groups around it open too), a block key
    (``"fold2"``) or a list of them, opened one inside the other. The stepper
    names the group to pass when it has no unfolded picture of it.
    Node attributes are drawn only with ``show_attrs=True``.
    """
    size = len(step.nodes) + len(step.tensors) + len(step.bindings)
    if not compact and max_nodes is not None and size > max_nodes:
        plan = fold(step, max_nodes=max_nodes)
        if unfold:
            opened = unfold_path(step, plan, unfold)
            plan = opened[-1][1] if opened else plan
        options.pop("legend", None)
        options.setdefault("show_attrs", False)  # internal attributes only when asked for, as in step_dot
        return Graph(plan_dot(step, plan, **options), folded_text(plan))
    source = graph_dot(step, **options) if compact else step_dot(step, **options)
    return Graph(source, step_text(step))


class Page(str):
    """An HTML document (a ``str``) that shows itself in notebooks."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": f"<gradtrace HTML page, {len(self)} characters>", "text/html": str(self)}

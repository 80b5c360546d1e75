"""A picture object for notebooks: DOT source, SVG on demand, a text twin.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from typing import Any

from ..model import Step
from .dot import graph_dot, step_dot
from .fold import MAX_NODES, Folded, fold, folded_text, plan_dot, unfold_path
from .svg import LayoutError, dot_to_svg
from .text import step_text

__all__ = ["Graph", "step_graph", "filled_plan", "Page"]


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

    # IPython calls this with include= and exclude= by keyword, so their names stay though unused
    def _repr_mimebundle_(self, include: Collection[str] | None = None,  # noqa: ARG002
                          exclude: Collection[str] | None = None) -> dict[str, str]:  # noqa: ARG002
        bundle = {"text/plain": self.text or repr(self)}
        try:
            bundle["image/svg+xml"] = self.svg()
        except LayoutError as exc:
            bundle["text/plain"] += f"\n(no picture: {exc})"
        return bundle


def step_graph(step: Step, *, compact: bool = False, max_nodes: int | None = MAX_NODES,
               unfold: str | list[str] | tuple[str, ...] | None = None,
               fill: Callable[[Iterable[str]], Step] | None = None, **options: Any) -> Graph:
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

    ``fill``: ``step`` is a sketch whose nodes carry only names, inputs and leaves;
    ``fill(node ids)`` gives it with those nodes in full. Only the nodes drawn are
    asked for (see :func:`filled_plan`; all of them with ``unfold``), so a folded
    picture of a huge graph reads little.
    """
    size = len(step.nodes) + len(step.tensors) + len(step.bindings)
    if not compact and max_nodes is not None and size > max_nodes:
        if fill is not None and unfold:
            step, fill = fill(list(step.nodes)), None  # an opened group draws what folding hid: read it all
        if fill is None:
            plan = fold(step, max_nodes=max_nodes)
        else:
            step, plan = filled_plan(step, fill, max_nodes)
        if unfold:
            opened = unfold_path(step, plan, unfold)
            plan = opened[-1][1] if opened else plan
        options.pop("legend", None)
        options.setdefault("show_attrs", False)  # internal attributes only when asked for, as in step_dot
        return Graph(plan_dot(step, plan, **options), folded_text(plan))
    if fill is not None:
        step = fill(list(step.nodes))
    source = graph_dot(step, **options) if compact else step_dot(step, **options)
    return Graph(source, step_text(step))


def filled_plan(step: Step, fill: Callable[[Iterable[str]], Step], max_nodes: int | None) -> tuple[Step, Folded]:
    """The folded plan of a sketched ``step``, with every node it draws filled in.

    Folding looks at names, inputs and leaves only, but what a drawn node saved can
    change what else is drawn (a saved tensor takes a box): the plan is made again
    with the drawn nodes filled in, until it draws no node that is not.
    """
    plan = fold(step, max_nodes=max_nodes)
    done: set[str] = set()
    while True:
        todo = [nid for nid in plan.step.nodes if nid not in done]
        if not todo:
            return step, plan
        filled = fill(todo)
        done.update(todo)
        if filled is step:
            continue
        step = filled
        if _boxes_unchanged(plan, step, todo):  # what fold would give again, without folding the whole graph
            plan = replace(plan, step=replace(plan.step, nodes={nid: step.nodes[nid] for nid in plan.step.nodes}))
        else:
            plan = fold(step, max_nodes=max_nodes)


def _boxes_unchanged(plan: Folded, step: Step, filled: Iterable[str]) -> bool:
    """Folding ``step`` again would draw the same boxes: nothing was cut or collapsed to fit, and every
    tensor that the filled-in nodes saved is drawn already (or is not in the step)."""
    if plan.hidden or plan.collapse is not None:
        return False
    drawn, members = plan.step.tensors, step.tensors
    return all(s.tensor is None or s.tensor in drawn or s.tensor not in members
               for nid in filled for s in step.nodes[nid].saved)


class Page(str):
    """An HTML document (a ``str``) that shows itself in notebooks."""

    # IPython calls this with include= and exclude= by keyword, so their names stay though unused
    def _repr_mimebundle_(self, include: Collection[str] | None = None,  # noqa: ARG002
                          exclude: Collection[str] | None = None) -> dict[str, str]:  # noqa: ARG002
        return {"text/plain": f"<gradtrace HTML page, {len(self)} characters>", "text/html": str(self)}

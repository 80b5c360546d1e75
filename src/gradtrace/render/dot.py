"""DOT source for one step: names panel, tensor objects, backward nodes, arrows.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

The picture (left to right, as the forward pass ran)::

    names        tensor objects and backward nodes
    [ x ] ───▶ [t1 leaf v0 | data 42. | grad 5376.] ◀┄┄ (n2 AccumulateGrad) ◀── (n1 PowBackward0) ◀── [t2 ...]

Arrows point the way autograd walks: a tensor's ``grad_fn`` arrow goes to its
backward node, a node's arrows go to the nodes of its inputs (``next_functions``),
``AccumulateGrad`` has a dashed arrow to its leaf, and a dotted arrow from a node
to each tensor it saved. A Python name is a box in the names panel with an arrow
to the object it names: rebinding moves that arrow, mutating changes the object.

Colour legend (fills):

==============  =========  =====================================================
leaf            blue       requires grad, made by the user; ``.grad`` lands here
non-leaf        grey       made by an op; has a ``grad_fn``; no ``.grad`` kept
retained        yellow     non-leaf with ``retain_grad()``: keeps its ``.grad``
output          green      a root: no other node of the graph leads to it
const           white      does not require grad
backward node   orange     an entry of the ``grad_fn`` chain (rounded)
AccumulateGrad  lavender   writes the gradient into its leaf's ``.grad``
==============  =========  =====================================================

Borders and rows mark what the step did: blue border = created now, orange thick
border = changed in place, red row/arrow = saved value stale (the next
``backward()`` through it fails), grey row = saved value freed by ``backward()``,
green grad row = ``.grad`` changed now; a dashed tensor border means no Python
name refers to the object any more (only the graph holds it).

Output is deterministic: boxes and edges come in the model's id order, nothing
from ``id()`` or sets. Every learner-provided text goes through :func:`html`
(HTML-like labels) or :func:`quote` (quoted ids) so it can never end a label,
a string or a statement.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Step
from .scene import LIMIT, Box, Link, Scene, scene
from .words import clean

__all__ = ["step_dot", "graph_dot", "scene_dot", "html", "quote", "FILL", "MARK", "LEGEND", "legend_table"]

FONT = "Courier"
FILL = {
    "leaf": "#cfe2ff",
    "nonleaf": "#f1f3f5",
    "retained": "#fff3bf",
    "root": "#d3f9d8",
    "const": "#ffffff",
    "op": "#ffe8cc",
    "acc": "#e5dbff",
    "name": "#ffffff",
}
BORDER = "#495057"
#: Border colour and width for each mark, strongest first.
MARK = {
    "culprit": ("#c2255c", 4),
    "stale": ("#c92a2a", 3),
    "mutated": ("#e8590c", 3),
    "created": ("#1971c2", 2),
    "moved": ("#1971c2", 2),
    "grad": ("#2f9e44", 2),
    "freed": ("#868e96", 1),
}
ROW_COLOR = {"freed": "#adb5bd", "stale": "#c92a2a", "grad": "#2b8a3e"}
LEGEND = (
    ("leaf", "leaf tensor"),
    ("nonleaf", "non-leaf tensor"),
    ("retained", "retain_grad()"),
    ("root", "output (root)"),
    ("const", "no grad"),
    ("op", "backward node"),
    ("acc", "AccumulateGrad"),
)
_EDGE: dict[str, dict[str, str]] = {
    "name": {"color": '"#343a40"', "penwidth": "1.2", "arrowsize": "0.7"},
    "grad_fn": {"dir": "back", "color": '"#495057"', "arrowsize": "0.7"},
    "next": {"dir": "back", "color": '"#868e96"', "arrowsize": "0.7"},
    "variable": {"dir": "back", "style": "dashed", "color": '"#7048e8"', "arrowsize": "0.7"},
    "saved": {
        "dir": "back",
        "style": "dotted",
        "color": '"#adb5bd"',
        "arrowsize": "0.6",
        "constraint": "false",
    },
}
_EDGE_MARK: dict[str, dict[str, str]] = {
    "stale": {"color": '"#c92a2a"', "penwidth": "2", "style": "dashed"},
    "freed": {"color": '"#dee2e6"'},
    "moved": {"color": '"#1971c2"', "penwidth": "2"},
    "mutated": {"color": '"#e8590c"', "penwidth": "2"},
}


def html(text: object, limit: int | None = None) -> str:
    """Text made safe inside a DOT HTML-like label: one line, ``& < > "`` escaped."""
    s = clean(text, limit)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def quote(text: object) -> str:
    """A DOT double-quoted string: one line, backslashes and quotes escaped."""
    return '"' + clean(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _border(marks: Iterable[str]) -> tuple[str, int]:
    present = set(marks)
    for mark, style in MARK.items():
        if mark in present:
            return style
    return BORDER, 1


def _row(text: str, cls: str, bold: bool) -> str:
    body = html(text)
    if bold:
        body = f"<B>{body}</B>"
    colour = ROW_COLOR.get(cls)
    if colour:
        body = f'<FONT COLOR="{colour}">{body}</FONT>'
    return f'<TR><TD ALIGN="LEFT" BALIGN="LEFT">{body}</TD></TR>'


def box_label(box: Box, texts: Iterable[tuple[str, str]] | None = None) -> str:
    """The HTML-like label of ``box`` (``texts`` replaces its rows' text and class)."""
    rows = [(r.text, r.cls) for r in box.rows] if texts is None else list(texts)
    colour, width = _border(box.marks)
    style = ' STYLE="ROUNDED"' if box.group in ("node", "acc", "name") else ""
    dashed = ' STYLE="DASHED"' if "unnamed" in box.marks and box.group == "tensor" else ""
    table = (
        f'<TABLE BORDER="{width}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" '
        f'BGCOLOR="{FILL[box.kind]}" COLOR="{colour}"{style or dashed}>'
    )
    body = "".join(_row(t, c, c == "head") for t, c in rows)
    return f"<{table}{body}</TABLE>>"


def box_classes(box: Box) -> str:
    return " ".join(["gt-box", f"gt-{box.group}", f"gt-k-{box.kind}"] + [f"gt-m-{m}" for m in box.marks])


def box_dot(box: Box, prefix: str = "gt-") -> str:
    attrs = f"id={quote(prefix + box.key)} class={quote(box_classes(box))} label={box_label(box)}"
    return f"  {quote(box.key)} [{attrs}];"


def link_dot(link: Link, prefix: str = "gt-") -> str:
    """An edge, written so that ranks follow the forward pass (inputs left, outputs right)."""
    forward = link.kind == "name"
    tail, head = (link.tail, link.head) if forward else (link.head, link.tail)
    attrs = dict(_EDGE[link.kind])
    for mark in link.marks:
        if mark in _EDGE_MARK:
            attrs.update(_EDGE_MARK[mark])
            break
    style = " ".join(f"{k}={v}" for k, v in attrs.items())
    classes = " ".join([f"gt-edge gt-e-{link.kind}"] + [f"gt-m-{m}" for m in link.marks])
    ident = quote(prefix + "e-" + link.key)
    return f"  {quote(tail)} -> {quote(head)} [id={ident} class={quote(classes)} {style}];"


def _chip(fill: str, border: str, text: str) -> str:
    chip = f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="1" WIDTH="12"> </TD>'
    return chip + f'<TD ALIGN="LEFT">{html(text)}</TD>'


def legend_table() -> str:
    """The colour legend as one row of chips (an HTML-like table, for a graph label)."""
    chips = [_chip(FILL[k], BORDER, t) for k, t in LEGEND]
    chips += [_chip("#ffffff", MARK[m][0], t) for m, t in (("created", "new"), ("mutated", "changed in place"))]
    chips.append(f'<TD><FONT COLOR="{ROW_COLOR["stale"]}">red: stale</FONT></TD>')
    return f'<TABLE BORDER="0" CELLSPACING="3" CELLPADDING="1"><TR>{"".join(chips)}</TR></TABLE>'


def _graph_label(title: str | None, legend: bool) -> str | None:
    rows = []
    if title:
        rows.append(f'<TR><TD ALIGN="LEFT"><B>{html(title, 100)}</B></TD></TR>')
    if legend:
        rows.append(f'<TR><TD ALIGN="LEFT">{legend_table()}</TD></TR>')
    if not rows:
        return None
    return f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="2">{"".join(rows)}</TABLE>'


def _header(rankdir: str, label: str | None, bg: str) -> list[str]:
    lines = [
        "digraph gradtrace {",
        f'  graph [rankdir={rankdir} fontname="{FONT}" fontsize=12 nodesep=0.25 ranksep=0.45',
        f'         bgcolor="{bg}"];',
        f'  node [shape=plain fontname="{FONT}" fontsize=12 margin=0];',
        f'  edge [fontname="{FONT}" fontsize=10];',
    ]
    if label:
        lines.append(f"  labelloc=t; labeljust=l; label=<{label}>;")
    return lines


def _names_first(sc: Scene, first: str) -> list[str]:
    """Invisible edges that keep the names panel left of every object (clusters ignore rank=min)."""
    fed = {link.tail for link in sc.links if link.kind not in ("name", "saved")}
    sources = [b.key for b in sc.boxes if b.group != "name" and b.key not in fed]
    return [f"  {quote(first)} -> {quote(key)} [style=invis];" for key in sources]


def scene_dot(
    sc: Scene,
    *,
    rankdir: str = "LR",
    title: str | None = None,
    legend: bool = False,
    bg: str = "white",
    boxes: Iterable[str] | None = None,
) -> str:
    """DOT for a scene; ``boxes`` replaces each box statement (the film passes its own)."""
    lines = _header(rankdir, _graph_label(title, legend), bg)
    name_boxes = [b for b in sc.boxes if b.group == "name"]
    if name_boxes:
        lines.append('  subgraph cluster_names { id="gt-names" label="names" style="rounded,dashed" color="#adb5bd";')
        lines += ["  " + box_dot(b) for b in name_boxes]
        lines.append("    rank=same;")
        lines.append("  }")
        lines += _names_first(sc, name_boxes[0].key)
    body = [box_dot(b) for b in sc.boxes if b.group != "name"] if boxes is None else list(boxes)
    lines += body
    lines += [link_dot(link) for link in sc.links]
    lines.append("}")
    return "\n".join(lines) + "\n"


def step_dot(
    step: Step,
    *,
    names: bool = True,
    legend: bool = True,
    title: bool = True,
    show_attrs: bool = True,
    show_saved: bool = True,
    rankdir: str = "LR",
) -> str:
    """The picture of one step as DOT source (deterministic bytes)."""
    sc = scene(step, names=names, show_attrs=show_attrs, show_saved=show_saved)
    head = f"step {step.index}, line {step.lineno}: {step.code}" if title else None
    return scene_dot(sc, rankdir=rankdir, title=head, legend=legend)


def graph_dot(
    step: Step,
    *,
    show_attrs: bool = False,
    show_saved: bool = False,
    max_attr_chars: int = 50,
    rankdir: str = "TB",
) -> str:
    """A compact graph for a ``make_dot``-style call: no names panel, no legend.

    A tensor's names (e.g. parameter names passed to ``snapshot``) are written in
    its box; leaves are at the top and the output at the bottom.
    """
    sc = scene(step, names=False, show_attrs=show_attrs, show_saved=show_saved, limit=max(max_attr_chars, LIMIT))
    return scene_dot(sc, rankdir=rankdir)

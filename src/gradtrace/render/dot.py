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

Marks say what the step did to an object. Each has a border colour, a pen and a
glyph written before the box's head, so none relies on colour alone (:data:`MARKS`):

==========  ======  ========================  =========================================
mark        glyph   border                    meaning
==========  ======  ========================  =========================================
culprit     ✗       magenta, thick, dashed    involved in this step's error
stale       ⚠       red, thick                holds a saved value changed since
mutated     ✎       orange, thick             changed in place (same object, new version)
created             blue, thick               new this step
moved               teal (name box),          the name now refers to another object
                    thick teal arrow
grad        ∇       green                     its ``.grad`` changed this step
freed       ∅       grey, dotted              its saved values were freed by ``backward()``
unnamed             dark grey, dashed         no Python name refers to it (only the graph)
==========  ======  ========================  =========================================

Rows: a freed saved value reads ``∅ self = t1 (freed)`` in grey, a stale one
``⚠ self = t1 42. STALE v0→v1`` in red, a ``.grad`` that is set in green.

Line styles (:data:`LINES`): a name's arrow is solid and dark; a tensor's
``grad_fn`` arrow solid grey; ``next_functions`` arrows solid light grey;
``AccumulateGrad`` → its leaf dashed violet; a saved value dotted grey, dashed
with a hollow circle (○) once freed, thick red with a bar (⊣) once stale; a
moved name's arrow thick teal; a mutated tensor's ``grad_fn`` arrow thick orange.

Every colour that carries text passes WCAG AA (4.5:1) on every fill, and every
border and line colour 3:1 on white (``tests/test_render_dot.py`` checks it); a
legend's sample of a line or mark is written in a shade of its colour dark
enough to read as text (:func:`legible`; ``tests/test_render_contrast.py`` reads
every text of the SVG against the fill under it).

Output is deterministic: boxes and edges come in the model's id order, nothing
from ``id()`` or sets. Every learner-provided text goes through :func:`html`
(HTML-like labels) or :func:`quote` (quoted ids) so it can never end a label,
a string or a statement.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model import Step
from .scene import GLYPH, LIMIT, Box, Link, Scene, scene
from .words import clean, fit

__all__ = [
    "step_dot", "graph_dot", "scene_dot", "html", "quote", "FILL", "MARK", "MARKS", "LINES", "LEGEND", "legend_table",
    "contrast", "legible",
]

FONT = "Courier"
FILL = {
    "leaf": "#cfe2ff",
    "nonleaf": "#f1f3f5",
    "retained": "#fff3bf",
    "forbidden": "#ffe3e3",
    "root": "#d3f9d8",
    "const": "#ffffff",
    "op": "#ffe8cc",
    "acc": "#e5dbff",
    "name": "#ffffff",
}
BORDER = "#495057"


@dataclass(frozen=True)
class MarkStyle:
    """How a mark is drawn: ``color`` on light, ``dark`` on dark backgrounds, border ``width`` and ``pen``."""

    label: str
    color: str
    dark: str
    width: int
    pen: str  # "solid", "dashed" or "dotted"
    glyph: str

    @property
    def sample(self) -> str:
        """How the legend shows it: its glyph, else its pen (a thick, dashed or dotted stroke)."""
        return self.glyph or {"dashed": "╌╌", "dotted": "┈┈"}.get(self.pen, "━━")


#: Every mark a box can carry, strongest first (the border shows the strongest; glyphs show all).
MARKS = {
    "culprit": MarkStyle("involved in this step's error", "#c2255c", "#f783ac", 4, "dashed", GLYPH["culprit"]),
    "stale": MarkStyle("holds a stale saved value", "#b02525", "#ff8787", 3, "solid", GLYPH["stale"]),
    "mutated": MarkStyle("changed in place (same object, new version)", "#d9480f", "#ffa94d", 3, "solid",
                         GLYPH["mutated"]),
    "created": MarkStyle("new this step", "#1971c2", "#74c0fc", 3, "solid", ""),
    "moved": MarkStyle("name (re)bound: its arrow moved", "#0b7285", "#66d9e8", 2, "solid", ""),
    "grad": MarkStyle(".grad changed", "#237032", "#8ce99a", 2, "solid", GLYPH["grad"]),
    "freed": MarkStyle("saved values freed by backward()", "#6c757d", "#ced4da", 1, "dotted", GLYPH["freed"]),
    "unnamed": MarkStyle("no name refers to it (only the graph)", BORDER, "#ced4da", 1, "dashed", ""),
}
#: Border colour and width for each mark, strongest first (``MARKS`` in short).
MARK = {m: (style.color, style.width) for m, style in MARKS.items() if m != "unnamed"}
#: Text colour of a row by its class (each passes 4.5:1 on every fill).
ROW_COLOR = {"freed": "#5c636a", "stale": "#b02525", "grad": "#237032"}
LEGEND = (
    ("leaf", "leaf tensor"),
    ("nonleaf", "non-leaf tensor"),
    ("retained", "retain_grad()"),
    ("root", "output (root)"),
    ("const", "no grad"),
    ("op", "backward node"),
    ("acc", "AccumulateGrad"),
    ("forbidden", "autograd forbids it"),
)
#: Fills the legend lists only when a box has them (rare: a view PyTorch forbids in autograd).
RARE = frozenset({"forbidden"})


@dataclass(frozen=True)
class LineStyle:
    """How an arrow is drawn; ``sample`` is the arrow in text, for legends."""

    label: str
    color: str
    dark: str
    pen: str  # "solid", "dashed", "dotted" or "bold"
    end: str  # the arrow's end at the object it points to: "normal", "odot", "tee"
    sample: str


#: Every line style, keyed by ``<kind>`` or ``<kind>-<mark>`` (the classes ``gt-e-<kind> gt-m-<mark>``).
LINES = {
    "name": LineStyle("a name refers to an object", "#343a40", "#dee2e6", "solid", "normal", "──▶"),
    "grad_fn": LineStyle("a tensor's grad_fn", "#495057", "#ced4da", "solid", "normal", "──▶"),
    "next": LineStyle("a node's next_functions (inputs)", "#6c757d", "#adb5bd", "solid", "normal", "──▶"),
    "variable": LineStyle("AccumulateGrad writes its leaf's .grad", "#7048e8", "#b197fc", "dashed", "normal",
                          "╌╌▶"),
    "saved": LineStyle("a value a node saved for backward()", "#5c636a", "#adb5bd", "dotted", "normal", "┈┈▶"),
    "saved-freed": LineStyle("saved value freed by backward()", "#868e96", "#868e96", "dashed", "odot", "╌╌○"),
    "saved-stale": LineStyle("saved value stale (changed in place)", "#b02525", "#ff8787", "bold", "tee", "━━┤"),
    "name-moved": LineStyle("name (re)bound this step", "#0b7285", "#66d9e8", "bold", "normal", "━━▶"),
    "grad_fn-mutated": LineStyle("grad_fn swapped by an in-place change", "#d9480f", "#ffa94d", "bold", "normal",
                                 "━━▶"),
}


def _line_attrs(style: LineStyle) -> dict[str, str]:
    attrs = {"color": f'"{style.color}"'}
    if style.pen == "bold":
        attrs.update(penwidth="2.5", style="solid")
    else:
        attrs["style"] = style.pen
    return attrs


_EDGE: dict[str, dict[str, str]] = {
    "name": {**_line_attrs(LINES["name"]), "penwidth": "1.2", "arrowsize": "0.7"},
    "grad_fn": {"dir": "back", **_line_attrs(LINES["grad_fn"]), "arrowsize": "0.7"},
    "next": {"dir": "back", **_line_attrs(LINES["next"]), "arrowsize": "0.7"},
    "variable": {"dir": "back", **_line_attrs(LINES["variable"]), "arrowsize": "0.7"},
    "saved": {"dir": "back", **_line_attrs(LINES["saved"]), "arrowsize": "0.6", "constraint": "false"},
}
_EDGE_MARK: dict[str, dict[str, dict[str, str]]] = {
    "saved": {
        "stale": {**_line_attrs(LINES["saved-stale"]), "arrowtail": "tee", "arrowsize": "0.9"},
        "freed": {**_line_attrs(LINES["saved-freed"]), "arrowtail": "odot", "arrowsize": "0.8", "penwidth": "1.3"},
    },
    "name": {"moved": _line_attrs(LINES["name-moved"])},
    "grad_fn": {"mutated": _line_attrs(LINES["grad_fn-mutated"])},
}


def html(text: object, limit: int | None = None) -> str:
    """Text made safe inside a DOT HTML-like label: one line, ``& < > "`` escaped."""
    s = clean(text, limit)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def quote(text: object) -> str:
    """A DOT double-quoted string: one line, backslashes and quotes escaped."""
    return '"' + clean(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _border(marks: Iterable[str]) -> MarkStyle | None:
    present = set(marks)
    for mark, style in MARKS.items():
        if mark in present:
            return style
    return None


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""

    def luminance(colour: str) -> float:
        def channel(c: float) -> float:
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def legible(colour: str, on: str = "#ffffff") -> str:
    """``colour``, or the nearest darker shade of it that reads at 4.5:1 on ``on`` (a legend's sample is text)."""
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    shade = colour
    while contrast(shade, on) < 4.5 and any(rgb):
        rgb = [max(0, round(c * 0.95) - 1) for c in rgb]
        shade = "#" + "".join(f"{c:02x}" for c in rgb)
    return shade


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
    mark = _border(box.marks)
    colour, width = (BORDER, 1) if mark is None else (mark.color, mark.width)
    pen = "solid" if mark is None else mark.pen
    if pen == "solid" and "unnamed" in box.marks:  # an object no name holds keeps its dashed border
        pen = "dashed"
    styles = ["ROUNDED"] if box.group in ("node", "acc", "name") and pen == "solid" else []
    if pen != "solid":
        styles.append(pen.upper())  # dot draws a dashed or dotted border square
    style = f' STYLE="{",".join(styles)}"' if styles else ""
    table = (
        f'<TABLE BORDER="{width}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" '
        f'BGCOLOR="{FILL[box.kind]}" COLOR="{colour}"{style}>'
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
        if mark in _EDGE_MARK.get(link.kind, {}):
            attrs.update(_EDGE_MARK[link.kind][mark])
            break
    style = " ".join(f"{k}={v}" for k, v in attrs.items())
    classes = " ".join([f"gt-edge gt-e-{link.kind}"] + [f"gt-m-{m}" for m in link.marks])
    ident = quote(prefix + "e-" + link.key)
    return f"  {quote(tail)} -> {quote(head)} [id={ident} class={quote(classes)} {style}];"


def _chip(fill: str, border: str, text: str) -> str:
    chip = f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="1" WIDTH="12"> </TD>'
    return chip + f'<TD ALIGN="LEFT">{html(text)}</TD>'


def _sample(colour: str, sample: str, text: str) -> str:
    """A legend entry written as text: the sample (glyph or line) in its colour, then what it means."""
    return f'<FONT COLOR="{legible(colour)}"><B>{html(sample)}</B></FONT> {html(text)}'


def _legend_line(entries: list[str]) -> str:
    return f'<TR><TD ALIGN="LEFT">{"   ".join(entries)}</TD></TR>'


def _used(sc: Scene) -> tuple[set[str], set[str]]:
    """The marks on the boxes of ``sc``, and the line styles (``kind``, ``kind-mark``) of its arrows."""
    marks = {m for b in sc.boxes for m in b.marks}
    lines = set()
    for link in sc.links:
        styled = [f"{link.kind}-{m}" for m in link.marks if f"{link.kind}-{m}" in LINES]
        lines.add(styled[0] if styled else link.kind)
    return marks, lines


def legend_table(sc: Scene | None = None) -> str:
    """The legend as an HTML-like table for a graph label: fills, then marks (by their glyphs) and
    line styles, only those ``sc`` uses when a scene is given (all of them otherwise)."""
    kinds = {b.kind for b in sc.boxes} if sc is not None else set()
    chips = "".join(_chip(FILL[k], BORDER, t) for k, t in LEGEND if k not in RARE or k in kinds)
    body = f'<TR><TD ALIGN="LEFT"><TABLE BORDER="0" CELLSPACING="3" CELLPADDING="1"><TR>{chips}</TR></TABLE></TD></TR>'
    marks, kinds = _used(sc) if sc is not None else (set(MARKS), set(LINES))
    shown = [(k, m) for k, m in MARKS.items() if k in marks]
    for i in range(0, len(shown), 4):
        body += _legend_line([_sample(m.color, m.sample, m.label) for _, m in shown[i : i + 4]])
    used = [s for k, s in LINES.items() if k in kinds]
    for i in range(0, len(used), 3):
        body += _legend_line([_sample(s.color, s.sample, s.label) for s in used[i : i + 3]])
    return f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">{body}</TABLE>'


def _graph_label(title: str | None, legend: bool, sc: Scene | None = None) -> str | None:
    rows = []
    if title:
        rows.append(f'<TR><TD ALIGN="LEFT"><B>{html(fit(title, 100))}</B></TD></TR>')
    if legend:
        rows.append(f'<TR><TD ALIGN="LEFT">{legend_table(sc)}</TD></TR>')
    if not rows:
        return None
    return f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="2">{"".join(rows)}</TABLE>'


def _header(rankdir: str, label: str | None, bg: str) -> list[str]:
    lines = [
        "digraph gradtrace {",
        f'  graph [rankdir={rankdir} fontname="{FONT}" fontsize=12 nodesep=0.25 ranksep=0.3',
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
    lines = _header(rankdir, _graph_label(title, legend, sc), bg)
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
    show_attrs: bool = False,
    show_saved: bool = True,
    rankdir: str = "LR",
) -> str:
    """The picture of one step as DOT source (deterministic bytes).

    ``show_attrs`` adds each node's attributes (``exponent=2``, PyTorch's internal
    ``mat2_sym_sizes`` and the like) to its box; they are always in the details.
    """
    sc = scene(step, names=names, show_attrs=show_attrs, show_saved=show_saved)
    head = f"step {step.number}, line {step.lineno}: {step.code}" if title else None
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

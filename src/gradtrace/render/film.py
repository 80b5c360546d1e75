"""A whole trace as a "film": one laid-out SVG plus, per step, what to show in it.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

This module assembles a film and says its format; the work is done by
:mod:`.layout` (scenes and the sheets they share), :mod:`.details` (each step's
sentences and each object's details) and :mod:`.views` (a folded film's
unfolded views). :func:`trace_html` puts a trace's film in a one-file page
(:mod:`.html`), and :class:`~gradtrace.render.html.Film` shows it in a notebook.

Every name, tensor object, backward node and arrow that appears at any step is
laid out **once**, in one SVG, so an object keeps its place for the whole trace
(as in Python Tutor) and a 600-step trace costs one layout. Each step is shown by
revealing, highlighting and fading elements and swapping the text of their rows.
Each box's rows are laid out with the longest text that row ever shows.

Format (plain JSON-able data; ``schema`` ``"gradtrace.film"``, ``version`` 2)::

    {
      "schema": "gradtrace.film", "version": 2,
      "title": str,                 # never a temporary file's path ("your code" for a cell)
      "filename": str, "source": str,
      "svg": str,                   # one <svg>; every element group has an id:
                                    #   "gt-t1" tensor, "gt-n1" node, "gt-name1" name,
                                    #   "gt-e-<kind>-<tail>-<head>" arrow, "gt-names" names panel
      "sheets": [str, ...],         # the <svg> of each layout (a long loop is laid out by place)
      "elements": {dom id: {"group": "tensor"|"node"|"acc"|"name"|"edge", "label": str}},
      "rows": [[[text, row class], ...], ...],   # distinct box contents, stored once
      "frames": [                   # distinct pictures, stored once
        {"visible": [dom id, ...],  # everything else is hidden
         "classes": {dom id: "gt-box gt-tensor gt-k-leaf gt-m-created"},
         "texts": {dom id: index into "rows"}}
      ],
      "details": [{...}, ...],      # distinct object details, stored once (node attributes live here)
      "views": [                    # a folded film's pictures with one folded box opened, stored once
        {"sheet": int,              #   in "sheets" (after the steps' own sheets)
         "frame": int,              #   in "frames"
         "label": str,              #   what was unfolded: "model.layer1.0 (6 nodes, 73,984 params)"
         "details": {dom id: index into "details"},
         "unfold": {dom id: index into "views"}}   # only when groups folded inside it open deeper
      ],
      "steps": [
        {"index": int, "lineno": int, "code": str, "sheet": int, "frame": index into "frames",
         "events": [sentence, ...],       # what the step did (an error is not repeated here)
         "prediction": sentence or null,  # the one backward() failure to expect, only when the
                                          #   next backward() goes through a stale saved value
         "predictions": [sentence],       # the same, as a list of at most one (version 1 readers)
         "explanation": str or null,      # the error of this step in plain words (what happened,
                                          #   why, where it was changed, how to fix it, and last
                                          #   PyTorch's own message), or null
         "culprits": [dom id, ...],       # the objects that explanation names (drawn gt-m-culprit)
         "reverse": [line, ...],          # a backward() step's reverse pass in numbers
         "flow": [                        # the same reverse pass node by node, in engine order
           {"node": dom id,               #   the node the engine ran ("gt-n3")
            "text": str,                  #   its lines of "reverse", e.g.
                                          #   "n3 PowBackward0: gets 1\nsends to n2: 1 · (3 · 42²) = 5292"
            "edges": {edge dom id: str},  #   the gradient sent along each arrow ("5292")
            "grads": {tensor dom id: str}}  # the .grad it filled in ("5376")
         ],
         "details": {dom id: index into "details"},
         "unfold": {dom id: index into "views"}}  # the folded boxes (gt-m-folded) that open at this step
      ],
      "backward": [{"step": i, "before": j,       # positions in "steps": a backward() and the step before it
                    "diff": {"freed": [dom id, ...],        # nodes (and saved-value arrows) it freed
                             "grad": {dom id: "old → new"},  # each .grad it changed
                             "kept": [dom id, ...]}}],      # non-leaf tensors whose .grad retain_grad() kept
      "legend": [{"class": "gt-k-leaf", "label": "leaf tensor", "fill": "#cfe2ff"}, ...],
      "marks": [{"class": "gt-m-stale", "label": ..., "color": light, "dark": dark, "glyph": "⚠" or "",
                 "pen": "solid"|"dashed"|"dotted"}, ...],   # "created" has no glyph: a thick border
      "lines": [{"class": "gt-e-saved gt-m-freed", "label": ..., "color": ..., "dark": ...,
                 "pen": "solid"|"dashed"|"dotted"|"bold", "end": "normal"|"odot"|"tee", "sample": "╌╌○"}, ...],
      "error": sentence or null, "error_step": position in "steps" of the step that raised, or null,
      "steps_unrecorded": int
    }

A folded film draws modules and repeated runs as single boxes; each of them
opens at a step where ``unfold`` maps it to a view: that step's picture with
the box unfolded (the rest folded as before, at most :data:`~gradtrace.render.layout.FILM_MAX_NODES`
boxes), laid out ahead of time so the page steps with no kernel. A view opens
the groups folded inside its unfolded one the same way (its own ``unfold``),
at most :data:`~gradtrace.render.views.MAX_DEPTH` levels deep. Views whose sheets would make the page
more than about 1.5 times its folded size are left out (see :data:`~gradtrace.render.views.VIEW_BYTES`);
:func:`~gradtrace.render.views.unfolded_view` lays one out on demand (a widget asks its kernel).

Version 2 added ``prediction``, ``explanation``, ``culprits``, ``flow``,
``backward[].diff``, ``lines``, ``error_step`` and the marks' ``dark``, ``glyph``
and ``pen``; an error is no longer one of its step's ``events`` (it is
``error``, shown once, with ``explanation`` under it); ``predictions`` holds at
most the one relevant prediction.

Row classes are ``head``, ``freed``, ``stale``, ``grad`` or empty; box classes are
``gt-box``, ``gt-<group>``, ``gt-k-<kind>`` and one ``gt-m-<mark>`` per mark
(``culprit``, ``created``, ``mutated``, ``stale``, ``freed``, ``grad``, ``moved``,
``unnamed``); each mark's glyph is also written before the box's head row.
A detail is ``{"type": "tensor"|"node"|"name", "id", "title", "fields": [[label, text], ...]}``
with every learner-provided string as plain text (the front end shows it with
``textContent``, never as markup).
"""

from __future__ import annotations

from typing import Any

from .._gc import paused_gc
from ..model import Trace
from .details import backward_entries, next_backward, step_entry
from .dot import FILL, LEGEND, LINES, MARKS
from .graph import Page
from .html import Film, film_html
from .layout import FILM_MAX_NODES, FilmMemo, film_dot, film_scenes, lay_out
from .views import ahead_views, unfolded_view
from .words import clean, shown_filename

__all__ = ["FILM_MAX_NODES", "Film", "film", "film_scenes", "film_dot", "trace_html", "unfolded_view", "SCHEMA"]

SCHEMA = "gradtrace.film"
VERSION = 2


def film(trace: Trace, *, title: str | None = None, show_attrs: bool = False, view_bytes: int | None = None) -> Film:
    """The film of ``trace`` (see the module docstring for the format). Lays out once (or once a sheet).

    Node attributes are in each node's details; ``show_attrs`` also draws them in the boxes.
    ``view_bytes`` caps the SVG bytes of the unfolded views of a folded film laid out ahead of
    time (default: :data:`~gradtrace.render.views.VIEW_BYTES` or half the film's own sheets, whichever is more; ``0``
    lays out none, and a widget's kernel lays each out when it is clicked).
    """
    with paused_gc():  # many small acyclic records: the cyclic collector would only rescan the trace
        return _film(trace, title, show_attrs, view_bytes)


def _film(trace: Trace, title: str | None, show_attrs: bool, view_bytes: int | None = None) -> Film:
    memo = FilmMemo()
    laid = lay_out(trace, show_attrs, memo)
    sheets, elements, back = laid.sheets, laid.elements, laid.back
    upcoming = next_backward(trace)
    steps = [
        step_entry(trace, step, sc, sheet, own, ahead, memo)
        for step, sc, sheet, own, ahead in zip(trace.steps, laid.drawn, laid.sheet_of, back, upcoming, strict=True)
    ]
    views: list[dict[str, Any]] = []
    if laid.plans is not None:  # a folded film: each block of each step also opens
        views, unfolds, more, shown = ahead_views(trace, laid.plans, back, show_attrs, memo, len(sheets), view_bytes)
        sheets, elements = sheets + more, {**elements, **shown}
        for entry, opens in zip(steps, unfolds, strict=True):
            entry["unfold"] = opens
    else:
        for entry in steps:
            entry["unfold"] = {}
    error, error_step = None, None
    if trace.error is not None:
        e = trace.error
        where = f" at line {e.lineno}" if e.lineno is not None else ""
        error = f"{clean(e.type)}{where}: {clean(e.message)}"
        error_step = next((i for i, s in enumerate(trace.steps) if s.events_of("error")), None)
    rows, frames, details = memo.rows, memo.frames, memo.details
    return Film(
        {
            "schema": SCHEMA,
            "version": VERSION,
            "title": title if title is not None else shown_filename(trace.filename),
            "filename": trace.filename,
            "source": trace.source,
            "svg": sheets[0],
            "sheets": sheets,
            "elements": elements,
            "rows": rows.rows,
            "frames": frames.rows,
            "details": details.rows,
            "views": views,
            "steps": steps,
            "backward": backward_entries(trace, back, steps, frames.rows),
            "legend": [{"class": f"gt-k-{k}", "label": label, "fill": FILL[k]} for k, label in LEGEND],
            "marks": [
                {"class": f"gt-m-{m}", "label": st.label, "color": st.color, "dark": st.dark, "glyph": st.glyph,
                 "pen": st.pen}
                for m, st in MARKS.items()
            ],
            "lines": [
                {"class": _line_class(key), "label": st.label, "color": st.color, "dark": st.dark, "pen": st.pen,
                 "end": st.end, "sample": st.sample}
                for key, st in LINES.items()
            ],
            "error": error,
            "error_step": error_step,
            "steps_unrecorded": trace.steps_unrecorded,
        }
    )


def _line_class(key: str) -> str:
    kind, _, mark = key.partition("-")
    return f"gt-e-{kind}" + (f" gt-m-{mark}" if mark else "")


def trace_html(trace: Trace, *, title: str | None = None) -> Page:
    """Every step of ``trace`` in one self-contained HTML page (slider, buttons, arrow keys)."""
    return film_html(film(trace, title=title), title=None if title is None else title)

"""Readable encodings: names on boxes, marks that do not rely on colour, errors once, one prediction."""

from __future__ import annotations

import json
import os
import tempfile
import xml.etree.ElementTree as ET

import pytest

import gradtrace
from gradtrace.model import Step
from gradtrace.render.dot import FILL, LINES, MARKS, ROW_COLOR, contrast, legend_table, step_dot
from gradtrace.render.film import film
from gradtrace.render.scene import GLYPH, LIMIT, scene
from gradtrace.render.svg import dot_to_svg
from gradtrace.render.words import fit

from programs import FORUM_ORIGINAL, INPLACE_STALE, WHATIF1, run_plain

SVG = "{http://www.w3.org/2000/svg}"
LIGHT, DARK = "#ffffff", "#111111"


def texts(dot: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(dot_to_svg(dot)).iter(f"{SVG}text")]


def head(step: Step, key: str) -> str:
    box = next(b for b in scene(step).boxes if b.key == key)
    return box.rows[0].text


# ------------------------------------------------------------------ names first


def test_tensor_boxes_are_headed_by_their_names_then_their_id():
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {})
    step = trace.steps[-1]
    for name in ("x", "x2", "x3", "f"):
        tid = step.bindings[name]
        assert f"{name} · {tid} " in head(step, tid)
        assert any(t.strip().startswith(f"{name} · {tid} ") for t in str(step).splitlines())
    shown = texts(step_dot(step))
    assert any(f"x · {step.bindings['x']} leaf" in t for t in shown)


# ------------------------------------------------------------------ marks


def test_new_and_rebound_are_told_apart_without_colour():
    trace = gradtrace.trace_code(WHATIF1, {})
    i = next(k for k, s in enumerate(trace.steps) if s.events_of("rebind"))
    step = trace.steps[i]
    new = step.bindings["x"]
    sc = scene(step)
    box = next(b for b in sc.boxes if b.key == new)
    name_box = next(b for b in sc.boxes if b.group == "name" and b.label == "x")
    assert "created" in box.marks and "moved" in name_box.marks
    created, moved = MARKS["created"], MARKS["moved"]
    assert created.color != moved.color
    # a new object has a thick border; a rebound name a thick arrow to its new object
    assert created.width > 1
    dot = step_dot(step)
    arrow = next(line for line in dot.splitlines() if f"gt-e-name-{name_box.key}-{new}" in line)
    assert "penwidth=2.5" in arrow and "gt-m-moved" in arrow
    table = next(line for line in dot.splitlines() if f'id="gt-{new}"' in line)
    assert f'BORDER="{created.width}"' in table and f'COLOR="{created.color}"' in table


def test_every_mark_has_a_glyph_or_a_pen_and_a_legend_entry():
    glyphs = [m.glyph for m in MARKS.values() if m.glyph]
    assert len(glyphs) == len(set(glyphs))
    for name, mark in MARKS.items():
        assert mark.glyph or mark.pen != "solid" or mark.width > 2 or name == "moved", name
    f = film(gradtrace.trace_code(FORUM_ORIGINAL, {}))
    assert {m["class"] for m in f["marks"]} == {f"gt-m-{m}" for m in MARKS}
    assert all(m["label"] for m in f["marks"])
    classes = {line["class"] for line in f["lines"]}
    assert {"gt-e-name", "gt-e-grad_fn", "gt-e-next", "gt-e-variable", "gt-e-saved"} <= classes
    assert "gt-e-saved gt-m-freed" in classes and "gt-e-saved gt-m-stale" in classes
    # the freed and stale arrows differ from a live one by pen and end, not by colour only
    alive, freed, stale = LINES["saved"], LINES["saved-freed"], LINES["saved-stale"]
    assert len({(s.pen, s.end) for s in (alive, freed, stale)}) == 3


def test_static_legend_shows_the_marks_and_line_styles_in_the_picture():
    everything = "\n".join(texts(f"digraph {{ a [shape=plain label=<{legend_table()}>] }}"))
    for style in list(MARKS.values()) + list(LINES.values()):
        assert style.label in everything
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {})
    shown = "\n".join(texts(step_dot(trace.steps[-1])))  # after backward(): .grad set, saved values freed
    for used in (MARKS["grad"], MARKS["freed"], LINES["saved-freed"], LINES["variable"], LINES["name"]):
        assert used.label in shown
    for unused in (MARKS["stale"], MARKS["culprit"], LINES["saved-stale"], LINES["saved"]):
        assert unused.label not in shown


def test_colours_pass_wcag_aa_on_light_and_dark():
    for cls, colour in ROW_COLOR.items():
        for fill in FILL.values():
            assert contrast(colour, fill) >= 4.5, (cls, fill)
    for name, mark in MARKS.items():
        assert contrast(mark.color, LIGHT) >= 3 and contrast(mark.dark, DARK) >= 3, name
    for name, line in LINES.items():
        assert contrast(line.color, LIGHT) >= 3 and contrast(line.dark, DARK) >= 3, name


def test_freed_saved_values_are_visible_greyed_and_marked():
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {})
    dot = step_dot(trace.steps[-1])
    freed_edges = [line for line in dot.splitlines() if "gt-m-freed" in line and "gt-e-saved" in line]
    assert freed_edges and all("arrowtail=odot" in e and "style=dashed" in e for e in freed_edges)
    assert all(f'color="{LINES["saved-freed"].color}"' in e for e in freed_edges)
    shown = texts(dot)
    assert any(t.startswith(GLYPH["freed"] + " ") and t.endswith("(freed)") for t in shown)
    assert not any("42." in t and "(freed)" in t for t in shown)  # a freed value is gone: not shown


# ------------------------------------------------------------------ attributes


MATMUL = "import torch\na = torch.ones(2, 3, requires_grad=True)\nb = torch.ones(3, 2)\nc = a @ b\n"


def test_internal_attributes_are_hidden_unless_asked_for():
    trace = gradtrace.trace_code(MATMUL, {})
    step = trace.steps[-1]
    attrs = [k for n in step.nodes.values() for k, _ in n.attrs]
    assert attrs  # torch records some (mat2_sym_sizes, ...)
    assert not any(a in step_dot(step) for a in attrs)
    assert all(a in step_dot(step, show_attrs=True) for a in attrs)
    f = film(trace)
    assert not any(a in f["svg"] for a in attrs)
    fields = [label for d in f["details"] for label, _ in d["fields"]]
    assert all(f"attr {a}" in fields for a in attrs)
    assert any(a in film(trace, show_attrs=True)["svg"] for a in attrs)


# ------------------------------------------------------------------ text


def test_fit_cuts_between_words():
    line = "reverse pass node by node in the order PyTorch ran them:"
    for limit in range(12, len(line)):
        cut = fit(line, limit)
        assert len(cut) <= limit and cut.endswith("…")
        assert line.startswith(cut[:-1]) and line[len(cut) - 1] in " :"  # the cut is at a word's end
    assert fit("short", 40) == "short"


def test_stale_row_keeps_its_state_whole():
    src = ("import torch\nvery_long_name_for_a = torch.arange(20., requires_grad=True)\n"
           "b = very_long_name_for_a * 2\nc = b ** 2\nb.add_(1)\n")
    trace = gradtrace.trace_code(src, {})
    step = trace.steps[-1]
    (mutate,) = step.events_of("mutate")
    rows = [r.text for b in scene(step).boxes for r in b.rows if r.cls == "stale"]
    assert rows
    for text in rows:
        assert len(text) <= LIMIT
        assert text.endswith(f"STALE v{mutate.version_before}→v{mutate.version_after}")  # type: ignore[union-attr]


def test_temporary_paths_never_reach_titles():
    path = os.path.join(tempfile.gettempdir(), "ipykernel_77", "123456.py")
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {}, filename=path)
    f = film(trace)
    assert tempfile.gettempdir() not in f["title"] and f["title"] == "your code"
    assert tempfile.gettempdir() not in trace.to_text().splitlines()[0]
    named = gradtrace.trace_code(FORUM_ORIGINAL, {}, filename=os.path.join("lessons", "forum.py"))
    assert film(named)["title"] == "forum.py"


# ------------------------------------------------------------------ errors and predictions


def test_the_error_is_shown_once_with_its_explanation_and_culprits():
    _, exc = run_plain(INPLACE_STALE)
    assert exc is not None
    message = str(exc).splitlines()[0]
    trace = gradtrace.trace_code(INPLACE_STALE, {}, raise_errors=False)
    f = film(trace)
    i = f["error_step"]
    assert i == len(trace.steps) - 1
    step = f["steps"][i]
    assert message in f["error"]
    assert not any(message in e for s in f["steps"] for e in s["events"])  # not in the events any more
    assert step["explanation"] and "Fix:" in step["explanation"] and "What happened:" in step["explanation"]
    assert step["explanation"].count(message) == 1  # once, after the plain words
    shown = json.dumps([s["explanation"] for s in f["steps"]] + [s["prediction"] for s in f["steps"]])
    assert shown.count(message.replace('"', '\\"')) == 1
    frame = f["frames"][step["frame"]]
    marked = {k for k, cls in frame["classes"].items() if "gt-m-culprit" in cls}
    assert step["culprits"] and set(step["culprits"]) == marked
    assert all(s["explanation"] is None and s["culprits"] == [] for s in f["steps"][:i])
    assert step["prediction"] is None  # the error itself is shown at that step
    assert trace.to_text().count(message) == 1


TWO_ROOTS = """\
import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = a * 2
c = b * b
d = (a * 3).sum()
b.add_(1)
d.backward()
"""


def test_a_prediction_about_a_backward_that_never_runs_is_not_shown():
    ns, exc = run_plain(TWO_ROOTS)
    assert exc is None and ns["a"].grad is not None  # d.backward() works: c's stale value is not on its path
    trace = gradtrace.trace_code(TWO_ROOTS, {})
    i = next(k for k, s in enumerate(trace.steps) if s.events_of("mutate"))
    assert trace.steps[i].predictions  # the tracer says c's backward() would fail ...
    f = film(trace)
    assert f["steps"][i]["prediction"] is None  # ... but the next backward() is d's: not relevant
    assert f["steps"][i]["predictions"] == []


def test_one_relevant_prediction_per_step():
    trace = gradtrace.trace_code(INPLACE_STALE, {}, raise_errors=False)
    f = film(trace)
    i = next(k for k, s in enumerate(trace.steps) if s.events_of("mutate"))
    shown = f["steps"][i]["prediction"]
    assert shown is not None and shown.startswith("backward() from c will fail")
    assert all(len(s["predictions"]) <= 1 for s in f["steps"])
    assert all(s["prediction"] is None for s in f["steps"][:i])


@pytest.mark.parametrize("program", [FORUM_ORIGINAL, WHATIF1, INPLACE_STALE])
def test_no_box_row_is_cut_mid_word(program):
    trace = gradtrace.trace_code(program, {}, raise_errors=False)
    for step in trace.steps:
        for box in scene(step).boxes:
            for row in box.rows:
                assert len(row.text) <= LIMIT + 5
                assert not row.text.endswith("…") or row.text[-2] != " "


def test_a_folded_picture_hides_attributes_too():
    from gradtrace.render.fold import MAX_NODES
    from gradtrace.render.graph import step_graph

    src = f"import torch\nh = torch.ones(2, 2, requires_grad=True)\nfor _ in range({MAX_NODES}):\n    h = h @ h.t()\n"
    step = gradtrace.trace_code(src, {}).steps[-1]
    attrs = {k for n in step.nodes.values() for k, _ in n.attrs}
    assert attrs and len(step.nodes) > MAX_NODES
    source = step_graph(step).source
    assert "gt-n" in source and not any(f"{a}=" in source for a in attrs)
    assert any(f"{a}=" in step_graph(step, show_attrs=True).source for a in attrs)


def test_a_long_name_never_pushes_out_the_id_kind_or_version():
    src = ("import torch\nthe_first_layer_weights_of_the_model = torch.ones(3, requires_grad=True)\n"
           "another_rather_long_name = the_first_layer_weights_of_the_model\n"
           "with torch.no_grad():\n    the_first_layer_weights_of_the_model.add_(1)\n")
    ns, _ = run_plain(src)
    step = next(s for s in gradtrace.trace_code(src, {}).steps if s.events_of("mutate"))
    tid = step.bindings["the_first_layer_weights_of_the_model"]
    text = head(step, tid)
    version = ns["the_first_layer_weights_of_the_model"]._version
    assert len(text) <= LIMIT and text.endswith(f" · {tid} leaf v{version}"), text
    assert GLYPH["mutated"] in text

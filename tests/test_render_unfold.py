"""Unfolding inside an unfolded group, and unfolded views made on demand (render/film.py, render/fold.py).

The model is the tiny GPT-2-style net of examples/tiny_transformer.py (tests/browser/tiny_models.py):
``model.h.0`` folds to one box and holds ``attn`` and ``mlp``, folded again inside it. Every module
name, parameter count and op name checked comes from PyTorch run plainly here.
"""

from __future__ import annotations

import importlib
import runpy
from pathlib import Path
from typing import Any

import pytest

import gradtrace
from gradtrace.render.svg import dot_binary

TINY = runpy.run_path(str(Path(__file__).parent / "browser" / "tiny_models.py"))
needs_dot = pytest.mark.skipif(dot_binary() is None, reason="no layout binary")


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, dict[str, Any]]:
    ns = TINY["namespace"]()
    trace = gradtrace.trace_code(TINY["PROGRAM"], ns, filename="tiny.py")
    return trace, ns


@pytest.fixture(scope="module")
def tiny_film(tiny: Any) -> dict[str, Any]:
    from gradtrace.render.film import film

    return film(tiny[0])


def heads(film: dict[str, Any], view: dict[str, Any]) -> list[str]:
    """The head row of each box a view draws (``film`` is a film, or a view laid out on demand)."""
    frame = film["frames"][view["frame"]] if "frames" in film else film["frame"]
    return [film["rows"][r][0][0] for r in frame["texts"].values()]


def title(film: dict[str, Any], details: dict[str, int], dom: str) -> str:
    return str(film["details"][details[dom]]["title"])


def params(ns: dict[str, Any], label: str) -> int:
    module = ns["model"].get_submodule(label.split(" ")[0].removeprefix("model."))
    return sum(p.numel() for p in module.parameters())


@needs_dot
def test_a_view_opens_the_groups_folded_inside_it_one_level_deeper(tiny: Any, tiny_film: dict[str, Any]) -> None:
    trace, ns = tiny
    f = tiny_film
    nested = [(v, dom, k) for v in f["views"] for dom, k in (v.get("unfold") or {}).items()]
    assert nested, "no view opens a group folded inside it"
    for outer, dom, k in nested:
        inner = f["views"][k]
        assert "gt-m-folded" in f["frames"][outer["frame"]]["classes"][dom]  # only folded boxes open
        assert inner["label"] == title(f, outer["details"], dom)
        outer_path, inner_path = outer["label"].split(" ")[0], inner["label"].split(" ")[0]
        assert inner_path.startswith(outer_path + ".")  # a group inside the one opened
        assert f"{params(ns, inner['label']):,} params" in inner["label"]
        sheet = f["sheets"][inner["sheet"]]
        assert 'id="gt&#45;unfolded"' in sheet and 'id="gt&#45;unfolded&#45;1"' in sheet  # two frames, nested
        assert f"unfolded: {outer['label']}" in sheet and f"unfolded: {inner['label']}" in sheet
        module = ns["model"].get_submodule(inner_path.removeprefix("model."))
        made = TINY["ops_of"](module, ns)  # on the batch the program feeds it
        shown = {h.split(" ")[-1] for h in heads(f, inner)}
        assert made <= shown, made - shown  # the inner group's own ops, drawn once it is open
        assert inner["label"] in heads(f, outer)  # folded, one box, in the view it opens from


@needs_dot
def test_nested_views_stay_under_the_cap_and_the_page_budget(tiny: Any, tiny_film: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    film_mod = importlib.import_module("gradtrace.render.film")
    views_mod = importlib.import_module("gradtrace.render.views")
    trace, _ = tiny
    f = tiny_film
    own = {s["sheet"] for s in f["steps"]}
    own_bytes = sum(len(f["sheets"][s]) for s in own)
    laid = {v["sheet"] for v in f["views"]}
    assert sum(len(f["sheets"][s]) for s in laid) <= max(views_mod.VIEW_BYTES, own_bytes // 2)
    for v in f["views"]:
        assert len(f["frames"][v["frame"]]["texts"]) <= film_mod.FILM_MAX_NODES + 1  # + the note box
    none = film_mod.film(trace, view_bytes=0)
    assert none["views"] == [] and all(s["unfold"] == {} for s in none["steps"])
    monkeypatch.setattr(views_mod, "MAX_DEPTH", 1)  # one level only: no view opens another
    flat = film_mod.film(trace)
    assert not any("unfold" in v for v in flat["views"])
    assert [s["unfold"] for s in flat["steps"]] == [s["unfold"] for s in f["steps"]]


@needs_dot
def test_a_view_the_page_does_not_hold_is_laid_out_on_demand(tiny: Any, tiny_film: dict[str, Any]) -> None:
    from gradtrace.render.film import film, unfolded_view

    trace, ns = tiny
    last = len(trace.steps) - 1
    f = film(trace, view_bytes=0)  # no view laid out ahead of time
    frame = f["frames"][f["steps"][last]["frame"]]
    folded = [d for d, c in frame["classes"].items() if "gt-m-folded" in c]
    blocks = {f["details"][f["steps"][last]["details"][d]]["id"]: d for d in folded}
    top = next(k for k in blocks if k.startswith("mod:model.h."))
    got = unfolded_view(trace, last, [top])
    assert got["path"] == [top] and got["view"]["label"].startswith(top[4:] + " (")
    assert f"{params(ns, got['view']['label']):,} params" in got["view"]["label"]
    assert 'id="gt&#45;unfolded"' in got["sheet"]
    assert all(r < len(got["rows"]) for r in got["frame"]["texts"].values())  # its own tables
    assert all(d < len(got["details"]) for d in got["view"]["details"].values())
    inner = [got["details"][i]["id"] for d, i in got["view"]["details"].items()
             if "gt-m-folded" in got["frame"]["classes"].get(d, "") and got["details"][i]["id"].startswith(top + ".")]
    assert inner, "no group folded inside the opened one"
    deeper = unfolded_view(trace, last, [top, inner[0]])
    assert deeper["path"] == [top, inner[0]] and 'id="gt&#45;unfolded&#45;1"' in deeper["sheet"]
    # an id that is no group of the picture is passed over (before: the groups after it were not opened)
    assert unfolded_view(trace, last, ["mod:model.nothing", top, inner[0]])["path"] == [top, inner[0]]
    # the same picture as the page lays out ahead of time, where it does
    full = tiny_film
    k = full["steps"][last]["unfold"].get(blocks[top])
    if k is not None:
        assert got["view"]["label"] == full["views"][k]["label"]
        assert sorted(heads(got, got["view"])) == sorted(heads(full, full["views"][k]))
    # a group opened from inside another that does not hold it opens at its own level
    other = next(k for k in blocks if k.startswith("mod:model.h.") and k != top)
    assert unfolded_view(trace, last, [top, other])["path"] == [other]
    for bad, says in (([top, "mod:model.nothing"], "model.nothing is not a folded group at step"),
                      ([], "no folded group")):
        assert says in unfolded_view(trace, last, bad)["error"]
    assert "there is no step" in unfolded_view(trace, len(trace.steps) + 3, [top])["error"]


def test_step_graph_unfolds_the_group_the_stepper_names(tiny: Any) -> None:
    from gradtrace.render.graph import step_graph

    trace, ns = tiny
    step = trace.steps[-1]
    folded = step_graph(step, max_nodes=80)
    assert "mod:model.h.0:" in folded.text
    inner = step_graph(step, max_nodes=80, unfold="model.h.0.attn")  # the group around it opens first
    assert "mod:model.h.0:" not in inner.text and "mod:model.h.0.attn" not in inner.text
    assert "Unfolded module model.h.0.attn" in inner.text
    assert step_graph(step, max_nodes=80, unfold=["model.h.0", "mod:model.h.0.attn"]).text == inner.text
    with pytest.raises(ValueError, match="'model.nothing' is not a folded group of this picture; the folded groups"):
        step_graph(step, max_nodes=80, unfold="model.nothing")


def test_the_widget_answers_every_request_without_raising(tiny: Any) -> None:
    pytest.importorskip("anywidget")
    from gradtrace.notebook.widget import StepperWidget

    trace, _ = tiny
    widget = StepperWidget({"steps": []}, trace=trace)
    try:
        assert "no folded group" in widget.unfolded({"step": 0, "path": "mod:model.h.0"})["error"]
        assert "no step" in widget.unfolded({"step": "x", "path": []})["error"]
        assert "is not a folded group" in widget.unfolded({"step": 0, "path": ["mod:model.h.0"]})["error"]
    finally:
        widget.close()
    assert "without its trace" in StepperWidget({"steps": []}).unfolded({"step": 0, "path": ["x"]})["error"]
    assert widget._trace is None  # a closed widget lets go of its trace


def test_view_bytes_setting_says_what_it_takes() -> None:
    from gradtrace.notebook.settings import Settings

    s = Settings()
    assert s.view_bytes is None
    s.view_bytes = 0
    assert s.view_bytes == 0
    for bad in (-1, 1.5, "big", True):
        with pytest.raises(ValueError, match="view_bytes must be None"):
            s.view_bytes = bad  # type: ignore[assignment]

"""Unfolding inside an unfolded group, in the standalone stepper page in real Chromium.

The program trains the tiny GPT-2-style model of examples/tiny_transformer.py one step (tiny_models.py):
its film folds each ``model.h.N`` to one box, and ``attn`` and ``mlp`` are folded again inside it. Names, parameter
counts and op names come from the film's own data or from PyTorch run plainly here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiny_models
from lab import new_page

from gradtrace import trace_code
from gradtrace.render.film import FILM_MAX_NODES
from gradtrace.render.film import film as make_film
from gradtrace.render.graph import step_graph
from gradtrace.render.html import film_html

VIEW = {"width": 1280, "height": 720}


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, dict[str, Any], dict[str, Any]]:
    ns = tiny_models.namespace()
    trace = trace_code(tiny_models.PROGRAM, ns, filename="tiny_gpt.py")
    return trace, make_film(trace), ns


def open_page(browser: Any, tmp_path: Path, film: dict[str, Any], name: str) -> tuple[Any, Any, Any]:
    path = tmp_path / name
    path.write_text(film_html(film), encoding="utf-8")
    context, page, guard = new_page(browser)
    page.set_viewport_size(VIEW)
    page.goto(path.as_uri())
    page.locator(".gt-root svg").first.wait_for()
    page.keyboard.press("End")
    return context, page, guard


@pytest.fixture
def page(browser: Any, tmp_path: Path, tiny: Any) -> Iterator[Any]:
    context, pg, guard = open_page(browser, tmp_path, tiny[1], "tiny.html")
    yield pg
    context.close()
    assert guard.errors == [] and guard.dialogs == [] and guard.outside == [], (guard.errors, guard.dialogs)


def nested(film: dict[str, Any]) -> tuple[str, dict[str, Any], str, dict[str, Any]]:
    """At the last step: a folded box whose view opens a deeper view, and the box of that deeper group."""
    last = film["steps"][-1]
    for dom, k in last["unfold"].items():
        outer = film["views"][k]
        for inner_dom, j in (outer.get("unfold") or {}).items():
            return dom, outer, inner_dom, film["views"][j]
    raise AssertionError("no nested view at the last step")


def shown_heads(page: Any) -> list[str]:
    return list(page.evaluate("""() => [...document.querySelectorAll('.gt-graph svg g.node:not(.gt-hidden)')]
      .map(g => (g.querySelector('text') || {}).textContent || '')"""))


def frames(page: Any) -> list[str]:
    """The ids of the dashed 'unfolded' frames drawn, outermost first."""
    return list(page.evaluate("""() => [...document.querySelectorAll('.gt-graph svg g[id^="gt-unfolded"]')]
      .map(g => g.id).sort()"""))


def crumbs(page: Any) -> list[str]:
    return [t.strip() for t in page.locator(".gt-crumbs > :not(.gt-crumb-sep)").all_inner_texts()]


def short(label: str) -> str:
    return label.split(" (")[0]


def test_a_group_inside_an_unfolded_group_unfolds_one_level_further(page: Any, tiny: Any, artifacts: Path) -> None:
    _, film, ns = tiny
    dom, outer, inner_dom, inner = nested(film)
    module = ns["model"].get_submodule(short(inner["label"]).removeprefix("model."))
    params = sum(p.numel() for p in module.parameters())
    assert f"{params:,} params" in inner["label"]
    own_ops = tiny_models.ops_of(module, ns)
    page.locator(f".gt-graph svg g[id='{dom}']").click()
    bar = page.locator(".gt-unfold")
    bar.wait_for(state="visible")
    assert crumbs(page) == ["folded picture", short(outer["label"])]
    assert frames(page) == ["gt-unfolded"]
    assert inner["label"] in shown_heads(page)  # folded inside the opened group
    assert page.locator(f".gt-graph svg g[id='{inner_dom}'] > title").text_content() == \
        "folded: click (or Enter) to unfold"
    page.screenshot(path=str(artifacts / "page-unfold-level1.png"))
    page.locator(f".gt-graph svg g[id='{inner_dom}']").click()
    page.wait_for_function("(t) => document.querySelector('.gt-unfold-words').textContent.startsWith(t)",
                           arg=f"Unfolded: {inner['label']}.")
    assert crumbs(page) == ["folded picture", short(outer["label"]), short(inner["label"])]
    here = page.locator(".gt-crumbs [aria-current='location']")
    assert here.inner_text() == short(inner["label"])
    assert frames(page) == ["gt-unfolded", "gt-unfolded-1"]  # the inner frame inside the outer one
    heads = shown_heads(page)
    assert inner["label"] not in heads and own_ops <= {h.split(" ")[-1] for h in heads}, own_ops
    page.screenshot(path=str(artifacts / "page-unfold-level2.png"))
    page.keyboard.press("Escape")  # back one level
    page.wait_for_function("(t) => document.querySelector('.gt-unfold-words').textContent.startsWith(t)",
                           arg=f"Unfolded: {outer['label']}.")
    assert frames(page) == ["gt-unfolded"] and crumbs(page) == ["folded picture", short(outer["label"])]
    page.keyboard.press("Escape")
    bar.wait_for(state="hidden")
    assert frames(page) == []


# presenter mode's zoom shown (set once the screen has changed)
PRESENTING = "() => document.querySelector('.gt-zoomlevel').dataset.mode === 'present'"


def test_keyboard_and_breadcrumb_reach_every_level(page: Any, tiny: Any, artifacts: Path) -> None:
    _, film, _ = tiny
    dom, outer, inner_dom, inner = nested(film)
    pick = page.locator(f".gt-pick button[data-id='{dom}']")
    pick.focus()
    page.keyboard.press("Enter")
    page.locator(".gt-unfold").wait_for(state="visible")
    deeper = page.locator(f".gt-pick button[data-id='{inner_dom}']")
    assert deeper.get_attribute("aria-label") == f"unfold {inner['label']}"
    deeper.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('.gt-graph svg g[id^=\"gt-unfolded\"]').length === 2")
    nav = page.locator("nav.gt-crumbs")
    assert nav.get_attribute("aria-label") == "unfolded groups: where you are"
    back = page.locator(".gt-unfold button", has_text="fold again")
    assert back.get_attribute("aria-label") == f"fold {short(inner['label'])} again (Esc)"
    page.keyboard.press("F")  # presenter mode: the projector
    page.wait_for_function(PRESENTING)
    page.screenshot(path=str(artifacts / "page-unfold-level2-presenter.png"))
    page.keyboard.press("Escape")  # leaves one level first
    page.wait_for_function("() => document.querySelectorAll('.gt-graph svg g[id^=\"gt-unfolded\"]').length === 1")
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    # presenter mode left: the zoom of before is given back once the screen has changed, moving every box; a
    # click aimed before that could land beside the box
    page.wait_for_function(f"() => !({PRESENTING})()")
    # the breadcrumb goes back to any level: open two levels, then "folded picture" by keyboard
    page.locator(f".gt-graph svg g[id='{dom}']").click()
    page.locator(f".gt-graph svg g[id='{inner_dom}']").click()
    page.wait_for_function("() => document.querySelectorAll('.gt-graph svg g[id^=\"gt-unfolded\"]').length === 2")
    crumb = page.locator(".gt-crumbs button", has_text="folded picture")
    assert crumb.get_attribute("aria-label") == "back to the folded picture"
    crumb.focus()
    page.keyboard.press("Enter")
    page.locator(".gt-unfold").wait_for(state="hidden")
    assert frames(page) == []


def test_a_page_without_the_view_says_how_to_see_it(browser: Any, tmp_path: Path, tiny: Any,
                                                    artifacts: Path) -> None:
    trace, film, _ = tiny
    bare = make_film(trace, view_bytes=0)  # the page carries no unfolded view
    last = bare["steps"][-1]
    frame = bare["frames"][last["frame"]]
    dom = next(d for d, c in frame["classes"].items() if "gt-m-folded" in c
               and bare["details"][last["details"][d]]["id"].startswith("mod:model.h."))
    block = bare["details"][last["details"][dom]]
    context, page, guard = open_page(browser, tmp_path, bare, "bare.html")
    try:
        assert page.locator(f".gt-graph svg g[id='{dom}'] > title").text_content() == \
            "folded (no unfolded picture at this step)"
        # a page has no kernel: no folded box offers one, by mouse or keyboard
        tips = page.evaluate("""() => [...document.querySelectorAll('.gt-graph svg g.gt-m-folded > title')]
          .map((t) => t.textContent)""")
        assert tips and not [t for t in tips if "kernel" in t], tips
        assert not (page.locator(f".gt-pick button[data-id='{dom}']").get_attribute("aria-label") or "").startswith(
            "unfold")
        page.locator(f".gt-graph svg g[id='{dom}']").click()
        said = page.locator(".gt-unfold-words").inner_text()
        assert said.startswith(f"{block['title']}: no unfolded picture of it was prepared at this step")
        assert "gradtrace.notebook.settings.widget" in said and "run its cell again" not in said
        assert page.locator(".gt-details").is_visible()
        page.screenshot(path=str(artifacts / "page-unfold-not-carried.png"))
    finally:
        context.close()
    assert guard.errors == [] and guard.dialogs == [], guard.errors
    # what it says to run draws the group unfolded
    found = re.search(r"gradtrace\.render\.step_graph\(trace\[(\d+)\], unfold=(.+)\)\.$", said)
    assert found, said
    index, target = int(found[1]), eval(found[2])  # noqa: S307 - a string or list literal the page wrote
    assert index == trace.steps[-1].index
    # the learner is told which step and line, as the stepper numbers them, and where ``trace`` comes from
    assert f"draw step {index + 1} (line {trace.steps[-1].lineno}) in Python, with trace the Trace this shows " \
           "(trace = gradtrace.last_trace() right after tracing" in said
    assert f"{block['id']}:" not in step_graph(trace[index], unfold=target).text  # runs as written
    drawn = step_graph(trace[index], unfold=target, max_nodes=FILM_MAX_NODES)  # at the stepper's cap
    assert f"{block['id']}:" in step_graph(trace[index], max_nodes=FILM_MAX_NODES).text
    assert f"{block['id']}:" not in drawn.text and f"Unfolded module {block['id'][4:]}" in drawn.text


def test_a_nested_group_without_a_view_names_the_whole_path(page: Any, tiny: Any) -> None:
    trace, film, _ = tiny
    last = film["steps"][-1]
    for dom, k in last["unfold"].items():
        outer = film["views"][k]
        frame = film["frames"][outer["frame"]]
        missing = [d for d, c in frame["classes"].items() if "gt-m-folded" in c and d not in (outer.get("unfold") or {})
                   and film["details"][outer["details"][d]]["id"].startswith(
                       film["details"][last["details"][dom]]["id"] + ".")]
        if missing:
            break
    else:
        pytest.skip("every group inside every view has a view of its own")
    inner = film["details"][outer["details"][missing[0]]]
    page.locator(f".gt-graph svg g[id='{dom}']").click()
    page.locator(f".gt-graph svg g[id='{missing[0]}']").click()
    said = page.locator(".gt-unfold-words").inner_text()
    found = re.search(r"unfold=(\[.+\])\)\.$", said)
    assert found, said
    target = eval(found[1])  # noqa: S307 - a list literal the page wrote
    assert target[-1] == inner["id"][4:] and len(target) == 2
    drawn = step_graph(trace[trace.steps[-1].index], unfold=target).text
    assert f"Unfolded module {inner['id'][4:]}" in drawn and f"{inner['id']}:" not in drawn


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violations_two_levels_deep(browser: Any, tmp_path: Path, tiny: Any, scheme: str,
                                                         artifacts: Path) -> None:
    axe_mod = pytest.importorskip("axe_playwright_python.sync_playwright")
    _, film, _ = tiny
    dom, _, inner_dom, _ = nested(film)
    path = tmp_path / "axe.html"
    path.write_text(film_html(film), encoding="utf-8")
    context, page, guard = new_page(browser, color_scheme=scheme)
    try:
        page.set_viewport_size(VIEW)
        page.goto(path.as_uri())
        page.locator(".gt-root svg").first.wait_for()
        page.keyboard.press("End")
        page.locator(f".gt-graph svg g[id='{dom}']").click()
        page.locator(f".gt-graph svg g[id='{inner_dom}']").click()
        page.wait_for_function("() => document.querySelectorAll('.gt-graph svg g[id^=\"gt-unfolded\"]').length === 2")
        results = axe_mod.Axe().run(page)
        bad = [f"{v['id']}: {[n['target'] for n in v['nodes']][:5]}" for v in results.response["violations"]
               if v["impact"] in ("serious", "critical")]
        assert bad == []
        page.screenshot(path=str(artifacts / f"page-unfold-level2-{scheme}.png"))
    finally:
        context.close()
    assert guard.errors == [], guard.errors

"""The stepper in a real JupyterLab and in an nbconvert export, driven through real Chromium.

Program: the course forum's WhatIF(1) (``x = x ** 2`` rebinds ``x``), run under
``%%gradtrace`` in ``tests/notebooks/forum_whatif1.ipynb``. Every number checked
comes from running the same program with PyTorch here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import torch
from lab import Lab, give_keys, lesson01_facts, new_page, open_notebook, run_all

from pages import FLOOR, LOOK_JS, TEXT_PX

NOTEBOOK = "forum_whatif1.ipynb"

# What the main picture shows: every element group of the film's SVG, with its classes and texts.
PICTURE_JS = """(root) => [...root.querySelectorAll(':scope .gt-main > .gt-graph svg g[id^="gt-"]')].map(g => ({
  id: g.id, cls: g.getAttribute('class') || '',
  text: [...g.querySelectorAll('text')].map(t => t.textContent).join(' | ')}))"""


def pytorch_facts() -> dict[str, Any]:
    """The forum program run by PyTorch: values, x.grad, and how many saved tensors backward() frees."""
    x = torch.tensor(42.0, requires_grad=True)
    leaf = x
    x = x**2
    x3 = x**3
    f = x + x3
    x.retain_grad()
    saving = []
    todo, seen = [f.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "_saved_self"):
            saving.append(node)
        todo += [n for n, _ in node.next_functions]
    f.backward(retain_graph=False)
    freed = 0
    for node in saving:
        try:
            node._saved_self  # noqa: B018 - reading it is the check
        except RuntimeError:
            freed += 1
    assert x.grad is not None and float(x.grad).is_integer()
    return {
        "leaf": leaf.item(), "x": x.item(), "x_grad": int(x.grad.item()), "freed": freed,
        "node": x.grad_fn.name(), "exponent": 2,
    }


FACTS = pytorch_facts()


def num(value: float) -> str:
    """How a whole number prints in the pictures: ``1764.``."""
    return f"{int(value)}."


def picture(root: Any) -> dict[str, dict[str, str]]:
    return {g["id"]: g for g in root.evaluate(PICTURE_JS)}


def visible(items: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {k: v for k, v in items.items() if "gt-hidden" not in v["cls"].split()}


def name_edges(items: dict[str, dict[str, str]], name: str) -> list[str]:
    """Visible arrows from the names-panel box showing ``name`` to a tensor: the tensors' ids."""
    boxes = [k for k, v in items.items() if v["text"].strip() == name and k.startswith("gt-name")]
    assert boxes, f"no names-panel box for {name!r} in {sorted(items)}"
    prefix = f"gt-e-name-{boxes[0][3:]}-"
    return [k[len(prefix):] for k in items if k.startswith(prefix)]


def step_of(root: Any) -> int:
    return int(root.get_attribute("data-step"))


def check_stepping(page: Any, root: Any, on_focus: Any = None) -> None:
    """From step 0 (x names the leaf) to step 1 (x names x ** 2, the leaf still in the graph), by ArrowRight."""
    assert step_of(root) == 0
    before = visible(picture(root))
    leaf_id = name_edges(before, "x")
    assert len(leaf_id) == 1, before
    leaf = before["gt-" + leaf_id[0]]
    assert "gt-k-leaf" in leaf["cls"] and num(FACTS["leaf"]) in leaf["text"]
    assert not any(FACTS["node"] in v["text"] for v in before.values()), before

    give_keys(page, root)  # a click on the stepper (not a control) gives it the keyboard
    if on_focus is not None:
        on_focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(r) => r.dataset.step === '1'", arg=root.element_handle())
    after = visible(picture(root))
    now = name_edges(after, "x")
    assert len(now) == 1 and now != leaf_id, after
    squared = after["gt-" + now[0]]
    assert num(FACTS["x"]) in squared["text"] and "gt-k-leaf" not in squared["cls"]
    assert "gt-" + leaf_id[0] in after, "the leaf left the graph when x was rebound"
    assert any(FACTS["node"] in v["text"] for v in after.values()), "no PowBackward0 node after x = x ** 2"
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("(r) => r.dataset.step === '0'", arg=root.element_handle())
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(r) => r.dataset.step === '1'", arg=root.element_handle())


def check_before_after(page: Any, root: Any) -> None:
    """The before/after-backward() view, one picture: freed saved values and the changed .grad are marked."""
    root.locator(".gt-compare-btn").click()
    page.wait_for_function("(r) => r.classList.contains('gt-diffing')", arg=root.element_handle())
    after = visible(picture(root))
    grad = f"grad {num(FACTS['x_grad'])}"
    freed = [k for k, v in after.items() if "gt-diff-freed" in v["cls"].split() and "node" in v["cls"].split()]
    assert len(freed) == FACTS["freed"], after
    # each freed node is tagged where there is room beside it (a tag never covers another box); the banner
    # above the picture names every one
    assert 1 <= root.locator(".gt-tag-freed").count() <= FACTS["freed"]
    banner = root.locator(".gt-banner").inner_text()
    assert all(k.removeprefix("gt-") in banner for k in freed), (banner, freed)
    tags = root.locator(".gt-tag-grad").all_text_contents()
    assert any(t.endswith(f"→ {num(FACTS['x_grad'])}") for t in tags), tags
    changed = [k for k, v in after.items() if "gt-diff-grad" in v["cls"].split()]
    assert any(grad in after[k]["text"] for k in changed), after
    give_keys(page, root)
    page.keyboard.press("b")  # the other state: just before backward()
    page.wait_for_function("(r) => r.querySelector('.gt-banner').textContent.startsWith('BEFORE')",
                           arg=root.element_handle())
    before = visible(picture(root))
    assert not any(grad in v["text"] for v in before.values()), before
    assert sum(v["text"].count("(freed)") for v in before.values()) == 0
    assert sum(v["text"].count("(freed)") for v in after.values()) == FACTS["freed"]
    root.locator(".gt-compare-btn").click()
    page.wait_for_function("(r) => !r.classList.contains('gt-diffing')", arg=root.element_handle())


def check_details(page: Any, root: Any) -> None:
    """Clicking the PowBackward0 node of x ** 2 shows its details."""
    items = visible(picture(root))
    # node attributes (exponent=2) live in the details, not in the box
    node = next(k for k, v in items.items() if "gt-node" in v["cls"] and FACTS["node"] in v["text"])
    root.locator(f".gt-main > .gt-graph svg g#{node}").click()
    details = root.locator(".gt-details")
    page.wait_for_function("([d, name]) => d.textContent.includes(name)", arg=[details.element_handle(), FACTS["node"]])
    text = details.inner_text()
    assert FACTS["node"] in text and "exponent" in text and str(FACTS["exponent"]) in text, text
    assert "gt-selected" in (root.locator(f".gt-main > .gt-graph svg g#{node}").get_attribute("class") or "")


def active_cell(page: Any) -> int:
    return int(page.evaluate("() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]"
                             ".findIndex(c => c.classList.contains('jp-mod-active'))"))


@pytest.fixture(scope="module")
def executed(lab: Lab, browser: Any, artifacts: Path) -> Any:
    """The test notebook opened in JupyterLab with every cell run; closed (and checked clean) at the end."""
    context, page, guard = new_page(browser)
    try:
        open_notebook(page, lab, NOTEBOOK)
        run_all(page)
        page.locator(".jp-OutputArea-output .gt-widget .gt-root svg").first.wait_for(timeout=60_000)
    except Exception as exc:
        page.screenshot(path=str(artifacts / "jupyterlab-failure.png"))
        raise AssertionError(f"{exc}\n--- jupyter lab log ---\n{lab.log_tail()}") from exc
    yield page, guard
    page.screenshot(path=str(artifacts / "jupyterlab-end.png"))
    context.close()
    assert guard.dialogs == [], guard.dialogs
    assert guard.outside == [], guard.outside
    assert guard.errors == [], guard.errors


def test_widget_steps_with_arrow_keys(executed: Any, artifacts: Path) -> None:
    page, _ = executed
    roots = page.locator(".jp-OutputArea-output .gt-widget .gt-root")
    assert roots.count() == 1, "the trace was displayed more than once"
    root = roots.first
    assert page.locator(".jp-Dialog").count() == 0
    cells: list[int] = []
    check_stepping(page, root, on_focus=lambda: cells.append(active_cell(page)))
    assert active_cell(page) == cells[0], "JupyterLab moved to another cell on an arrow key"
    page.screenshot(path=str(artifacts / "jupyterlab-step1.png"))
    outputs = page.locator(".jp-CodeCell").nth(2).locator(".jp-OutputArea-output").inner_text()
    assert str(FACTS["x_grad"]) in outputs  # the cell after the magic sees the traced run's x


def test_widget_before_after_and_details(executed: Any, artifacts: Path) -> None:
    page, _ = executed
    root = page.locator(".jp-OutputArea-output .gt-widget .gt-root").first
    check_before_after(page, root)
    check_details(page, root)
    root.screenshot(path=str(artifacts / "jupyterlab-stepper.png"))


def test_nbconvert_export_steps_without_kernel(executed: Any, lab: Lab, browser: Any, tmp_path: Path,
                                               artifacts: Path) -> None:
    page, _ = executed
    page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)
    saved = json.loads((lab.root / NOTEBOOK).read_text(encoding="utf-8"))
    assert any("text/html" in o.get("data", {}) for c in saved["cells"] for o in c.get("outputs", []))
    for kernel in lab.kernels():
        req = urllib.request.Request(lab.url(f"api/kernels/{kernel['id']}"), method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()
    assert lab.kernels() == []
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(tmp_path),
         "--HTMLExporter.require_js_url=data:text/javascript,", "--HTMLExporter.mathjax_url=data:text/javascript,",
         str(lab.root / NOTEBOOK)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    html_file = tmp_path / NOTEBOOK.replace(".ipynb", ".html")
    context, export, guard = new_page(browser)
    try:
        export.goto(html_file.as_uri())
        root = export.locator(".gt-embed .gt-root")
        root.locator("svg").first.wait_for()
        assert root.count() == 1
        check_stepping(export, root)
        check_before_after(export, root)
        check_details(export, root)
        export.screenshot(path=str(artifacts / "nbconvert-export.png"))
    finally:
        context.close()
    assert guard.dialogs == [] and guard.outside == [] and guard.errors == [], (guard.dialogs, guard.outside,
                                                                                guard.errors)


# resolves once the element's box has stayed put for n animation frames (at most 600 frames: then the checks
# after it say where it was)
STILL_JS = """(el, n) => new Promise((done) => {
  let last = null, still = 0, left = 600;
  const look = () => {
    const r = el.getBoundingClientRect(), now = [r.top, r.left, r.width, r.height].join();
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= n || --left <= 0) done(); else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})"""

BOTH_IN_VIEW_JS = """([graph, line]) => {
  const panel = graph.closest('.jp-WindowedPanel-outer') || graph.closest('.jp-Notebook') || document.body;
  const box = panel.getBoundingClientRect();
  const view = {top: Math.max(0, box.top), bottom: Math.min(window.innerHeight, box.bottom)};
  const g = graph.getBoundingClientRect(), l = line.getBoundingClientRect();
  let inside = true;
  for (let p = line.parentElement; p && inside && p !== panel; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (/(auto|scroll)/.test(s.overflowY)) {
      const q = p.getBoundingClientRect();
      inside = l.top >= q.top - 0.5 && l.bottom <= q.bottom + 0.5;
    }
  }
  return {inside, graphTop: g.top, graphBottom: g.bottom, lineTop: l.top, lineBottom: l.bottom, ...view};
}"""


@pytest.fixture(scope="module")
def lesson01(lab: Lab, browser: Any, artifacts: Path) -> Any:
    """Lesson 01 opened at a projector's 1280x720 in JupyterLab, every cell run."""
    name = "01_reverse_mode.ipynb"
    (lab.root / name).write_text((Path(__file__).resolve().parents[2] / "notebooks" / name).read_text("utf-8"),
                                 encoding="utf-8")
    context, page, guard = new_page(browser)
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        # alone: the forum notebook's tab (its saved stepper) is not restored behind it
        open_notebook(page, lab, name + "?reset")
        page.locator(".jp-SideBar .lm-TabBar-tab.lm-mod-current").first.click()  # fold the file browser
        run_all(page)
        page.locator(".jp-OutputArea-output .gt-widget .gt-root svg").first.wait_for(timeout=60_000)
    except Exception as exc:
        page.screenshot(path=str(artifacts / "jupyterlab-lesson01-failure.png"))
        raise AssertionError(f"{exc}\n--- jupyter lab log ---\n{lab.log_tail()}") from exc
    yield page
    context.close()
    assert guard.dialogs == [] and guard.outside == [] and guard.errors == [], (guard.dialogs, guard.outside,
                                                                                guard.errors)


def test_lesson01_backward_step_fits_the_projector(lesson01: Any, artifacts: Path) -> None:
    """At 1280x720 the picture and the "5292 + 84 = 5376" line are on screen together, graph text no smaller
    than the default zoom's floor makes it (12 px at 100%)."""
    page = lesson01
    facts = lesson01_facts()
    root = page.locator(".jp-OutputArea-output .gt-widget .gt-root").first
    give_keys(page, root)
    page.keyboard.press("End")
    meet = f"{facts['d3']:g} + {facts['d2']:g} = {facts['grad']:g}"
    line = root.locator(".gt-revline.gt-current", has_text=meet).first
    line.wait_for()
    root.evaluate("r => r.scrollIntoView({block: 'start'})")
    root.evaluate(STILL_JS, 5)  # JupyterLab lays out the cells around a scroll a frame or more later
    got = page.evaluate(BOTH_IN_VIEW_JS, [root.locator(".gt-graph").element_handle(), line.element_handle()])
    assert got["inside"], got
    assert got["graphTop"] >= got["top"] - 0.5 and got["lineBottom"] <= got["bottom"] + 0.5, got
    assert got["graphTop"] < got["bottom"] - 150, got  # a good part of the picture shows, not just its edge
    small = root.evaluate("""(r, min) => [...r.querySelectorAll('.gt-graph svg text')]
      .filter(t => getComputedStyle(t).visibility !== 'hidden' && t.textContent.trim())
      .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a).filter(px => px < min)""",
                        TEXT_PX * FLOOR - 0.01)
    assert small == []
    page.screenshot(path=str(artifacts / "jupyterlab-lesson01-backward.png"))
    # every step: the picture and "what this step did" on screen together
    page.keyboard.press("Home")
    for i in range(int(root.locator(".gt-steplist option").count())):
        page.wait_for_function(f"(r) => r.dataset.step === '{i}'", arg=root.element_handle())
        event = root.locator(".gt-event").first
        got = page.evaluate(BOTH_IN_VIEW_JS, [root.locator(".gt-graph").element_handle(), event.element_handle()])
        assert got["graphTop"] >= got["top"] - 0.5 and got["lineBottom"] <= got["bottom"] + 0.5, (i, got)
        page.keyboard.press("ArrowRight")


def test_the_widget_fits_its_picture(lesson01: Any) -> None:
    """Lesson 01's picture is wider than the widget's picture box: it is shrunk to fit, every box in view, at every
    step; a zoom chosen with + stays across steps, and 0 fits again."""
    page = lesson01
    root = page.locator(".jp-OutputArea-output .gt-widget .gt-root").first
    give_keys(page, root)
    page.keyboard.press("Home")
    got = root.evaluate(LOOK_JS)
    assert got["drawing"][0] > got["room"][0], got  # wider than its box at 100%: the case this is about
    assert FLOOR * 100 - 0.5 <= got["level"] < 100 and got["outside"] == [], got
    assert abs(got["shown"][0] / got["drawing"][0] * 100 - got["level"]) < 0.6, got
    for i in range(int(root.locator(".gt-steplist option").count())):
        page.wait_for_function(f"(r) => r.dataset.step === '{i}'", arg=root.element_handle())
        now = root.evaluate(LOOK_JS)
        assert now["outside"] == [] and now["level"] == got["level"], (i, now)
        page.keyboard.press("ArrowRight")
    page.keyboard.press("+")
    page.keyboard.press("Home")
    chosen = root.evaluate(LOOK_JS)
    assert chosen["level"] > got["level"], chosen
    page.keyboard.press("End")
    assert root.evaluate(LOOK_JS)["level"] == chosen["level"]
    page.keyboard.press("0")
    assert root.evaluate(LOOK_JS)["outside"] == []
    page.keyboard.press("Home")


def test_presenter_mode_in_jupyterlab(lesson01: Any) -> None:
    page = lesson01
    root = page.locator(".jp-OutputArea-output .gt-widget .gt-root").first
    give_keys(page, root)
    page.keyboard.press("Home")
    page.keyboard.press("f")
    page.wait_for_function("(r) => r.classList.contains('gt-present')", arg=root.element_handle())
    box = root.bounding_box()
    assert box is not None and box["width"] >= 1279 and box["height"] >= 719, box
    page.keyboard.press("PageDown")
    assert root.get_attribute("data-step") == "1"
    page.keyboard.press("Escape")
    page.wait_for_function("(r) => !r.classList.contains('gt-present')", arg=root.element_handle())
    # the stepper's letter keys are its own: "d d" toggles the before/after view, it never deletes the cell
    cells = page.locator(".jp-Notebook .jp-Cell").count()
    page.keyboard.press("End")
    page.keyboard.press("d")
    page.wait_for_function("(r) => r.classList.contains('gt-diffing')", arg=root.element_handle())
    page.keyboard.press("d")
    page.wait_for_function("(r) => !r.classList.contains('gt-diffing')", arg=root.element_handle())
    page.wait_for_timeout(300)
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells


def test_axe_on_the_widget(lesson01: Any) -> None:
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page = lesson01
    results = axe.Axe().run(page, context=".gt-widget")
    bad = [f"{v['id']}: {[n['target'] for n in v['nodes']][:5]}" for v in results.response["violations"]
           if v["impact"] in ("serious", "critical")]
    assert bad == []

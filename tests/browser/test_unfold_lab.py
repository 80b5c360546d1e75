"""Big graphs and quizzes in a real JupyterLab with its default settings (widget state not saved).

- A small model traced with ``%%gradtrace`` in the widget stepper: a click on a folded module
  unfolds it, a click on a folded sub-module inside it unfolds one level further (a breadcrumb
  says where), Esc goes back one level; a module whose view the page did not carry is laid out
  by the kernel on click.
- A quiz notebook saved and reopened with a new kernel: only the note naming the cells to run,
  never JupyterLab's "Error displaying widget: model not found".

Every module name and parameter count checked comes from PyTorch run plainly here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lab as jl
import tiny_models
from lab import Lab, give_keys, new_page, run_all, wait_idle

VIEW = {"width": 1280, "height": 720}


# ------------------------------------------------------------------------------------------ the quiz
def test_reopened_quiz_shows_only_the_note_without_a_kernel_made_box(lab: Lab, browser: Any,
                                                                    artifacts: Path) -> None:
    jl.write_notebook(lab.root / "quiz_reopen.ipynb", jl.SETUP, jl.QUIZ)
    truth = jl.quiz_grad()
    context, page, guard = new_page(browser)
    page.set_viewport_size(VIEW)
    try:
        jl.open_alone(page, lab, "quiz_reopen.ipynb")
        run_all(page)
        page.locator(".gt-quiz-input").wait_for(timeout=60_000)
        page.locator(".gt-quiz-note").wait_for(state="hidden", timeout=30_000)  # a kernel answers: no note
        box = page.locator(".gt-quiz-input")
        box.fill(str(truth))
        box.press("Enter")
        page.locator(".gt-quiz-result", has_text="Right!").wait_for(timeout=30_000)
        jl.save(page)
    finally:
        context.close()
    saved = json.loads((lab.root / "quiz_reopen.ipynb").read_text(encoding="utf-8"))
    assert "widgets" not in saved["metadata"]  # the default: JupyterLab saves no widget state
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
               for c in saved["cells"] for o in c.get("outputs", []))
    jl.stop_kernels(lab)
    # reopened: a new kernel that never made the box; JupyterLab cannot draw it
    context, page, guard2 = new_page(browser)
    page.set_viewport_size(VIEW)
    try:
        page.goto(lab.url("lab/tree/quiz_reopen.ipynb?reset"), wait_until="domcontentloaded")
        note = page.locator(".gt-quiz-note")
        note.wait_for(timeout=60_000)
        lab.wait_kernel(90, sleep=lambda s: page.wait_for_timeout(s * 1000))
        wait_idle(page)
        # JupyterLab says "model not found" once its widget manager has heard from the new kernel
        page.wait_for_function("""() => [...document.querySelectorAll('.jp-OutputArea-output.lm-Panel')]
            .some(o => /model not found/.test(o.textContent))""", timeout=60_000)
        cell = page.locator(".jp-Notebook .jp-CodeCell").nth(1)
        # then the note shows and the error JupyterLab wrote under it is hidden
        page.wait_for_function("""(c) => { const shown = c.querySelector('.jp-OutputArea').innerText;
            return shown.includes("Checking an answer needs the notebook's kernel")
              && !/model not found/.test(shown); }""", arg=cell.element_handle(), timeout=30_000)
        shown = cell.locator(".jp-OutputArea").inner_text()  # what is rendered visible
        assert note.is_visible() and "Checking an answer needs the notebook's kernel" in shown
        assert "Error displaying widget" not in shown and "model not found" not in shown, shown
        assert "Loading widget" not in shown, shown
        cell.screenshot(path=str(artifacts / "lab-quiz-reopened-default.png"))
        page.screenshot(path=str(artifacts / "lab-quiz-reopened-default-page.png"))
        # what the note says to do: Run All, and a new box answers (the hidden output is replaced)
        run_all(page)
        note.wait_for(state="hidden", timeout=30_000)
        page.locator(".gt-quiz-input").wait_for(timeout=60_000)
        assert page.locator(".gt-quiz-input").is_visible()
    finally:
        context.close()
    for g in (guard, guard2):
        assert g.dialogs == [] and g.outside == [] and g.errors == [], (g.dialogs, g.outside, g.errors)


# ------------------------------------------------------------------------------- unfolding in the widget
FOLDED_BOX = """([root, prefix]) => {
  const g = [...root.querySelectorAll('.gt-graph svg g.node')].find((g) => {
    const cls = g.getAttribute('class') || '';
    return !cls.includes('gt-hidden') && cls.includes('gt-m-folded')
      && ((g.querySelector('text') || {}).textContent || '').startsWith(prefix);
  });
  return g ? g.id : null;
}"""
FRAMES = """(root) => [...root.querySelectorAll('.gt-graph svg g[id^="gt-unfolded"]')].map((g) => g.id).sort()"""
WATCH_BUSY = """(root) => {
  root.dataset.sawBusy = '';
  const bar = root.querySelector('.gt-unfold');
  new MutationObserver(() => {
    if (bar.classList.contains('gt-busy')) root.dataset.sawBusy += bar.textContent + '|';
  }).observe(bar, { attributes: true, childList: true, subtree: true, characterData: true });
}"""


def tiny_labels() -> dict[str, str]:
    """How the folded boxes of ``model.h.0``, its ``attn`` and ``model.h.1`` begin and PyTorch's parameter counts."""
    ns = tiny_models.namespace()
    model = ns["TinyGPT"]()
    out = {}
    for path in ("h.0", "h.0.attn", "h.1"):
        count = sum(p.numel() for p in model.get_submodule(path).parameters())
        out[path] = f"model.{path} ("
        out[path + " params"] = f"{count:,} params)"
    return out


def folded_box(root: Any, prefix: str) -> str:
    """The element id of the folded box drawn whose head begins with ``prefix``."""
    dom = root.evaluate(FOLDED_BOX.replace("([root, prefix])", "(root)").replace("prefix", repr(prefix)))
    assert dom, f"no folded box {prefix!r} drawn"
    return str(dom)


def click_folded(root: Any, prefix: str) -> str:
    dom = folded_box(root, prefix)
    root.locator(f".gt-graph svg g[id='{dom}']").click()
    return dom


def frames_of(page: Any, root: Any, count: int) -> list[str]:
    page.wait_for_function(f"(r) => ({FRAMES})(r).length === {count}", arg=root.element_handle(), timeout=60_000)
    return list(root.evaluate(FRAMES))


def test_the_widget_unfolds_prelaid_groups_and_has_its_kernel_lay_out_the_others(lab: Lab, browser: Any,
                                                                                 artifacts: Path) -> None:
    setup = jl.SETUP + "\ngradtrace.notebook.settings.widget = 'anywidget'"
    jl.write_notebook(lab.root / "unfold_widget.ipynb", setup, tiny_models.MODEL, "%%gradtrace\n" + tiny_models.PROGRAM,
                      "gradtrace.notebook.settings.view_bytes = 0  # carry no unfolded view: the kernel lays each out",
                      "%%gradtrace\n" + tiny_models.PROGRAM)
    labels = tiny_labels()
    context, page, guard = new_page(browser)
    page.set_viewport_size(VIEW)
    try:
        jl.open_alone(page, lab, "unfold_widget.ipynb")
        run_all(page)
        roots = page.locator(".jp-OutputArea-output .gt-widget .gt-root")
        roots.nth(1).locator("svg").first.wait_for(timeout=60_000)
        assert roots.count() == 2
        # 1. a view the stepper carries: open at once, no kernel asked
        carried = roots.nth(0)
        give_keys(page, carried)
        page.keyboard.press("End")
        carried.evaluate(WATCH_BUSY)
        click_folded(carried, labels["h.0"])
        assert frames_of(page, carried, 1) == ["gt-unfolded"]
        words = carried.locator(".gt-unfold-words").inner_text()
        assert words.startswith(f"Unfolded: {labels['h.0']}") and labels["h.0 params"] in words
        assert carried.evaluate("(r) => r.dataset.sawBusy") == ""
        carried.screenshot(path=str(artifacts / "lab-unfold-carried.png"))
        page.keyboard.press("Escape")
        frames_of(page, carried, 0)
        # 2. a stepper that carries none: the kernel lays out each group on click, one level at a time
        asked = roots.nth(1)
        asked.scroll_into_view_if_needed()
        give_keys(page, asked)
        page.keyboard.press("End")
        asked.evaluate(WATCH_BUSY)
        click_folded(asked, labels["h.0"])
        assert frames_of(page, asked, 1) == ["gt-unfolded"]
        assert f"Laying out {labels['h.0']}" in asked.evaluate("(r) => r.dataset.sawBusy")
        assert asked.locator(".gt-unfold-words").inner_text().startswith(f"Unfolded: {labels['h.0']}")
        page.screenshot(path=str(artifacts / "lab-unfold-asked.png"))
        click_folded(asked, labels["h.0.attn"])
        assert frames_of(page, asked, 2) == ["gt-unfolded", "gt-unfolded-1"]
        words = asked.locator(".gt-unfold-words").inner_text()
        assert words.startswith(f"Unfolded: {labels['h.0.attn']}") and labels["h.0.attn params"] in words
        assert [t.strip() for t in asked.locator(".gt-crumbs > :not(.gt-crumb-sep)").all_inner_texts()] == \
            ["folded picture", "model.h.0", "model.h.0.attn"]
        asked.screenshot(path=str(artifacts / "lab-unfold-asked-nested.png"))
        page.keyboard.press("Escape")  # back one level: the view the kernel sent is kept, no new question
        assert frames_of(page, asked, 1) == ["gt-unfolded"]
        page.keyboard.press("Escape")
        frames_of(page, asked, 0)
        # two groups asked for in a row, at a step where neither was laid out yet: the one asked for last shows
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("(r) => r.dataset.step === '4'", arg=asked.element_handle())
        asked.evaluate(WATCH_BUSY)
        both = [folded_box(asked, labels["h.0"]), folded_box(asked, labels["h.1"])]
        asked.evaluate("""(r, ids) => ids.forEach((id) => r.querySelector(`.gt-graph svg g[id='${id}']`)
          .dispatchEvent(new MouseEvent('click', { bubbles: true })))""", both)  # the second before any answer
        # the kernel answers in the order it was asked (one message at a time): once the second group's view
        # shows, the first answer has come too, and was not shown over it
        assert frames_of(page, asked, 1) == ["gt-unfolded"]
        assert asked.locator(".gt-unfold-words").inner_text().startswith(f"Unfolded: {labels['h.1']}")
        assert f"Laying out {labels['h.1']}" in asked.evaluate("(r) => r.dataset.sawBusy")
        page.keyboard.press("Escape")
        frames_of(page, asked, 0)
        page.keyboard.press("End")
        # 3. the kernel is gone: the stepper says so plainly
        jl.stop_kernels(lab)
        give_keys(page, asked)
        click_folded(asked, labels["h.1"])
        said = asked.locator(".gt-unfold-words")
        page.wait_for_function("(e) => /no kernel answered/.test(e.textContent)", arg=said.element_handle(),
                               timeout=40_000)
        assert said.inner_text().startswith(labels["h.1"]) and "run this cell again" in said.inner_text()
        assert frames_of(page, asked, 0) == []
        asked.screenshot(path=str(artifacts / "lab-unfold-no-kernel.png"))
    except Exception:
        page.screenshot(path=str(artifacts / "lab-unfold-failure.png"))
        raise
    finally:
        context.close()
    assert guard.dialogs == [] and guard.outside == [] and guard.errors == [], (guard.dialogs, guard.outside,
                                                                                guard.errors)

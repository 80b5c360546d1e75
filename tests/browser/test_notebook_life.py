"""A notebook's life in a real JupyterLab: two traced cells, saving, reopening, exporting, hostile input.

Lab is started with "save widget state" on (the harder case for a saved notebook),
its notebooks written here with nbformat. Every expected name and number comes from
running the same code with PyTorch here.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiny_models
import torch
from lab import (
    QUIZ,
    SETUP,
    Lab,
    give_keys,
    new_page,
    open_alone,
    quiz_grad,
    run_all,
    save,
    stop_kernels,
    wait_idle,
    write_notebook,
)

import gradtrace
from gradtrace.notebook.embed import film_of, packed
from gradtrace.render.html import film_json

REPO = Path(__file__).resolve().parents[2]
LESSON = "01_reverse_mode.ipynb"
SAVE_STATE = {"@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True}}

WHATIF1 = """x = torch.tensor(42., requires_grad=True)
x = x ** 2
x3 = x ** 3
f = x + x3
x.retain_grad()
f.backward()
"""
WHATIF2 = """x = torch.tensor(42., requires_grad=True)
y = x ** 2
x = y ** 3
f = y + x
x.retain_grad()
f.backward()
"""
# Hostile text through every learner-controlled channel: a dict key (a name), a comment and a
# string in the code, an autograd Function's class name (a node), an exception message.
FLAG = "window.gtPwned=1"
HOSTILE = f"""%%gradtrace
# <img src=x onerror="{FLAG}"> <script>{FLAG}</script>
evil = {{'<img src=x onerror="{FLAG}">': torch.ones(2, requires_grad=True)}}
note = "</script><script>{FLAG}</script>"
Bad = type('<svg onload="{FLAG}">', (torch.autograd.Function,), {{
    'forward': staticmethod(lambda ctx, t: t * 2),
    'backward': staticmethod(lambda ctx, g: g * 2)}})
out = Bad.apply(evil['<img src=x onerror="{FLAG}">'])
out.sum().backward()
raise ValueError('<img src=x onerror="{FLAG}"> \\u202e done')
"""


def plain_tensor_names(source: str) -> set[str]:
    """The names bound to tensors when ``source`` runs plainly in a fresh namespace."""
    ns: dict[str, Any] = {"torch": torch}
    exec(compile(source, "<plain>", "exec"), ns)  # noqa: S102 - the test's own program
    return {k for k, v in ns.items() if isinstance(v, torch.Tensor)}


@pytest.fixture(scope="module")
def life(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    src = tmp_path_factory.mktemp("life-src")
    setup = SETUP
    write_notebook(src / "two_cells.ipynb", setup, "%%gradtrace\n" + WHATIF1, "%%gradtrace\n" + WHATIF2)
    write_notebook(src / "quiz.ipynb", setup, QUIZ)
    write_notebook(src / "hostile.ipynb", setup + "\ngradtrace.notebook.settings.widget = 'anywidget'", HOSTILE)
    # a widget stepper of a folded graph that carries no unfolded view: each is laid out by its kernel
    write_notebook(src / "unfold_saved.ipynb", setup + "\ngradtrace.notebook.settings.widget = 'anywidget'"
                   "\ngradtrace.notebook.settings.view_bytes = 0", tiny_models.MODEL,
                   "%%gradtrace\n" + tiny_models.PROGRAM)
    shutil.copy(REPO / "notebooks" / LESSON, src / LESSON)
    server = Lab(src, tmp_path_factory.mktemp("life"), log_name="life.log", settings=SAVE_STATE).start()
    try:
        yield server
    finally:
        server.stop()


VISIBLE_NAMES = """(root) => [...root.querySelectorAll('.gt-graph svg g[id^="gt-name"]')]
  .filter(g => g.id !== 'gt-names' && !(g.getAttribute('class') || '').split(' ').includes('gt-hidden'))
  .map(g => [...g.querySelectorAll('text')].map(t => t.textContent).join(' ').trim())"""
VISIBLE_BOXES = """(root) => [...root.querySelectorAll('.gt-graph svg g[id^="gt-t"]')]
  .filter(g => !(g.getAttribute('class') || '').split(' ').includes('gt-hidden')).length"""

SVG_TEXTS = "(root) => [...root.querySelectorAll('.gt-graph svg text')].map(t => t.textContent)"


def to_end(page: Any, root: Any) -> None:
    give_keys(page, root)
    page.keyboard.press("End")
    last = page.wait_for_function("(r) => r.dataset.step !== '0' && r.dataset.step", arg=root.element_handle())
    assert last


def check_steps(page: Any, root: Any) -> None:
    """The stepper answers the keyboard: ArrowRight moves from step 0 to 1."""
    give_keys(page, root)
    page.keyboard.press("Home")
    page.wait_for_function("(r) => r.dataset.step === '0'", arg=root.element_handle())
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(r) => r.dataset.step === '1'", arg=root.element_handle())


def test_second_cell_shows_only_its_own_objects(life: Lab, browser: Any, artifacts: Path) -> None:
    context, page, guard = new_page(browser)
    try:
        open_alone(page, life, "two_cells.ipynb")
        run_all(page)
        shown = []
        for i in (1, 2):  # cell by cell: JupyterLab draws only the cells in view
            cell = page.locator(".jp-Notebook .jp-CodeCell").nth(i)
            cell.scroll_into_view_if_needed()
            root = cell.locator(".jp-OutputArea-output .gt-root")
            root.locator("svg").first.wait_for(timeout=60_000)
            to_end(page, root)
            shown.append((set(root.evaluate(VISIBLE_NAMES)), root.evaluate(VISIBLE_BOXES)))
        page.screenshot(path=str(artifacts / "lab-two-cells.png"))
        save(page)
    finally:
        context.close()
    assert shown[0][0] == plain_tensor_names(WHATIF1)
    assert shown[1][0] == plain_tensor_names(WHATIF2), f"the second cell drew other cells' names: {shown[1][0]}"
    alone = gradtrace.trace_code(WHATIF2, {"torch": torch})
    assert shown[1][1] == len(alone.last.tensors), shown  # no boxes of the first cell's objects
    assert guard.dialogs == [] and guard.outside == [] and guard.errors == [], (guard.dialogs, guard.outside,
                                                                                guard.errors)


def test_reopened_notebook_shows_the_saved_steppers(life: Lab, browser: Any, artifacts: Path) -> None:
    saved = json.loads((life.root / "two_cells.ipynb").read_text(encoding="utf-8"))
    if not any(c.get("outputs") for c in saved["cells"]):
        pytest.skip("needs the saved notebook of test_second_cell_shows_only_its_own_objects")
    stop_kernels(life)
    context, page, guard = new_page(browser)
    try:
        page.goto(life.url("lab/tree/two_cells.ipynb?reset"), wait_until="domcontentloaded")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
        text = ""
        for i in (1, 2):  # cell by cell: JupyterLab draws only the cells in view
            cell = page.locator(".jp-Notebook .jp-CodeCell").nth(i)
            cell.scroll_into_view_if_needed()
            root = cell.locator(".jp-OutputArea-output .gt-root")
            try:
                root.locator("svg").first.wait_for(timeout=60_000)
            except Exception:
                page.screenshot(path=str(artifacts / "lab-reopened-failure.png"))
                raise
            text += cell.inner_text()
            check_steps(page, root)
        page.screenshot(path=str(artifacts / "lab-reopened.png"))
        prompts = page.evaluate("() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                                ".map(p => p.textContent.trim())")
    finally:
        context.close()
    assert "model not found" not in text and "Error displaying widget" not in text
    assert not any("*" in p for p in prompts), "the reopened notebook ran its cells"
    assert guard.dialogs == [] and guard.outside == [] and guard.errors == [], (guard.dialogs, guard.outside,
                                                                                guard.errors)


@pytest.fixture(scope="module")
def saved_lesson(life: Lab, browser: Any, artifacts: Path) -> Path:
    """Lesson 01 run in JupyterLab and saved (with widget state)."""
    context, page, _ = new_page(browser)
    try:
        open_alone(page, life, LESSON)
        run_all(page, timeout=240_000)
        page.locator(".jp-OutputArea-output .gt-root svg").first.wait_for(timeout=60_000)
        save(page)
    except Exception as exc:
        page.screenshot(path=str(artifacts / "lab-lesson-failure.png"))
        errors = page.locator("[data-mime-type*='error']")
        said = "\n".join(errors.all_inner_texts())[-3000:]
        raise AssertionError(f"{exc}\n--- errors shown ---\n{said}\n--- lab log ---\n{life.log_tail()}") from exc
    finally:
        context.close()
    stop_kernels(life)
    return life.root / LESSON


def test_saved_lesson_stores_the_stepper_once(saved_lesson: Path) -> None:
    text = saved_lesson.read_text(encoding="utf-8")
    nb = json.loads(text)
    assert "widgets" in nb["metadata"], "JupyterLab saved no widget state: the case under test is missing"
    outputs = [o for c in nb["cells"] for o in c.get("outputs", []) if "gt-embed" in json.dumps(o.get("data", {}))]
    assert len(outputs) == 1
    state = json.dumps(nb["metadata"]["widgets"])
    assert "gt-embed" not in state and "sheets" not in state, "the widget state holds a film too"
    html = "".join(outputs[0]["data"]["text/html"])
    sheet = film_of(html)["sheets"][0]
    line = re.search(r' d="([^"]{40,})"', sheet)
    assert line is not None
    assert text.count(line[1]) == 0, "the film's picture is stored unpacked"
    assert text.count(packed(film_json(film_of(html)))) == 1, "the film is stored twice"


def test_export_of_a_notebook_saved_with_widget_state_steps_offline(saved_lesson: Path, browser: Any,
                                                                    tmp_path: Path, artifacts: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(tmp_path), str(saved_lesson)],
        capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    page_file = tmp_path / LESSON.replace(".ipynb", ".html")
    context, page, guard = new_page(browser)  # every request off this machine is aborted
    try:
        page.goto(page_file.as_uri())
        root = page.locator(".gt-root")
        root.locator("svg").first.wait_for(timeout=30_000)
        assert root.count() == 1
        check_steps(page, root)
        to_end(page, root)
        want = f"grad {quiz_grad()}."
        page.wait_for_function(f"([r, want]) => ({SVG_TEXTS})(r).some((t) => t.includes(want))",
                               arg=[root.element_handle(), want], timeout=30_000)
        pictured = " ".join(root.evaluate(SVG_TEXTS))
        page.screenshot(path=str(artifacts / "export-offline.png"))
    finally:
        context.close()
    assert f"grad {quiz_grad()}." in pictured, pictured[:2000]
    assert guard.dialogs == [] and guard.errors == [], (guard.dialogs, guard.errors)
    # nbconvert's own page loads its widget manager, require.js and MathJax from the network; nothing else may
    ours = [u for u in guard.outside if not any(k in u.lower() for k in ("jupyter-widgets", "require", "mathjax"))]
    assert ours == [], ours


def test_hostile_text_through_the_widget_is_inert(life: Lab, browser: Any, artifacts: Path) -> None:
    context, page, guard = new_page(browser)
    try:
        open_alone(page, life, "hostile.ipynb")
        run_all(page)
        widget = page.locator(".jp-OutputArea-output .gt-root")
        try:
            widget.locator("svg").first.wait_for(timeout=60_000)
        except Exception:
            page.screenshot(path=str(artifacts / "lab-hostile-failure.png"))
            raise
        assert widget.count() == 1
        assert page.locator(".jp-OutputArea-output .gt-embed").count() == 0, "the HTML stepper showed, not the widget"
        to_end(page, widget)
        widget.locator(".gt-graph svg g[id^='gt-n']:not([id^='gt-name']):not(.gt-hidden)",
                       has_text="onload").first.click()
        widget.locator(".gt-details:not(.gt-off) .gt-details-title").wait_for()  # its details, hostile text and all
        live = page.evaluate("""() => {
          const outs = [...document.querySelectorAll('.jp-OutputArea-output')];
          const bad = outs.flatMap(o => [...o.querySelectorAll('img, iframe, object, embed, script, svg [onload]')]);
          return {bad: bad.map(e => e.outerHTML.slice(0, 120)), pwned: !!window.gtPwned};
        }""")
        shown = widget.inner_text() + " ".join(widget.evaluate(SVG_TEXTS))
        page.screenshot(path=str(artifacts / "lab-hostile.png"))
    finally:
        context.close()
    assert live == {"bad": [], "pwned": False}, live
    assert '<img src=x onerror="window.gtPwned=1">' in shown  # shown as text
    assert guard.dialogs == [] and guard.outside == [], (guard.dialogs, guard.outside)


PROMPTS = "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim())"


def answer(page: Any, text: str, expect: str) -> str:
    """Type ``text`` into the quiz box and press Enter; the verdict once it says ``expect``."""
    box = page.locator(".gt-quiz-input").last
    box.fill(text)
    box.press("Enter")
    result = page.locator(".gt-quiz-result").last
    result.filter(has_text=expect).wait_for(timeout=30_000)
    return result.inner_text()


def quiz_cell_numbers(page: Any) -> tuple[str, str]:
    """The prompt numbers of the set-up cell and the quiz cell, as the notebook shows them."""
    prompts = page.evaluate(PROMPTS)
    return re.sub(r"\D", "", prompts[0]), re.sub(r"\D", "", prompts[1])


def quiz_outputs(lab: Lab) -> Any:
    """What the saved quiz notebook holds: each cell's output kinds and the widget state's models."""
    nb = json.loads((lab.root / "quiz.ipynb").read_text(encoding="utf-8"))
    state = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    return ([[sorted(o.get("data", {})) for o in c.get("outputs", [])] for c in nb["cells"]],
            sorted(m.get("model_name", "") for m in state.values()))


def test_quiz_answers_live_rearms_on_reload_and_says_what_to_run_without_its_kernel(life: Lab, browser: Any,
                                                                                       artifacts: Path) -> None:
    truth = quiz_grad()
    context, page, guard = new_page(browser)
    try:
        open_alone(page, life, "quiz.ipynb")
        run_all(page)
        page.locator(".gt-quiz-input").wait_for(timeout=60_000)
        note = page.locator(".gt-quiz-note")
        note.wait_for(state="hidden", timeout=30_000)  # a kernel answers the box: no note
        said = answer(page, "53376", "Not quite")
        assert str(truth) not in said and page.locator(".gt-quiz-reveal").last.is_visible()
        assert "Right!" in answer(page, str(truth), "Right!")
        # the quiz cell alone, run again: a new box that answers
        before = page.evaluate(PROMPTS)[1]
        page.locator(".jp-Notebook .jp-CodeCell").nth(1).locator(".jp-InputArea-editor").click()
        page.keyboard.press("Control+Enter")  # run this cell, stay on it (no new cell below)
        page.wait_for_function(f"() => {{ const p = ({PROMPTS})()[1]; return p !== {before!r} && !p.includes('*'); }}")
        wait_idle(page)
        # the prompt's number can come before the box is drawn (JupyterLab draws a widget once its model is
        # fetched): the box first, then how many there are
        page.locator(".gt-quiz-input").first.wait_for(timeout=60_000)
        assert page.locator(".gt-quiz-input").count() == 1
        assert "Right!" in answer(page, str(truth), "Right!")
        save(page)
        # the page reloaded while the kernel runs: JupyterLab draws the box again from the kernel, and it answers
        page.reload(wait_until="domcontentloaded")
        page.locator(".gt-quiz-input").wait_for(timeout=60_000)
        note.wait_for(state="hidden", timeout=30_000)
        assert "Not quite" in answer(page, "1", "Not quite")
        page.screenshot(path=str(artifacts / "lab-quiz-live.png"))
    finally:
        context.close()
    stop_kernels(life)
    # reopened with no kernel of its own: the saved box cannot answer; the note names the cells to run
    context, page, guard2 = new_page(browser)
    try:
        page.goto(life.url("lab/tree/quiz.ipynb?reset"), wait_until="domcontentloaded")
        page.locator(".gt-quiz-note").wait_for(timeout=60_000)
        setup, this = quiz_cell_numbers(page)
        text = page.locator(".gt-quiz-note").inner_text()
        assert f"run cell [{setup}] (it imports gradtrace), then this cell, [{this}]" in text, (text, setup, this)
        try:
            page.locator(".gt-quiz-input").wait_for(timeout=90_000)  # saved widget state draws the box
        except Exception:
            page.screenshot(path=str(artifacts / "lab-quiz-reopen-failure.png"))
            raise AssertionError(f"no saved quiz box drawn: {quiz_outputs(life)}") from None
        page.wait_for_timeout(5_000)  # longer than the box waits for a kernel's hello
        assert page.locator(".gt-quiz-note").is_visible()
        page.locator(".gt-quiz-input").fill(str(truth))
        page.locator(".gt-quiz-input").press("Enter")
        page.locator(".gt-quiz-silent", has_text="No kernel answered").wait_for(timeout=30_000)
        page.screenshot(path=str(artifacts / "lab-quiz-no-kernel.png"))
        # what the note says to do: Run All, and the box answers again
        life.wait_kernel(90, sleep=lambda s: page.wait_for_timeout(s * 1000))
        try:
            run_all(page)
            page.locator(".gt-quiz-note").wait_for(state="hidden", timeout=30_000)
        except Exception:
            page.screenshot(path=str(artifacts / "lab-quiz-rerun-failure.png"))
            raise
        assert "Right!" in answer(page, str(truth), "Right!")
    finally:
        context.close()
    for g in (guard, guard2):
        assert g.dialogs == [] and g.outside == [] and g.errors == [], (g.dialogs, g.outside, g.errors)


FOLDED_TIPS = """(root) => [...root.querySelectorAll('.gt-graph svg g.node.gt-m-folded:not(.gt-hidden)')]
  .map((g) => [g.id, (g.querySelector(':scope > title') || {}).textContent || ''])"""


def test_a_widget_drawn_from_saved_state_offers_no_kernel_unfolding(life: Lab, browser: Any,
                                                                   artifacts: Path) -> None:
    """With its kernel, a folded box says a click has the kernel unfold it; the same stepper drawn from the
    saved notebook's widget state (no kernel of its own) says only what the page holds, and a click says
    how to see the group at once, instead of waiting for a kernel that never answers."""
    context, page, guard = new_page(browser)
    try:
        open_alone(page, life, "unfold_saved.ipynb")
        run_all(page)
        root = page.locator(".jp-OutputArea-output .gt-widget .gt-root").first
        root.locator("svg").first.wait_for(timeout=60_000)
        to_end(page, root)
        page.wait_for_function(f"(r) => ({FOLDED_TIPS})(r).some(([, t]) => t.includes('have the kernel'))",
                               arg=root.element_handle(), timeout=30_000)
        save(page)
    finally:
        context.close()
    stop_kernels(life)
    context, page, guard2 = new_page(browser)
    try:
        page.goto(life.url("lab/tree/unfold_saved.ipynb?reset"), wait_until="domcontentloaded")
        root = page.locator(".jp-OutputArea-output .gt-widget .gt-root").first
        try:
            root.locator("svg").first.wait_for(timeout=90_000)  # saved widget state draws the stepper
        except Exception:
            page.screenshot(path=str(artifacts / "lab-unfold-saved-failure.png"))
            raise
        to_end(page, root)
        # until the stepper has stopped waiting to hear from a kernel (5 s after it was drawn; a loaded machine
        # may take longer, or draw it again)
        page.wait_for_function("(r) => r.dataset.kernel === 'gone'", arg=root.element_handle(), timeout=60_000)
        tips = root.evaluate(FOLDED_TIPS)
        assert tips and all(t == "folded (no unfolded picture at this step)" for _, t in tips), tips
        dom = tips[0][0]
        pick = root.locator(f".gt-pick button[data-id='{dom}']")
        assert not (pick.get_attribute("aria-label") or "").startswith("unfold")
        root.locator(f".gt-graph svg g[id='{dom}']").click()
        said = root.locator(".gt-unfold-words")
        said.wait_for(state="visible", timeout=5_000)  # at once: nobody is asked
        words = said.inner_text()
        root.screenshot(path=str(artifacts / "lab-unfold-saved-no-kernel.png"))
    finally:
        context.close()
    assert "no unfolded picture of it was prepared" in words and "run its cell again" in words, words
    assert re.search(r"draw step \d+ \(line \d+\) in Python, with trace the Trace this shows \(trace = "
                     r"gradtrace\.last_trace\(\)", words), words  # a name the learner can make, not trace[5] alone
    assert "Laying out" not in words
    assert guard.dialogs == [] and guard.outside == [] and guard2.dialogs == [] and guard2.outside == []

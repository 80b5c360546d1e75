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
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
import torch
from lab import Lab, new_page, run_all, wait_idle

VIEW = {"width": 1280, "height": 720}
SETUP = "import torch\nimport gradtrace\n%load_ext gradtrace"
QUIZ = ("q = gradtrace.quiz('''\nx = torch.tensor(42., requires_grad=True)\nf = x ** 2 + x ** 3\nf.backward()\n''', "
        "ask='x.grad')\nq")


def write_notebook(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    cells = []
    for i, src in enumerate(sources):
        cell = nbformat.v4.new_code_cell(src)
        cell["id"] = f"c{i}"
        cells.append(cell)
    nb.cells = cells
    nbformat.write(nb, path)


def stop_kernels(lab: Lab) -> None:
    for kernel in lab.kernels():
        req = urllib.request.Request(lab.url(f"api/kernels/{kernel['id']}"), method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()


def open_alone(page: Any, lab: Lab, name: str, timeout: float = 90_000) -> None:
    """Open ``name`` as the only notebook, with a new kernel of its own ready."""
    stop_kernels(lab)
    page.goto(lab.url(f"lab/tree/{name}?reset"), wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
    lab.wait_kernel(timeout / 1000, sleep=lambda s: page.wait_for_timeout(s * 1000))
    wait_idle(page, timeout)


def save(page: Any) -> None:
    page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)


def plain_grad() -> int:
    x = torch.tensor(42., requires_grad=True)
    (x ** 2 + x ** 3).backward()
    assert x.grad is not None
    return int(x.grad.item())


# ------------------------------------------------------------------------------------------ the quiz
def test_reopened_quiz_shows_only_the_note_without_a_kernel_made_box(lab: Lab, browser: Any,
                                                                    artifacts: Path) -> None:
    write_notebook(lab.root / "quiz_reopen.ipynb", SETUP, QUIZ)
    truth = plain_grad()
    context, page, guard = new_page(browser)
    page.set_viewport_size(VIEW)
    try:
        open_alone(page, lab, "quiz_reopen.ipynb")
        run_all(page)
        page.locator(".gt-quiz-input").wait_for(timeout=60_000)
        page.locator(".gt-quiz-note").wait_for(state="hidden", timeout=30_000)  # a kernel answers: no note
        box = page.locator(".gt-quiz-input")
        box.fill(str(truth))
        box.press("Enter")
        page.locator(".gt-quiz-result", has_text="Right!").wait_for(timeout=30_000)
        save(page)
    finally:
        context.close()
    saved = json.loads((lab.root / "quiz_reopen.ipynb").read_text(encoding="utf-8"))
    assert "widgets" not in saved["metadata"]  # the default: JupyterLab saves no widget state
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
               for c in saved["cells"] for o in c.get("outputs", []))
    stop_kernels(lab)
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
        page.wait_for_timeout(500)
        cell = page.locator(".jp-Notebook .jp-CodeCell").nth(1)
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

"""The stepper's keys in a real JupyterLab and on the one-file page, through real Chromium.

In JupyterLab a stepper that has the keyboard keeps every key: the notebook's single-key
commands (M makes a cell Markdown, X cuts it, A inserts one, Shift+M merges, J/K move the
selection, Enter edits) and its chords (Ctrl+Backspace merges, Alt+Enter runs and inserts)
never see them, so the traced cell, its stepper and the notebook stay as they were.
The walk keys (↓ ↑ through the reverse pass, Shift+L out of a loop) are checked on the
one-file page; the steps and nodes they should reach are read off the trace's own records.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import SETUP, Lab, give_keys, new_page, open_alone, run_all

from gradtrace.render.film import film as make_film

from pages import LOOP, traced, with_flow

# a loop that ends the program, calling a function defined before it (a with statement is a step as it starts and
# as it ends)
LAST_LOOP = """w = torch.tensor(1.0, requires_grad=True)
def step(w):
    loss = (w * 2 - 1) ** 2
    return loss
for i in range(3):
    loss = step(w)
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad = None
"""

# What JupyterLab shows of the notebook: each cell's type, text and prompt (a run changes it), the active and
# selected cells, the mode, the two views a key can switch (line numbers, side-by-side Markdown), the steppers.
NOTEBOOK_JS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const cells = [...nb.querySelectorAll('.jp-Cell')];
  const kind = (c) => ['jp-CodeCell', 'jp-MarkdownCell', 'jp-RawCell'].find(k => c.classList.contains(k)) || '?';
  return {
    cells: cells.map(c => [kind(c), (c.querySelector('.jp-InputArea-editor .cm-content') || {}).textContent,
                           (c.querySelector('.jp-InputPrompt') || {}).textContent]),
    active: cells.findIndex(c => c.classList.contains('jp-mod-active')),
    selected: cells.flatMap((c, i) => c.classList.contains('jp-mod-selected') ? [i] : []),
    mode: nb.classList.contains('jp-mod-editMode') ? 'edit' : 'command',
    lineNumbers: nb.querySelectorAll('.cm-lineNumbers').length,
    sideBySide: nb.classList.contains('jp-mod-sideBySide'),
    steppers: nb.querySelectorAll('.jp-OutputArea-output .gt-root').length,
  };
}"""
# whether a notebook stepper has the keyboard (false at once when the stepper is gone)
HAS_KEYS_JS = "() => !!(document.activeElement && document.activeElement.closest('.jp-OutputArea-output .gt-root'))"
# two frames: what a key made JupyterLab do (its commands run at once, or on a promise) is drawn by then
SETTLE_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

PUNCTUATION = ["Backquote", "Minus", "Equal", "BracketLeft", "BracketRight", "Backslash", "Semicolon", "Quote",
               "Comma", "Period", "Slash"]
# the keys a teacher may press, in groups: none may reach JupyterLab
GROUPS = {
    "letters": list(string.ascii_lowercase),
    "shifted letters": [f"Shift+Key{c}" for c in string.ascii_uppercase],
    "digits": [f"Digit{d}" for d in range(10)] + [f"Shift+Digit{d}" for d in range(10)],
    "punctuation": PUNCTUATION + [f"Shift+{k}" for k in PUNCTUATION],
    "enter, space, escape": ["Enter", "Shift+Enter", "Space", "Space", "Escape", "Backspace", "Delete"],
    "arrows and paging": ["ArrowDown", "ArrowUp", "ArrowRight", "ArrowLeft", "Home", "End", "PageDown", "PageUp",
                          "Shift+ArrowDown", "Shift+ArrowUp", "Shift+Home", "Shift+End"],
    "chords": ["Control+Backspace", "Control+Shift+KeyM", "Control+Shift+ArrowUp", "Control+Shift+ArrowDown",
               "Alt+Enter", "Control+Enter", "Control+KeyA"],
}


# the stepper as the notebook's HTML output (the default) and as an anywidget widget
NOTEBOOKS = {"keys.ipynb": SETUP, "keys_widget.ipynb": SETUP + "\ngradtrace.notebook.settings.widget = 'anywidget'"}


@pytest.fixture(scope="module")
def keys_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    src = tmp_path_factory.mktemp("keys-src")
    for name, setup in NOTEBOOKS.items():
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
        nb.cells = [nbformat.v4.new_code_cell(setup), nbformat.v4.new_markdown_cell("# The loop, traced"),
                    nbformat.v4.new_code_cell("%%gradtrace\n" + LOOP), nbformat.v4.new_code_cell("after = 1")]
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"c{i}"
        nbformat.write(nb, src / name)
    server = Lab(src, tmp_path_factory.mktemp("keys"), log_name="keys.log").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("name", list(NOTEBOOKS), ids=["html", "anywidget"])
def test_no_key_reaches_the_notebook(keys_lab: Lab, browser: Any, artifacts: Path, name: str) -> None:
    context, page, guard = new_page(browser)
    try:
        open_alone(page, keys_lab, name)
        run_all(page)
        root = page.locator(".jp-OutputArea-output .gt-root").first
        root.locator("svg").first.wait_for(timeout=60_000)
        # the notebook's HTML output sits in a .gt-embed, the widget's view does not
        assert root.evaluate("r => !!r.closest('.gt-embed')") == (name == "keys.ipynb")
        give_keys(page, root)
        page.evaluate(SETTLE_JS)
        start = page.evaluate(NOTEBOOK_JS)
        assert start["steppers"] == 1 and [c[0] for c in start["cells"]] == ["jp-CodeCell", "jp-MarkdownCell",
                                                                            "jp-CodeCell", "jp-CodeCell"], start
        for group, keys in GROUPS.items():
            for key in keys:
                page.keyboard.press(key)
                has_keys = page.evaluate(HAS_KEYS_JS)
                assert has_keys, f"{key} ({group}) took the keyboard from the stepper"
            page.evaluate(SETTLE_JS)
            now = page.evaluate(NOTEBOOK_JS)
            if now != start:
                page.screenshot(path=str(artifacts / "lab-keys-leaked.png"))
            assert now == start, f"{group} reached JupyterLab"
        root.locator("svg").first.wait_for()
        assert root.get_attribute("data-step") is not None
        give_keys(page, root)
        page.keyboard.press("Tab")  # the browser still moves the focus on
        assert page.evaluate("(r) => document.activeElement !== r", root.element_handle())
    finally:
        context.close()
    assert guard.dialogs == [] and guard.outside == [] and guard.errors == [], (guard.dialogs, guard.outside,
                                                                                guard.errors)


def _pos(page: Any) -> int:
    return int(page.get_attribute(".gt-root", "data-step") or -1)


def _sub(page: Any) -> int:
    return int(page.get_attribute(".gt-root", "data-sub") or -9)


def test_walk_stays_at_the_last_node_and_walks_back(stepper: Any) -> None:
    trace = traced(LOOP)
    film = with_flow(trace, make_film(trace))
    back = next(i for i, s in enumerate(film["steps"]) if s.get("flow"))
    flow = film["steps"][back]["flow"]
    assert len(flow) >= 3, flow  # y.backward() through the loop's multiplications
    page = stepper(film)
    page.select_option(".gt-steplist", str(back))
    page.locator(".gt-root").focus()
    page.keyboard.press("ArrowUp")  # no walk on: ↑ walks back from the last node, every gradient written
    assert _pos(page) == back and _sub(page) == len(flow) - 1
    assert page.locator(".gt-graph g.gt-flow-now").evaluate("g => g.id") == flow[-1]["node"]
    labels = page.locator(".gt-flow-label").count()
    assert labels > 0
    page.keyboard.press("ArrowUp")
    assert _sub(page) == len(flow) - 2
    assert page.locator(".gt-graph g.gt-flow-now").evaluate("g => g.id") == flow[-2]["node"]
    for _ in range(len(flow) + 2):  # down to the last node and past it: the walk stays there
        page.keyboard.press("ArrowDown")
    assert _pos(page) == back and _sub(page) == len(flow) - 1
    assert page.locator(".gt-flow-label").count() == labels
    assert "end of the reverse pass" in (page.locator(".gt-banner").text_content() or "")
    page.keyboard.press("Escape")  # Escape leaves the walk: the step as a whole
    assert _pos(page) == back and _sub(page) == -1 and page.locator(".gt-flow-label").count() == 0
    page.keyboard.press("ArrowDown")
    assert _sub(page) == 0
    page.keyboard.press("ArrowUp")  # back past the first node: the walk ends, the step stays
    assert _pos(page) == back and _sub(page) == -1 and page.locator(".gt-flow-label").count() == 0


@pytest.mark.parametrize("code", [LOOP, LAST_LOOP], ids=["loop-then-more", "loop-ends-program"])
def test_leave_loop_from_every_step_inside(stepper: Any, code: str) -> None:
    """Shift+L from each step of the loop (its last pass too) goes to the first step after it, or to the last step
    when the loop ends the program; outside the loop it does nothing."""
    trace = traced(code)
    steps = trace.steps
    lines = code.splitlines()
    head = next(i + 1 for i, text in enumerate(lines) if text.startswith("for "))
    body = {head} | {i + 1 for i, text in enumerate(lines) if i + 1 > head and text.startswith("    ")}
    inside = [i for i, s in enumerate(steps) if s.lineno in body]
    after = [i for i, s in enumerate(steps) if i > inside[0] and s.lineno > max(body)]
    page = stepper(make_film(trace))
    leave = page.locator(".gt-controls button", has_text="leave loop")
    for i in inside:
        page.select_option(".gt-steplist", str(i))
        page.locator(".gt-root").focus()
        target = after[0] if after else len(steps) - 1
        if i == target:
            assert leave.is_disabled()
            continue
        assert leave.is_enabled(), i
        page.keyboard.press("Shift+KeyL")
        assert _pos(page) == target, (i, steps[i].lineno)
    outside = next(i for i, s in enumerate(steps) if s.lineno < head and s.lineno not in body)
    page.select_option(".gt-steplist", str(outside))
    page.locator(".gt-root").focus()
    assert leave.is_disabled()
    page.keyboard.press("Shift+KeyL")
    assert _pos(page) == outside


def _passes(steps: Any, head: int, body: set[int]) -> list[list[int]]:
    """The loop's passes: its steps from one run of its header to the next (the last check alone is no pass)."""
    runs: list[list[int]] = []
    for i, s in enumerate(steps):
        if s.lineno == head:
            runs.append([])
        if s.lineno in body and runs:
            runs[-1].append(i)
    return [r for r in runs if len(r) > 1]


@pytest.mark.parametrize("code", [LOOP, LAST_LOOP], ids=["loop-then-more", "loop-ends-program"])
def test_next_pass_from_every_step_inside(stepper: Any, code: str) -> None:
    """L from each step of the loop goes to its line in the next pass that runs it (a with statement's start, not
    its end in the same pass); from the last pass it does nothing."""
    trace = traced(code)
    steps = trace.steps
    lines = code.splitlines()
    head = next(i + 1 for i, text in enumerate(lines) if text.startswith("for "))
    body = {head} | {i + 1 for i, text in enumerate(lines) if i + 1 > head and text.startswith("    ")}
    runs = _passes(steps, head, body)
    assert len(runs) == 3, runs
    page = stepper(make_film(trace))
    button = page.locator(".gt-controls button", has_text="next pass")
    for k, run in enumerate(runs):
        for i in run:
            target = next((j for later in runs[k + 1:] for j in later if steps[j].lineno == steps[i].lineno), None)
            page.select_option(".gt-steplist", str(i))
            page.locator(".gt-root").focus()
            assert button.is_disabled() == (target is None), (i, steps[i].lineno)
            page.keyboard.press("l")
            assert _pos(page) == (i if target is None else target), (i, steps[i].lineno)

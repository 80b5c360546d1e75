"""The notebook's static HTML (notebook/embed.py) in a plain page, in real Chromium: boot.js loads the stepper.

Two outputs on one page, as two cells of an exported notebook: each carries the stepper's data and the
loader, the stepper's CSS is added once, and both films mount and step with no kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from lab import new_page

from gradtrace import trace_code
from gradtrace.notebook.embed import embed_html

FORUM = "x = torch.tensor(42., requires_grad=True)\nf = x ** 2 + x ** 3\nf.backward()\n"
REBIND = "a = torch.ones(2, requires_grad=True)\nb = a * 3\nb = b.sum()\n"


def test_two_embeds_load_the_stepper_once_and_both_step(browser: Any, tmp_path: Path) -> None:
    traces = [trace_code(code, {"torch": torch}) for code in (FORUM, REBIND)]
    body = "\n".join(f"<div class='cell'>{embed_html(t)}</div>" for t in traces)
    path = tmp_path / "export.html"
    path.write_text(f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'></head><body>{body}</body></html>\n",
                    encoding="utf-8")
    context, page, guard = new_page(browser)
    try:
        page.goto(path.as_uri())
        roots = page.locator(".gt-embed .gt-root")
        roots.nth(1).wait_for()
        assert roots.count() == 2
        assert page.locator("style[data-gt-css]").count() == 1  # the CSS of one stepper, added once
        for root, trace in zip((roots.nth(0), roots.nth(1)), traces, strict=True):
            slider = root.locator("input[type=range]")
            assert slider.get_attribute("max") == str(len(trace.steps) - 1)
            slider.evaluate("(s) => { s.value = '0'; s.dispatchEvent(new Event('input')); }")
            root.locator(".gt-source .gt-current").filter(has_text=trace.steps[0].code).wait_for()
        assert guard.errors == [] and guard.outside == [], (guard.errors, guard.outside)
    finally:
        context.close()

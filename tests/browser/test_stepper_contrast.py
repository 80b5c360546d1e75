"""Every text the stepper page shows, on what it sits on, in real Chromium: WCAG AA (4.5:1) in both themes.

The colours are the ones Chromium computes (stepper.css and its theme), read off the visible elements: an
HTML text's ``color`` against the first background behind it, a picture's text ``fill`` against the fill of
the box it is written in (or the halo a tag is drawn with, or the picture's background).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from gradtrace import trace_code
from gradtrace.render.dot import contrast
from gradtrace.render.film import film as make_film

ROOT = Path(__file__).resolve().parents[2]

# [{text, fg, bg, fade, page, bgFade}] for every visible text of the stepper, colours as computed ("rgb(r, g, b)"); a
# faded group (its opacity, `fade`) or a faded box (`bgFade`) is drawn over `page`, the colour behind the picture
TEXTS = """() => {
  const solid = (c) => c && c !== "transparent" && !/^rgba\\(.*,\\s*0\\)$/.test(c);
  const behind = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const bg = getComputedStyle(e).backgroundColor;
      if (solid(bg)) return bg;
    }
    return "rgb(255, 255, 255)";
  };
  const out = [];
  const root = document.querySelector(".gt-root");
  for (const el of root.querySelectorAll("*")) {
    if (el.closest(".gt-sr-only, .gt-off, option, :disabled, .gt-hidden")) continue;
    const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data).join("").trim();
    if (!own) continue;
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (!r.width || !r.height || style.visibility === "hidden" || style.display === "none") continue;
    if (el.namespaceURI !== "http://www.w3.org/2000/svg") {
      out.push({ text: own, fg: style.color, bg: behind(el) });
      continue;
    }
    let bg = null, bgFade = 1;
    if (style.stroke !== "none" && style.paintOrder.startsWith("stroke")) bg = style.stroke; // a haloed tag
    const node = el.closest("g.node");
    if (!bg && node) {
      const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
      for (const shape of node.querySelectorAll(".gt-bg")) {
        const b = shape.getBoundingClientRect();
        if (b.left <= x && x <= b.right && b.top <= y && y <= b.bottom) {
          bg = getComputedStyle(shape).fill;
          bgFade = parseFloat(getComputedStyle(shape).opacity);
        }
      }
    }
    let fade = 1;
    for (let e = el; e && e.namespaceURI === "http://www.w3.org/2000/svg"; e = e.parentElement) {
      fade *= parseFloat(getComputedStyle(e).opacity);
    }
    const page = behind(el.closest("svg"));
    out.push({ text: own, fg: style.fill, bg: bg || page, fade, page, bgFade });
  }
  return out;
}"""


def _hex(css: str) -> str:
    r, g, b = (int(float(v)) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _over(colour: str, page: str, fade: float) -> str:
    """``colour`` drawn at opacity ``fade`` over ``page``."""
    mix = [round(fade * int(colour[i : i + 2], 16) + (1 - fade) * int(page[i : i + 2], 16)) for i in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def _too_faint(page: Any) -> list[str]:
    # boxes fade in and out as a step changes (a CSS transition): read the colours they settle on
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")
    seen = page.evaluate(TEXTS)
    assert len(seen) > 20, seen  # the page's text was read (titles, code, rows of the boxes)
    faint = []
    for t in seen:
        fg, bg = _hex(t["fg"]), _hex(t["bg"])
        if t.get("bgFade", 1) < 1:  # a faded box under full-strength words
            bg = _over(bg, _hex(t["page"]), t["bgFade"])
        if t.get("fade", 1) < 1:
            fg, bg = _over(fg, _hex(t["page"]), t["fade"]), _over(bg, _hex(t["page"]), t["fade"])
        if contrast(fg, bg) < 4.5:
            faint.append(f"{t['text'][:30]!r}: {fg} on {bg} = {contrast(fg, bg):.2f}:1")
    return faint


def _wait_step(page: Any, i: int) -> None:
    page.wait_for_function(f"() => document.querySelector('.gt-root').dataset.step === '{i}'")


@pytest.mark.parametrize("scheme", ["light", "dark", "jupyterlab-dark"])
def test_every_text_meets_wcag_aa_in_both_themes(stepper: Any, scheme: str) -> None:
    """The forum's program: the leaf's ``grad 5376.`` and the ``(freed)`` rows after backward(), the current line.
    The dark theme comes from the system's colour scheme, or from JupyterLab's ``data-jp-theme-light="false"``."""
    code = (ROOT / "examples" / "forum_original.py").read_text(encoding="utf-8")
    film = make_film(trace_code(code, {"torch": torch}, filename="forum_original"))
    back = next(i for i, s in enumerate(film["steps"]) if s["reverse"])
    page = stepper(film, color_scheme="light" if scheme == "jupyterlab-dark" else scheme)
    if scheme == "jupyterlab-dark":
        page.evaluate("() => { document.body.dataset.jpThemeLight = 'false'; }")
        page.wait_for_function("() => getComputedStyle(document.querySelector('.gt-root')).color"
                               " === 'rgb(233, 236, 239)'")  # --gt-text of the dark theme
    faint: list[str] = []
    for i in (back - 1, back, len(film["steps"]) - 1):
        page.locator(".gt-steplist").select_option(str(i))
        _wait_step(page, i)
        faint += [f"step {i}: {f}" for f in _too_faint(page)]
    page.locator(".gt-steplist").select_option(str(back))
    _wait_step(page, back)
    page.keyboard.press("ArrowDown")  # the reverse pass walked: the banner and the gradients written on arrows
    page.wait_for_function("() => document.querySelector('.gt-root').dataset.sub === '0'")
    faint += [f"walk: {f}" for f in _too_faint(page)]
    page.keyboard.press("Escape")
    page.keyboard.press("d")  # before/after backward(): freed nodes faded, tags in words
    page.wait_for_function("() => document.querySelector('.gt-root').classList.contains('gt-diffing')")
    faint += [f"diff: {f}" for f in _too_faint(page)]
    page.keyboard.press("d")
    page.keyboard.press("t")  # the step as text
    page.wait_for_function("() => document.querySelector('.gt-twin:not(.gt-sr-only)')")
    faint += [f"text: {f}" for f in _too_faint(page)]
    page.keyboard.press("t")
    page.locator(".gt-graph svg g.gt-box.gt-node:not(.gt-hidden)").first.click()  # a node's details
    page.locator(".gt-popover .gt-details-table").wait_for()
    faint += [f"details: {f}" for f in _too_faint(page)]
    rows = page.evaluate("() => [...document.querySelectorAll('.gt-svg .gt-row-freed, .gt-svg .gt-row-grad')]"
                         ".filter(t => !t.closest('.gt-hidden')).length")
    assert rows >= 2  # the freed and the grad rows were among the texts read
    assert faint == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_an_error_step_meets_wcag_aa(stepper: Any, scheme: str) -> None:
    """A stale saved value: the red rows, the warning and the explanation."""
    code = (ROOT / "examples" / "inplace_error.py").read_text(encoding="utf-8")
    film = make_film(trace_code(code, {"torch": torch}, filename="inplace_error", raise_errors=False))
    page = stepper(film, color_scheme=scheme)
    faint: list[str] = []
    for i in (film["error_step"] - 1, film["error_step"]):
        page.locator(".gt-steplist").select_option(str(i))
        _wait_step(page, i)
        faint += [f"step {i}: {f}" for f in _too_faint(page)]
    assert faint == []

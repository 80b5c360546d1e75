"""The stepper's default zoom, in real Chromium at a projector's 1024x768 and 1280x720.

A picture wider (or taller) than its box opens shrunk to fit it, never below the legibility floor
(stepper.js AUTO_FLOOR) and never above 100%; below the floor it stays at the floor and scrolls. A zoom the
user chose sticks across steps; resizing the window fits again while the zoom is the default one.
The programs are traced here by gradtrace: the sizes checked are those of its own layout.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from gradtrace.render.film import film as make_film

from pages import FLOOR, LOOK_JS, TEXT_PX, traced

ROOT = Path(__file__).resolve().parents[2]

SMALL = {"width": 1024, "height": 768}
WIDE = {"width": 1280, "height": 720}
PROJECTORS = [SMALL, WIDE]
IDS = ["1024x768", "1280x720"]

# a linear model's loss: wider than the graph's box at both sizes, narrower than the box at the floor
LINEAR = """w = torch.tensor([1.0, 2.0], requires_grad=True)
x = torch.tensor([3.0, 4.0])
loss = (w * x).sum()
loss.backward()
"""
# one multiplication: fits the box at 1280x720, not at 1024x768
SQUARE = """x = torch.tensor(3.0, requires_grad=True)
y = x * x
y.backward()
"""
# no autograd graph at all: narrow everywhere
NARROW = """a = torch.ones(3)
b = a * 2
"""


def mlp_loop(iterations: int) -> str:
    """The benchmark's MLP training loop (benchmarks/workloads.py), a picture far wider than any projector."""
    spec = importlib.util.spec_from_file_location("gt_workloads", ROOT / "benchmarks" / "workloads.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.mlp_source(iterations))


# the picture's padding (.gt-picture) and a margin, as stepper.js fit() leaves them
PAD = 16


def look(page: Any) -> dict[str, Any]:
    got: dict[str, Any] = page.evaluate(LOOK_JS)
    # the read-out is the real zoom: the drawing's size on screen over its own size
    real = got["shown"][0] / got["drawing"][0]
    assert abs(real * 100 - got["level"]) < 0.6, got
    got["zoom"] = real
    return got


# the boxes a step marks (made, moved, changed): each inside the box's visible part, and whether all of them
# could be (their union no bigger than the box), else whether the union's middle is in the box
FOCUS_JS = """() => {
  const graph = document.querySelector('.gt-graph'), g = graph.getBoundingClientRect();
  const v = {left: g.left, top: g.top, right: g.left + graph.clientWidth, bottom: g.top + graph.clientHeight};
  const rects = [...graph.querySelectorAll('g.gt-box.gt-m-created, g.gt-box.gt-m-moved, g.gt-box.gt-m-mutated')]
    .filter(n => !n.classList.contains('gt-hidden')).map(n => n.getBoundingClientRect());
  if (!rects.length) return {fits: true, inside: []};
  const u = {left: Math.min(...rects.map(r => r.left)), right: Math.max(...rects.map(r => r.right)),
    top: Math.min(...rects.map(r => r.top)), bottom: Math.max(...rects.map(r => r.bottom))};
  const mx = (u.left + u.right) / 2, my = (u.top + u.bottom) / 2;
  return {
    fits: u.right - u.left <= v.right - v.left - 8 && u.bottom - u.top <= v.bottom - v.top - 8,
    inside: rects.map(r => r.left >= v.left - 0.5 && r.right <= v.right + 0.5 && r.top >= v.top - 0.5
      && r.bottom <= v.bottom + 0.5),
    middle: mx >= v.left && mx <= v.right && my >= v.top && my <= v.bottom,
  };
}"""


# resolves after n animation frames: a resize is handled (the ResizeObserver fires in the frame after it, and the
# refit it asks for comes the frame after that), and presenter mode's settling too
FRAMES_JS = """(n) => new Promise((done) => {
  const next = () => (--n > 0 ? requestAnimationFrame(next) : done());
  requestAnimationFrame(next);
})"""


def frames(page: Any, n: int = 3) -> None:
    page.evaluate(FRAMES_JS, n)


def wait_level(page: Any, not_level: int) -> None:
    page.wait_for_function(f"() => parseInt(document.querySelector('.gt-zoomlevel').textContent, 10) !== {not_level}")


@pytest.mark.parametrize("view", PROJECTORS, ids=IDS)
def test_a_wide_picture_opens_fitted(stepper: Any, view: dict[str, int]) -> None:
    trace = traced(LINEAR)
    page = stepper(make_film(trace), view=view)
    page.keyboard.press("Home")  # it opens at the first step that changes something: from the very first
    page.wait_for_function("() => document.querySelector('.gt-root').dataset.step === '0'")
    got = look(page)
    width, height = got["drawing"]
    assert width + PAD > got["room"][0], got  # wider than its box at 100%: the case this is about
    assert got["boxes"] > 3 and got["outside"] == [], got
    assert FLOOR * 100 - 0.5 <= got["level"] < 100 and got["mode"] == "auto", got
    # the largest whole percent that fits: one more and it would not
    more = (got["level"] + 1) / 100
    assert more * width > got["room"][0] - PAD or more * height > got["room"][1] - PAD, got
    assert not got["wide"], got
    assert got["smallest"] is None or got["smallest"] >= TEXT_PX * FLOOR - 0.01, got
    # every step, the reverse pass walked node by node, and the before/after view: the same zoom, all in view
    for i in range(len(trace.steps)):
        page.wait_for_function(f"() => document.querySelector('.gt-root').dataset.step === '{i}'")
        now = look(page)
        assert now["outside"] == [] and now["level"] == got["level"], (i, now)
        assert now["smallest"] is None or now["smallest"] >= TEXT_PX * FLOOR - 0.01, (i, now)
        if i < len(trace.steps) - 1:
            page.keyboard.press("ArrowRight")
    for _ in range(8):
        page.keyboard.press("ArrowDown")
        now = look(page)
        assert now["outside"] == [] and now["level"] == got["level"], now
        if "(end of the reverse pass)" in page.locator(".gt-banner").inner_text():
            break
    assert page.locator(".gt-flow-label").count() > 0  # the walk stays at its last node, every gradient written
    page.keyboard.press("Escape")  # leaves the walk: the whole step again
    page.wait_for_function("() => document.querySelector('.gt-root').dataset.sub === '-1'")
    assert page.locator(".gt-flow-label").count() == 0
    page.keyboard.press("d")
    assert page.locator(".gt-tag").count() > 0
    now = look(page)
    assert now["outside"] == [] and now["level"] == got["level"], now
    page.keyboard.press("d")
    # the picture's words are still there for screen readers, the read-out says how the zoom was chosen
    assert page.locator(".gt-twin[aria-label='picture as text'] li").count() > 0
    assert "fitted" in got["title"], got


@pytest.mark.parametrize("view", PROJECTORS, ids=IDS)
def test_a_narrow_picture_opens_at_100(stepper: Any, view: dict[str, int]) -> None:
    page = stepper(make_film(traced(NARROW)), view=view)
    page.keyboard.press("End")
    got = look(page)
    assert got["drawing"][0] + PAD <= got["room"][0], got
    assert got["level"] == 100 and got["shown"][0] == pytest.approx(got["drawing"][0], abs=0.01), got
    assert got["outside"] == [] and got["smallest"] == pytest.approx(TEXT_PX, abs=0.01), got


@pytest.mark.parametrize("view", PROJECTORS, ids=IDS)
def test_below_the_floor_it_stays_at_the_floor_and_scrolls(stepper: Any, view: dict[str, int]) -> None:
    trace = traced(mlp_loop(2), "mlp")
    page = stepper(make_film(trace), view=view)
    page.keyboard.press("Home")  # it opens at the first step that changes something: from the very first
    page.wait_for_function("() => document.querySelector('.gt-root').dataset.step === '0'")
    got = look(page)
    width, height = got["drawing"]
    assert min((got["room"][0] - PAD) / width, (got["room"][1] - PAD) / height) < FLOOR, got  # too big to fit
    assert got["level"] == round(FLOOR * 100) and got["wide"], got
    assert got["scroll"] == [0, 0], got  # step 1 shows nothing yet: the top left, where the names are
    # each step scrolls to what it made, moved or changed (reveal): all of it when it fits the box, else its middle
    for i in range(1, len(trace.steps)):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => document.querySelector('.gt-root').dataset.step === '{i}'")
        focus = page.evaluate(FOCUS_JS)
        if focus["fits"]:
            assert all(focus["inside"]), (i, focus)
        else:
            assert focus["middle"], (i, focus)
    now = look(page)
    assert now["level"] == got["level"] and now["smallest"] >= TEXT_PX * FLOOR - 0.01, now
    # the fit button still shows the whole picture, below the floor: the teacher asked for it
    page.locator(".gt-zoombar button", has_text="fit").click()
    fitted = look(page)
    assert fitted["level"] < got["level"] and fitted["outside"] == [] and fitted["mode"] == "fit", fitted


def test_a_chosen_zoom_sticks_across_steps_until_fit(stepper: Any) -> None:
    trace = traced(LINEAR)
    page = stepper(make_film(trace), view=SMALL)
    auto = look(page)["level"]
    page.keyboard.press("+")
    chosen = look(page)
    assert chosen["level"] > auto and chosen["mode"] == "user", chosen
    for _ in range(len(trace.steps)):
        page.keyboard.press("ArrowRight")
        assert look(page)["level"] == chosen["level"]
    page.keyboard.press("Home")
    page.locator(".gt-zoombar button", has_text="−").click()
    page.locator(".gt-zoombar button", has_text="−").click()
    smaller = look(page)
    assert smaller["level"] < auto, smaller
    page.keyboard.press("End")
    assert look(page)["level"] == smaller["level"]
    # a resize leaves a chosen zoom alone
    page.set_viewport_size(WIDE)
    frames(page)  # the resize handled
    assert look(page)["level"] == smaller["level"]
    page.set_viewport_size(SMALL)
    # fit (0): the whole picture again, and it stays fitted across steps
    page.keyboard.press("0")
    fitted = look(page)
    assert fitted["mode"] == "fit" and fitted["outside"] == [] and fitted["level"] == auto, fitted
    page.keyboard.press("Home")
    assert look(page)["level"] == fitted["level"]


# every zoom read-out (text, mode) shown from now on, in window.gtLevels
WATCH_LEVEL_JS = """() => {
  const level = document.querySelector('.gt-zoomlevel');
  window.gtLevels = [];
  new MutationObserver(() => window.gtLevels.push([level.textContent, level.dataset.mode]))
    .observe(level, {childList: true, characterData: true, subtree: true, attributes: true});
}"""


def test_presenter_mode_gives_the_zoom_back(stepper: Any) -> None:
    page = stepper(make_film(traced(LINEAR)), view=SMALL)
    auto = look(page)
    for chosen in (False, False, False, True, True, True):  # thrice each: the flash below came now and then
        if chosen and look(page)["mode"] != "user":
            page.keyboard.press("-")
        before = look(page)
        page.keyboard.press("f")
        page.wait_for_function("() => document.querySelector('.gt-zoomlevel').dataset.mode === 'present'")
        page.keyboard.press("ArrowRight")
        page.evaluate(WATCH_LEVEL_JS)
        page.keyboard.press("Escape")
        page.wait_for_function("() => document.querySelector('.gt-zoomlevel').dataset.mode !== 'present'")
        frames(page)  # a refit of the box left would come within a frame or two
        after = look(page)
        assert (after["level"], after["mode"]) == (before["level"], before["mode"]), (before, after)
        # and never another zoom on the way: measured while full screen was still being left, the box was the
        # screen's and the "auto" zoom read 71% for a moment (then 67%)
        shown = page.evaluate("window.gtLevels")
        assert shown and all(level == f"{before['level']}%" for level, mode in shown if mode != "present"), shown
        if not chosen:
            assert after["outside"] == [] and after["level"] == auto["level"], after


READOUT_JS = "() => [document.querySelector('.gt-zoomlevel').textContent, document.querySelector('.gt-zoomlevel')" \
    ".dataset.mode]"
# a second key pressed at once after a key (keys: {first: second}): dispatched right after the stepper has handled
# the first, before the page draws another frame
AT_ONCE_JS = """(keys) => document.addEventListener('keydown', (e) => {
  const then = keys[e.key];
  const press = () => e.target.dispatchEvent(new KeyboardEvent('keydown', {key: then, bubbles: true}));
  if (then && e.isTrusted) queueMicrotask(press);
})"""


def test_a_zoom_key_pressed_as_presenter_mode_starts_or_ends_counts(stepper: Any) -> None:
    """f then + at once, Escape then - at once: each zoom key counts as if pressed once the screen has changed.
    They were lost when pressed before that (now and then by hand): the fit on entering and the zoom given back
    on leaving replaced them."""
    film = make_film(traced(LINEAR))
    page = stepper(film, view=SMALL)
    page.keyboard.press("f")
    page.wait_for_function("() => document.fullscreenElement")
    frames(page)
    page.keyboard.press("+")
    entered = page.evaluate(READOUT_JS)
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.fullscreenElement")
    frames(page)
    page.keyboard.press("-")
    left = page.evaluate(READOUT_JS)
    assert entered[1] == "present" and left[1] == "user", (entered, left)
    page = stepper(film, view=SMALL)
    page.evaluate(AT_ONCE_JS, {"f": "+", "Escape": "-"})
    page.keyboard.press("f")
    page.wait_for_function("() => document.fullscreenElement")
    frames(page)
    assert page.evaluate(READOUT_JS) == entered
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.fullscreenElement")
    frames(page)
    assert page.evaluate(READOUT_JS) == left


def test_f_pressed_twice_at_once_leaves_no_full_screen(stepper: Any) -> None:
    """f f at once: presenter mode entered and left before the screen changed. Full screen came a moment later
    all the same, over a stepper no longer in presenter mode (its zoom and layout those of the page)."""
    page = stepper(make_film(traced(LINEAR)), view=SMALL)
    before = page.evaluate(READOUT_JS)
    page.evaluate("() => { window.gtScreens = 0; document.addEventListener('fullscreenchange', () => "
                  "{ window.gtScreens += 1; }); }")
    page.evaluate(AT_ONCE_JS, {"f": "f"})
    page.keyboard.press("f")
    # the browser grants the first f full screen, a moment later: it must be left again
    page.wait_for_function("() => window.gtScreens >= 2")
    frames(page)
    assert page.evaluate("() => [document.fullscreenElement, window.gtScreens]") == [None, 2]
    assert page.evaluate(READOUT_JS) == before
    assert "gt-present" not in (page.get_attribute(".gt-root", "class") or "")


def test_a_resize_fits_again(stepper: Any) -> None:
    page = stepper(make_film(traced(SQUARE)), view=WIDE)
    page.keyboard.press("End")
    wide = look(page)
    assert wide["level"] == 100 and wide["outside"] == [], wide  # it fits at 1280x720
    page.set_viewport_size(SMALL)
    wait_level(page, 100)
    small = look(page)
    assert FLOOR * 100 - 0.5 <= small["level"] < 100 and small["outside"] == [] and not small["wide"], small
    page.set_viewport_size(WIDE)
    wait_level(page, small["level"])
    back = look(page)
    assert back["level"] == 100 and back["outside"] == [], back
    # the same for a box made narrower by the page around it (a notebook's column), with the window unchanged
    page.evaluate("() => { document.querySelector('.gt-root').style.width = '900px'; }")
    wait_level(page, 100)
    narrowed = look(page)
    assert narrowed["level"] < 100 and narrowed["outside"] == [], narrowed

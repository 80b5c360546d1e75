"""The standalone stepper page in real Chromium at a projector's 1280x720.

Programs: the ``%%gradtrace`` cells of lessons 01-04 (read from ``notebooks/``), a
loop, and a Trojan-Source sample. Every number checked comes from PyTorch run
plainly here, or from the trace's own records (ids, the reverse pass).
"""

from __future__ import annotations

import json
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import torch
from lab import lesson01_facts

from gradtrace import trace_code
from gradtrace.explain.errors import explain_error
from gradtrace.explain.reverse import reverse_lines
from gradtrace.render.film import film as make_film
from gradtrace.render.text import step_text

from pages import FLOOR, LOOP, ROOT, TEXT_PX, lesson_cells, traced, with_flow

VIEW = {"width": 1280, "height": 720}


LESSONS = [(f"{n}:{i}", code) for n in ("01_reverse_mode.ipynb", "02_names_and_objects.ipynb",
                                        "03_inplace_mutation.ipynb", "04_nonscalar_outputs.ipynb")
           for i, code in enumerate(lesson_cells(n))]
LESSON01 = lesson_cells("01_reverse_mode.ipynb")[0]


def num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(v)


INSIDE_JS = """(el) => {
  const r = el.getBoundingClientRect();
  let ok = r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight + 0.5 && r.left >= 0
    && r.right <= window.innerWidth + 0.5;
  for (let p = el.parentElement; p && ok; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (/(auto|scroll|hidden)/.test(s.overflowY + s.overflowX)) {
      const q = p.getBoundingClientRect();
      ok = r.top >= q.top - 0.5 && r.bottom <= q.bottom + 0.5;
    }
  }
  return ok;
}"""

SMALL_TEXT_JS = f"""() => [...document.querySelectorAll('.gt-graph svg text')]
  .filter(t => getComputedStyle(t).visibility !== 'hidden' && t.textContent.trim() && t.getBBox().width > 0)
  .map(t => ({{text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a}}))
  .filter(t => t.px < {TEXT_PX * FLOOR - 0.01})"""


def svg_text(page: Any, selector: str) -> str:
    return str(page.locator(selector).first.text_content() or "")


def visible(page: Any, selector: str) -> bool:
    loc = page.locator(selector).first
    return loc.count() > 0 and bool(loc.evaluate(INSIDE_JS))


@pytest.mark.parametrize("name,code", LESSONS, ids=[n for n, _ in LESSONS])
def test_every_step_fits_a_projector(stepper: Any, name: str, code: str) -> None:
    """Picture, "what this step did" and the current reverse-pass line, together, with no page scroll."""
    trace = traced(code, name)
    page = stepper(make_film(trace))
    page.keyboard.press("Home")  # the page opens at the first step that changes something: from the very first
    for i, step in enumerate(trace.steps):
        page.wait_for_function(f"() => document.querySelector('.gt-root').dataset.step === '{i}'")
        assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight"), (name, i)
        assert visible(page, ".gt-graph"), (name, i)
        assert visible(page, ".gt-event"), (name, i)
        assert visible(page, ".gt-srcline.gt-current"), (name, i)
        if reverse_lines(step):
            assert visible(page, ".gt-revline.gt-current"), (name, i)
        assert page.evaluate(SMALL_TEXT_JS) == [], (name, i)
        page.keyboard.press("ArrowRight")


def test_lesson01_backward_line_in_view(stepper: Any, artifacts: Path) -> None:
    facts = lesson01_facts()
    page = stepper(make_film(traced(LESSON01, "01_reverse_mode")))
    page.keyboard.press("End")
    meet = f"{num(facts['d3'])} + {num(facts['d2'])} = {num(facts['grad'])}"
    current = page.locator(".gt-revline.gt-current").all_inner_texts()
    assert any(meet in line for line in current), current
    assert any(f".grad = {num(facts['grad'])}" in line for line in current), current
    assert visible(page, ".gt-revline.gt-current") and visible(page, ".gt-graph svg")
    page.screenshot(path=str(artifacts / "page-lesson01-backward.png"))


def test_wide_graph_scrolls_below_the_floor(stepper: Any) -> None:
    """Too wide to fit at the legibility floor: shrunk to the floor, not further, and scrolled."""
    code = ("net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8), torch.nn.Tanh(),"
            " torch.nn.Linear(8, 3))\nx = torch.randn(5, 4)\nloss = net(x).pow(2).mean()\nloss.backward()\n")
    page = stepper(make_film(traced(code)))
    page.keyboard.press("End")
    assert page.evaluate(SMALL_TEXT_JS) == []
    assert page.locator(".gt-zoomlevel").inner_text() == f"{round(FLOOR * 100)}%"
    assert visible(page, ".gt-graph")
    graph = page.locator(".gt-graph")
    wide = graph.evaluate("g => g.scrollWidth > g.clientWidth")
    tall = graph.evaluate("g => g.scrollHeight > g.clientHeight")
    assert wide or tall
    step = page.get_attribute(".gt-root", "data-step")
    page.keyboard.press("Shift+ArrowRight" if wide else "Shift+ArrowDown")
    moved = graph.evaluate("g => g.scrollLeft + g.scrollTop")
    assert moved > 0 and page.get_attribute(".gt-root", "data-step") == step


def test_reverse_pass_walked_node_by_node(stepper: Any, artifacts: Path) -> None:
    facts = lesson01_facts()
    trace = traced(LESSON01, "01_reverse_mode")
    film = with_flow(trace, make_film(trace))
    back = next(i for i, s in enumerate(film["steps"]) if s.get("flow"))
    flow = film["steps"][back]["flow"]
    page = stepper(film)
    page.keyboard.press("End")
    assert int(page.get_attribute(".gt-root", "data-step") or -1) == back
    leaf = next(k for k, v in flow[-1]["grads"].items())
    page.keyboard.press("ArrowDown")
    assert "grad -" in svg_text(page, f"#{leaf}") or "grad None" in svg_text(page, f"#{leaf}")
    for j, sub in enumerate(flow):
        if j:
            page.keyboard.press("ArrowDown")
        assert page.get_attribute(".gt-root", "data-sub") == str(j)
        assert page.locator(".gt-graph g.gt-flow-now").evaluate("g => g.id") == sub["node"]
        assert sub["text"] in svg_text(page, ".gt-banner")
    labels = dict(page.evaluate("() => [...document.querySelectorAll('.gt-flow-label')]"
                                ".map(t => [t.dataset.edge, t.textContent])"))
    # the edges explain() names: "n3 PowBackward0 ... sends to n2: ... = 5292"
    lines = reverse_lines(trace.steps[back])
    for value in (facts["d3"], facts["d2"]):
        said = next(line for line in lines if line.strip().startswith("sends to") and line.endswith(f"= {num(value)}"))
        node = lines[max(i for i in range(lines.index(said)) if re.match(r"^ {2}\S", lines[i]))].split()[0]
        target = said.split("sends to ")[1].split(":")[0]
        assert labels[f"gt-e-next-{node}-{target}"].rstrip(".") == num(value), labels
    assert f"grad {num(facts['grad'])}" in svg_text(page, f"#{leaf}")
    page.screenshot(path=str(artifacts / "page-lesson01-walk.png"))
    shown = page.locator(".gt-flow-label").count()
    page.keyboard.press("ArrowDown")  # past the last node: the walk stays there, its gradients written
    assert page.get_attribute(".gt-root", "data-sub") == str(len(flow) - 1)
    assert page.locator(".gt-flow-label").count() == shown > 0
    page.keyboard.press("Escape")  # Escape leaves the walk: the whole step again
    assert page.get_attribute(".gt-root", "data-sub") == "-1"
    assert page.locator(".gt-flow-label").count() == 0


def pytorch_freed_nodes() -> int:
    """How many backward nodes of lesson 01's graph hold saved values that backward() frees."""
    x = torch.tensor(42.0, requires_grad=True)
    f = x**2 + x**3
    nodes = [fn for fn, _ in f.grad_fn.next_functions]
    f.backward()
    freed = 0
    for node in nodes:
        try:
            node._saved_self  # noqa: B018 - reading it is the check
        except RuntimeError:
            freed += 1
    return freed


@pytest.mark.parametrize("extended", [False, True], ids=["read-off-frames", "film-diff"])
def test_diff_view_marks_what_backward_changed(stepper: Any, artifacts: Path, extended: bool) -> None:
    facts = lesson01_facts()
    trace = traced(LESSON01, "01_reverse_mode")
    film = make_film(trace)
    page = stepper(with_flow(trace, film) if extended else film)
    page.keyboard.press("d")
    assert page.locator(".gt-compare-btn").get_attribute("aria-pressed") == "true"
    freed = page.locator(".gt-graph g.gt-diff-freed.node")
    assert freed.count() == pytorch_freed_nodes()
    assert page.locator(".gt-tag-freed").count() == freed.count()
    grad = page.locator(".gt-graph g.gt-diff-grad")
    assert grad.count() == 1
    tag = page.locator(".gt-tag-grad").text_content() or ""
    assert tag.endswith(f"→ {num(facts['grad'])}.") or tag.endswith(f"→ {num(facts['grad'])}"), tag
    assert f"grad {num(facts['grad'])}" in (grad.text_content() or "")
    sizes = page.evaluate("() => [...document.querySelectorAll('.gt-tag')].map(t => t.getBoundingClientRect().height)")
    assert min(sizes) >= 12
    if not extended:
        page.screenshot(path=str(artifacts / "page-lesson01-diff.png"))
    page.click("text=show before")  # the other state: before backward() (the B key does the same)
    assert page.locator(".gt-diff-btn-before, button[aria-pressed='true']", has_text="show before").count() == 1
    assert "grad -" in (grad.text_content() or "")
    assert "BEFORE" in page.locator(".gt-banner").inner_text()
    page.keyboard.press("b")
    assert "grad -" not in (grad.text_content() or "")
    page.keyboard.press("d")
    assert page.locator(".gt-graph g.gt-diff-freed").count() == 0
    assert page.locator("text=show before").is_disabled()


def test_presenter_mode_answers_the_keys(stepper: Any, artifacts: Path) -> None:
    trace = traced(LESSON01, "01_reverse_mode")
    page = stepper(make_film(trace))
    step = lambda: int(page.get_attribute(".gt-root", "data-step") or -1)  # noqa: E731
    page.keyboard.press("f")
    root = page.locator(".gt-root")
    # presenter mode's zoom is shown once the screen has changed (a zoom key pressed before that counts after it)
    page.wait_for_function("() => document.querySelector('.gt-zoomlevel').dataset.mode === 'present'")
    assert "gt-present" in (root.get_attribute("class") or "")
    box = root.bounding_box()
    assert box is not None and box["width"] >= VIEW["width"] - 1 and box["height"] >= VIEW["height"] - 1
    assert float(page.evaluate("getComputedStyle(document.querySelector('.gt-root')).fontSize")[:-2]) >= 18
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")
    assert step() == 2
    page.keyboard.press("PageUp")
    assert step() == 1
    page.keyboard.press("End")
    assert step() == len(trace) - 1
    page.keyboard.press("Home")
    assert step() == 0
    page.keyboard.press("ArrowRight")
    assert step() == 1
    zoom = lambda: int(page.locator(".gt-zoomlevel").inner_text().rstrip("%"))  # noqa: E731
    start = zoom()
    page.keyboard.press("+")
    assert zoom() > start
    page.keyboard.press("-")
    page.keyboard.press("-")
    assert zoom() < start
    page.keyboard.press("0")
    fit = page.evaluate("""() => { const g = document.querySelector('.gt-graph'), s = g.querySelector('svg');
      return [g.clientWidth, g.clientHeight, s.getBoundingClientRect().width, s.getBoundingClientRect().height]; }""")
    assert fit[2] <= fit[0] and fit[3] <= fit[1] and (fit[2] >= fit[0] - 40 or fit[3] >= fit[1] - 40), fit
    page.keyboard.press("End")
    page.wait_for_timeout(300)
    page.screenshot(path=str(artifacts / "page-presenter.png"))
    page.keyboard.press("Escape")
    assert "gt-present" not in (root.get_attribute("class") or "")
    page.keyboard.press("Home")
    page.keyboard.press(" ")  # play: steps on by itself, then space pauses
    page.wait_for_function("() => document.querySelector('.gt-root').dataset.step === '1'")
    page.keyboard.press(" ")
    assert page.locator(".gt-controls button", has_text="play").count() == 1




def test_next_event_skip_loop_and_step_list(stepper: Any) -> None:
    trace = traced(LOOP)
    page = stepper(make_film(trace))
    steps = trace.steps
    pos = lambda: int(page.get_attribute(".gt-root", "data-step") or -1)  # noqa: E731

    def is_event(s: Any) -> bool:
        return any(e.kind in ("rebind", "mutate", "backward") for e in s.events)

    expected = [i for i, s in enumerate(steps) if is_event(s)]
    seen = []
    for _ in expected:
        page.keyboard.press("e")
        seen.append(pos())
    assert seen == expected
    page.keyboard.press("Home")
    loop_line = next(s.lineno for s in steps if s.code.startswith("y = y * x"))
    first = next(i for i, s in enumerate(steps) if s.lineno == loop_line)
    page.select_option(".gt-steplist", str(first))
    assert pos() == first
    page.locator(".gt-root").focus()
    page.keyboard.press("l")
    assert pos() > first and steps[pos()].lineno == loop_line
    page.keyboard.press("L")
    after = [i for i, s in enumerate(steps) if s.lineno > loop_line + 1]
    assert pos() == after[0]
    # the step list numbers steps as the text twin does
    options = page.locator(".gt-steplist option").all_inner_texts()
    assert len(options) == len(steps)
    for s, label in zip(steps, options, strict=True):
        head = step_text(s).split("\n", 1)[0]  # "step 3, line 4: y = y * x"
        number = re.match(r"step (\d+), line (\d+)", head)
        assert number and label.startswith(f"step {number[1]} · line {number[2]}"), (head, label)
    # "step 5 of 12": numbered from 1, as the text twin numbers them
    assert page.locator(".gt-status").inner_text().startswith(f"step {steps[pos()].index + 1} of {len(steps)} ")


TROJAN = '''access = "user"
# \u202e } \u2066if access != "admin":\u2069 \u2066 # begin admins only
globals()["tag\u202e\u200f"] = torch.tensor(1., requires_grad=True)
label = "\u202ereversed\u202c" + "\u200e"
'''


def test_bidi_controls_show_escaped(stepper: Any) -> None:
    """Trojan Source: a bidi override in code or names shows as \\u202e, as in the text twin."""
    trace = traced(TROJAN, "trojan")
    page = stepper(make_film(trace))
    page.keyboard.press("End")
    text = page.evaluate("document.body.innerText + [...document.querySelectorAll('svg text')]"
                         ".map(t => t.textContent).join(' ')")
    for ch in ("\u202e", "\u2066", "\u2069", "\u200f", "\u200e", "\u202c"):
        assert ch not in text, f"raw U+{ord(ch):04X} on the page"
    source = page.locator(".gt-source").inner_text()
    assert "\\u202e" in source and "\\u2066" in source and "\\u200f" in source
    drawn = page.evaluate("[...document.querySelectorAll('.gt-graph svg text')].map(t => t.textContent)")
    assert "tag\\u202e\\u200f" in drawn, drawn


def test_save_this_step_as_svg_and_png(stepper: Any, tmp_path: Path) -> None:
    facts = lesson01_facts()
    page = stepper(make_film(traced(LESSON01, "01_reverse_mode")), accept_downloads=True)
    page.keyboard.press("End")
    with page.expect_download() as got:
        page.click("text=save SVG")
    svg_path = tmp_path / got.value.suggested_filename
    got.value.save_as(svg_path)
    assert svg_path.suffix == ".svg"
    tree = ET.parse(svg_path)
    texts = [t.text or "" for t in tree.iter("{http://www.w3.org/2000/svg}text")]
    assert any(t.endswith(f"grad {num(facts['grad'])}.") for t in texts), texts
    shown = page.evaluate("""() => [...document.querySelectorAll('.gt-graph svg text')]
      .filter(t => getComputedStyle(t).visibility !== 'hidden' && t.textContent.trim()).map(t => t.textContent)""")
    assert set(shown) <= set(texts), set(shown) - set(texts)
    with page.expect_download() as got:
        page.click("text=save PNG")
    png = tmp_path / got.value.suggested_filename
    got.value.save_as(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 400 and height > 100


def test_keyboard_only_details(stepper: Any) -> None:
    trace = traced(LESSON01, "01_reverse_mode")
    page = stepper(make_film(trace))
    page.keyboard.press("End")
    page.locator(".gt-pick-btn").first.focus()
    names = page.locator(".gt-pick-btn").all_inner_texts()
    node = next(i for i, n in enumerate(names) if "PowBackward0" in n)
    page.locator(".gt-pick-btn").nth(node).focus()
    page.keyboard.press("Enter")
    details = page.locator(".gt-details")
    assert "PowBackward0" in details.inner_text()
    assert visible(page, ".gt-details")
    page.keyboard.press("Escape")
    assert not details.is_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violations(stepper: Any, scheme: str) -> None:
    axe_mod = pytest.importorskip("axe_playwright_python.sync_playwright")
    trace = traced(LESSON01, "01_reverse_mode")
    page = stepper(with_flow(trace, make_film(trace)), color_scheme=scheme)
    bad: list[str] = []
    for keys in ([], ["End"], ["ArrowDown"], ["d"], ["t"]):
        for k in keys:
            page.keyboard.press(k)
        results = axe_mod.Axe().run(page)
        for v in results.response["violations"]:
            if v["impact"] in ("serious", "critical"):
                bad.append(f"{keys}: {v['id']}: {[n['target'] for n in v['nodes']][:5]}")
    assert bad == []


def test_error_step_explains_once_and_marks_culprits(stepper: Any) -> None:
    """In-place error: the plain-words explanation, PyTorch's message once, the culprits marked, one prediction."""
    trace = trace_code((ROOT / "examples" / "inplace_error.py").read_text(encoding="utf-8"), {"torch": torch},
                       filename="inplace_error", raise_errors=False)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    z = y**2
    y.add_(1)
    with pytest.raises(RuntimeError) as raised:
        z.sum().backward()
    message = str(raised.value).splitlines()[0]
    assert trace.error is not None and trace.error.message.splitlines()[0] == message
    words = explain_error(trace.error, trace)
    film = json.loads(json.dumps(make_film(trace)))
    last = film["steps"][-1]
    last["explanation"] = words.to_text()
    last["culprits"] = list(words.culprits)
    last["prediction"] = None
    page = stepper(film)
    page.keyboard.press("End")
    side = page.locator(".gt-what").inner_text()
    assert side.count(message[:60]) == 1, side
    assert words.title in page.locator(".gt-explanation").inner_text()
    assert page.locator(".gt-warning").count() == 0
    marked = page.evaluate("() => [...document.querySelectorAll('.gt-graph g.gt-m-culprit')].map(g => g.id)")
    assert sorted(marked) == sorted(f"gt-{c}" for c in words.culprits)
    assert visible(page, ".gt-srcline.gt-current")
    page.keyboard.press("Home")
    page.keyboard.press("e")
    step = trace.steps[int(page.get_attribute(".gt-root", "data-step") or -1)]
    assert any(e.kind == "mutate" for e in step.events)
    assert page.locator(".gt-warning").count() == len(step.predictions[-1:])


def test_axe_on_an_error_step(stepper: Any) -> None:
    axe_mod = pytest.importorskip("axe_playwright_python.sync_playwright")
    trace = trace_code((ROOT / "examples" / "inplace_error.py").read_text(encoding="utf-8"), {"torch": torch},
                       filename="inplace_error", raise_errors=False)
    film = json.loads(json.dumps(make_film(trace)))
    film["steps"][-1]["explanation"] = explain_error(trace.error, trace).to_text()
    page = stepper(film)
    page.keyboard.press("End")
    results = axe_mod.Axe().run(page)
    bad = [f"{v['id']}: {[n['target'] for n in v['nodes']][:5]}" for v in results.response["violations"]
           if v["impact"] in ("serious", "critical")]
    assert bad == []


def test_next_event_in_a_long_loop(stepper: Any) -> None:
    """A loop long enough to be laid out by place (ids reused across passes): events still found by object."""
    code = "w = torch.tensor(1.0, requires_grad=True)\nfor i in range(40):\n    loss = (w * 2 - 1) ** 2\n" \
           "    loss.backward()\nw.grad\n"
    trace = traced(code)
    film = make_film(trace)
    assert any(k.startswith("gt-c") for k in film["elements"]), "expected a film laid out by place"
    page = stepper(film)
    expected = [i for i, s in enumerate(trace.steps) if any(e.kind in ("rebind", "mutate", "backward")
                                                           for e in s.events)][:8]
    seen = []
    for _ in expected:
        page.keyboard.press("e")
        seen.append(int(page.get_attribute(".gt-root", "data-step") or -1))
    assert seen == expected
    page.keyboard.press("E")
    assert int(page.get_attribute(".gt-root", "data-step") or -1) == expected[-2]


def test_page_opens_at_the_first_step_that_changes_something(stepper: Any) -> None:
    """The forum's file starts with a docstring and ``import torch``: two empty pictures. The page opens at
    ``x = torch.tensor(...)``, the first step that makes a tensor; Home still goes back to the docstring."""
    code = (ROOT / "examples" / "forum_original.py").read_text(encoding="utf-8")
    trace = traced(code, "forum_original")
    first = next(i for i, s in enumerate(trace.steps) if s.events)
    assert first >= 2 and trace.steps[first].code.startswith("x = torch.tensor(")
    page = stepper(make_film(trace))
    step = lambda: int(page.get_attribute(".gt-root", "data-step") or -1)  # noqa: E731
    assert step() == first
    assert page.locator(".gt-graph svg g.gt-box.gt-tensor:not(.gt-hidden)").count() == 1  # x's tensor, drawn
    assert page.locator(".gt-legend").is_visible()
    page.keyboard.press("Home")
    page.wait_for_function("() => document.querySelector('.gt-root').dataset.step === '0'")
    assert not page.locator(".gt-legend").is_visible()  # an empty picture: nothing to explain, no empty list
    assert page.locator(".gt-srcline.gt-current").inner_text().strip().endswith('"""The course forum\'s first program:'
                                                                                 " f = x**2 + x**3 at x = 42.")

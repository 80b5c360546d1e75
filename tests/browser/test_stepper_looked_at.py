"""Defects seen in the lessons' screenshots (assets/make_screenshots.py), each kept fixed here.

The standalone stepper page in real Chromium at 1280x720, on the lessons' own programs.
"""

from __future__ import annotations

from typing import Any

import torch

from gradtrace.render.film import film as make_film

from pages import lesson_cells, traced

WHATIF2 = lesson_cells("02_names_and_objects.ipynb")[1]
MUTATE = lesson_cells("03_inplace_mutation.ipynb")[0]
LESSON01 = lesson_cells("01_reverse_mode.ipynb")[0]
MLP = """torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
out = model(torch.tensor([[1., 2.], [0.5, -1.]]))
loss = torch.nn.functional.mse_loss(out, torch.tensor([[1.], [0.]]))
loss.backward()
"""
STALE = """a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a.exp()
b.add_(1)
loss = b.sum()
loss.backward()
"""

RECTS = """() => {
  const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const shown = (e) => !(e.getAttribute('class') || '').split(' ').includes('gt-hidden');
  const svg = document.querySelector('.gt-graph svg');
  return {
    tags: [...svg.querySelectorAll('.gt-tag')].map(t => ({text: t.textContent, r: rect(t)})),
    boxes: [...svg.querySelectorAll('g.gt-box, g[id^="gt-name"]:not(#gt-names)')].filter(shown)
      .map(g => ({id: g.id, r: rect(g)})),
    drawing: rect(svg),
  };
}"""


def overlap(a: list[float], b: list[float], slack: float = 0.0) -> float:
    """The area two rectangles share (``slack``: a hair of antialiasing each side that does not count)."""
    a = [a[0] + slack, a[1] + slack, a[2] - slack, a[3] - slack]
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def test_diff_tags_cover_no_box_and_no_other_tag(stepper: Any) -> None:
    """WhatIF(2)'s x gets two tags (.grad changed, kept by retain_grad()): they were drawn on top of each other."""
    page = stepper(make_film(traced(WHATIF2)))
    page.keyboard.press("End")
    page.keyboard.press("d")
    got = page.evaluate(RECTS)
    tags = got["tags"]
    assert len(tags) >= 4, tags  # two freed nodes, x's .grad and kept, the leaf's .grad
    for i, tag in enumerate(tags):
        for other in tags[i + 1:]:
            assert overlap(tag["r"], other["r"], 1) == 0, (tag, other)
        for box in got["boxes"]:
            assert overlap(tag["r"], box["r"], 1) == 0, (tag, box)
        inside = got["drawing"]
        assert overlap(tag["r"], inside) == (tag["r"][2] - tag["r"][0]) * (tag["r"][3] - tag["r"][1]), tag


FOCUS_IN_VIEW = """() => {
  const graph = document.querySelector('.gt-graph');
  const view = graph.getBoundingClientRect();
  const right = view.left + graph.clientWidth, bottom = view.top + graph.clientHeight;
  return [...graph.querySelectorAll('g.gt-box.gt-m-created, g.gt-box.gt-m-mutated, g.gt-box.gt-flow-now')]
    .filter(g => !g.classList.contains('gt-hidden'))
    .map(g => { const r = g.getBoundingClientRect();
      return {id: g.id, inside: r.left >= view.left - 0.5 && r.right <= right + 0.5 && r.top >= view.top - 0.5
        && r.bottom <= bottom + 0.5}; });
}"""


def test_a_wide_picture_scrolls_to_what_the_step_made_or_changed(stepper: Any) -> None:
    """Lessons 02 and 03: the new x · t3 box and the mutated b were cut off at the graph's right edge."""
    for code, kind in ((WHATIF2, "rebind"), (MUTATE, "mutate")):
        trace = traced(code)
        at = next(i for i, step in enumerate(trace.steps) if step.events_of(kind))
        page = stepper(make_film(trace))
        for _ in range(at):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => document.querySelector('.gt-root').dataset.step === '{at}'")
        focus = page.evaluate(FOCUS_IN_VIEW)
        assert focus and all(f["inside"] for f in focus), (kind, focus)
    # the reverse pass walked on an MLP: the node the engine is at is in view at every sub-step
    trace = traced(MLP)
    page = stepper(make_film(trace))
    page.keyboard.press("End")
    for _ in range(len(page.evaluate("() => [...document.querySelectorAll('.gt-revline')]"))):
        page.keyboard.press("ArrowDown")
        focus = page.evaluate(FOCUS_IN_VIEW)
        assert all(f["inside"] for f in focus), focus
        if page.get_attribute(".gt-root", "data-sub") == "-1":
            break


BROKEN_WORDS = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.querySelector('.gt-root'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('svg') || !node.parentElement.offsetParent) continue;
    for (const m of node.textContent.matchAll(/[A-Za-z0-9_]{2,}/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) out.push(m[0]);
    }
  }
  return out;
}"""


def test_no_word_is_broken_mid_word(stepper: Any) -> None:
    """overflow-wrap: anywhere let a squeezed column (the details table) break names like AddmmBackward0."""
    trace = traced(MLP)
    page = stepper(make_film(trace))
    page.keyboard.press("End")
    assert page.evaluate(BROKEN_WORDS) == []
    for node in page.locator(".gt-graph svg g.gt-box.gt-node:not(.gt-hidden)").all()[:6]:
        node.click()
        broken = page.evaluate(BROKEN_WORDS)
        assert broken == [], broken
        page.keyboard.press("Escape")


LEGEND = "() => [...document.querySelectorAll('.gt-legend-item')].map(e => e.textContent.trim())"


def test_the_legend_lists_what_the_step_shows(stepper: Any) -> None:
    """Lesson 01 has no error, no stale value, no in-place change: its legend said how to read them all the same.
    The legend is the shown step's: before backward() nothing is freed, so it does not say how a freed value looks."""
    lesson = stepper(make_film(traced(LESSON01)))
    first = lesson.evaluate(LEGEND)
    lesson.keyboard.press("End")
    lesson.wait_for_function("() => [...document.querySelectorAll('.gt-legend-item')]"
                             ".some(e => e.textContent.includes('saved values freed'))")
    said = lesson.evaluate(LEGEND)
    stale_film = make_film(trace_stale())
    stale = stepper(stale_film)
    add = next(i for i, s in enumerate(stale_film["steps"]) if s["code"] == "b.add_(1)")
    stale.locator(".gt-steplist").select_option(str(add))
    stale.wait_for_function(f"() => document.querySelector('.gt-root').dataset.step === '{add}'")
    warned = stale.evaluate(LEGEND)
    assert not any("freed" in s for s in first) and any("leaf tensor" in s for s in first), first
    assert not any("stale" in s or "in place" in s or "error" in s for s in said), said
    assert any("saved values freed" in s for s in said) and any("leaf tensor" in s for s in said), said
    assert any("stale" in s for s in warned) and any("in place" in s for s in warned), warned


def trace_stale() -> Any:
    from gradtrace import trace_code

    return trace_code(STALE, {"torch": torch}, raise_errors=False)


LABELS = """(sel) => [...document.querySelectorAll(sel)].map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, full: t.dataset.full, r: [r.left, r.top, r.right, r.bottom]};
})"""


def test_a_tensors_gradient_is_cut_on_the_picture_and_whole_in_the_panels(stepper: Any) -> None:
    """Lesson 07: whole weight gradients written on the edges and in the diff's tags covered the graph."""
    x = torch.tensor([[1., 2.], [0.5, -1.]])
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    torch.nn.functional.mse_loss(model(x), torch.tensor([[1.], [0.]])).backward()
    first = f"{model[0].weight.grad[0, 0].item():.8g}"  # the first element PyTorch computed, as float32 prints it
    page = stepper(make_film(traced(MLP)))
    page.keyboard.press("End")
    page.keyboard.press("ArrowDown")
    walk = int(page.locator(".gt-banner").inner_text().split(" / ", 1)[1].split(":", 1)[0])
    for _ in range(walk - 1):  # to the end of the reverse pass: every gradient written
        page.keyboard.press("ArrowDown")
    assert page.locator(".gt-banner").inner_text().startswith(f"{walk} / {walk} (end of the reverse pass):")
    labels = page.evaluate(LABELS, ".gt-flow-label")
    panel = page.locator(".gt-reverse").inner_text()
    assert labels
    for label in labels:
        assert len(label["text"]) <= 20, label
        assert " ".join(label["full"].split()) in " ".join(panel.split()), label  # the whole value is in the panel
    cut = [label for label in labels if "…" in label["text"]]
    assert cut and any(label["text"].startswith(f"[[{first[:6]}") for label in cut), (first, cut)
    page.keyboard.press("Escape")
    page.keyboard.press("d")
    tags = page.evaluate(LABELS, ".gt-tag")
    assert len(tags) >= 4
    for i, tag in enumerate(tags):
        assert len(tag["text"]) <= 40, tag
        for other in tags[i + 1:]:
            assert overlap(tag["r"], other["r"], 1) == 0, (tag, other)


LOOP = """x = torch.tensor(1.5, requires_grad=True)
y = x
for i in range(60):
    y = y * x
y.backward()
"""


def test_the_diff_marks_a_folded_block_whose_nodes_backward_freed(stepper: Any) -> None:
    """A 60-multiplication loop, folded into one block: backward() freed every one's saved values, yet the
    before/after view marked nothing freed (the nodes are not drawn one by one)."""
    x = torch.tensor(1.5, requires_grad=True)
    y = x
    for _ in range(60):
        y = y * x
    node = y.grad_fn
    y.backward()
    try:
        _ = node._saved_self  # PyTorch: after backward() the saved values are gone
        freed_by_pytorch = False
    except RuntimeError:
        freed_by_pytorch = True
    assert freed_by_pytorch
    made = make_film(traced(LOOP))
    (pair,) = made["backward"]
    blocks = [k for k in pair["diff"]["freed"] if made["elements"].get(k, {}).get("group") == "node" and "fold" in k]
    assert blocks, pair["diff"]
    page = stepper(made)
    page.keyboard.press("End")
    page.keyboard.press("d")
    for block in blocks:
        assert page.locator(f".gt-graph svg g#{block}.gt-diff-freed").count() == 1
    assert page.locator(".gt-tag-freed").count() >= len(blocks)


def test_an_errors_plain_words_read_part_by_part(stepper: Any) -> None:
    """Lesson 06's second backward(): What happened / Why / Fix ran together as one grey paragraph."""
    from gradtrace import trace_code
    from gradtrace.explain.errors import explain_error

    trace = trace_code("x = torch.tensor(42., requires_grad=True)\nf = x ** 2 + x ** 3\nf.backward()\nf.backward()\n",
                       {"torch": torch}, raise_errors=False)
    said = explain_error(trace.error, trace).to_text()
    page = stepper(make_film(trace))
    page.keyboard.press("End")
    box = page.locator(".gt-explanation")
    labels = box.locator("b").all_inner_texts()
    assert {"What happened:", "Why:", "Fix:"} <= set(labels), labels
    for label in ("What happened:", "Why:", "Fix:"):
        assert label in said  # the labels are explain_error's own
    assert " ".join(box.inner_text().split()).count("What happened:") == 1


def test_the_walks_last_node_and_the_grad_it_fills_are_in_view(stepper: Any) -> None:
    """Lesson 07: at the end of the reverse pass the picture showed n3 AccumulateGrad with the weight it fills
    scrolled out of view."""
    made = make_film(traced(MLP))
    page = stepper(made)
    page.keyboard.press("End")
    flow = made["steps"][-1]["flow"] or next(s["flow"] for s in made["steps"] if s.get("flow"))
    for sub in flow:
        page.keyboard.press("ArrowDown")
        shown = page.evaluate("""(ids) => {
          const graph = document.querySelector('.gt-graph'), view = graph.getBoundingClientRect();
          return ids.map(id => { const r = document.getElementById(id).getBoundingClientRect();
            return r.left >= view.left - 0.5 && r.right <= view.left + graph.clientWidth + 0.5; });
        }""", [sub["node"], *sub["grads"]])
        assert all(shown), (sub["node"], sub["grads"], shown)

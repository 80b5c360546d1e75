"""Unfolding one folded box of a big graph, in the standalone stepper page in real Chromium.

The program is a ResNet-like net (three stages of four residual blocks) trained one step:
its film is folded, each block drawn as one box. Every name and count checked comes from
the film's own data or from PyTorch run plainly here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from lab import new_page
from torch import nn

from gradtrace import trace_code
from gradtrace.model import Trace
from gradtrace.render.film import FILM_MAX_NODES
from gradtrace.render.film import film as make_film
from gradtrace.render.html import film_html

VIEW = {"width": 1280, "height": 720}


class Block(nn.Module):
    """conv, batch norm, plus the input, relu (a residual block)."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn1(self.conv1(x)) + x)


SOURCE = """\
import torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1),
                          *[torch.nn.Sequential(*[Block(4) for _ in range(4)]) for _ in range(3)])
loss = net(torch.randn(1, 3, 4, 4)).sum()
loss.backward()
"""


@pytest.fixture(scope="module")
def resnet() -> tuple[Trace, dict[str, Any], dict[str, Any]]:
    ns: dict[str, Any] = {"Block": Block}
    trace = trace_code(SOURCE, ns, filename="resnet_like.py")
    return trace, make_film(trace), ns


@pytest.fixture
def page(browser: Any, tmp_path: Path, resnet: Any) -> Iterator[Any]:
    _, film, _ = resnet
    path = tmp_path / "resnet.html"
    path.write_text(film_html(film), encoding="utf-8")
    context, pg, guard = new_page(browser)
    pg.set_viewport_size(VIEW)
    pg.goto(path.as_uri())
    pg.locator(".gt-root svg").first.wait_for()
    pg.keyboard.press("End")
    yield pg
    context.close()
    assert guard.errors == [] and guard.dialogs == [] and guard.outside == [], (guard.errors, guard.dialogs)


def shown_boxes(page: Any) -> list[str]:
    """The head row of every box drawn in the picture on screen."""
    return list(page.evaluate("""() => [...document.querySelectorAll('.gt-graph svg g.node:not(.gt-hidden)')]
      .map(g => (g.querySelector('text') || {}).textContent || '')"""))


def unfolded_frame(page: Any) -> bool:
    return bool(page.evaluate("() => !!document.querySelector('.gt-graph svg g[id=\"gt-unfolded\"]')"))


def batch_norms(page: Any) -> int:
    return sum(head.endswith("NativeBatchNormBackward0") for head in shown_boxes(page))


def test_a_click_unfolds_one_block_and_esc_folds_it(page: Any, resnet: Any, artifacts: Path) -> None:
    trace, film, ns = resnet
    last = film["steps"][-1]
    dom, k = next(iter(last["unfold"].items()))
    view = film["views"][k]
    title = film["details"][last["details"][dom]]["title"]
    module = ns["net"].get_submodule(title.split(" ")[0].removeprefix("net."))
    params = sum(p.numel() for p in module.parameters())  # what PyTorch counts in that block
    assert title == view["label"] and f"{params:,} params" in title
    folded_heads = shown_boxes(page)
    assert title in folded_heads and batch_norms(page) == 0 and not unfolded_frame(page)
    page.locator(f".gt-graph svg g[id='{dom}']").click()
    bar = page.locator(".gt-unfold")
    bar.wait_for(state="visible")
    assert bar.inner_text().startswith(f"Unfolded: {title}.")
    assert unfolded_frame(page) and title not in shown_boxes(page)
    # the block's own conv and batch norm, drawn as themselves; every other block still folded
    assert batch_norms(page) == 1
    others = [h for h in folded_heads if h.startswith("net.") and "params)" in h and h != title]
    assert others and set(others) <= set(shown_boxes(page))
    assert len(shown_boxes(page)) <= FILM_MAX_NODES
    page.screenshot(path=str(artifacts / "page-unfolded.png"))
    page.keyboard.press("Escape")
    bar.wait_for(state="hidden")
    assert not unfolded_frame(page) and shown_boxes(page) == folded_heads


def test_enter_on_the_focused_box_unfolds_and_fold_again_goes_back(page: Any, resnet: Any) -> None:
    _, film, _ = resnet
    last = film["steps"][-1]
    dom = list(last["unfold"])[-1]
    title = film["details"][last["details"][dom]]["title"]
    pick = page.locator(f".gt-pick button[data-id='{dom}']")
    assert pick.get_attribute("aria-label") == f"unfold {title}"
    pick.focus()  # where Tab reaches it (the picture's boxes are buttons for the keyboard)
    assert page.evaluate("() => document.activeElement.dataset.id") == dom
    page.keyboard.press("Enter")
    page.locator(".gt-unfold").wait_for(state="visible")
    assert unfolded_frame(page) and batch_norms(page) == 1
    assert page.evaluate("() => document.activeElement.textContent") == "fold again"
    page.keyboard.press("Enter")  # on "fold again"
    page.locator(".gt-unfold").wait_for(state="hidden")
    assert not unfolded_frame(page) and batch_norms(page) == 0


def test_stepping_keeps_the_block_open_only_where_the_step_has_it(page: Any, resnet: Any) -> None:
    _, film, _ = resnet
    steps = film["steps"]
    last = steps[-1]
    dom = next(iter(last["unfold"]))
    block_id = film["details"][last["details"][dom]]["id"]
    page.locator(f".gt-graph svg g[id='{dom}']").click()
    page.locator(".gt-unfold").wait_for(state="visible")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => document.querySelector('.gt-root').dataset.step === '{len(steps) - 2}'")
    before = steps[-2]
    has = any(film["details"][before["details"][d]]["id"] == block_id for d in before["unfold"])
    assert unfolded_frame(page) == has
    assert page.locator(".gt-unfold").is_visible() == has


def test_a_folded_box_with_no_view_at_this_step_says_so_and_shows_its_details(page: Any, resnet: Any) -> None:
    _, film, _ = resnet
    last = film["steps"][-1]
    frame = film["frames"][last["frame"]]
    missing = [d for d, c in frame["classes"].items() if "gt-m-folded" in c and d not in last["unfold"]]
    if not missing:
        pytest.skip("every folded box of this film has a view (the page budget left none out)")
    dom = missing[0]
    title = film["details"][last["details"][dom]]["title"]
    tip = page.locator(f".gt-graph svg g[id='{dom}'] > title").text_content()
    assert tip == "folded (no unfolded picture at this step)"
    page.locator(f".gt-graph svg g[id='{dom}']").click()
    assert page.locator(".gt-unfold").inner_text().startswith(f"{title}: no unfolded picture of it was prepared")
    assert page.locator(".gt-details").is_visible() and not unfolded_frame(page)
    assert page.locator(".gt-details-title").inner_text() == title


def test_a_click_on_another_folded_box_in_the_view_opens_that_one(page: Any, resnet: Any) -> None:
    _, film, _ = resnet
    last = film["steps"][-1]
    (first, k), (_, k2) = list(last["unfold"].items())[:2]
    other = film["views"][k2]["label"]
    view = film["views"][k]
    [there] = [d for d, r in view["details"].items() if film["details"][r]["title"] == other]  # B, folded in A's view
    page.locator(f".gt-graph svg g[id='{first}']").click()
    bar = page.locator(".gt-unfold")
    bar.wait_for(state="visible")
    assert page.locator(f".gt-graph svg g[id='{there}'] > title").text_content() == "folded: click (or Enter) to unfold"
    page.locator(f".gt-graph svg g[id='{there}']").click()
    page.wait_for_function("(t) => document.querySelector('.gt-unfold-words').textContent.startsWith(t)",
                           arg=f"Unfolded: {other}.")
    assert unfolded_frame(page) and batch_norms(page) == 1 and other not in shown_boxes(page)

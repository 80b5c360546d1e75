"""Make the stepper's screenshots in assets/, shot by Chromium.

    python assets/make_screenshots.py [--dark-too] [--page-only]

assets/stepper-jupyterlab.png: the %%gradtrace stepper in a real JupyterLab.
assets/stepper-backward.png, stepper-diff.png, stepper-presenter.png (and
stepper-walk.png when the film records the reverse pass node by node): lesson
01's standalone stepper page at a projector's 1280x720, at its backward() step,
in the before/after view and in presenter mode.

Starts JupyterLab (127.0.0.1, random token, a temporary copy of tests/notebooks/),
runs tests/notebooks/forum_whatif1.ipynb, steps the widget to the last step,
clicks the PowBackward0 node of ``x ** 2`` and saves the output area. With
``--dark-too`` it also writes tests/_artifacts/stepper-jupyterlab-dark.png (the
JupyterLab Dark theme), to check that the stepper reads well there.
Needs ``pip install -e '.[notebook,test]'`` and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from lab import Lab, launch, new_page, open_notebook, run_all  # noqa: E402

DARK = {"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}


def shoot(out: Path, settings: dict | None = None) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(ROOT / "tests" / "notebooks", Path(tmp), settings=settings).start()
        try:
            with sync_playwright() as p:
                browser = launch(p)
                context, page, guard = new_page(browser, device_scale_factor=2)
                page.set_viewport_size({"width": 1280, "height": 1000})
                open_notebook(page, lab, "forum_whatif1.ipynb")
                page.locator(".jp-SideBar .lm-TabBar-tab.lm-mod-current").first.click()  # fold the file browser
                run_all(page)
                root = page.locator(".jp-OutputArea-output .gt-widget .gt-root").first
                root.locator("svg").first.wait_for()
                root.locator(".gt-status").click()
                page.keyboard.press("End")
                node = root.locator(".gt-main > .gt-graph svg g.gt-node", has_text="PowBackward0").first
                node.click()
                page.mouse.move(0, 0)
                page.wait_for_timeout(400)  # let the fade transitions end
                out.parent.mkdir(parents=True, exist_ok=True)
                page.locator(".jp-Cell", has=root).locator(".jp-OutputArea").first.screenshot(path=str(out))
                context.close()
                browser.close()
                if guard.outside or guard.dialogs or guard.errors:
                    raise SystemExit(f"unexpected: {guard.outside} {guard.dialogs} {guard.errors}")
        finally:
            lab.stop()
    print(f"wrote {out.relative_to(ROOT)}")


def lesson01() -> str:
    """The code of lesson 01's %%gradtrace cell."""
    nb = json.loads((ROOT / "notebooks" / "01_reverse_mode.ipynb").read_text(encoding="utf-8"))
    cell = next("".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith("%%gradtrace"))
    return cell.split("\n", 1)[1]


def shoot_page(out: Path) -> None:
    """Lesson 01's standalone page at 1280x720: backward() step, before/after view, presenter mode."""
    import torch
    from playwright.sync_api import sync_playwright

    from gradtrace import trace_code
    from gradtrace.render.film import film
    from gradtrace.render.html import film_html

    made = film(trace_code(lesson01(), {"torch": torch}, filename="01_reverse_mode.ipynb"))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_file = Path(tmp) / "lesson01.html"
        page_file.write_text(film_html(made), encoding="utf-8")
        browser = launch(p)
        context, page, guard = new_page(browser)
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(page_file.as_uri())
        page.locator(".gt-root svg").first.wait_for()

        def snap(name: str, *keys: str) -> None:
            for key in keys:
                page.keyboard.press(key)
            page.mouse.move(0, 0)
            page.wait_for_timeout(400)  # let the fade transitions end
            page.screenshot(path=str(out / name))
            print(f"wrote {(out / name).relative_to(ROOT)}")

        snap("stepper-backward.png", "End")
        if any(s.get("flow") for s in made["steps"]):
            snap("stepper-walk.png", *["ArrowDown"] * len(next(s["flow"] for s in made["steps"] if s.get("flow"))))
            page.keyboard.press("Escape")
        snap("stepper-diff.png", "d")
        snap("stepper-presenter.png", "d", "f")
        context.close()
        browser.close()
        if guard.outside or guard.dialogs or guard.errors:
            raise SystemExit(f"unexpected: {guard.outside} {guard.dialogs} {guard.errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dark-too", action="store_true", help="also shoot the JupyterLab Dark theme")
    parser.add_argument("--page-only", action="store_true", help="only the standalone page's shots (no JupyterLab)")
    args = parser.parse_args()
    shoot_page(ROOT / "assets")
    if args.page_only:
        return
    shoot(ROOT / "assets" / "stepper-jupyterlab.png")
    if args.dark_too:
        shoot(ROOT / "tests" / "_artifacts" / "stepper-jupyterlab-dark.png", DARK)


if __name__ == "__main__":
    main()

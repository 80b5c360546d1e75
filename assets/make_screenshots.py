"""Make assets/stepper-jupyterlab.png: the %%gradtrace stepper in a real JupyterLab, shot by Chromium.

    python assets/make_screenshots.py [--dark-too]

Starts JupyterLab (127.0.0.1, random token, a temporary copy of tests/notebooks/),
runs tests/notebooks/forum_whatif1.ipynb, steps the widget to the last step,
clicks the PowBackward0 node of ``x ** 2`` and saves the output area. With
``--dark-too`` it also writes tests/_artifacts/stepper-jupyterlab-dark.png (the
JupyterLab Dark theme), to check that the stepper reads well there.
Needs ``pip install -e '.[notebook,test]'`` and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
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
                node = root.locator(".gt-main > .gt-graph svg g.gt-node", has_text="exponent=2").first
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dark-too", action="store_true", help="also shoot the JupyterLab Dark theme")
    args = parser.parse_args()
    shoot(ROOT / "assets" / "stepper-jupyterlab.png")
    if args.dark_too:
        shoot(ROOT / "tests" / "_artifacts" / "stepper-jupyterlab-dark.png", DARK)


if __name__ == "__main__":
    main()

"""Make the stepper's screenshots in assets/, shot by Chromium.

    python assets/make_screenshots.py [--dark-too] [--page-only] [--lessons-only] [--lesson 03] [--reuse]

assets/stepper-jupyterlab.png: the %%gradtrace stepper in a real JupyterLab.
assets/stepper-backward.png, stepper-walk.png, stepper-diff.png, stepper-presenter.png:
lesson 01's stepper at a projector's 1280x720, at its backward() step, at the end of
the reverse pass walked node by node, in the before/after view and in presenter mode.

assets/lessons/NN-<kind>.png: every lesson of notebooks/ at its key steps, at 1280x720:
``rebind`` / ``mutate`` (the first step that moves a name or changes an object in
place), ``backward`` (the backward() step with its reverse pass walked to the end on
the graph), ``diff`` (its before/after view), ``error`` (the first step with a
prediction, a culprit or an error, with its explanation). The steppers are the ones
the lesson shows: each ``%%gradtrace`` cell's output, from the lesson run top to
bottom in a fresh kernel (nbclient), and each ``gradtrace.trace_code(...)`` of the
lesson (the stepper ``display(trace)`` shows). Every shot of every stepper also goes
to tests/_artifacts/lessons/ for a closer look.

Starts JupyterLab (127.0.0.1, random token, a temporary copy of tests/notebooks/),
runs tests/notebooks/forum_whatif1.ipynb, steps the widget to the last step,
clicks the PowBackward0 node of ``x ** 2`` and saves the output area. With
``--dark-too`` it also writes tests/_artifacts/stepper-jupyterlab-dark.png (the
JupyterLab Dark theme), to check that the stepper reads well there.
PNGs go through ``pngquant`` when it is installed (a third of the size).
Needs ``pip install -e '.[notebook,test]'`` and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from lab import Lab, launch, new_page, open_notebook, run_all  # noqa: E402

DARK = {"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}
ARTIFACTS = ROOT / "tests" / "_artifacts" / "lessons"
VIEWPORT = {"width": 1280, "height": 720}


def squeeze(png: Path) -> None:
    """Quantise ``png`` in place with pngquant when it is installed (text stays sharp; a third of the size)."""
    tool = shutil.which("pngquant")
    if tool:
        subprocess.run([tool, "--force", "--skip-if-larger", "--quality=70-95", "--output", str(png), str(png)],
                       check=False, capture_output=True)


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
                squeeze(out)
                context.close()
                browser.close()
                if guard.outside or guard.dialogs or guard.errors:
                    raise SystemExit(f"unexpected: {guard.outside} {guard.dialogs} {guard.errors}")
        finally:
            lab.stop()
    print(f"wrote {out.relative_to(ROOT)}")


# ------------------------------------------------------------------ the lessons' steppers
def lessons(only: list[str] | None = None) -> list[Path]:
    found = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not only or any(p.name.startswith(o) for o in only)]


def cell_films(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The film of each ``%%gradtrace`` cell's output, the lesson run top to bottom in a fresh kernel."""
    import nbformat
    from nbclient import NotebookClient

    from gradtrace.notebook.embed import film_of

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute(env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.source.startswith("%%gradtrace"):
            for out in cell.outputs:
                page = "".join(out.get("data", {}).get("text/html", ""))
                if "data-gt-film" in page:
                    yield f"cell{i}", film_of(page)


def traced_programs(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The film of each ``gradtrace.trace_code('''...''', ...)`` of the lesson (its code a string literal)."""
    import nbformat
    import torch

    from gradtrace import trace_code
    from gradtrace.render.film import film

    nb = nbformat.read(path, as_version=4)
    texts: dict[str, str] = {}  # names the lesson binds to a string literal (``source = \'\'\'...\'\'\'``)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or cell.source.startswith("%"):
            continue
        tree = ast.parse(cell.source)
        for bind in tree.body:
            if isinstance(bind, ast.Assign) and isinstance(bind.value, ast.Constant):
                text = bind.value.value
                if isinstance(text, str):
                    texts.update({t.id: text for t in bind.targets if isinstance(t, ast.Name)})
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "trace_code" and call.args):
                continue
            code = call.args[0]
            source = code.value if isinstance(code, ast.Constant) else None
            if isinstance(code, ast.Name):
                source = texts.get(code.id)
            if isinstance(source, str):
                trace = trace_code(source, {"torch": torch}, filename=path.name, raise_errors=False)
                yield f"cell{i}-trace", film(trace)


def step_kinds(made: dict[str, Any]) -> list[set[str]]:
    """Per step: "rebind", "mutate", "backward", "error" (as the stepper's own event navigation reads them)."""
    backward = {pair["step"] for pair in made.get("backward", [])}
    bound: set[str] = set()
    kinds = []
    for i, step in enumerate(made["steps"]):
        frame = made["frames"][step["frame"]]
        got: set[str] = set()
        for sentence in step["events"]:
            for line in sentence.splitlines():
                named = re.match(r"(\S+) now names ", line)
                if named:
                    if named[1] in bound:
                        got.add("rebind")
                    bound.add(named[1])
        if any("gt-m-mutated" in c.split() for c in frame["classes"].values()):
            got.add("mutate")
        if i in backward or step.get("flow"):
            got.add("backward")
        if step.get("culprits") or step.get("explanation") or step.get("prediction") or i == made.get("error_step"):
            got.add("error")
        kinds.append(got)
    return kinds


class Shots:
    """One Chromium page at 1280x720 that loads a film's standalone page and takes its key steps."""

    def __init__(self, browser: Any, tmp: Path) -> None:
        self.context, self.page, self.guard = new_page(browser)
        self.page.set_viewport_size(VIEWPORT)
        self.tmp = tmp

    def load(self, made: dict[str, Any]) -> None:
        from gradtrace.render.html import film_html

        page_file = self.tmp / "film.html"
        page_file.write_text(film_html(made), encoding="utf-8")
        self.page.goto(page_file.as_uri())
        self.page.locator(".gt-root svg").first.wait_for()

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)

    def go(self, index: int) -> None:
        self.keys("Escape", "Escape", "Escape", "Home", *["ArrowRight"] * index)

    def snap(self, out: Path) -> Path:
        self.page.mouse.move(0, 0)
        self.page.wait_for_timeout(400)  # let the fade transitions end
        out.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(out))
        squeeze(out)
        return out

    def key_steps(self, made: dict[str, Any], stem: str) -> Iterator[tuple[str, Path]]:
        """(kind, picture) for the first step of each kind in ``made``."""
        kinds = step_kinds(made)
        for kind in ("rebind", "mutate", "error", "backward"):
            where = next((i for i, got in enumerate(kinds) if kind in got), None)
            if where is None:
                continue
            self.go(where)
            if kind == "backward":
                self.keys(*["ArrowDown"] * len(made["steps"][where].get("flow") or []))
                yield kind, self.snap(ARTIFACTS / f"{stem}-backward.png")
                self.keys("Escape", "d")
                yield "diff", self.snap(ARTIFACTS / f"{stem}-diff.png")
            else:
                yield kind, self.snap(ARTIFACTS / f"{stem}-{kind}.png")

    def close(self) -> None:
        self.context.close()
        if self.guard.outside or self.guard.dialogs or self.guard.errors:
            raise SystemExit(f"unexpected: {self.guard.outside} {self.guard.dialogs} {self.guard.errors}")


def lesson_films(path: Path, reuse: bool) -> list[tuple[str, dict[str, Any]]]:
    """The lesson's steppers; with ``reuse``, the ones the last run kept (to retake the pictures only)."""
    kept = ARTIFACTS / f"{path.stem}.films.json"
    if reuse and kept.exists():
        return [(where, made) for where, made in json.loads(kept.read_text(encoding="utf-8"))]
    films = list(cell_films(path)) + list(traced_programs(path))
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(json.dumps(films), encoding="utf-8")
    return films


def shoot_lessons(only: list[str] | None = None, reuse: bool = False) -> None:
    """assets/lessons/NN-<kind>.png: each lesson's first stepper that shows each kind of key step."""
    from playwright.sync_api import sync_playwright

    out = ROOT / "assets" / "lessons"
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = launch(p)
        for path in lessons(only):
            number = path.name[:2]
            films = lesson_films(path, reuse)
            shots = Shots(browser, Path(tmp))
            taken: set[str] = set()
            for where, made in films:
                shots.load(made)
                for kind, picture in shots.key_steps(made, f"{number}-{where}"):
                    print(f"looked at {picture.relative_to(ROOT)}")
                    if kind not in taken:
                        taken.add(kind)
                        out.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(picture, out / f"{number}-{kind}.png")
                        print(f"wrote assets/lessons/{number}-{kind}.png")
            shots.close()
        browser.close()


# ------------------------------------------------------------------ lesson 01, for the README
def lesson01() -> str:
    """The code of lesson 01's %%gradtrace cell."""
    nb = json.loads((ROOT / "notebooks" / "01_reverse_mode.ipynb").read_text(encoding="utf-8"))
    cell = next("".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith("%%gradtrace"))
    return cell.split("\n", 1)[1]


def shoot_page(out: Path) -> None:
    """Lesson 01's standalone page at 1280x720: backward() step, walk, before/after view, presenter mode."""
    import torch
    from playwright.sync_api import sync_playwright

    from gradtrace import trace_code
    from gradtrace.render.film import film

    made = film(trace_code(lesson01(), {"torch": torch}, filename="01_reverse_mode.ipynb"))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = launch(p)
        shots = Shots(browser, Path(tmp))
        shots.load(made)

        def snap(name: str, *keys: str) -> None:
            shots.keys(*keys)
            shots.snap(out / name)
            print(f"wrote {(out / name).relative_to(ROOT)}")

        snap("stepper-backward.png", "End")
        if any(s.get("flow") for s in made["steps"]):
            snap("stepper-walk.png", *["ArrowDown"] * len(next(s["flow"] for s in made["steps"] if s.get("flow"))))
            shots.keys("Escape")
        snap("stepper-diff.png", "d")
        snap("stepper-presenter.png", "d", "f")
        shots.close()
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dark-too", action="store_true", help="also shoot the JupyterLab Dark theme")
    parser.add_argument("--page-only", action="store_true", help="only the standalone pages' shots (no JupyterLab)")
    parser.add_argument("--lessons-only", action="store_true", help="only assets/lessons/")
    parser.add_argument("--lesson", action="append", help="only this lesson (its number, e.g. 03); repeatable")
    parser.add_argument("--reuse", action="store_true", help="the lessons' steppers of the last run (no kernel)")
    args = parser.parse_args()
    shoot_lessons(args.lesson, args.reuse)
    if args.lessons_only or args.lesson:
        return
    shoot_page(ROOT / "assets")
    if args.page_only:
        return
    shoot(ROOT / "assets" / "stepper-jupyterlab.png")
    if args.dark_too:
        shoot(ROOT / "tests" / "_artifacts" / "stepper-jupyterlab-dark.png", DARK)


if __name__ == "__main__":
    main()

"""Fixtures for the browser tests: one real JupyterLab and one real Chromium per session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from lab import Lab, launch, new_page  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]
ARTIFACTS = TESTS / "_artifacts"
VIEW = {"width": 1280, "height": 720}  # a projector


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.browser)
            # Under `pytest -n N --dist loadgroup` (.ci/test.sh) every browser test runs on one worker: one
            # JupyterLab and one Chromium for them all, while the other workers take the rest.
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    server = Lab(TESTS / "notebooks", tmp_path_factory.mktemp("lab")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = launch(p)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def stepper(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """Open a film's standalone page at 1280x720 (or ``view``): ``stepper(film)`` returns the page."""
    opened = []

    def open_page(film: dict[str, Any], view: dict[str, int] = VIEW, **options: Any) -> Any:
        from gradtrace.render.html import film_html

        path = tmp_path / f"page{len(opened)}.html"
        path.write_text(film_html(film), encoding="utf-8")
        context, page, guard = new_page(browser, **options)
        page.set_viewport_size(view)
        opened.append((context, guard))
        page.goto(path.as_uri())
        page.locator(".gt-root svg").first.wait_for()
        return page

    yield open_page
    for context, guard in opened:
        context.close()
        assert guard.errors == [] and guard.dialogs == [] and guard.outside == [], (guard.errors, guard.dialogs,
                                                                                     guard.outside)

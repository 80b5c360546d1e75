"""Fixtures for the browser tests: one real JupyterLab and one real Chromium per session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from lab import Lab, launch  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]
ARTIFACTS = TESTS / "_artifacts"


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.browser)


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

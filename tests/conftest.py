"""Shared pytest options. Keep this file small; add options other layers need here."""

from __future__ import annotations


def pytest_addoption(parser):
    parser.addoption(
        "--overwrite-golden",
        action="store_true",
        default=False,
        help="rewrite the golden files in tests/golden/ from the current output",
    )

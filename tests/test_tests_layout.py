"""The test suite's own layout: no test module imports another test module.

A test file that imports another test file depends on that file's private choices and
on pytest's prepend import mode (which puts each test file's folder on ``sys.path``), and
running it alone does the other file's module-level work too. Shared code lives in modules
whose names do not start with ``test_`` or in conftest fixtures.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TEST_FILES = sorted(TESTS.rglob("test_*.py"))


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module name an import statement in ``tree`` names, with its line."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom):  # from . import test_x
            names += [(node.lineno, alias.name) for alias in node.names]
    return names


def test_there_are_test_files():
    assert len(TEST_FILES) > 50, TEST_FILES


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_imports_a_test_module(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = [f"line {line}: {name}" for line, name in imported_modules(tree)
           if any(part.startswith("test_") for part in name.split("."))]
    assert not bad, (f"{path.relative_to(TESTS)} imports test modules ({'; '.join(bad)}); "
                     "move what it shares into a module not named test_* or a conftest fixture")

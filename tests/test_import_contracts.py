"""The import contracts in pyproject.toml mean what they say: each one fails when one forbidden import is added.

Each case copies the package to a temporary folder, adds one import line to one module, and runs
import-linter (the real one, as CI runs it) on that copy with the project's own contracts; the named
contract must be broken, and the same run on an unchanged copy keeps every contract.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gradtrace"

#: (contract id, module file in the package, the line added to it): the module reaches what the contract
#: forbids, directly or through a chain of other modules.
CASES = [
    # a lower layer imports a higher one
    ("layers", "model.py", "from gradtrace.render import text"),
    ("layers", "explain/errors.py", "import gradtrace.notebook"),
    ("layers", "run.py", "from gradtrace.explain import walkthrough"),
    ("layers", "render/words.py", "from gradtrace import live"),
    # a reader reaches running code, directly or through a module that runs code
    ("readers-run-nothing", "explain/_numbers.py", "from gradtrace import run"),
    ("readers-run-nothing", "render/words.py", "import gradtrace.notebook.magic"),  # -> run -> tracer -> torch
    ("readers-run-nothing", "explain/formulas.py", "import torch"),
    ("readers-run-nothing", "model.py", "import gradtrace.tracer.graph"),
    # only the runner builds a tracer
    ("one-tracer-builder", "notebook/display.py", "from gradtrace.tracer import graph"),
    ("one-tracer-builder", "cli.py", "from gradtrace.tracer.stack import ensure_deep_stack"),
    ("one-tracer-builder", "live.py", "from gradtrace.tracer import Tracer"),
    # torch is the tracer's
    ("torch-in-tracer", "run.py", "import torch"),
    ("torch-in-tracer", "notebook/plain.py", "import torch.nn"),
    ("torch-in-tracer", "cli.py", "import torch"),
]


def copy_with(tmp: Path, module: str | None = None, line: str = "") -> Path:
    """The package and the contracts in ``tmp``, with ``line`` added after the module's ``__future__`` import."""
    shutil.copytree(PACKAGE, tmp / "src" / "gradtrace", ignore=shutil.ignore_patterns("static", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    if module is not None:
        path = tmp / "src" / "gradtrace" / module
        text = path.read_text(encoding="utf-8")
        anchor = "from __future__ import annotations\n"
        assert anchor in text, module
        path.write_text(text.replace(anchor, anchor + line + "  # noqa\n", 1), encoding="utf-8")
    return tmp


def lint_imports(tmp: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    chosen = [arg for c in contracts for arg in ("--contract", c)]
    env = dict(os.environ, PYTHONPATH=str(tmp / "src"))
    code = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"
    return subprocess.run([sys.executable, "-c", code, "--no-logo", "--no-cache", *chosen], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_the_unchanged_package_keeps_every_contract(tmp_path):
    done = lint_imports(copy_with(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("contract", "module", "line"), CASES, ids=[f"{c}:{m}" for c, m, _ in CASES])
def test_one_forbidden_import_breaks_the_contract(tmp_path, contract, module, line):
    done = lint_imports(copy_with(tmp_path, module, line), contract)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 kept, 1 broken" in done.stdout, done.stdout
    assert "BROKEN" in done.stdout

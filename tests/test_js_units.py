"""The stepper's JavaScript unit tests (tests/js/*.test.mjs), run by Node's own test runner.

``node --test tests/js/`` loads ``render/static/stepper.js`` and ``notebook/static/boot.js`` as plain ES
modules (no page, no npm packages) and checks their pure helpers, on films this checkout makes from
programs PyTorch runs (tests/js/make_film.py, run here with this Python).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_stepper_helpers_pass_their_node_tests(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript unit tests in tests/js/ need Node 20 or later")
    for name in ("forum", "stale", "opening"):  # the films, made once here (the test files would each make them)
        with open(tmp_path / f"{name}.json", "w", encoding="utf-8") as out:
            subprocess.run([sys.executable, str(ROOT / "tests" / "js" / "make_film.py"), name], stdout=out,
                           check=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    env = {**os.environ, "GT_FILMS": str(tmp_path), "GT_REQUIRE_FILMS": "1"}
    done = subprocess.run([node, "--test", "tests/js/"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout, done.stdout[-2000:]

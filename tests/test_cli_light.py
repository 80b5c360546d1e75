"""The ``gradtrace`` command starts without torch: help, version and usage errors never import it.

Each check runs a fresh Python (torch is already loaded in this test process) and reads
which modules it imported, from ``sys.modules`` or from ``-X importtime``'s list.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gradtrace

SRC = str(Path(gradtrace.__file__).resolve().parents[1])


def fresh_python(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=300, check=False)


def imported(importtime_stderr: str) -> set[str]:
    """The top-level names of the modules a ``-X importtime`` run imported."""
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_importing_the_cli_imports_no_torch():
    done = fresh_python("-c", "import gradtrace.cli, sys; assert 'torch' not in sys.modules, 'torch imported'")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"]])
def test_help_and_version_import_no_torch(args):
    done = fresh_python("-X", "importtime", "-m", "gradtrace", *args)
    assert done.returncode == 0, done.stderr
    names = imported(done.stderr)
    assert "gradtrace" in names  # the list is the real one
    assert "torch" not in names


def test_a_usage_error_imports_no_torch(tmp_path):
    done = fresh_python("-X", "importtime", "-m", "gradtrace", "run", "no_such_script.py", cwd=tmp_path)
    assert done.returncode == 2
    assert "gradtrace: cannot run no_such_script.py: no such file" in done.stderr
    assert "torch" not in imported(done.stderr)

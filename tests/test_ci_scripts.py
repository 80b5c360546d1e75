"""The CI scripts in .ci/ find a Python that really runs on a fresh machine.

pyenv puts a ``python3.12`` shim on PATH that runs only where 3.12 is the active pyenv version; a
script that takes the first ``python3.12`` it finds then fails with "python3.12: command not found".
These tests run the real scripts with pyenv's shims first on PATH and no venv made yet.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / ".ci"


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return None
    out = subprocess.run([pyenv, "root"], capture_output=True, text=True)
    return Path(out.stdout.strip()) if out.returncode == 0 else None


def _shim_env() -> dict[str, str]:
    """The environment of a fresh login: pyenv's shims first on PATH, no version made active."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYENV_VERSION", "VIRTUAL_ENV")}
    root = _pyenv_root()
    if root is not None:
        env["PATH"] = f"{root / 'shims'}:{root / 'bin'}:{env.get('PATH', '')}"
    return env


def _has_312() -> bool:
    root = _pyenv_root()
    on_path = shutil.which("python3.12")
    return bool(root and list(root.glob("versions/3.12*/bin/python"))) or bool(
        on_path and subprocess.run([on_path, "-c", "pass"], capture_output=True).returncode == 0)


needs_312 = pytest.mark.skipif(not _has_312(), reason="no Python 3.12 on this machine")


def _version_of(python: str) -> tuple[int, int]:
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                         capture_output=True, text=True, check=True)
    major, minor = out.stdout.split()
    return int(major), int(minor)


@needs_312
def test_py312_finds_an_interpreter_that_runs_with_the_shims_first():
    out = subprocess.run(["bash", str(CI / "py312.sh"), "--find"], capture_output=True, text=True,
                         env=_shim_env(), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    python = out.stdout.strip().splitlines()[-1]
    assert _version_of(python) == (3, 12)


@needs_312
def test_py312_makes_its_venv_where_none_is(tmp_path):
    venv = tmp_path / "py312-venv"
    env = _shim_env() | {"GRADTRACE_PY312_VENV": str(venv)}
    out = subprocess.run(["bash", str(CI / "py312.sh"), "--venv"], capture_output=True, text=True, env=env,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    python = out.stdout.strip().splitlines()[-1]
    assert python == str(venv / "bin" / "python")
    assert _version_of(python) == (3, 12)
    assert "making a venv" in out.stderr


def test_py312_passes_and_says_so_where_there_is_no_312(tmp_path):
    """A machine with no 3.12 at all: PATH without one, and no pyenv."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("bash", "ls", "sort", "dirname", "rm"):
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    env = {"PATH": str(bare), "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "no-pyenv")}
    out = subprocess.run([str(bare / "bash"), str(CI / "py312.sh")], capture_output=True, text=True, env=env,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "no Python 3.12 that runs" in out.stdout


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no system python3 at /usr/bin/python3")
def test_setup_uses_a_venv_where_python3_is_managed_by_the_system(tmp_path):
    """Debian's own python3 refuses ``pip install`` (PEP 668): the scripts make .venv/ and use it."""
    managed = subprocess.run(
        ["/usr/bin/python3", "-c", "import os, sys, sysconfig; sys.exit(0 if os.path.exists(os.path.join("
         "sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')) else 1)"]).returncode == 0
    if not managed:
        pytest.skip("/usr/bin/python3 is not marked externally managed here")
    copy = tmp_path / "project"
    (copy / ".ci").mkdir(parents=True)
    shutil.copy(CI / "python.sh", copy / ".ci" / "python.sh")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    script = f'cd {copy} && source .ci/python.sh && "$PY" -c "import sys; print(sys.prefix)"'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()) == copy / ".venv"
    assert "managed by the system" in out.stderr
    # run again: the venv is found, not made anew
    again = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert Path(again.stdout.strip()) == copy / ".venv"
    assert "managed by the system" not in again.stderr


def test_python_sh_keeps_a_python_given_by_name():
    env = dict(os.environ, PYTHON=sys.executable)
    out = subprocess.run(["bash", "-c", f'cd {ROOT} && source .ci/python.sh && echo "$PY"'], capture_output=True,
                         text=True, env=env)
    assert out.stdout.strip() == sys.executable

"""The ``gradtrace`` command, run for real in a subprocess: exit codes, messages, outputs.

Every bad input gives one line on stderr starting with ``gradtrace:``, exit
status 2, no traceback from gradtrace, and no output file (written or half-written).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gradtrace.cli import DEMO_SOURCE

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
EXE = shutil.which("gradtrace")
COMMAND = [EXE] if EXE else [sys.executable, "-m", "gradtrace"]

FORUM = DEMO_SOURCE
MARKER_SCRIPT = """\
from pathlib import Path
Path(__file__).with_name("ran.txt").write_text("the script ran")
import torch
x = torch.tensor(2., requires_grad=True)
(x * x).backward()
print(x.grad)
"""


def gradtrace(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, env=full_env,
                          timeout=timeout, check=False)


def python(script: str, *args: str, cwd: Path):
    return subprocess.run([sys.executable, script, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def one_clear_line(result, status: int = 2) -> str:
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("gradtrace: ")
    return lines[0]


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "forum.py").write_text(FORUM, encoding="utf-8")
    (tmp_path / "marker.py").write_text(MARKER_SCRIPT, encoding="utf-8")
    return tmp_path


def forum_grad() -> float:
    x = torch.tensor(42.0, requires_grad=True)
    (x ** 2 + x ** 3).backward()
    return float(x.grad)


# ---------------------------------------------------------------- help
@pytest.mark.parametrize("command", [COMMAND, [sys.executable, "-m", "gradtrace"]])
def test_help(command, tmp_path):
    done = subprocess.run([*command, "--help"], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0
    assert "run" in done.stdout and "demo" in done.stdout and "exit status" in done.stdout
    done = subprocess.run([*command, "run", "--help"], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0
    for option in ("--html", "--json", "--svg", "--text", "--max-steps"):
        assert option in done.stdout


@pytest.mark.parametrize(
    "args", [["bogus"], ["run"], ["run", "forum.py", "--max-steps", "0"], ["run", "forum.py", "--max-steps", "x"],
             ["run", "forum.py", "--nope"]]
)
def test_usage_errors_exit_2(work, args):
    done = gradtrace(*args, cwd=work)
    assert done.returncode == 2
    assert "usage:" in done.stderr and "error:" in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- running
def test_run_prints_what_python_prints(work):
    ours, theirs = gradtrace("run", "forum.py", cwd=work), python("forum.py", cwd=work)
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout == str(torch.tensor(forum_grad())) + "\n"
    assert files_in(work) == ["forum.py", "marker.py"]  # nothing written unless asked


def test_run_like_python_name_file_argv_path(work):
    sub = work / "pkg"
    sub.mkdir()
    (sub / "helper.py").write_text("VALUE = 'from the script folder'\n")
    (sub / "env.py").write_text(
        "import sys, pickle\n"
        "import helper\n"
        "class Box: pass\n"
        "print(__name__, __file__, sys.argv, sys.path[0], helper.VALUE)\n"
        "print(type(pickle.loads(pickle.dumps(Box()))).__module__)\n"
        "if __name__ == '__main__':\n"
        "    print('main block')\n"
    )
    ours = gradtrace("run", "pkg/env.py", "--", "a", "--b", cwd=work)
    theirs = python("pkg/env.py", "a", "--b", cwd=work)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout
    assert "main block" in ours.stdout


def test_text_goes_to_stdout_after_the_scripts_output(work):
    done = gradtrace("run", "forum.py", "--text", cwd=work)
    assert done.returncode == 0
    first, rest = done.stdout.split("\n", 1)
    assert first == str(torch.tensor(forum_grad()))
    lineno = FORUM.splitlines().index("x = torch.tensor(42., requires_grad=True)") + 1
    assert f", line {lineno}: x = torch.tensor(42., requires_grad=True)" in rest
    assert f"x.grad = {forum_grad():g}." in rest


def test_all_outputs(work):
    done = gradtrace("run", "forum.py", "--html", "t.html", "--json", "t.json", "--svg", "pics", cwd=work)
    assert done.returncode == 0, done.stderr
    data = json.loads((work / "t.json").read_text(encoding="utf-8"))
    assert data["grads"]["x"] == forum_grad()
    assert data["error"] is None
    pictures = files_in(work / "pics")
    assert pictures == [f"step-{i:04d}.svg" for i in range(1, len(data["steps"]) + 1)]
    for name in pictures:
        assert "<svg" in (work / "pics" / name).read_text(encoding="utf-8")
    page = (work / "t.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert not [p for p in work.rglob("*.tmp")]


def test_outputs_get_normal_permissions(work):
    gradtrace("run", "forum.py", "--json", "t.json", cwd=work)
    mode = (work / "t.json").stat().st_mode & 0o777
    mask = os.umask(0)
    os.umask(mask)
    assert mode == 0o666 & ~mask


def test_script_error_exit_1_traceback_as_python_and_trace_written(work):
    (work / "typo.py").write_text((EXAMPLES / "blog_typo.py").read_text())
    ours = gradtrace("run", "typo.py", "--json", "t.json", cwd=work)
    theirs = python("typo.py", cwd=work)
    assert ours.returncode == theirs.returncode == 1
    learner_part = "\n".join(ln for ln in ours.stderr.splitlines() if not ln.startswith("gradtrace: "))
    assert learner_part == theirs.stderr.rstrip("\n")
    data = json.loads((work / "t.json").read_text())
    assert data["error"]["type"] == "TypeError"
    assert "only integer tensors of a single element can be converted to an index" in data["error"]["message"]


def test_sys_exit_codes_follow_python(work):
    (work / "bye.py").write_text("import sys\nprint('bye')\nsys.exit(3)\n")
    (work / "ok.py").write_text("import sys\nsys.exit()\n")
    for script in ("bye.py", "ok.py"):
        ours, theirs = gradtrace("run", script, cwd=work), python(script, cwd=work)
        assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)


def test_max_steps_caps_the_recording(work):
    done = gradtrace("run", "forum.py", "--max-steps", "2", "--json", "t.json", cwd=work)
    assert done.returncode == 0
    assert "recorded the first 2 steps" in done.stderr
    data = json.loads((work / "t.json").read_text())
    assert len(data["steps"]) == 2 and data["steps_unrecorded"] > 0
    assert data["grads"]["x"] == forum_grad()


# ---------------------------------------------------------------- bad inputs: exit 2, one line, nothing run or written
def test_missing_script(work):
    line = one_clear_line(gradtrace("run", "nope.py", "--json", "t.json", cwd=work))
    assert "nope.py" in line and "no such file" in line
    assert not (work / "t.json").exists()


def test_folder_as_script(work):
    (work / "dir").mkdir()
    assert "folder" in one_clear_line(gradtrace("run", "dir", cwd=work))


def test_syntax_error_like_python(work):
    (work / "bad.py").write_text("import torch\nx = torch.ones(2\nprint(x)\n")
    done = gradtrace("run", "bad.py", "--json", "t.json", cwd=work)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    head, *details = done.stderr.rstrip("\n").splitlines()
    assert head.startswith("gradtrace: cannot run bad.py:2: syntax error")
    theirs = python("bad.py", cwd=work).stderr.rstrip("\n").splitlines()
    assert details == theirs  # File "bad.py", line 2 / the line / the caret / SyntaxError: ...
    assert any(ln.strip() == "^" for ln in details)
    assert not (work / "t.json").exists()


def test_non_utf8_script(work):
    (work / "latin.py").write_bytes('print("café")\n'.encode("latin-1"))
    line = one_clear_line(gradtrace("run", "latin.py", cwd=work))
    assert "not UTF-8" in line and "line 1" in line
    assert python("latin.py", cwd=work).returncode != 0  # Python refuses it too


def test_coding_declaration_is_honoured(work):
    (work / "latin.py").write_bytes('# -*- coding: latin-1 -*-\nprint("café")\n'.encode("latin-1"))
    ours, theirs = gradtrace("run", "latin.py", cwd=work), python("latin.py", cwd=work)
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout


def test_output_is_a_folder(work):
    (work / "out").mkdir()
    line = one_clear_line(gradtrace("run", "marker.py", "--html", "out", cwd=work))
    assert "folder" in line
    assert not (work / "ran.txt").exists()
    assert files_in(work / "out") == []


def test_output_folder_missing(work):
    line = one_clear_line(gradtrace("run", "marker.py", "--json", "no/such/dir/t.json", cwd=work))
    assert "does not exist" in line
    assert not (work / "ran.txt").exists()


def test_svg_target_is_a_file(work):
    (work / "pics").write_text("a file")
    line = one_clear_line(gradtrace("run", "marker.py", "--svg", "pics", cwd=work))
    assert "not a folder" in line and not (work / "ran.txt").exists()


def test_output_would_overwrite_the_script(work):
    line = one_clear_line(gradtrace("run", "marker.py", "--json", "marker.py", cwd=work))
    assert "the script itself" in line
    assert (work / "marker.py").read_text() == MARKER_SCRIPT


def test_same_file_for_two_outputs(work):
    line = one_clear_line(gradtrace("run", "marker.py", "--json", "t.out", "--html", "t.out", cwd=work))
    assert "both write" in line and not (work / "ran.txt").exists()


def test_unwritable_output_is_checked_before_running(work):
    # /proc accepts no new files, even for root
    line = one_clear_line(gradtrace("run", "marker.py", "--json", "/proc/gradtrace-test.json", cwd=work))
    assert "/proc/gradtrace-test.json" in line
    assert not (work / "ran.txt").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_folder_is_checked_before_running(work):
    ro = work / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        line = one_clear_line(gradtrace("run", "marker.py", "--html", "ro/t.html", cwd=work))
        assert "ro/t.html" in line and not (work / "ran.txt").exists()
    finally:
        ro.chmod(0o755)


def test_bad_output_leaves_existing_outputs_alone(work):
    (work / "t.json").write_text("old trace")
    (work / "out").mkdir()
    one_clear_line(gradtrace("run", "marker.py", "--json", "t.json", "--html", "out", cwd=work))
    assert (work / "t.json").read_text() == "old trace"
    assert not [p for p in work.rglob("*.tmp")]


def test_existing_output_is_replaced_whole(work):
    (work / "t.json").write_text("x" * 10_000_000)  # longer than the new trace
    done = gradtrace("run", "forum.py", "--json", "t.json", cwd=work)
    assert done.returncode == 0
    assert json.loads((work / "t.json").read_text())["grads"]["x"] == forum_grad()


# ---------------------------------------------------------------- no layout binary
@pytest.mark.parametrize("binary", ["/nonexistent/dot", "/bin/false"])
def test_layout_binary_missing_or_failing(work, binary):
    done = gradtrace("run", "forum.py", "--text", "--json", "t.json", "--svg", "pics", "--html", "t.html",
                     cwd=work, env={"GRADTRACE_DOT": binary})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "no SVG pictures written" in done.stderr and "t.html not written" in done.stderr
    assert json.loads((work / "t.json").read_text())["grads"]["x"] == forum_grad()
    assert f"x.grad = {forum_grad():g}." in done.stdout
    assert not (work / "t.html").exists()
    assert not [p for p in work.rglob("*.tmp")]


def test_layout_failure_keeps_the_scripts_exit_status(work):
    (work / "typo.py").write_text((EXAMPLES / "blog_typo.py").read_text())
    done = gradtrace("run", "typo.py", "--json", "t.json", "--svg", "pics", cwd=work,
                     env={"GRADTRACE_DOT": "/nonexistent/dot"})
    assert done.returncode == 1
    assert (work / "t.json").exists()


# ---------------------------------------------------------------- deep graphs, demo
@pytest.mark.slow
def test_deep_chain_exits_0(work):
    (work / "deep.py").write_text(
        "import torch\nh = torch.ones(1, requires_grad=True)\n"
        "for _ in range(100_000):\n    h = h * 1.0001\ndel h\nprint('freed')\n"
    )
    done = gradtrace("run", "deep.py", cwd=work, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "freed\n"


@pytest.mark.slow
def test_touched_deep_graph_is_freed_without_a_crash(work):
    # plain Python kills itself (SIGSEGV) freeing this graph once its nodes were walked;
    # under gradtrace it must exit 0
    (work / "walk.py").write_text(
        "import torch\nh = torch.ones(1, requires_grad=True)\n"
        "for _ in range(100_000):\n    h = h.sin()\n"
        "g = h.grad_fn\nwhile g is not None and g.next_functions:\n    g = g.next_functions[0][0]\n"
        "del h, g\nprint('freed')\n"
    )
    done = gradtrace("run", "walk.py", cwd=work, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "freed\n"


def test_demo_source_is_the_forum_example():
    assert (EXAMPLES / "forum_original.py").read_text(encoding="utf-8") == DEMO_SOURCE


def test_demo(tmp_path):
    done = gradtrace("demo", "--out", "d", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "d" / "forum.html").is_file()
    assert f"x.grad = {forum_grad():g}." in done.stdout
    assert str(torch.tensor(forum_grad())) in done.stdout


def test_demo_out_is_a_file(tmp_path):
    (tmp_path / "d").write_text("file")
    assert "not a folder" in one_clear_line(gradtrace("demo", "--out", "d", cwd=tmp_path))

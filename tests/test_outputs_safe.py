"""Output files never replace, delete or follow a file gradtrace did not write.

The ``gradtrace`` command runs for real in a subprocess, ``%%gradtrace`` in a real
IPython shell. These tests run as root: the special files they write to are made in
a temporary folder (a FIFO, a link, a device node), or inside a private mount
namespace where ``/dev`` is a fresh tmpfs, so the machine's own ``/dev`` is never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SRC = Path(__file__).resolve().parents[1] / "src"
COMMAND = [sys.executable, "-m", "gradtrace"]
MARK = '<meta name="generator" content="gradtrace">'

SCRIPT = """\
from pathlib import Path
Path(__file__).with_name("ran.txt").write_text("the script ran")
import torch
x = torch.tensor([3., -1.], requires_grad=True)
(x * x).sum().backward()
print(x.grad)
"""


def grads() -> list[float]:
    x = torch.tensor([3.0, -1.0], requires_grad=True)
    (x * x).sum().backward()
    return x.grad.tolist()


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))


def gradtrace(*args: str, cwd: Path, **kw):
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, env=env(), timeout=300,
                          check=False, **kw)


def one_line(result, status: int = 2) -> str:
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gradtrace: "), result.stderr
    return lines[0]


def kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    for name, test in (("link", stat.S_ISLNK), ("fifo", stat.S_ISFIFO), ("char", stat.S_ISCHR),
                       ("file", stat.S_ISREG), ("folder", stat.S_ISDIR)):
        if test(mode):
            return name
    return "other"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "s.py").write_text(SCRIPT, encoding="utf-8")
    return tmp_path


def ran(work: Path) -> bool:
    return (work / "ran.txt").exists()


# ---------------------------------------------------------------- streams are written in place
def test_json_into_a_fifo_is_written_in_place(work):
    fifo = work / "trace.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        done = gradtrace("run", "s.py", "--json", "trace.fifo", cwd=work)
        assert kind(fifo) == "fifo", "the FIFO was replaced by a file"
        received, _ = reader.communicate(timeout=300)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    assert done.returncode == 0, done.stderr
    assert json.loads(received)["grads"]["x"] == grads()


def test_html_through_a_link_to_stdout_reaches_the_pipe(work):
    (work / "out").symlink_to("/proc/self/fd/1")  # what /dev/stdout is
    done = gradtrace("run", "s.py", "--html", "out", cwd=work)
    assert done.returncode == 0, done.stderr
    assert kind(work / "out") == "link" and os.readlink(work / "out") == "/proc/self/fd/1"
    assert MARK in done.stdout and done.stdout.rstrip().endswith("</html>")
    assert 0 <= done.stdout.index("tensor(") < done.stdout.index("<!DOCTYPE html>")  # after the script's print


def test_a_device_node_is_written_in_place(work):
    null = work / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the null device, made here
        with open(null, "w") as f:
            f.write("probe")
    except OSError as exc:
        pytest.skip(f"cannot make or open a device node here: {exc}")
    done = gradtrace("run", "s.py", "--json", "null", cwd=work)
    assert done.returncode == 0, done.stderr
    assert kind(null) == "char"


def _private_mounts(shell: str, work: Path, fresh_dev: bool = True) -> subprocess.CompletedProcess:
    """Run ``shell`` in a private mount namespace (with ``fresh_dev``, /dev there is a new tmpfs)."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("needs unshare and root for a private /dev")
    setup = ("mount -t tmpfs gradtrace-dev /dev && mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/urandom c 1 9 "
             "&& mkdir /dev/shm && ln -s /proc/self/fd/1 /dev/stdout && ln -s /proc/self/fd /dev/fd && "
             if fresh_dev else "")
    done = subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c", setup + shell], cwd=work,
                          capture_output=True, text=True, env=env(), timeout=300, check=False)
    if "mount:" in done.stderr or "unshare:" in done.stderr:
        pytest.skip(f"no private mount namespace here: {done.stderr.strip()}")
    return done


def test_dev_null_and_dev_stdout_stay_what_they_are(work):
    command = " ".join(COMMAND)
    done = _private_mounts(f"{command} run s.py --json /dev/null --html /dev/stdout; echo rc=$?; "
                        "stat -c %F /dev/null /dev/stdout", work)
    assert "rc=0" in done.stdout, done.stderr
    assert "character special file\nsymbolic link" in done.stdout, done.stdout
    assert MARK in done.stdout and "</html>" in done.stdout


def test_a_fifo_in_a_folder_that_takes_no_new_file(work):
    """As for an ordinary user writing to /dev/null: the folder refuses new files, the stream takes data."""
    box = work / "box"
    box.mkdir()
    os.mkfifo(box / "pipe")
    command = " ".join(COMMAND)
    shell = (f"mount --bind {box} {box} && mount -o remount,bind,ro {box} && "
             f"{{ cat {box}/pipe > {work}/got & c=$!; }} && {command} run s.py --json {box}/pipe; rc=$?; "
             "echo rc=$rc; if [ $rc = 0 ]; then wait $c; else kill $c; fi")
    done = _private_mounts(shell, work, fresh_dev=False)
    assert "rc=0" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads((work / "got").read_text())["grads"]["x"] == grads()


def test_a_link_to_a_file_is_neither_followed_nor_replaced(work):
    (work / "notes.txt").write_text("my notes")
    (work / "t.json").symlink_to("notes.txt")
    for extra in ((), ("--force",)):
        line = one_line(gradtrace("run", "s.py", "--json", "t.json", *extra, cwd=work))
        assert "symbolic link" in line and "t.json" in line
    assert (work / "notes.txt").read_text() == "my notes" and kind(work / "t.json") == "link"
    assert not ran(work)


# ---------------------------------------------------------------- a file gradtrace did not write
@pytest.mark.parametrize("name", ["README.md", "stubs.pyi", "data.csv"])
def test_an_existing_file_is_refused_unless_forced(work, name):
    (work / name).write_text("the user's")
    line = one_line(gradtrace("run", "s.py", "--json", name, cwd=work))
    assert name in line and "--force" in line
    assert (work / name).read_text() == "the user's" and not ran(work)
    done = gradtrace("run", "s.py", "--json", name, "--force", cwd=work)
    assert done.returncode == 0, done.stderr
    assert json.loads((work / name).read_text())["grads"]["x"] == grads()


def test_a_file_the_script_writes_at_the_output_path_is_kept(work):
    (work / "w.py").write_text(SCRIPT + "Path('t.json').write_text('the script wrote this')\n")
    done = gradtrace("run", "w.py", "--json", "t.json", "--html", "t.html", cwd=work)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    refused = [ln for ln in done.stderr.splitlines() if "t.json" in ln]
    assert len(refused) == 1 and "--force" in refused[0], done.stderr
    assert (work / "t.json").read_text() == "the script wrote this"
    assert MARK in (work / "t.html").read_text()  # the other output is still written
    assert not [p for p in work.iterdir() if p.name.endswith(".tmp")]


def test_gradtrace_replaces_what_it_wrote_and_old_traces_still_load(work):
    for _ in range(2):
        done = gradtrace("run", "s.py", "--json", "t.json", "--html", "t.html", cwd=work)
        assert done.returncode == 0, done.stderr
    text = (work / "t.json").read_text()
    assert text.startswith('{"generator": "gradtrace", "schema": "gradtrace.trace"')
    import gradtrace as gt

    doc = json.loads(text)
    assert gt.Trace.from_json(text).to_json() == gt.Trace.from_json(json.dumps(
        {k: v for k, v in doc.items() if k != "generator"})).to_json()


def test_demo_refuses_a_forum_page_it_did_not_write(tmp_path):
    out = tmp_path / "d"
    out.mkdir()
    (out / "forum.html").write_text("<p>my own forum page</p>")
    line = one_line(gradtrace("demo", "--out", "d", cwd=tmp_path))
    assert "forum.html" in line and "--force" in line
    assert (out / "forum.html").read_text() == "<p>my own forum page</p>"
    assert gradtrace("demo", "--out", "d", "--force", cwd=tmp_path).returncode == 0
    assert gradtrace("demo", "--out", "d", cwd=tmp_path).returncode == 0  # its own page: replaced
    assert MARK in (out / "forum.html").read_text()


# ---------------------------------------------------------------- --svg pictures
def test_svg_never_removes_the_users_pictures(work):
    pics = work / "pics"
    pics.mkdir()
    mine = {f"step-{i:04d}.svg": f"<svg>my picture {i}</svg>" for i in (1, 7, 42)}
    for name, text in mine.items():
        (pics / name).write_text(text)
    line = one_line(gradtrace("run", "s.py", "--svg", "pics", cwd=work))
    assert "step-0001.svg" in line and "--force" in line and not ran(work)
    done = gradtrace("run", "s.py", "--svg", "pics", "--force", cwd=work)
    assert done.returncode == 0, done.stderr
    assert "removed" not in done.stderr
    assert (pics / "step-0042.svg").read_text() == mine["step-0042.svg"]  # not written by this run: kept
    assert "<svg" in (pics / "step-0001.svg").read_text()


def test_svg_in_the_current_folder_keeps_the_users_pictures(work):
    (work / "step-0099.svg").write_text("<svg>mine</svg>")
    one_line(gradtrace("run", "s.py", "--svg", ".", cwd=work))
    assert gradtrace("run", "s.py", "--svg", ".", "--force", cwd=work).returncode == 0
    assert (work / "step-0099.svg").read_text() == "<svg>mine</svg>"


def test_svg_removes_only_its_own_earlier_pictures(work):
    pics = work / "pics"
    (work / "long.py").write_text("import torch\n" + "".join(f"a{i} = torch.ones(1) * {i}\n" for i in range(6)))
    (work / "short.py").write_text("import torch\nb = torch.ones(2)\n")
    assert gradtrace("run", "long.py", "--svg", "pics", cwd=work).returncode == 0
    assert sorted(p.name for p in pics.iterdir()) == [f"step-{i:04d}.svg" for i in range(1, 8)]
    (pics / "step-0007.svg").write_text("<svg>now the user's</svg>")  # the user put their own picture there
    done = gradtrace("run", "short.py", "--svg", "pics", "--force", cwd=work)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in pics.iterdir()) == ["step-0001.svg", "step-0002.svg", "step-0007.svg"]
    assert (pics / "step-0007.svg").read_text() == "<svg>now the user's</svg>"
    assert "removed 4" in done.stderr


# ---------------------------------------------------------------- permissions, names, failures
def test_rewriting_an_output_keeps_its_permissions(work):
    assert gradtrace("run", "s.py", "--json", "t.json", cwd=work).returncode == 0
    (work / "t.json").chmod(0o600)
    assert gradtrace("run", "s.py", "--json", "t.json", cwd=work).returncode == 0
    assert stat.S_IMODE(os.stat(work / "t.json").st_mode) == 0o600


@pytest.mark.parametrize("option", ["--json", "--html", "--svg"])
def test_a_name_longer_than_the_folder_allows(work, option):
    name = "t" * 300
    line = one_line(gradtrace("run", "s.py", option, name, cwd=work))
    assert "name" in line and len(line) < 300
    assert not ran(work)


def test_a_script_name_longer_than_the_system_allows(work):
    line = one_line(gradtrace("run", "s" * 300 + ".py", cwd=work))
    assert "too long" in line and len(line) < 300


def test_a_name_just_under_the_limit_is_written(work):
    name = "t" * 250 + ".json"  # a temporary name built from it would pass 255 bytes
    done = gradtrace("run", "s.py", "--json", name, cwd=work)
    assert done.returncode == 0, done.stderr
    assert json.loads((work / name).read_text())["grads"]["x"] == grads()


FAIL_AT_RENAME = """
import os, sys
def _fail(event, args):
    if event in ("os.rename", "os.link") and os.fspath(args[1]).endswith("crash.json"):
        raise RuntimeError("the disk went away")
sys.addaudithook(_fail)
"""


def test_a_failure_mid_write_leaves_no_temporary_file(work):
    (work / "crash.py").write_text(SCRIPT + FAIL_AT_RENAME)
    done = gradtrace("run", "crash.py", "--json", "crash.json", cwd=work)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in work.iterdir()) == ["crash.py", "ran.txt", "s.py"]


# ---------------------------------------------------------------- %%gradtrace --html
@pytest.fixture(scope="module")
def shell():
    pytest.importorskip("IPython")
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython() or get_ipython()  # the process's one test shell, whichever test file started it
    ip.run_line_magic("load_ext", "gradtrace")
    return ip


def test_magic_does_not_follow_a_planted_link(shell, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    page = tmp_path / "page.html"
    (tmp_path / f"page.html.gradtrace-{os.getpid()}.tmp").symlink_to(victim)  # the name it used to write through
    assert shell.run_cell(f"%%gradtrace --no-widget --html {page}\na = 1\n").success
    assert victim.read_text() == "precious"
    assert kind(page) == "file" and MARK in page.read_text()


def test_magic_keeps_permissions_and_refuses_links(shell, tmp_path, capsys):
    page = tmp_path / "page.html"
    assert shell.run_cell(f"%%gradtrace --no-widget --html {page}\na = 1\n").success
    page.chmod(0o600)
    assert shell.run_cell(f"%%gradtrace --no-widget --html {page}\na = 2\n").success
    assert stat.S_IMODE(os.stat(page).st_mode) == 0o600 and "a = 2" in page.read_text()
    (tmp_path / "link.html").symlink_to(page)
    capsys.readouterr()
    assert not shell.run_cell(f"%%gradtrace --no-widget --html {tmp_path / 'link.html'} --force\na = 3\n").success
    said = capsys.readouterr()
    assert "symbolic link" in said.out + said.err and "Traceback" not in said.out + said.err
    assert "a = 2" in page.read_text()


def test_magic_long_name_is_one_line(shell, tmp_path, capsys):
    capsys.readouterr()
    assert not shell.run_cell(f"%%gradtrace --no-widget --html {tmp_path / ('p' * 300)}\na = 1\n").success
    said = capsys.readouterr()
    lines = [ln for ln in (said.out + said.err).splitlines() if ln.strip()]
    assert len(lines) == 1 and "name" in lines[0] and "Traceback" not in lines[0], said


def test_magic_failure_mid_write_leaves_no_temporary_file(shell, tmp_path, capsys):
    target = tmp_path / "crash.html"
    hook = FAIL_AT_RENAME.replace("crash.json", str(target))
    assert shell.run_cell(hook).success
    shell.run_cell(f"%%gradtrace --no-widget --html {target}\na = 1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert "Traceback" not in "".join(capsys.readouterr())


# ---------------------------------------------------------------- the marks
@pytest.mark.parametrize("kind, text", [("json", '{"schema": "gradtrace.trace"}'), ("json", "{}"),
                                        ("html", "<!DOCTYPE html>\n<html><head><title>t</title></head></html>"),
                                        ("svg", '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'),
                                        ("svg", "<svg/>")])
def test_each_mark_is_valid_in_its_format_and_put_once(kind, text, tmp_path):
    import xml.etree.ElementTree as ET

    from gradtrace.outfile import is_ours, mark

    marked = mark(kind, text)
    assert mark(kind, marked) == marked and marked != text
    if kind == "json":
        assert {k: v for k, v in json.loads(marked).items() if k != "generator"} == json.loads(text)
    if kind == "svg":
        assert ET.fromstring(marked).tag == ET.fromstring(text).tag  # the declaration still comes first
    (tmp_path / "f").write_text(marked)
    (tmp_path / "g").write_text(text)
    assert is_ours(tmp_path / "f") and not is_ours(tmp_path / "g")
    (tmp_path / "link").symlink_to(tmp_path / "f")
    assert not is_ours(tmp_path / "link")

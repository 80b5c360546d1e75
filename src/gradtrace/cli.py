"""The ``gradtrace`` command: trace a script, write its pictures, text and JSON.

Place in the pipeline: tracer -> model -> explain -> render -> **cli** (public API only).

``gradtrace run SCRIPT.py`` runs the script as ``python SCRIPT.py`` would
(``__name__ == "__main__"``, ``__file__``, ``sys.argv``, the script's folder
first on ``sys.path``), one statement at a time under the tracer, then writes
what was asked. Every problem with the command line or the files is one line on
stderr and exit status 2; nothing is half-written (outputs go to a temporary
file in the same folder, then replace the target).

Exit status: 0 the script ran; 1 the script raised (its traceback is printed as
Python prints it, and the outputs still show the trace up to the error);
2 a usage or file problem, found before the script runs; 3 gradtrace itself failed.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import tokenize
import traceback
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Trace

__all__ = ["main", "DEMO_SOURCE"]

EXIT_OK, EXIT_SCRIPT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
PROG = "gradtrace"

#: The forum's program (examples/forum_original.py), shipped inside the package for ``gradtrace demo``.
DEMO_SOURCE = '''\
"""The course forum's first program: f = x**2 + x**3 at x = 42.

df/dx = 2x + 3x**2 = 84 + 5292 = 5376 (the forum post says 53376: a typo).
"""
import torch

x = torch.tensor(42., requires_grad=True)
x2 = x ** 2
x3 = x ** 3
f = x2 + x3
f.backward(retain_graph=False)
print(x.grad)
'''

_EPILOG = """\
examples:
  gradtrace run examples/forum_original.py --text
  gradtrace run train.py --html trace.html --json trace.json -- --epochs 3
  gradtrace demo --out gradtrace-demo

exit status: 0 the script ran, 1 the script raised (outputs are still written),
2 bad command line or files, 3 gradtrace itself failed.
"""


class UsageError(Exception):
    """A problem with the command line or the files: one line, exit status 2."""


# ---------------------------------------------------------------- messages
def say(message: str) -> None:
    """One line from gradtrace on stderr (the script's own output keeps stdout)."""
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- arguments
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="See PyTorch autograd happen: run a script one statement at a time and show the Python "
        "names, the tensor objects and the grad_fn graph at every step.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="trace a Python script",
        description="Run SCRIPT as `python SCRIPT` would, tracing every statement. Arguments for the script "
        "go after `--`.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("script", metavar="SCRIPT.py", help="the Python script to run")
    run.add_argument("--html", metavar="OUT", help="write one self-contained HTML page that steps through the trace")
    run.add_argument("--json", metavar="OUT", help="write the trace as JSON")
    run.add_argument("--svg", metavar="DIR", help="write one SVG picture per step: DIR/step-0001.svg, ...")
    run.add_argument("--text", action="store_true", help="print the text trace to stdout after the script's output")
    run.add_argument("--max-steps", metavar="N", type=_positive_int, default=1000,
                     help="record at most N steps; the rest of the script runs unrecorded (default 1000)")
    demo = sub.add_parser(
        "demo",
        help="trace the forum example (f = x**2 + x**3 at 42) into an HTML page and print its text trace",
        description="Trace the course forum's example, write it as an HTML page and print its text trace.",
    )
    demo.add_argument("--out", metavar="DIR", default="gradtrace-demo",
                      help="folder for forum.html (default: ./gradtrace-demo)")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def split_script_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """``run a.py --html x -- --lr 3`` -> gradtrace's part and the script's arguments."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


# ---------------------------------------------------------------- files
def read_script(path: str) -> tuple[str, str]:
    """The script's absolute path and source, decoded as Python would (UTF-8 unless a coding line says else)."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"cannot run {path}: no such file")
    if p.is_dir():
        raise UsageError(f"cannot run {path}: it is a folder, not a Python script")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        source = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot run {path}: {_decode_problem(data, exc)}") from None
    if encoding == "utf-8-sig":
        source = source.lstrip("\ufeff")
    return str(p.resolve()), source


def _decode_problem(data: bytes, exc: Exception) -> str:
    """Why the bytes are not Python source, in one line."""
    if isinstance(exc, LookupError):
        return f"{exc}; save it as UTF-8"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data.count(b"\n", 0, bad.start) + 1
        return f"it is not UTF-8 text (byte 0x{data[bad.start]:02x} on line {line}); save it as UTF-8"
    return f"{exc}; save it as UTF-8"


def check_syntax(source: str, filename: str, shown: str) -> None:
    """Compile ``source``; a syntax error becomes Python's own message with file:line, the line and a caret."""
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"{shown}:{exc.lineno}" if exc.lineno else shown
        details = "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
        raise UsageError(f"cannot run {where}: syntax error, the script did not run\n{details}") from None
    except ValueError as exc:  # e.g. null bytes in the source
        raise UsageError(f"cannot run {shown}: {exc}") from None


def check_output_file(path: str, script: str, example: str = "trace.html") -> Path:
    """Fail now (before the script runs) if ``path`` cannot be written."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"cannot write {path}: it is a folder; give a file name such as {Path(path) / example}")
    if p.exists() and p.resolve() == Path(script):
        raise UsageError(f"cannot write {path}: that is the script itself")
    parent = p.parent
    if not parent.is_dir():
        raise UsageError(f"cannot write {path}: folder {parent} does not exist")
    _probe(parent, path)
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"cannot write {path}: permission denied")
    return p


def check_output_dir(path: str) -> Path:
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"cannot write pictures to {path}: it is a file, not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create folder {path}: {exc.strerror or exc}") from None
    _probe(p, path)
    return p


def _probe(folder: Path, shown: str) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gradtrace-", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to a temporary file next to ``path``, then rename it over ``path``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------- running the script
@dataclass
class Outcome:
    """How the learner's script ended."""

    trace: Any
    exception: BaseException | None = None
    exit_code: int = EXIT_OK
    notes: list[str] = field(default_factory=list)


def run_script(path: str, source: str, argv: Sequence[str], max_steps: int, shown: str | None = None) -> Outcome:
    """Run the script as ``python path argv...`` would, under the tracer; restores ``sys`` afterwards."""
    import gradtrace

    module = types.ModuleType("__main__")
    module.__file__ = path
    namespace = module.__dict__
    namespace["__builtins__"] = __builtins__
    saved = (sys.argv, list(sys.path), sys.modules.get("__main__"))
    sys.argv = [shown or path, *argv]
    sys.path.insert(0, str(Path(path).parent))
    sys.modules["__main__"] = module
    exception: BaseException | None = None
    trace: Trace | None
    try:
        try:
            trace = gradtrace.trace_code(source, namespace, filename=path, max_steps=max_steps, raise_errors=True)
        except BaseException as exc:  # the learner's exception (SystemExit and KeyboardInterrupt included)
            exception = exc
            trace = gradtrace.last_trace()
    finally:
        sys.argv, sys.path[:] = saved[0], saved[1]
        if saved[2] is not None:
            sys.modules["__main__"] = saved[2]
    return _outcome(trace, exception)


def _outcome(trace: Any, exception: BaseException | None) -> Outcome:
    if exception is None:
        return Outcome(trace)
    if isinstance(exception, SystemExit):
        code = exception.code
        if code is None or code == 0:
            return Outcome(trace, None, EXIT_OK)
        if isinstance(code, int):
            return Outcome(trace, None, code)
        print(code, file=sys.stderr)
        return Outcome(trace, None, EXIT_SCRIPT)
    if isinstance(exception, KeyboardInterrupt):
        return Outcome(trace, exception, 130)
    return Outcome(trace, exception, EXIT_SCRIPT)


_PACKAGE_DIR = str(Path(__file__).resolve().parent) + os.sep


def learner_traceback(exc: BaseException) -> str:
    """The traceback Python would print for ``exc``, without gradtrace's own frames."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    seen: set[int] = set()
    todo = [te]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        t.stack = traceback.StackSummary.from_list(_without_tracer(list(t.stack)))
        todo += [c for c in (t.__cause__, t.__context__) if c is not None]
    return "".join(te.format())


def _without_tracer(frames: list[traceback.FrameSummary]) -> list[traceback.FrameSummary]:
    """Drop gradtrace's frames, and the detour a torch function takes through the tracer's torch mode.

    Under a torch function mode, a torch function written in Python calls
    ``handle_torch_function``, which calls the mode, which calls the same function
    again: Python alone would show that function once, not the detour.
    """
    kept = [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    out: list[traceback.FrameSummary] = []
    for i, f in enumerate(kept):
        if f.name == "handle_torch_function" and f.filename.endswith(os.path.join("torch", "overrides.py")):
            after = kept[i + 1] if i + 1 < len(kept) else None
            if out and after is not None and (out[-1].filename, out[-1].name) == (after.filename, after.name):
                out.pop()
            continue
        out.append(f)
    return out


# ---------------------------------------------------------------- outputs
@dataclass
class Targets:
    html: Path | None = None
    json: Path | None = None
    svg: Path | None = None
    text: bool = False


def check_targets(args: argparse.Namespace, script: str) -> Targets:
    targets = Targets(text=bool(args.text))
    named: dict[Path, str] = {}
    for option in ("html", "json"):
        value = getattr(args, option)
        if value is None:
            continue
        p = check_output_file(value, script, f"trace.{option}")
        key = p.resolve()
        if key in named:
            raise UsageError(f"--{named[key]} and --{option} both write {value}; give two file names")
        named[key] = option
        setattr(targets, option, p)
    if args.svg is not None:
        targets.svg = check_output_dir(args.svg)
    return targets


def write_outputs(trace: Any, targets: Targets) -> int:
    """Write what was asked; returns 0, or the exit status for a failure of gradtrace's own."""
    status = EXIT_OK
    html, json_path, svg = targets.html, targets.json, targets.svg
    if targets.text:
        status |= _guard("the text trace", lambda: _print_text(trace))
    if json_path is not None:
        status |= _guard(f"{json_path}", lambda: _write_json(trace, json_path))
    if svg is not None:
        status |= _guard(f"pictures in {svg}", lambda: _write_svgs(trace, svg),
                         f"no SVG pictures written to {svg}{os.sep}")
    if html is not None:
        status |= _guard(f"{html}", lambda: _write_html(trace, html),
                         f"{html} not written (its pictures need a layout binary)")
    return EXIT_INTERNAL if status else EXIT_OK


def _guard(what: str, action: Callable[[], None], no_layout: str = "") -> int:
    from .render.svg import LayoutError

    try:
        action()
    except LayoutError as exc:
        say(f"{no_layout or what + ' not written'}: {exc}")
    except OSError as exc:
        say(f"cannot write {what}: {exc.strerror or exc}")
        return 1
    except Exception as exc:  # gradtrace's own bug: one line, never a traceback
        say(f"internal error while making {what}: {type(exc).__name__}: {exc} (please report this)")
        return 1
    return 0


def _print_text(trace: Any) -> None:
    from .render.text import trace_text

    sys.stdout.write(trace_text(trace).rstrip("\n") + "\n")
    sys.stdout.flush()


def _write_json(trace: Any, path: Path) -> None:
    from .render.json import trace_json

    write_atomic(path, trace_json(trace))
    say(f"wrote {path}")


def _write_html(trace: Any, path: Path) -> None:
    from .render.html import trace_html

    write_atomic(path, str(trace_html(trace)))
    say(f"wrote {path} (open it in a browser)")


def _write_svgs(trace: Any, folder: Path) -> None:
    from .render.dot import step_dot
    from .render.svg import dot_to_svg

    steps = list(trace.steps)
    for step in steps:
        write_atomic(folder / f"step-{step.index + 1:04d}.svg", dot_to_svg(step_dot(step)))
    say(f"wrote {len(steps)} pictures to {folder}{os.sep}")


# ---------------------------------------------------------------- commands
def command_run(args: argparse.Namespace, script_args: list[str]) -> int:
    path, source = read_script(args.script)
    check_syntax(source, path, args.script)
    targets = check_targets(args, path)
    outcome = run_script(path, source, script_args, args.max_steps, shown=args.script)
    sys.stdout.flush()
    if outcome.exception is not None:
        sys.stderr.write(learner_traceback(outcome.exception))
        sys.stderr.flush()
    trace = outcome.trace
    if trace is None:
        say("the script stopped before gradtrace recorded anything")
        return outcome.exit_code or EXIT_INTERNAL
    if trace.steps_unrecorded:
        say(f"recorded the first {len(trace.steps)} steps; {trace.steps_unrecorded} more ran unrecorded "
            f"(raise --max-steps to see them)")
    status = write_outputs(trace, targets)
    return outcome.exit_code or status


def command_demo(args: argparse.Namespace) -> int:
    import gradtrace

    folder = check_output_dir(args.out)
    target = check_output_file(str(folder / "forum.html"), "")
    out = io.StringIO()
    saved_stdout = sys.stdout
    sys.stdout = out  # the example's own print(x.grad) goes after the text trace
    try:
        trace = gradtrace.trace_code(DEMO_SOURCE, {"__name__": "__main__"}, filename="forum_original.py")
    finally:
        sys.stdout = saved_stdout
    status = write_outputs(trace, Targets(html=target, text=True))
    print(f"\nthe program printed: {out.getvalue().strip()}")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gradtrace`` console script and ``python -m gradtrace``."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    ours, script_args = split_script_args(args_list)
    parser = build_parser()
    try:
        args = parser.parse_args(ours)
    except SystemExit as exc:  # argparse printed usage and the error (status 2), or --help / --version (0)
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    try:
        if args.command == "demo":
            return command_demo(args)
        return command_run(args, script_args)
    except UsageError as exc:
        say(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``gradtrace`` command: trace a script, write its pictures, text and JSON.

Place in the pipeline: tracer -> model -> explain -> render -> **cli**. It runs a script through
:mod:`gradtrace.run` (which imports the tracer, and torch, only when the script runs: ``gradtrace --help``
imports no torch) and draws with :mod:`gradtrace.render`.

``gradtrace run SCRIPT.py`` runs the script as ``python SCRIPT.py`` would
(``__name__ == "__main__"``, ``__file__``, ``sys.argv``, the script's folder
first on ``sys.path``), one statement at a time under the tracer, then writes
what was asked. ``gradtrace run -m MODULE`` runs a module as ``python -m MODULE``
would (found from the current folder; ``__spec__`` and ``__package__`` set, so
relative imports work). Every problem with the command line or the files is one line on
stderr and exit status 2; nothing is half-written (outputs go to a temporary
file in the same folder, then replace the target).

Exit status: 0 the script ran; 1 the script raised (its traceback is printed as
Python prints it, and the outputs still show the trace up to the error);
2 a usage or file problem, found before the script runs (or after it, when the
script itself made a file at an output's path: that output is not written); 3 gradtrace itself failed,
or an output that was asked for could not be made (no layout binary for ``--svg`` or ``--html``, a
disk error): one line on stderr names each output not written.

Outputs are written by :mod:`gradtrace.outfile`: an existing file is replaced only
if gradtrace wrote it (or with ``--force``), a link or a special file never
(a FIFO, a terminal or ``/dev/stdout`` is written in place), and ``--svg`` removes
only pictures gradtrace wrote.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import tokenize
import traceback
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from . import outfile
from .model import DEFAULT_MAX_STEPS
from .run import learner_tb, learner_traceback, ours  # the runner's module imports no torch until code runs

__all__ = ["main", "DEMO_SOURCE", "learner_traceback"]

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
  gradtrace run -m mypackage.train --json trace.json
  gradtrace run train.py --html trace.html --json trace.json -- --epochs 3
  gradtrace demo --out gradtrace-demo

exit status: 0 the script ran, 1 the script raised (outputs are still written),
2 bad command line or files, 3 an output could not be made (or gradtrace itself failed).

An existing output file is replaced only if gradtrace wrote it, or with --force.
"""


class UsageError(Exception):
    """A problem with the command line or the files: one line (and Python's own ``details``), exit status 2."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details


class _Parser(argparse.ArgumentParser):
    """argparse, with the control characters of what the user typed escaped in its error line."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {printable(message)}\n")


# ---------------------------------------------------------------- messages
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with its control characters (newline, ESC, ...) written as Python escapes, as ``repr`` shows them:
    a file name cannot break a message into two lines or recolour the terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def say(message: str, details: str = "") -> None:
    """One line from gradtrace on stderr (the script's own output keeps stdout), control characters escaped;
    ``details`` (lines gradtrace formatted itself, already escaped) go under it."""
    text = f"{PROG}: {printable(message)}" + (f"\n{details}" if details else "") + "\n"
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (AttributeError, ValueError, OSError):  # the script closed sys.stderr: the process's stderr still takes it
        try:
            os.write(2, text.encode("utf-8", "backslashreplace"))
        except OSError:  # started with no stderr at all: the line is lost, as Python loses its own
            pass


# ---------------------------------------------------------------- arguments
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
        description="Run SCRIPT as `python SCRIPT` would (or `-m MODULE` as `python -m MODULE` would), tracing "
        "every statement. Arguments for the script go after `--`.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("script", metavar="SCRIPT.py", nargs="?", help="the Python script to run")
    run.add_argument("-m", dest="module", metavar="MODULE",
                     help="run a module instead, as `python -m MODULE` would (found from the current folder)")
    run.set_defaults(run_parser=run)
    run.add_argument("--html", metavar="OUT", help="write one self-contained HTML page that steps through the trace")
    run.add_argument("--json", metavar="OUT", help="write the trace as JSON")
    run.add_argument("--svg", metavar="DIR", help="write one SVG picture per step: DIR/step-0001.svg, ...")
    run.add_argument("--text", action="store_true", help="print the text trace to stdout after the script's output")
    run.add_argument("--max-steps", metavar="N", type=_positive_int, default=DEFAULT_MAX_STEPS,
                     help="record at most N steps; the rest of the script runs unrecorded "
                     f"(default {DEFAULT_MAX_STEPS})")
    run.add_argument("--force", action="store_true",
                     help="replace existing output files (and pictures) even if gradtrace did not write them")
    demo = sub.add_parser(
        "demo",
        help="trace the forum example (f = x**2 + x**3 at 42) into an HTML page and print its text trace",
        description="Trace the course forum's example, write it as an HTML page and print its text trace.",
    )
    demo.add_argument("--out", metavar="DIR", default="gradtrace-demo",
                      help="folder for forum.html (default: ./gradtrace-demo)")
    demo.add_argument("--force", action="store_true",
                      help="replace DIR/forum.html even if gradtrace did not write it")
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
    """The script's absolute path (a link kept as the link, as Python names ``__file__``) and source,
    decoded as Python would (UTF-8 unless a coding line says else)."""
    p = Path(path)
    try:
        exists = p.exists()
    except OSError as exc:  # a name longer than the system allows
        raise UsageError(f"cannot run {outfile.short(path)}: {exc.strerror or exc}") from None
    if not exists:
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
    return os.path.abspath(path), source


def find_module(name: str) -> tuple[str, str, Any]:
    """``-m NAME``: the module's absolute path, its source and its spec, found as ``python -m`` finds them.

    The current folder comes first on ``sys.path`` while looking (it does for the run too), the module's
    parent packages are imported (as Python imports them), and a package runs its ``__main__`` module.
    """
    here = os.getcwd()
    sys.path.insert(0, here)
    try:
        spec = _find_spec(name, name)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = _find_spec(f"{name}.__main__", name)
            if spec is None:
                raise UsageError(f"cannot run -m {name}: it is a package with no __main__ module; "
                                 f"name one of its modules, as in -m {name}.MODULE")
    finally:
        if here in sys.path:
            sys.path.remove(here)
    if spec is None:
        raise UsageError(f"cannot run -m {name}: no module named {name} in the current folder or on Python's path")
    origin = spec.origin if spec.has_location else None
    if not isinstance(origin, str) or not origin.endswith(".py"):
        raise UsageError(f"cannot run -m {name}: {origin or 'it'} is not a Python source file")
    path, source = read_script(origin)
    return path, source, spec


def _find_spec(name: str, asked: str) -> Any:
    import importlib.util

    try:
        return importlib.util.find_spec(name)
    except Exception as exc:  # a parent package that is missing or fails to import
        raise UsageError(f"cannot run -m {asked}: {type(exc).__name__}: {exc}") from None


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
        if exc.filename:
            exc.filename = printable(exc.filename)
        lines = "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n").split("\n")
        raise UsageError(f"cannot run {where}: syntax error, the script did not run",
                         "\n".join(printable(line) for line in lines)) from None
    except ValueError as exc:  # e.g. null bytes in the source
        raise UsageError(f"cannot run {shown}: {exc}") from None


#: file kinds gradtrace never writes over: a learner's program or notebook
SOURCE_SUFFIXES = (".py", ".pyw", ".ipynb")


@dataclass(frozen=True)
class Output:
    """One output path, made absolute before the script runs (the script may change folder)."""

    path: Path
    shown: str  # as the user typed it, for messages
    force: bool = False  # replace a file gradtrace did not write

    @property
    def key(self) -> Path:
        return self.path.resolve()

    @property
    def place(self) -> outfile.Place:
        return outfile.Place(self.path, self.shown)

    def __str__(self) -> str:
        return self.shown


def absolute(path: str, force: bool = False) -> Output:
    return Output(Path(os.path.abspath(path)), path, force)


def check_output_file(path: str, script: str, example: str = "trace.html", force: bool = False) -> Output:
    """Fail now (before the script runs) if ``path`` cannot be written or would replace a program."""
    out = absolute(path, force)
    p = out.path
    if os.path.lexists(p) and not p.is_dir():
        if script and _same_file(p, Path(script)):
            raise UsageError(f"cannot write {path}: that is the script itself")
        if p.suffix.lower() in SOURCE_SUFFIXES:
            raise UsageError(f"cannot write {path}: it is a {p.suffix} file, and gradtrace never writes over a "
                             f"program or notebook; give a name such as {example}")
    try:
        outfile.check(p, path, force=force, example=example)
    except outfile.Refused as exc:
        raise UsageError(str(exc)) from None
    return out


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def check_output_dir(path: str, create: bool = True, force: bool = False) -> Output:
    out = absolute(path, force)
    p = out.path
    try:
        if p.exists() and not p.is_dir():
            raise UsageError(f"cannot write pictures to {path}: it is a file, not a folder")
        if not create:
            return out
        p.mkdir(parents=True, exist_ok=True)
        outfile.check_folder(p, path)  # it takes new files
    except outfile.Refused as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot create folder {outfile.short(path)}: {exc.strerror or exc}") from None
    return out


def check_pictures(folder: Output) -> None:
    """Refuse a ``--svg`` folder that holds ``step-NNNN.svg`` pictures gradtrace did not write (unless --force)."""
    if folder.force or not folder.path.is_dir():
        return
    for entry in sorted(folder.path.iterdir()):
        if SVG_NAME.match(entry.name) and not outfile.is_ours(entry):
            raise UsageError(f"not writing pictures to {folder}: {entry.name} there was not written by gradtrace; "
                             "choose another folder, or add --force to replace such pictures")


# ---------------------------------------------------------------- running the script
@dataclass
class Outcome:
    """How the learner's script ended."""

    trace: Any
    exception: BaseException | None = None
    exit_code: int = EXIT_OK
    notes: list[str] = field(default_factory=list)
    #: the modules' source files the run read (none of them may be written over)
    sources: set[Path] = field(default_factory=set)
    #: ended by Ctrl-C: the process ends by SIGINT, as Python's does
    interrupted: bool = False


def run_script(path: str, source: str, argv: Sequence[str], max_steps: int, shown: str | None = None,
               spec: Any = None) -> Outcome:
    """Run the script as ``python path argv...`` would (with a module's ``spec``, as ``python -m`` runs it),
    under the tracer; restores ``sys`` afterwards.

    What Python itself prints when a script ends (the traceback of an uncaught
    exception, a ``sys.exit("message")``) goes to the script's own ``sys.stderr``
    and through its ``sys.excepthook``, as it would; then the streams, hooks and
    folder-independent state gradtrace writes with are put back.
    """
    import builtins

    from .run import run_traced  # the tracer, and torch with it, only when a script runs

    module = types.ModuleType("__main__")
    namespace = module.__dict__
    namespace.update(_main_globals(path) if spec is None else _module_globals(spec))
    namespace["__builtins__"] = builtins  # a __main__ module holds the module, not its dict
    saved = (sys.argv, list(sys.path), sys.modules.get("__main__"))
    streams = (sys.stdout, sys.stderr, sys.excepthook)
    show_warning = warnings.showwarning
    sys.argv = [shown or path, *argv]
    # Python puts the real folder of a script (a link's target's) first, or the current folder for -m
    sys.path.insert(0, os.getcwd() if spec is not None else os.path.dirname(os.path.realpath(path)))
    sys.modules["__main__"] = module
    warnings.showwarning = _learner_warning(show_warning)
    try:
        # the learner's exception (SystemExit and KeyboardInterrupt included) comes back with the trace
        # deep_stack: a child the script started may have left the stack limit lowered; graphs are freed at exit
        run = run_traced(source, namespace, filename=path, max_steps=max_steps, keep_last=False,
                         raise_interrupt=False, deep_stack=True)
        outcome = _outcome(run.trace, run.exception)
        _report_end(outcome, streams[1])
    finally:
        _flush(sys.stdout, sys.stderr)  # as Python flushes the script's streams at exit
        sys.stdout, sys.stderr, sys.excepthook = streams
        if warnings.showwarning is not show_warning and getattr(warnings.showwarning, "_gradtrace", False):
            warnings.showwarning = show_warning
        sys.argv, sys.path[:] = saved[0], saved[1]
        if saved[2] is not None:
            sys.modules["__main__"] = saved[2]
    outcome.sources = _source_files(path)
    return outcome


def _main_globals(path: str) -> dict[str, Any]:
    """What ``python path`` puts in ``__main__`` before the script's first line (``__name__`` and the rest
    a new module has, ``None``, are already there)."""
    from importlib.machinery import SourceFileLoader

    return {"__file__": path, "__cached__": None, "__loader__": SourceFileLoader("__main__", path),
            "__annotations__": {}}


def _module_globals(spec: Any) -> dict[str, Any]:
    """What ``python -m`` puts in ``__main__`` for the module ``spec`` finds."""
    return {"__file__": spec.origin, "__cached__": spec.cached, "__loader__": spec.loader, "__spec__": spec,
            "__package__": spec.parent, "__annotations__": {}}


def _flush(*streams: Any) -> None:
    for stream in streams:
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # a closed or broken stream: Python ignores it at exit too (exit status aside)
            pass


def _report_end(outcome: Outcome, our_stderr: Any) -> None:
    """Print what Python prints when the script ends, where the script's own hooks and streams send it."""
    exc = outcome.exception
    if exc is None:
        for note in outcome.notes:
            _write_to(sys.stderr, note + "\n", our_stderr)
        return
    if sys.excepthook is not sys.__excepthook__:  # the script's own hook, as Python would call it
        try:
            sys.excepthook(type(exc), exc, learner_tb(exc.__traceback__))
            return
        except Exception:  # a failing hook: Python prints its traceback and the original one
            pass
    _write_to(sys.stderr, learner_traceback(exc), our_stderr)


def _write_to(stream: Any, text: str, fallback: Any) -> None:
    for target in (stream, fallback):
        try:
            if target is not None:
                target.write(text)
                target.flush()
                return
        except Exception:
            continue


def _source_files(script: str) -> set[Path]:
    """Files the run read as Python source: the script and every module imported from a file."""
    found = {Path(script).resolve()}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if isinstance(name, str) and name.endswith(SOURCE_SUFFIXES):
            try:
                found.add(Path(name).resolve())
            except (OSError, RuntimeError):
                continue
    return found


def _outcome(trace: Any, exception: BaseException | None) -> Outcome:
    if exception is None:
        return Outcome(trace)
    if isinstance(exception, SystemExit):
        code = exception.code
        if code is None or code == 0:
            return Outcome(trace, None, EXIT_OK)
        if isinstance(code, int):
            return Outcome(trace, None, code)
        return Outcome(trace, None, EXIT_SCRIPT, notes=[_safe_text(code)])
    if isinstance(exception, KeyboardInterrupt):
        return Outcome(trace, exception, 130, interrupted=True)
    return Outcome(trace, exception, EXIT_SCRIPT)


def _safe_text(value: Any) -> str:
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__} object>"


_FRAME_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<name>.*)$')


def without_our_frames(text: str) -> str:
    """A formatted stack (as in an anomaly-mode or compiler warning) without gradtrace's frames.

    The frames that called the script (the ``gradtrace`` command, gradtrace's
    runner) go, so the stack starts at the script as under ``python``; so do
    gradtrace's frames further in and the stand-in ``<torch call>`` frames, each
    with the source and caret lines under it.
    """
    if "File " not in text:
        return text
    blocks: list[tuple[bool | None, list[str]]] = []  # (None: not a frame | a frame: is it ours), lines
    for line in text.splitlines(keepends=True):
        m = _FRAME_LINE.match(line)
        if m is not None:
            blocks.append((ours(m["file"]) or m["name"].strip() == "<torch call>", [line]))
        elif blocks and blocks[-1][0] is not None and line.startswith("    "):
            blocks[-1][1].append(line)  # the frame's source and caret lines
        else:
            blocks.append((None, [line]))
    frames = [i for i, (ours, _) in enumerate(blocks) if ours is not None]
    first_ours = next((i for i in frames if blocks[i][0]), None)
    if first_ours is None:
        return text
    start = next((i for i in frames if i > first_ours and not blocks[i][0]), None)
    drop = {i for i in frames if blocks[i][0] or (start is not None and i < start)}
    return "".join("".join(lines) for i, (_, lines) in enumerate(blocks) if i not in drop)


def _learner_warning(show: Callable[..., Any]) -> Callable[..., Any]:
    def show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                     line: str | None = None) -> None:
        try:
            if ours(str(filename)):  # gradtrace's own word on the trace: one line, not a source location
                say(" ".join(str(message).split()))
                return
            text = str(message)
            clean = without_our_frames(text)
            if clean != text:
                message = clean
        except Exception:  # the warning is shown as it came
            pass
        show(message, category, filename, lineno, file, line)

    show_warning._gradtrace = True  # type: ignore[attr-defined]
    return show_warning


# ---------------------------------------------------------------- outputs
@dataclass
class Targets:
    html: Output | None = None
    json: Output | None = None
    svg: Output | None = None
    text: bool = False

    def files(self) -> list[tuple[str, Output]]:
        return [(name, out) for name, out in (("html", self.html), ("json", self.json)) if out is not None]


#: the names ``--svg`` gives its pictures; only files so named are ever removed from that folder
SVG_NAME = re.compile(r"^step-\d{4,}\.svg$")


def check_targets(args: argparse.Namespace, script: str) -> Targets:
    """Every usage problem with the outputs, found before anything runs or is created."""
    targets = Targets(text=bool(args.text))
    force = bool(getattr(args, "force", False))
    named: dict[Path, str] = {}

    def claim(out: Output, option: str) -> None:
        key = out.key
        if key in named:
            raise UsageError(f"--{named[key]} and --{option} both write {out.shown}; give two different names")
        named[key] = option

    for option in ("html", "json"):
        value = getattr(args, option)
        if value is None:
            continue
        out = check_output_file(value, script, f"trace.{option}", force)
        claim(out, option)
        setattr(targets, option, out)
    if args.svg is not None:
        folder = check_output_dir(args.svg, create=False, force=force)
        claim(folder, "svg")
        for option, out in targets.files():
            if out.key.parent == folder.key and SVG_NAME.match(out.path.name):
                raise UsageError(f"--{option} {out.shown} is inside the --svg folder under a picture's name; "
                                 "give another name")
        check_pictures(folder)
        targets.svg = check_output_dir(args.svg, force=force)  # all checks passed: create the folder now
    return targets


def check_sources(targets: Targets, sources: set[Path]) -> None:
    """After the run: refuse to write over any file the run read as Python source."""
    for option, out in targets.files():
        if out.key in sources:
            raise UsageError(f"not writing --{option} {out.shown}: the script ran it as Python source; "
                             "nothing was written, give another name")


def write_outputs(trace: Any, targets: Targets) -> int:
    """Write what was asked; returns 0, or the exit status of the worst failure (2 refused, 3 not made)."""
    status = [EXIT_OK]
    html, json_path, svg = targets.html, targets.json, targets.svg
    if targets.text:
        status.append(_guard("the text trace", lambda: _print_text(trace)))
    if json_path is not None:
        status.append(_guard(f"{json_path}", lambda: _write_json(trace, json_path)))
    if svg is not None:
        status.append(_write_svgs(trace, svg))
    if html is not None:
        status.append(_guard(f"{html}", lambda: _write_html(trace, html),
                             f"{html} not written (its pictures need a layout binary)"))
    return max(status)


def _guard(what: str, action: Callable[[], None], no_layout: str = "") -> int:
    from .render.svg import LayoutError

    try:
        action()
    except LayoutError as exc:
        say(f"{no_layout or what + ' not written'}: {exc}")
        return EXIT_INTERNAL
    except outfile.Refused as exc:  # the file changed while the script ran
        say(str(exc))
        return EXIT_USAGE
    except OSError as exc:
        say(f"cannot write {what}: {exc.strerror or exc}")
        return EXIT_INTERNAL
    except Exception as exc:  # gradtrace's own bug: one line, never a traceback
        say(f"internal error while making {what}: {type(exc).__name__}: {exc} (please report this)")
        return EXIT_INTERNAL
    return EXIT_OK


def _print_text(trace: Any) -> None:
    from .render.text import trace_text

    out = sys.stdout
    if out is None or getattr(out, "closed", False):  # started with stdout closed, or the script closed it
        say("the text trace was not printed: stdout is closed")
        return
    text = trace_text(trace).rstrip("\n") + "\n"
    encoding = getattr(out, "encoding", None) or "utf-8"
    text = text.encode(encoding, "backslashreplace").decode(encoding)  # a terminal that cannot show a character
    out.write(text)
    out.flush()


def _write_json(trace: Any, path: Output) -> None:
    from .render.json import trace_json

    outfile.write(path.place, "json", trace_json(trace), force=path.force)
    say(f"wrote {path}")


def _write_html(trace: Any, path: Output) -> None:
    from .render.film import trace_html

    outfile.write(path.place, "html", str(trace_html(trace)), force=path.force)
    say(f"wrote {path} (open it in a browser)")


def svg_pictures(trace: Any) -> Iterator[tuple[str, str]]:
    """``(file name, DOT)`` of each step's picture, folded as the HTML film folds a big trace."""
    from .render.dot import step_dot
    from .render.fold import folded_dot
    from .render.layout import FILM_MAX_NODES, is_big

    big = is_big(trace)
    for step in trace.steps:
        dot = folded_dot(step, max_nodes=FILM_MAX_NODES) if big else step_dot(step)
        yield f"step-{step.number:04d}.svg", dot


def _write_svgs(trace: Any, folder: Output) -> int:
    """One picture per step; pictures an earlier run of gradtrace left in the folder are removed.

    Says what was written; returns 0, 2 (a picture refused) or 3 (writing failed).
    """
    from .render.svg import LayoutError, dot_to_svg

    total = len(trace.steps)
    written: set[str] = set()
    shown = f"{folder}{os.sep}"
    problem = ""
    status = 0
    layouts: dict[str, str] = {}  # a step drawn like an earlier one is laid out once
    try:
        for name, dot in svg_pictures(trace):
            svg = layouts.get(dot)
            if svg is None:
                svg = layouts[dot] = dot_to_svg(dot)
            place = outfile.Place(folder.path / name, f"{shown}{name}")
            outfile.write(place, "svg", svg, force=folder.force)
            written.add(name)
    except LayoutError as exc:
        problem, status = f"{exc}", EXIT_INTERNAL
    except outfile.Refused as exc:
        problem, status = f"{exc}", EXIT_USAGE
    except OSError as exc:
        problem, status = f"cannot write: {exc.strerror or exc}", EXIT_INTERNAL
    except Exception as exc:  # gradtrace's own bug: one line, never a traceback
        problem, status = f"internal error: {type(exc).__name__}: {exc} (please report this)", EXIT_INTERNAL
    stale = _remove_old_pictures(folder.path, written) if not problem else 0
    if not written:
        say(f"no SVG pictures written to {shown}: {problem}" if problem else f"no steps to draw in {shown}")
    elif problem:
        say(f"wrote {len(written)} of {total} pictures to {shown}; the rest were not written: {problem}")
    else:
        removed = f" (removed {stale} older pictures gradtrace wrote before)" if stale else ""
        say(f"wrote {len(written)} pictures to {shown}{removed}")
    return status


def _remove_old_pictures(folder: Path, keep: set[str]) -> int:
    """Remove ``step-NNNN.svg`` pictures gradtrace wrote before (they carry its mark) that this run did not.

    Nothing else in the folder is touched: not another file, not a picture without the mark.
    """
    removed = 0
    for entry in folder.iterdir():
        if SVG_NAME.match(entry.name) and entry.name not in keep and outfile.remove_own(entry):
            removed += 1
    return removed


# ---------------------------------------------------------------- commands
def command_run(args: argparse.Namespace, script_args: list[str]) -> int:
    spec = None
    if args.module is not None:
        path, source, spec = find_module(args.module)
        shown = path
    else:
        path, source = read_script(args.script)
        shown = args.script
    check_syntax(source, path, shown)
    targets = check_targets(args, path)
    outcome = run_script(path, source, script_args, args.max_steps, shown=shown, spec=spec)
    _flush(sys.stdout)
    check_sources(targets, outcome.sources)
    trace = outcome.trace
    if trace is None:
        say("the script stopped before gradtrace recorded anything")
        return _end(outcome, outcome.exit_code or EXIT_INTERNAL)
    if trace.steps_unrecorded:
        say(f"recorded the first {len(trace.steps)} steps; {trace.steps_unrecorded} more ran unrecorded "
            f"(raise --max-steps to see them)")
    status = write_outputs(trace, targets)
    return _end(outcome, outcome.exit_code or status)


def _end(outcome: Outcome, status: int) -> int:
    if outcome.interrupted:
        die_by_sigint()
    return status


def die_by_sigint() -> None:
    """End as Python ends on an uncaught Ctrl-C: killed by SIGINT (the shell sees a signal, not a status)."""
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return  # Python does this only with its own SIGINT handler in place
    _flush(sys.stdout, sys.stderr)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def command_demo(args: argparse.Namespace) -> int:
    import gradtrace

    check_output_dir(args.out)
    target = check_output_file(os.path.join(args.out, "forum.html"), "", force=args.force)
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
        if args.command == "run" and (args.script is None) == (args.module is None):
            args.run_parser.error("give one script to run: SCRIPT.py, or -m MODULE")
    except SystemExit as exc:  # argparse printed usage and the error (status 2), or --help / --version (0)
        return int(exc.code or 0)
    if args.command is None:  # as argparse treats a missing argument: usage on stderr, status 2
        parser.print_usage(sys.stderr)
        say("no command given; to trace a script: gradtrace run SCRIPT.py (gradtrace --help lists the commands)")
        return EXIT_USAGE
    try:
        if args.command == "demo":
            return command_demo(args)
        return command_run(args, script_args)
    except UsageError as exc:
        say(str(exc), exc.details)
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted")
        die_by_sigint()
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

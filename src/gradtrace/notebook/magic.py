"""The ``%%gradtrace`` cell magic.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

``%load_ext gradtrace`` registers it. ``%%gradtrace`` runs the cell in the
notebook's own namespace (``shell.user_ns``), so the names it binds are there
afterwards exactly as without the magic, and shows the trace as the stepper.
The cell is compiled under the file name IPython gives cells, so tracebacks
show its lines. If the cell raises, the trace up to the failing step is shown
(the error marked on the last step), then the exception goes on to IPython,
which prints the usual traceback and stops a "run all" as any failing cell does.
A cell whose code does not compile is reported as the same code in a plain cell is
(:class:`PlainSyntaxErrors`): the ``SyntaxError`` alone, nothing run.

The stepper shows what the cell touches: the names it binds or reads and the
objects those reach (see :mod:`.scope`), not every tensor earlier cells left in
the notebook. Ids are the cell's own (``t1`` is the first tensor the cell shows),
so running the same cell again gives the same ids.

Options::

    %%gradtrace [--max-steps N] [--all] [--html OUT [--force]] [--no-widget]

``--max-steps`` caps the recorded steps (the code still runs to the end),
``--all`` shows every name of the notebook, ``--html`` also writes the
standalone stepper page to ``OUT`` (an existing file that gradtrace did not
write is left alone unless ``--force``), ``--no-widget`` shows the stepper as
HTML even when ``settings.widget`` asks for a widget.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, magics_class

from .. import outfile
from ..model import DEFAULT_MAX_STEPS, Trace
from ..run import learner_tb
from ._ipython import argument, cell_magic, cell_number, display, magic_arguments, parse_argstring

__all__ = ["GradtraceMagics", "load_ipython_extension", "cell_filename"]


def cell_filename(shell: Any, source: str) -> str:
    """Register ``source`` with IPython's compiler and linecache; the file name tracebacks will use."""
    compiler = shell.compile
    try:
        return str(compiler.cache(source, cell_number(shell), raw_code=source))
    except TypeError:  # IPython < 8.1 has no raw_code
        return str(compiler.cache(source, cell_number(shell)))


class _Shown:
    """Display ``trace`` once, honouring the magic's options."""

    def __init__(self, widget: bool, html_out: str | None, title: str | None = None, force: bool = False) -> None:
        self.widget = widget
        self.html_out = html_out
        self.title = title
        self.force = force

    def __call__(self, trace: Trace) -> None:
        from .display import trace_mimebundle

        if self.html_out:
            _write_html(trace, self.html_out, self.force)
        display(trace_mimebundle(trace, widget=self.widget, title=self.title), raw=True)


#: what every stepper page gradtrace writes carries near its start (see :func:`ours`)
PAGE_MARK = outfile.HTML_MARK


def ours(path: str) -> bool:
    """True when ``path`` is a regular file gradtrace wrote (it carries gradtrace's mark near its start)."""
    return outfile.is_ours(path)


def html_refusal(path: str, force: bool) -> str | None:
    """Why ``--html path`` must not write (a one-line message), or None when it may."""
    try:
        outfile.check(path, force=force, example="trace.html")
    except outfile.Refused as exc:
        return f"gradtrace: {exc}"
    return None


def _write_html(trace: Trace, path: str, force: bool = False) -> None:
    """Write the stepper page through :mod:`gradtrace.outfile` (checked again: the cell may have made the file)."""
    try:
        from ..render.film import trace_html

        page = str(trace_html(trace))
    except Exception as exc:
        print(f"gradtrace: could not write {path}: {exc}")
        return
    try:
        outfile.write(outfile.Place(Path(path), path), "html", page, force=force)
    except outfile.Refused as exc:
        print(f"gradtrace: {exc}")
        return
    except OSError as exc:
        print(f"gradtrace: could not write {path}: {exc.strerror or exc}")
        return
    print(f"gradtrace: wrote the stepper page to {path}")


@magics_class
class GradtraceMagics(Magics):
    """Holds the ``%%gradtrace`` cell magic."""

    @magic_arguments()
    @argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS,
              help=f"record at most N steps (default {DEFAULT_MAX_STEPS})")
    @argument("--all", action="store_true", help="show every name of the notebook, not only the cell's own")
    @argument("--html", metavar="OUT", default=None, help="also write the standalone stepper page to OUT")
    @argument("--force", action="store_true", help="with --html: replace OUT even if gradtrace did not write it")
    @argument("--no-widget", action="store_true", help="show the stepper as HTML, not as a widget")
    @cell_magic
    def gradtrace(self, line: str, cell: str) -> None:
        """Run the cell statement by statement and show its autograd trace as a stepper."""
        __tracebackhide__ = True  # noqa: F841  (IPython hides this frame in tracebacks)
        args = parse_argstring(self.gradtrace, line)
        # usage errors stop the cell before it runs (and stop "Run All", as an error does), in one line
        if args.max_steps < 1:
            raise UsageError("gradtrace: --max-steps must be at least 1")
        if args.force and not args.html:
            raise UsageError("gradtrace: --force only goes with --html OUT (it lets OUT replace a file gradtrace "
                             "did not write)")
        if args.html:
            refusal = html_refusal(os.path.abspath(os.path.expanduser(args.html)), args.force)
            if refusal is not None:
                raise UsageError(refusal)
        shell: Any = self.shell
        title = f"%%gradtrace · In [{cell_number(shell)}]"
        html_out = os.path.abspath(os.path.expanduser(args.html)) if args.html else None
        show = _Shown(widget=not args.no_widget, html_out=html_out, title=title, force=args.force)
        trace_and_show_cell(shell, cell, args.max_steps, show, whole=args.all)


def trace_cell(source: str, ns: dict[str, Any], filename: str, max_steps: int, value: list[Any],
               whole: bool = False) -> Trace:
    """Run ``source`` in ``ns`` as a cell runs, recording the names it touches (every name with ``whole``).

    Raises the cell's exception, as running it plainly would (:func:`run_cell` returns it with
    the trace up to the failing step instead).
    """
    __tracebackhide__ = True  # noqa: F841
    trace, exception = run_cell(source, ns, filename, max_steps, value, whole)
    if exception is not None:
        raise exception
    return trace


def run_cell(source: str, ns: dict[str, Any], filename: str, max_steps: int, value: list[Any],
             whole: bool = False) -> tuple[Trace, BaseException | None]:
    """:func:`trace_cell` that returns the cell's exception (None if it ran through) with the trace.

    The cell runs in ``ns`` through :func:`gradtrace.run.run_traced`; the trace shows the
    names the cell touches (:class:`~.scope.CellScope`), or all of ``ns`` with ``whole``.
    """
    from ..run import run_traced
    from .scope import CellScope

    view: Mapping[str, Any] = ns
    if not whole:
        try:
            view = CellScope(ns, source)
        except Exception:  # a cell the analysis cannot read: show the whole notebook rather than fail
            view = ns
    run = run_traced(source, ns, view=view, filename=filename, max_steps=max_steps, raise_interrupt=False)
    if run.exception is None and run.last_value is not None:
        value.append(run.last_value)
    return run.trace, run.exception


def trace_and_show_cell(shell: Any, cell: str, max_steps: int, show: Any, whole: bool = False) -> None:
    """Trace ``cell`` in ``shell.user_ns``; show the trace; let the cell's exception reach IPython."""
    __tracebackhide__ = True  # noqa: F841
    source = shell.transform_cell(cell)
    filename = cell_filename(shell, source)
    value: list[Any] = []
    # a SyntaxError from compiling reaches IPython as for any cell: nothing ran
    trace, exc = run_cell(source, shell.user_ns, filename, max_steps, value, whole=whole)
    _show_safely(show, trace)  # also up to the failing step
    if exc is not None:
        raise exc.with_traceback(learner_tb(exc.__traceback__) or exc.__traceback__)  # as a plain run shows it
    if value:
        shell.displayhook(value[-1])  # the cell's last expression, shown as Out[n] as without the magic


def _show_safely(show: Any, trace: Trace) -> None:
    try:
        show(trace)
    except Exception as exc:  # showing must never take the kernel down
        print(f"gradtrace: could not show the trace ({type(exc).__name__}: {exc})")
        print(trace.to_text())


class PlainSyntaxErrors:
    """An input transformer: a ``%%gradtrace`` cell whose code does not compile becomes that code alone.

    IPython then reports its ``SyntaxError`` before anything runs, exactly as for the same code in a
    plain cell, instead of from inside the magic with the magic's frames above it. Nothing would have
    run either way; a cell that compiles is left as it is.
    """

    #: a console's "is this cell complete?" skips it: a cell magic ends at a blank line, whatever its code
    has_side_effects = True

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, lines: list[str]) -> list[str]:
        if not lines or not _MAGIC_LINE.match(lines[0]):
            return lines
        body = lines[1:]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the plain compile shows the cell's warnings, once
                source = self.shell.transform_cell("".join(body))
                compile(source, "<cell>", "exec", _AST_FLAGS, dont_inherit=True)
        except SyntaxError:
            return body
        except Exception:  # the magic itself reports whatever this is
            return lines
        return lines


_MAGIC_LINE = re.compile(r"%%gradtrace(\s|$)")
_AST_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # IPython runs a cell's top-level await


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gradtrace``: register ``%%gradtrace``, its plain syntax errors, and quizzes' answer boxes
    (see :mod:`.quizbox`)."""
    from .quizbox import register

    ipython.register_magics(GradtraceMagics)
    cleanup = ipython.input_transformers_cleanup
    cleanup[:] = [t for t in cleanup if not isinstance(t, PlainSyntaxErrors)]  # once, also after %reload_ext
    cleanup.append(PlainSyntaxErrors(ipython))
    register(ipython)

"""The ``%%gradtrace`` cell magic.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

``%load_ext gradtrace`` registers it. ``%%gradtrace`` runs the cell in the
notebook's own namespace (``shell.user_ns``), so the names it binds are there
afterwards exactly as without the magic, and shows the trace as the stepper.
The cell is compiled under the file name IPython gives cells, so tracebacks
show its lines. If the cell raises, the trace up to the failing step is shown
(the error marked on the last step), then the exception goes on to IPython,
which prints the usual traceback and stops a "run all" as any failing cell does.

Options::

    %%gradtrace [--max-steps N] [--html OUT] [--no-widget]

``--max-steps`` caps the recorded steps (the code still runs to the end),
``--html`` also writes the standalone stepper page to ``OUT``, ``--no-widget``
shows the stepper as plain HTML instead of a widget.
"""

from __future__ import annotations

import os
import types
from typing import Any

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..model import Trace

__all__ = ["GradtraceMagics", "load_ipython_extension", "cell_filename"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))).replace("\\", "/") + "/"


def cell_filename(shell: Any, source: str) -> str:
    """Register ``source`` with IPython's compiler and linecache; the file name tracebacks will use."""
    compiler = shell.compile
    try:
        return str(compiler.cache(source, shell.execution_count, raw_code=source))
    except TypeError:  # IPython < 8.1 has no raw_code
        return str(compiler.cache(source, shell.execution_count))


def _own_frame(tb: types.TracebackType) -> bool:
    """A frame the tracer added: gradtrace's own code or torch's dispatch to its TorchFunctionMode."""
    name = tb.tb_frame.f_code.co_filename.replace("\\", "/")
    return name.startswith(_PACKAGE_DIR) or name.endswith("torch/overrides.py")


def _cell_traceback(exc: BaseException, filename: str) -> types.TracebackType | None:
    """``exc``'s traceback as a plain run of the cell would have it.

    Starts at the cell's first frame and leaves out the frames tracing added
    (gradtrace's own, torch's ``handle_torch_function`` and the duplicate frame
    of the function that handed the call to the tracer's mode).
    """
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None:
        return exc.__traceback__
    chain: list[types.TracebackType] = []
    while tb is not None:
        chain.append(tb)
        tb = tb.tb_next
    kept: list[types.TracebackType] = []
    for i, item in enumerate(chain):
        if _own_frame(item):
            continue
        nxt = chain[i + 1] if i + 1 < len(chain) else None
        if nxt is not None and _own_frame(nxt):
            later = next((c for c in chain[i + 1:] if not _own_frame(c)), None)
            if later is not None and later.tb_frame.f_code is item.tb_frame.f_code:
                continue  # the same function again, entered from the mode: keep only that second frame
        kept.append(item)
    for a, b in zip(kept, kept[1:], strict=False):
        a.tb_next = b
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else chain[0]


class _Shown:
    """Display ``trace`` once, honouring the magic's options."""

    def __init__(self, widget: bool, html_out: str | None, title: str | None = None) -> None:
        self.widget = widget
        self.html_out = html_out
        self.title = title

    def __call__(self, trace: Trace) -> None:
        from .display import trace_mimebundle

        if self.html_out:
            _write_html(trace, self.html_out)
        display(trace_mimebundle(trace, widget=self.widget, title=self.title), raw=True)


def _write_html(trace: Trace, path: str) -> None:
    try:
        from ..render.html import trace_html

        page = str(trace_html(trace))
    except Exception as exc:
        print(f"gradtrace: could not write {path}: {exc}")
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"gradtrace: wrote the stepper page to {path}")


@magics_class
class GradtraceMagics(Magics):
    """Holds the ``%%gradtrace`` cell magic."""

    @magic_arguments()
    @argument("--max-steps", type=int, default=1000, help="record at most N steps (default 1000)")
    @argument("--html", metavar="OUT", default=None, help="also write the standalone stepper page to OUT")
    @argument("--no-widget", action="store_true", help="show the stepper as plain HTML, not as a widget")
    @cell_magic
    def gradtrace(self, line: str, cell: str) -> None:
        """Run the cell statement by statement and show its autograd trace as a stepper."""
        __tracebackhide__ = True  # noqa: F841  (IPython hides this frame in tracebacks)
        args = parse_argstring(self.gradtrace, line)
        if args.max_steps < 1:
            print("gradtrace: --max-steps must be at least 1")
            return
        shell: Any = self.shell
        title = f"%%gradtrace · In [{shell.execution_count}]"
        show = _Shown(widget=not args.no_widget, html_out=args.html, title=title)
        run_traced(shell, cell, args.max_steps, show)


def run_traced(shell: Any, cell: str, max_steps: int, show: Any) -> None:
    """Trace ``cell`` in ``shell.user_ns``; show the trace; let the cell's exception reach IPython."""
    __tracebackhide__ = True  # noqa: F841
    from ..tracer import last_trace, trace_code

    source = shell.transform_cell(cell)
    filename = cell_filename(shell, source)
    before = last_trace()
    value: list[Any] = []
    try:
        trace = trace_code(source, shell.user_ns, filename=filename, max_steps=max_steps, raise_errors=True,
                           last_value=value)
    except SyntaxError:
        raise  # nothing ran: IPython shows the syntax error as for any cell
    except BaseException as exc:
        failed = last_trace()
        if failed is not None and failed is not before and failed.filename == filename:
            _show_safely(show, failed)
        raise exc.with_traceback(_cell_traceback(exc, filename))  # noqa: B904 - the learner's own exception, chain untouched
    _show_safely(show, trace)
    if value and value[-1] is not None:
        shell.displayhook(value[-1])  # the cell's last expression, shown as Out[n] as without the magic


def _show_safely(show: Any, trace: Trace) -> None:
    try:
        show(trace)
    except Exception as exc:  # showing must never take the kernel down
        print(f"gradtrace: could not show the trace ({type(exc).__name__}: {exc})")
        print(trace.to_text())


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gradtrace``: register ``%%gradtrace``."""
    ipython.register_magics(GradtraceMagics)

"""Typed names for the IPython functions the notebook modules call.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

IPython leaves ``get_ipython``, ``display``, ``cell_magic`` and the
``magic_arguments`` helpers unannotated. Each name here is the IPython function
itself, called through a variable that states the one signature gradtrace
relies on, so the callers are type-checked. The decorators return the function
they are given (IPython only records it or attaches a parser to it).

Importing this module imports IPython: import it lazily where IPython may be missing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TypeVar, cast

from IPython import display as _display
from IPython.core import getipython as _getipython
from IPython.core import magic as _magic
from IPython.core import magic_arguments as _magic_arguments

_F = TypeVar("_F", bound=Callable[..., Any])


def get_ipython() -> Any:
    """The running IPython shell (any kind of shell), or ``None`` outside IPython."""
    shell: Callable[[], Any] = _getipython.get_ipython
    return shell()


def display(obj: Any, raw: bool = False) -> None:
    """Show ``obj`` in the running front end (``raw``: ``obj`` is a MIME bundle)."""
    show: Callable[..., None] = _display.display
    show(obj, raw=raw)


def cell_magic(func: _F) -> _F:
    """IPython's ``cell_magic`` marker."""
    # IPython 9 types it as a decorator that also takes a magic's name; gradtrace passes the function only
    mark = cast(Callable[[_F], _F], _magic.cell_magic)
    return mark(func)


def magic_arguments() -> Callable[[_F], _F]:
    """IPython's ``magic_arguments()``: gives the magic an argument parser."""
    make: Callable[[], Callable[[_F], _F]] = _magic_arguments.magic_arguments
    return make()


def argument(*args: Any, **kwargs: Any) -> Callable[[_F], _F]:
    """IPython's ``argument(...)``: one ``add_argument`` call on the magic's parser."""
    make: Callable[..., Callable[[_F], _F]] = _magic_arguments.argument
    return make(*args, **kwargs)


def parse_argstring(magic_func: Callable[..., Any], argstring: str) -> argparse.Namespace:
    """IPython's ``parse_argstring``: ``argstring`` parsed by ``magic_func``'s parser."""
    parse: Callable[[Callable[..., Any], str], argparse.Namespace] = _magic_arguments.parse_argstring
    return parse(magic_func, argstring)


def cell_number(shell: Any) -> int | None:
    """The prompt number of the cell running now: ``N`` of ``In [N]``.

    While a cell runs, IPython 9 already counts the next one (``shell.execution_count`` is N + 1) and
    IPython 8 does not; the display hook's ``prompt_count`` is N under both (it numbers ``Out [N]``).
    """
    count = getattr(getattr(shell, "displayhook", None), "prompt_count", None)
    if not isinstance(count, int):
        count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None

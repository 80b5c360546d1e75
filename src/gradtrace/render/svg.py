"""SVG (and PNG) from DOT source, through a Graphviz ``dot`` binary.

Place in the pipeline: tracer -> model -> explain -> **render** -> notebook/cli.

The binary is, in order: the one named by the ``GRADTRACE_DOT`` environment
variable, the system ``dot`` (Graphviz), or ``graphviz-pure`` from the PyPI
wheel of that name (the same layout; it cannot write PDF). It is run without a
shell, with the DOT source on stdin and a timeout. Any failure raises
:class:`LayoutError` with a one-line message that says what to do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

__all__ = ["LayoutError", "dot_binary", "layout_engine", "dot_to_svg", "dot_to_png", "svg_inline"]

INSTALL_HINT = "install Graphviz (e.g. `apt-get install graphviz`) or `pip install graphviz-pure`"


class LayoutError(RuntimeError):
    """No usable ``dot`` binary, or it failed or timed out on a graph."""


def _pure_candidates() -> list[str]:
    names = ["graphviz-pure.exe", "graphviz-pure"] if sys.platform == "win32" else ["graphviz-pure"]
    dirs = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    return [str(Path(d) / n) for d in dirs if d for n in names]


def dot_binary() -> str | None:
    """The path of the layout binary :func:`dot_to_svg` will run, or ``None``."""
    override = os.environ.get("GRADTRACE_DOT")
    if override:
        return shutil.which(override) or (override if Path(override).is_file() else None)
    found = shutil.which("dot") or shutil.which("graphviz-pure")
    if found:
        return found
    return next((c for c in _pure_candidates() if Path(c).is_file() and os.access(c, os.X_OK)), None)


def layout_engine() -> str:
    """Which binary lays out graphs, e.g. ``dot (/usr/bin/dot)``; ``none`` when there is none."""
    path = dot_binary()
    if path is None:
        return "none"
    kind = "graphviz-pure" if "graphviz-pure" in Path(path).name else "dot"
    return f"{kind} ({path})"


def _run(source: str, fmt: str, timeout: float) -> bytes:
    binary = dot_binary()
    if binary is None:
        raise LayoutError(f"no Graphviz layout binary found: {INSTALL_HINT}")
    sys.audit("gradtrace.child_start")  # see gradtrace.tracer.stack: the child gets the usual stack limit
    try:
        done = subprocess.run(
            [binary, f"-T{fmt}"],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise LayoutError(f"{binary} took more than {timeout:g}s to lay out the graph; show fewer steps") from None
    except OSError as exc:
        raise LayoutError(f"could not run {binary} ({exc.strerror}): {INSTALL_HINT}") from None
    finally:
        # the child has started: the tracer's raised stack limit, lowered for it, may come back now,
        # before the program frees a deep graph
        sys.audit("gradtrace.child_done")
    if done.returncode != 0 or not done.stdout:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = next((ln for ln in reversed(lines) if "rror" in ln), lines[-1] if lines else "no output")
        raise LayoutError(f"{binary} failed (exit {done.returncode}): {why.strip()}")
    return done.stdout


def dot_to_svg(source: str, *, timeout: float = 60.0) -> str:
    """Lay out DOT ``source`` and return the SVG document text."""
    return _run(source, "svg", timeout).decode("utf-8")


def dot_to_png(source: str, *, timeout: float = 60.0) -> bytes:
    """Lay out DOT ``source`` and return PNG bytes (for looking at pictures)."""
    return _run(source, "png", timeout)


def svg_inline(svg: str) -> str:
    """The ``<svg>`` element alone (no XML declaration, doctype or comments), for embedding in HTML."""
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    out, pos = [], 0
    while True:
        i = body.find("<!--", pos)
        if i < 0:
            out.append(body[pos:])
            break
        out.append(body[pos:i])
        j = body.find("-->", i + 4)
        pos = len(body) if j < 0 else j + 3
    return "".join(out).strip() + "\n"

"""Which statement each source line belongs to (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

Python reports executed *lines*; learners think in *statements*. The map sends
every line of a statement to the statement's first line and text, so a
statement written over several lines is one step, and a loop header is a step
of its own on every pass.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    lineno: int
    code: str
    compound: bool


def statement_map(source: str, first_line: int = 1) -> dict[int, Statement]:
    """Line number (in the file) -> the innermost statement on that line."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out: dict[int, Statement] = {}
    shift = first_line - 1
    todo: list[ast.AST] = [tree]
    while todo:  # outer statements first, so inner ones overwrite them
        node = todo.pop(0)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                _add(child, lines, out, shift)
                todo.append(child)
    return out


def _add(node: ast.stmt, lines: list[str], out: dict[int, Statement], shift: int) -> None:
    start = node.lineno
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        decorators = getattr(node, "decorator_list", [])
        first = min([start] + [d.lineno for d in decorators])
        end = max(start, body[0].lineno - 1) if body[0].lineno > start else start
        code = "\n".join(line.strip() for line in lines[start - 1 : end]).strip()
        stmt = Statement(start + shift, code, True)
        for line in range(first, end + 1):
            out[line + shift] = stmt
        return
    end = node.end_lineno or start
    segment = "\n".join(lines[start - 1 : end])
    code = _dedent(segment, node.col_offset)
    stmt = Statement(start + shift, code, False)
    for line in range(start, end + 1):
        out[line + shift] = stmt


def _dedent(segment: str, col: int) -> str:
    parts = segment.split("\n")
    parts[0] = parts[0][col:]
    return "\n".join(p[col:] if p[:col].strip() == "" else p for p in parts).rstrip()

"""Which statement each source line belongs to (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

Python reports executed *lines*; learners think in *statements*. The map sends
every line of a statement to the statement's first line and text, so a
statement written over several lines is one step, and a loop header is a step
of its own on every pass. ``except`` handlers and ``match`` cases are headers
like ``if``, and their bodies are statements like any other.

A line can hold several statements (``a = 1; b = 2``, ``for i in r: h = h * 2``).
Python reports such a line once, so :meth:`Statements.at` tells them apart by
the column of the instruction being run (``co_positions``).
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Statement:
    lineno: int
    code: str
    compound: bool
    #: (first line, first column, last line, end column) of the whole statement, in the file
    span: tuple[int, int, int, int] = field(default=(0, 0, 0, 0), compare=False)
    #: True when this statement's line holds other statements too
    shared: bool = field(default=False, compare=False)


class Statements(dict[int, Statement]):
    """Line number (in the file) -> the innermost statement on that line, plus column lookups."""

    def __init__(self) -> None:
        super().__init__()
        self.on_line: dict[int, list[Statement]] = {}
        self._by_code: dict[types.CodeType, dict[int, Statement | None]] = {}

    def at(self, code: types.CodeType, lasti: int) -> Statement | None:
        """The statement the instruction at ``lasti`` belongs to, on a line shared by several."""
        table = self._by_code.get(code)
        if table is None:
            table = self._by_code[code] = {}
        if lasti in table:
            return table[lasti]
        stmt = self._lookup(code, lasti)
        table[lasti] = stmt
        return stmt

    def _lookup(self, code: types.CodeType, lasti: int) -> Statement | None:
        positions = list(code.co_positions())  # type: ignore[attr-defined,unused-ignore]
        i = lasti // 2
        if i >= len(positions):
            return None
        start, _end, col, _end_col = positions[i]
        if start is None or col is None:
            return None
        best: Statement | None = None
        best_size: tuple[int, int] | None = None
        for stmt in self.on_line.get(start, ()):
            l0, c0, l1, c1 = stmt.span
            if (l0, c0) <= (start, col) <= (l1, c1):
                size = (l1 - l0, c1 - c0)
                if best_size is None or size < best_size:
                    best, best_size = stmt, size
        return best


def statement_map(source: str, first_line: int = 1) -> Statements:
    """Line number (in the file) -> the innermost statement on that line."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out = Statements()
    shift = first_line - 1
    todo: list[ast.AST] = [tree]
    while todo:  # outer statements first, so inner ones overwrite them
        node = todo.pop(0)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                _add(child, lines, out, shift)
            if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                todo.append(child)
    for line, stmts in out.on_line.items():
        if len(stmts) > 1:
            for stmt in stmts:
                object.__setattr__(stmt, "shared", True)
                l0, c0, l1, c1 = stmt.span
                if not stmt.compound and l0 == l1:  # its own part of the line only
                    object.__setattr__(stmt, "code", lines[l0 - shift - 1][c0:c1].strip())
            out[line] = stmts[0]
    return out


def _span(node: ast.AST, shift: int) -> tuple[int, int, int, int]:
    if isinstance(node, ast.match_case):
        last = node.body[-1]
        return (node.pattern.lineno + shift, node.pattern.col_offset,
                (last.end_lineno or last.lineno) + shift, last.end_col_offset or 0)
    lineno = node.lineno  # type: ignore[attr-defined]
    end = node.end_lineno or lineno  # type: ignore[attr-defined]
    return (lineno + shift, node.col_offset, end + shift, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _add(node: ast.AST, lines: list[str], out: Statements, shift: int) -> None:
    start = node.pattern.lineno if isinstance(node, ast.match_case) else node.lineno  # type: ignore[attr-defined]
    body = getattr(node, "body", None)
    span = _span(node, shift)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        decorators = getattr(node, "decorator_list", [])
        first = min([start] + [d.lineno for d in decorators])
        end = max(start, body[0].lineno - 1) if body[0].lineno > start else start
        code = "\n".join(line.strip() for line in lines[start - 1 : end]).strip()
        if body[0].lineno == start:  # ``for i in r: body`` on one line: the header alone
            col = node.col_offset if not isinstance(node, ast.match_case) else 0  # type: ignore[attr-defined]
            code = lines[start - 1][col: body[0].col_offset].strip()
        stmt = Statement(start + shift, code, True, span)
        for line in range(first, end + 1):
            out[line + shift] = stmt
        out.on_line.setdefault(start + shift, []).append(stmt)
        return
    end = node.end_lineno or start  # type: ignore[attr-defined]
    segment = "\n".join(lines[start - 1 : end])
    code = _dedent(segment, node.col_offset)  # type: ignore[attr-defined]
    stmt = Statement(start + shift, code, False, span)
    for line in range(start, end + 1):
        out[line + shift] = stmt
    out.on_line.setdefault(start + shift, []).append(stmt)


def _dedent(segment: str, col: int) -> str:
    parts = segment.split("\n")
    parts[0] = parts[0][col:]
    return "\n".join(p[col:] if p[:col].strip() == "" else p for p in parts).rstrip()

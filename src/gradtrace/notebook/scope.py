"""Which notebook names a ``%%gradtrace`` cell shows: the ones the cell touches.

Place in the pipeline: tracer -> model -> explain -> render -> **notebook**.

A notebook namespace holds every earlier cell's tensors. A ``%%gradtrace`` cell
shows only the names it binds or reads (and what those reach through the graph),
so a second cell's stepper is not drawn over the first cell's objects:

- an **input** is a name the cell reads before it binds it (``y = x * 2`` reads
  ``x``), or a global that a function the cell calls reads. Inputs show from the
  first step, as the cell found them.
- an **output** is a name the cell binds before reading it (``x = torch.ones(2)``).
  Its old value belongs to an earlier cell: the name shows once the cell has bound
  it to another object. So a re-run of the same cell starts from the same empty
  picture and hands out the same ids.
- a name the cell creates by other means (``globals()["w"] = ...``) shows once it exists.

The tracer reads names from a mapping; :class:`CellScope` is that mapping, a live
filtered view of the real namespace (the code itself runs in the real namespace).
"""

from __future__ import annotations

import ast
import symtable
import types
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["CellScope", "cell_names"]

#: how deep the globals read by called functions are followed (a function calling a function ...)
MAX_DEPTH = 4


class _Order(ast.NodeVisitor):
    """Module-level names in the order the code uses them: each name's first use, a read or a bind."""

    def __init__(self) -> None:
        self.first: dict[str, str] = {}

    def use(self, name: str, how: str) -> None:
        self.first.setdefault(name, how)

    def visit_Name(self, node: ast.Name) -> None:
        self.use(node.id, "read" if isinstance(node.ctx, ast.Load) else "bind")

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.use(node.target.id, "read")  # ``x += 1`` reads x first
        self.visit(node.value)
        self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    visit_For = _for
    visit_AsyncFor = _for

    def _scope(self, node: Any) -> None:
        """A def, lambda or class: its decorators and defaults run here; its body later (see :func:`cell_names`)."""
        for dec in getattr(node, "decorator_list", ()):
            self.visit(dec)
        args = getattr(node, "args", None)
        if isinstance(args, ast.arguments):
            for default in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
                self.visit(default)
        for base in getattr(node, "bases", ()):
            self.visit(base)
        name = getattr(node, "name", None)
        if name:
            self.use(name, "bind")

    visit_FunctionDef = _scope
    visit_AsyncFunctionDef = _scope
    visit_ClassDef = _scope
    visit_Lambda = _scope

    def _comprehension(self, node: Any) -> None:
        local: set[str] = set()
        for gen in node.generators:
            local |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        self.visit(node.generators[0].iter)  # evaluated in the cell's own scope
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in local:
                self.use(sub.id, "read")

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            if name != "*":
                self.use(name, "bind")

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.use(node.name, "bind")
        for stmt in node.body:
            self.visit(stmt)


def _nested_globals(table: symtable.SymbolTable, reads: set[str], binds: set[str]) -> None:
    """Globals read or bound inside functions, lambdas and classes of the cell."""
    for child in table.get_children():
        for sym in child.get_symbols():
            if sym.is_global():
                if sym.is_referenced():
                    reads.add(sym.get_name())
                if sym.is_assigned() and sym.is_declared_global():
                    binds.add(sym.get_name())
        _nested_globals(child, reads, binds)


def cell_names(source: str) -> tuple[dict[str, str], set[str], set[str]]:
    """``(first use, later reads, later binds)`` of a cell's names.

    *First use* maps each module-level name to ``"read"`` or ``"bind"``, whichever the
    code does first; *later reads* are globals read by the cell's functions and classes
    when they run; *later binds* are names they declare ``global`` and assign.
    """
    tree = ast.parse(source)
    order = _Order()
    for stmt in tree.body:
        order.visit(stmt)
    reads: set[str] = set()
    binds: set[str] = set()
    _nested_globals(symtable.symtable(source, "<cell>", "exec"), reads, binds)
    return order.first, reads, binds


def _code_globals(code: types.CodeType, out: set[str]) -> None:
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_globals(const, out)


def _called_globals(names: set[str], ns: Mapping[str, Any]) -> set[str]:
    """Globals of ``ns`` read by the functions (and classes' methods) named in ``names``, followed a few levels."""
    found: set[str] = set()
    todo = [(n, 0) for n in names]
    seen: set[str] = set()
    while todo:
        name, depth = todo.pop()
        if name in seen or depth > MAX_DEPTH:
            continue
        seen.add(name)
        codes: list[types.CodeType] = []
        try:  # a learner's object may raise on any read: it then adds nothing
            value: Any = ns.get(name)
            kind = type(value)
            if kind is types.FunctionType and value.__globals__ is ns:
                codes.append(value.__code__)
            elif issubclass(kind, type) and type.__getattribute__(value, "__module__") == ns.get("__name__"):
                codes += [f.__code__ for f in type.__getattribute__(value, "__dict__").values()
                          if type(f) is types.FunctionType]
        except Exception:  # noqa: S112
            continue
        for code in codes:
            used: set[str] = set()
            _code_globals(code, used)
            for other in used:
                if other in ns and other not in found:
                    found.add(other)
                    todo.append((other, depth + 1))
    return found


class _Was:
    """What a name held when the cell started, without keeping it alive."""

    __slots__ = ("ref", "addr")

    def __init__(self, value: Any) -> None:
        self.addr = id(value)
        try:
            self.ref: weakref.ref[Any] | None = weakref.ref(value)
        except TypeError:
            self.ref = None

    def same(self, value: Any) -> bool:
        if self.ref is not None:
            return self.ref() is value
        return id(value) == self.addr


class CellScope(Mapping[str, Any]):
    """The part of ``ns`` a cell touches, read live (see the module's description)."""

    def __init__(self, ns: dict[str, Any], source: str) -> None:
        self.ns = ns
        first, later_reads, later_binds = cell_names(source)
        touched = set(first) | later_reads | later_binds
        touched |= _called_globals(touched, ns)
        self.inputs = {n for n in touched if first.get(n, "read") == "read" and n not in later_binds}
        self.outputs = touched - self.inputs
        self.start_keys = set(ns)
        self.was = {n: _Was(ns[n]) for n in self.outputs if n in ns}
        self.shown: set[str] = set()

    def _wanted(self, name: str, value: Any) -> bool:
        if name in self.inputs or name in self.shown:
            return True
        if name in self.outputs or name not in self.start_keys:
            was = self.was.get(name)
            if was is None or not was.same(value):
                self.shown.add(name)
                self.was.pop(name, None)
                return True
        return False

    def items(self) -> Any:
        return [(k, v) for k, v in list(self.ns.items()) if self._wanted(k, v)]

    def __getitem__(self, name: str) -> Any:
        value = self.ns[name]
        if not self._wanted(name, value):
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, _ in self.items()])

    def __len__(self) -> int:
        return len(self.items())

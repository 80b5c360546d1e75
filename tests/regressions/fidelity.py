"""Invariants 1-4 of a trace, checked against PyTorch run plainly (the fidelity harness).

A program runs three times, each from the same seeds, in a fresh namespace:

1. ``plain``: ``exec`` of the source, stdout and stderr captured;
2. ``traced``: ``gradtrace.trace_code(..., raise_errors=False)``, the same captured;
3. ``watched``: ``exec`` again under this module's own line hook (no gradtrace code),
   which notes, each time a statement of the program finishes, which statement it
   was (line, function) and the state of every tensor a name reaches: values,
   version, ``grad_fn`` name and ``.grad``, copied at that moment.

Then:

- **invariant 1**: plain and traced print the same, raise the same, leave the same
  random streams and the same names with bitwise-equal tensors and ``.grad``;
- **invariant 3**: the trace's steps are the watched run's statements, in order;
- **invariant 2**: each step's claims equal the live objects at that moment;
- **invariant 4**: a step predicts that ``name.backward()`` fails on a stale saved
  value iff running ``name.backward()`` on a copy of that moment... is not cheap, so
  instead: the step after which the program calls ``backward()`` predicts failure
  for that root iff the call fails with PyTorch's in-place error.

Every expected figure comes from PyTorch in this process; nothing is typed in.
"""

from __future__ import annotations

import ast
import contextlib
import io
import random
import re
import sys
import types
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

import gradtrace
from gradtrace.model import IN_OP_WRITE, STALE, Mutate, Step, Trace
from gradtrace.render.words import event_words
from gradtrace.tracer.graph import PACKED

from .differential import Raised, assert_same_exception, attr, same_tensor, version

FILENAME = "<corpus>"
#: torch's error when a saved value was changed in place
STALE_ERROR = "modified by an inplace operation"
#: torch's error when ``backward()`` of a non-scalar root is given no gradient (raised before any node runs)
NO_GRADIENT = "grad can be implicitly created only for scalar outputs"


# ------------------------------------------------------------------ running
@dataclass
class Outcome:
    namespace: dict[str, Any]
    exc: BaseException | None
    stdout: str
    stderr: str
    rng: tuple[Any, ...]
    trace: Trace | None = None


def _seed() -> None:
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)


def _rng() -> tuple[Any, ...]:
    return (torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy())


def _run(source: str, traced: bool, max_steps: int) -> Outcome:
    ns: dict[str, Any] = {"__name__": "__main__"}
    out, err = io.StringIO(), io.StringIO()
    exc: BaseException | None = None
    trace = None
    _seed()
    torch.set_grad_enabled(True)
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        warnings.simplefilter("ignore")
        try:
            if traced:
                trace = gradtrace.trace_code(source, ns, filename=FILENAME, max_steps=max_steps,
                                             raise_errors=False)
            else:
                exec(compile(source, FILENAME, "exec"), ns)
        except BaseException as e:  # noqa: BLE001 - the program's own failure (also an interrupt): compared
            exc = e
            if traced:  # an interrupt always reaches the caller; the trace is kept
                trace = gradtrace.last_trace()
    rng = _rng()
    torch.set_grad_enabled(True)
    return Outcome(ns, exc, out.getvalue(), err.getvalue(), rng, trace)


# --------------------------------------------------------------- the watcher
def _stmt_spans(source: str) -> list[tuple[ast.AST, tuple[int, int, int, int]]]:
    """Every statement-like node (statements, except handlers, match cases) with its span."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.stmt, ast.ExceptHandler)) or type(node).__name__ == "match_case":
            if type(node).__name__ == "match_case":
                p = node.pattern  # type: ignore[attr-defined]
                last = node.body[-1]  # type: ignore[attr-defined]
                span = (p.lineno, p.col_offset, last.end_lineno, last.end_col_offset)
            else:
                span = (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)
            out.append((node, span))
    return out


def _header_lines(node: ast.AST) -> tuple[int, int]:
    """First and last line a statement owns (a compound statement: its header only)."""
    first = getattr(node, "lineno", None)
    if first is None:  # match_case
        first = node.pattern.lineno  # type: ignore[attr-defined]
    decorators = getattr(node, "decorator_list", [])
    if decorators:
        first = min([first] + [d.lineno for d in decorators])
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return first, max(first, body[0].lineno - 1)
    return first, getattr(node, "end_lineno", first) or first


_BACKWARD_CODES = {torch.Tensor.backward.__code__, torch.autograd.backward.__code__, torch.autograd.grad.__code__}


def _in_backward(frame: types.FrameType | None) -> bool:
    """True while a backward()/autograd.grad call is running (its hooks are part of that statement)."""
    if torch._C._current_autograd_node() is not None:
        return True
    while frame is not None:
        if frame.f_code in _BACKWARD_CODES:
            return True
        frame = frame.f_back
    return False


class Watcher:
    """Notes each finished statement of ``FILENAME`` code and the state at that moment."""

    def __init__(self, source: str) -> None:
        self.spans = _stmt_spans(source)
        self.lines: dict[int, list[ast.AST]] = {}
        for node, _span in self.spans:
            lo, hi = _header_lines(node)
            for line in range(lo, hi + 1):
                self.lines.setdefault(line, []).append(node)
        self.moments: list[Moment] = []
        self.current: dict[types.FrameType, tuple[ast.AST, int]] = {}
        self.globals: dict[str, Any] = {}
        self.calls: dict[str, int] = {}
        self.labels: dict[types.FrameType, str] = {}
        #: compare graphs node by node: reading a saved value runs hooks that pack it (checkpoint,
        #: saved_tensors_hooks), so programs that install such hooks are left out
        self.graphs = not any(word in source for word in ("saved_tensors_hooks", "checkpoint"))

    def _innermost(self, line: int, col: int | None) -> ast.AST | None:
        best = None
        best_size = None
        for node, (l0, c0, l1, c1) in self.spans:
            if (l0, c0) <= (line, col or 0) <= (l1, c1):
                size = (l1 - l0, c1 - c0 if l1 == l0 else 10**6)
                if best_size is None or size < best_size:
                    best, best_size = node, size
        return best

    def _stmt_at(self, frame: types.FrameType, line: int) -> ast.AST | None:
        nodes = self.lines.get(line)
        if not nodes:
            return None
        if len(nodes) == 1:
            return nodes[0]
        # several statements own this line: the instruction's column says which one
        positions = list(frame.f_code.co_positions())
        pos = positions[frame.f_lasti // 2] if frame.f_lasti // 2 < len(positions) else None
        if pos is None or pos[0] is None:
            return None
        return self._innermost(pos[0], pos[2])

    def hook(self, frame: types.FrameType, _event: str, _arg: Any) -> Any:
        code = frame.f_code
        if code.co_filename != FILENAME:
            return None
        if code.co_name == "<module>":
            return self._local
        if code.co_name.startswith("<") or not code.co_flags & 0x1:
            return None  # lambdas, comprehensions and class bodies belong to their statement
        # a call's label: ``f()``, or ``f()#k`` (k-th call of f) when f is already running
        # (two functions of one name running at once, as nested modules' forward, are two calls of that name)
        name = code.co_name
        self.calls[name] = self.calls.get(name, 0) + 1
        live = sum(1 for f in self.labels if f.f_code.co_name == name)
        self.labels[frame] = f"{name}()" if live == 0 else f"{name}()#{self.calls[name]}"
        return self._local

    def _multi(self, line: int) -> bool:
        return len(self.lines.get(line, ())) > 1

    def _local(self, frame: types.FrameType, event: str, _arg: Any) -> Any:
        if _in_backward(frame):
            if event == "return":  # its call is over: a later call of the same function is not a nested one
                self.labels.pop(frame, None)
            return self._local  # hooks and custom backward code run by backward(): part of that step
        if event in ("line", "opcode"):
            if event == "line":
                frame.f_trace_opcodes = self._multi(frame.f_lineno)
            stmt = self._stmt_at(frame, frame.f_lineno)
            if _own_header(stmt, frame.f_code):
                return self._local  # a function with cells starts on its ``def`` line: not a statement it runs
            if stmt is not None:
                cur = self.current.get(frame)
                if cur is not None and cur[0] is stmt and (event == "opcode" or frame.f_lasti > cur[1]
                                                           or _simple(stmt)):
                    # a simple statement seen again with no other statement between: a comprehension's
                    # loop (inlined on Python 3.12+), or the statement's next line
                    self.current[frame] = (stmt, frame.f_lasti)
                    return self._local
                if cur is not None:
                    self._finish(frame)
                self.current[frame] = (stmt, frame.f_lasti)
        elif event == "return":
            self._finish(frame)
            self.current.pop(frame, None)
            self.labels.pop(frame, None)
        return self._local

    def _finish(self, frame: types.FrameType) -> None:
        cur = self.current.get(frame)
        if cur is None:
            return
        node = cur[0]
        line = getattr(node, "lineno", None) or node.pattern.lineno  # type: ignore[attr-defined]
        name = "<module>" if frame.f_globals is frame.f_locals else frame.f_code.co_name
        with torch.utils._python_dispatch._disable_current_modes():  # the program's own modes see nothing
            names, graph = capture(self.globals, frame, self.labels, self.graphs)
        lost = {}
        if self.moments:
            for n, was in self.moments[-1].names.items():
                now = names.get(n)
                if now is None or now.obj_id != was.obj_id:
                    lost[n] = was.ref() is not None
        self.moments.append(Moment(line, name, names, graph, lost))


def _own_header(stmt: ast.AST | None, code: types.CodeType) -> bool:
    """True for the ``def`` statement of the function ``code`` is running (seen from inside it)."""
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == code.co_name \
        and _header_lines(stmt)[0] == code.co_firstlineno


def _simple(node: ast.AST) -> bool:
    """A statement with no statements inside (not a loop, ``if``, ``def``, handler, ...)."""
    body = getattr(node, "body", None)
    return not (isinstance(body, list) and body and isinstance(body[0], ast.stmt))


@dataclass
class Seen:
    """One tensor as a name reached it at one moment."""

    value: torch.Tensor
    version: int | None
    requires_grad: bool
    grad_fn: str | Raised | None
    grad: torch.Tensor | None
    obj_id: int
    #: the key of its ``grad_fn`` in the moment's graph (None: no grad_fn, or the graph was too large)
    node: int | None = None
    #: where its memory is (tensors changed "through a view" share it)
    storage: int | None = None
    #: flags as PyTorch has them: is_leaf, retains_grad, is a Parameter, dtype; and the object it is a view of
    flags: tuple[Any, ...] = ()
    base: int | None = None
    #: the tensor itself, weakly (does a tensor the step no longer names still exist?)
    ref: Any = None


@dataclass
class LiveNode:
    """One backward node as the watcher saw it: name, inputs, the state of each saved value."""

    name: str
    inputs: list[tuple[int, int] | None]
    saved: dict[str, str]
    variable: int | None = None
    #: the values of the saved tensors that unpack (alive ones), copied
    values: dict[str, torch.Tensor] = field(default_factory=dict)
    versions: dict[str, int | None] = field(default_factory=dict)


@dataclass
class Moment:
    lineno: int
    frame: str
    names: dict[str, Seen] = field(default_factory=dict)
    graph: dict[int, LiveNode] | None = None
    #: name -> whether the tensor it named at the moment before (and names no more) still exists
    lost: dict[str, bool] = field(default_factory=dict)


_LAZY = torch.nn.parameter.UninitializedTensorMixin


def _learners(v: Any) -> bool:
    """An instance of a class the program itself defined (its module is the script's, or none with a file)."""
    cls = type(v)
    if not cls.__flags__ & (1 << 9) or issubclass(cls, (type, BaseException)):  # made by a class statement
        return False
    module = sys.modules.get(cls.__module__)
    return cls.__module__ in ("__main__", "builtins") or module is None or not hasattr(module, "__file__")


def _attributes(v: Any) -> list[tuple[str, Any]]:
    """An object's attributes that do not start with ``_``: its ``__dict__``, then its slots."""
    out = [(k, x) for k, x in getattr(v, "__dict__", {}).items() if not k.startswith("_")]
    for cls in type(v).__mro__:
        for k, d in vars(cls).items():
            if isinstance(d, types.MemberDescriptorType) and not k.startswith("_") and hasattr(v, k):
                out.append((k, getattr(v, k)))
    return out


def named_tensors(ns: dict[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, torch.Tensor]]:
    """Names as the trace spells them: ``x``, ``model.fc.weight``, ``bn.running_mean``, ``xs[0]``, ``p.w``
    (an object of a class the program defined; objects and lists in it down to three levels)."""
    out: list[tuple[str, torch.Tensor]] = []
    for k, v in list(ns.items()):
        if not isinstance(k, str) or k.startswith("_") or (not prefix and k in ("In", "Out")):
            continue
        if depth and not isinstance(v, (torch.Tensor, torch.nn.Module, list, tuple, dict)) and not _learners(v):
            continue
        if isinstance(v, torch.Tensor):
            out.append((prefix + k, v))
        elif isinstance(v, torch.nn.Module):  # (a lazy module's parameters have no values before its first call)
            out += [(f"{prefix}{k}.{p}", t) for p, t in v.named_parameters() if not isinstance(t, _LAZY)]
            out += [(f"{prefix}{k}.{p}", t) for p, t in v.named_buffers() if t is not None and not isinstance(t, _LAZY)]
        elif isinstance(v, (list, tuple)):
            fields = getattr(type(v), "_fields", ()) if isinstance(v, tuple) else ()  # a namedtuple's: ``p.w``
            for i, t in enumerate(v[:64]):
                label = f"{prefix}{k}.{fields[i]}" if i < len(fields) else f"{prefix}{k}[{i}]"
                if isinstance(t, torch.Tensor):
                    out.append((label, t))
                elif depth < 3 and _learners(t):
                    out += named_tensors(dict(_attributes(t)), f"{label}.", depth + 1)
        elif isinstance(v, dict):
            out += [(f"{prefix}{k}[{key!r}]", t) for key, t in list(v.items())[:64]
                    if isinstance(t, torch.Tensor) and isinstance(key, (str, int))]
        elif depth < 3 and _learners(v):
            out += named_tensors(dict(_attributes(v)), f"{prefix}{k}.", depth + 1)
    return out


def _grad_of(t: torch.Tensor) -> torch.Tensor | None:
    if attr(t, "is_leaf") is True or t.retains_grad:
        return t.grad
    return None


def _copy(t: torch.Tensor) -> torch.Tensor:
    """A plain dense copy (a subclass's class differs between runs; sparse has no ``equal``)."""
    with torch._C.DisableTorchFunctionSubclass():
        t = t.detach()
        if t.layout != torch.strided:
            return t.to_dense()
        return t.as_subclass(torch.Tensor).clone()


def _seen(t: torch.Tensor) -> Seen:
    with torch._C.DisableTorchFunction(), torch.no_grad():
        fn = attr(t, "grad_fn")
        g = _grad_of(t)
        return Seen(
            _copy(t), version(t), bool(t.requires_grad),
            fn if fn is None or isinstance(fn, Raised) else fn.name().replace("torch::autograd::", ""),
            None if g is None else _copy(g), id(t), storage=_storage(t),
            flags=(attr(t, "is_leaf"), bool(t.retains_grad), isinstance(t, torch.nn.Parameter),
                   str(t.dtype).replace("torch.", ""), 0 if fn is None or isinstance(fn, Raised) else t.output_nr),
            base=None if t._base is None else id(t._base), ref=weakref.ref(t),
        )


def _storage(t: torch.Tensor) -> int | None:
    try:
        return int(t.untyped_storage().data_ptr())
    except Exception:
        return None


def capture(globals_ns: dict[str, Any], frame: types.FrameType, labels: dict[types.FrameType, str],
            graphs: bool = True) -> tuple[dict[str, Seen], dict[int, LiveNode] | None]:
    named = named_tensors(globals_ns)
    frames = []
    f: types.FrameType | None = frame
    while f is not None:
        if f in labels:
            frames.append(f)
        f = f.f_back
    for f in reversed(frames):
        named += named_tensors(f.f_locals, labels[f] + ".")
    seen = {name: _seen(t) for name, t in named}
    graph = _graph([t for _name, t in named], seen.values()) if graphs else None
    return seen, graph


#: graphs larger than this are not compared node by node
MAX_GRAPH = 400
_FREED_ERROR = "backward through the graph a second time"


def _saved_state(node: Any, name: str) -> tuple[str, torch.Tensor | None, int | None]:
    """``alive``, ``stale`` or ``freed``, as PyTorch itself tells when the value is unpacked; its values."""
    base, _, index = name.partition("[")
    try:
        if base == "saved_tensors":
            value = node.saved_tensors[int(index.rstrip("]"))]
        elif index:
            raw = getattr(node, "_raw_saved_" + base)[int(index.rstrip("]"))]
            if raw.data is None:
                return "freed", None, None
            value = raw.unpack()
        else:
            value = getattr(node, "_saved_" + base)
    except RuntimeError as e:
        if STALE_ERROR in str(e):
            return "stale", None, None
        if _FREED_ERROR in str(e):
            return "freed", None, None
        return "error", None, None
    if not isinstance(value, torch.Tensor):
        return "alive", None, None
    return "alive", _copy(value), version(value)


def _saved_names(node: Any) -> list[str]:
    out: list[str] = []
    custom = hasattr(node, "_forward_cls")  # a custom Function's saved values are ``saved_tensors[i]``
    names = [] if custom else dir(node)
    for n in names:
        if n.startswith("_raw_saved_"):
            field_name = n[len("_raw_saved_"):]
            try:
                raw = getattr(node, n)
            except Exception:
                continue
            if isinstance(raw, (list, tuple)):
                out += [f"{field_name}[{i}]" for i in range(len(raw))]
            else:
                out.append(field_name)
    if custom:
        try:
            out += [f"saved_tensors[{i}]" for i in range(len(node.saved_tensors))]
        except RuntimeError:
            pass  # freed: the trace's own names are checked one by one
    return out


def _graph(tensors: list[torch.Tensor], seen: Any) -> dict[int, LiveNode] | None:
    """Every node under the named tensors (keyed by ``id`` while all are held), or None when too large."""
    held: dict[int, Any] = {}
    out: dict[int, LiveNode] = {}
    stack = []
    for t, s in zip(tensors, seen, strict=True):
        fn = attr(t, "grad_fn")
        if fn is not None and not isinstance(fn, Raised):
            s.node = id(fn)
            stack.append(fn)
    while stack:
        node = stack.pop()
        if id(node) in held:
            continue
        held[id(node)] = node
        if len(held) > MAX_GRAPH:
            for s in seen:
                s.node = None
            return None
        inputs: list[tuple[int, int] | None] = []
        for nxt, nr in node.next_functions:
            if nxt is None:
                inputs.append(None)
            else:
                inputs.append((id(nxt), int(nr)))
                stack.append(nxt)
        name = node.name().replace("torch::autograd::", "")
        variable = id(node.variable) if name == "AccumulateGrad" else None
        out[id(node)] = LiveNode(name, inputs, {}, variable)
    for key, node in held.items():
        live = out[key]
        for n in _saved_names(node):
            live.saved[n], value, at = _saved_state(node, n)
            if value is not None:
                live.values[n] = value
                live.versions[n] = at
    return out


def run_watched(source: str) -> tuple[Watcher, BaseException | None]:
    watcher = Watcher(source)
    ns: dict[str, Any] = {"__name__": "__main__"}
    watcher.globals = ns
    exc: BaseException | None = None
    _seed()
    old = sys.gettrace()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        # Python 3.12 gives "opcode" events (which tell the statements of one line apart) only if some
        # frame asked for them before sys.settrace: ask once here, then each frame asks for itself
        here = sys._getframe()
        here.f_trace_opcodes = True
        here.f_trace_opcodes = False
        sys.settrace(watcher.hook)
        try:
            exec(compile(source, FILENAME, "exec"), ns)
        except BaseException as e:  # noqa: BLE001 - compared with the plain run
            exc = e
        finally:
            sys.settrace(old)
            for frame in list(watcher.current):
                watcher._finish(frame)
    torch.set_grad_enabled(True)
    return watcher, exc


# --------------------------------------------------------------- comparing
def assert_same_thing(name: str, a: Any, b: Any, _path: frozenset[tuple[int, int]] = frozenset()) -> None:
    """Values the program left behind: tensors bitwise, modules by state and grads, arrays exactly.

    A container met again inside itself (a namespace that holds itself, ``ns['__builtins__']`` of an
    ``exec`` where something put ``__builtins__`` into builtins) is compared once, not followed round."""
    # classes the program defines are made anew in each run: compare them by name
    assert type(a).__qualname__ == type(b).__qualname__, f"{name}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, (list, tuple, dict)):
        if (id(a), id(b)) in _path:
            return
        _path = _path | {(id(a), id(b))}
    if isinstance(a, torch.Tensor):
        assert a.layout == b.layout, name
        assert same_tensor(_copy(a), _copy(b)), f"{name}: values differ\nplain  {a}\ntraced {b}"
        assert version(a) == version(b), f"{name}: version {version(a)} vs {version(b)}"
        fa, fb = attr(a, "grad_fn"), attr(b, "grad_fn")
        na = fa.name() if fa is not None and not isinstance(fa, Raised) else fa
        nb = fb.name() if fb is not None and not isinstance(fb, Raised) else fb
        assert na == nb, f"{name}: grad_fn {na} vs {nb}"
        ga, gb = _grad_of(a), _grad_of(b)
        assert (ga is None) == (gb is None), f"{name}.grad: {ga} vs {gb}"
        if ga is not None and gb is not None:
            assert same_tensor(_copy(ga), _copy(gb)), f"{name}.grad differs\nplain  {ga}\ntraced {gb}"
    elif isinstance(a, torch.nn.Module):
        sa, sb = a.state_dict(keep_vars=True), b.state_dict(keep_vars=True)
        assert list(sa) == list(sb), name
        for k in sa:
            assert_same_thing(f"{name}.{k}", sa[k], sb[k])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), name
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), name
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_thing(f"{name}[{i}]", x, y, _path)
    elif isinstance(a, dict):
        assert len(a) == len(b), name
        for i, (ka, kb) in enumerate(zip(a, b, strict=True)):  # (keys may be tensors: ``{p: opt for p in params}``)
            assert_same_thing(f"{name} key {i}", ka, kb, _path)
            shown = f"{name}[{i}]" if isinstance(ka, torch.Tensor) else f"{name}[{ka!r}]"
            assert_same_thing(shown, a[ka], b[kb], _path)
    elif isinstance(a, float) and a != a:
        assert b != b, name
    elif isinstance(a, (int, float, bool, str, complex, type(None))):
        assert a == b, f"{name}: {a!r} vs {b!r}"


def check_same_run(plain: Outcome, traced: Outcome) -> None:
    """Invariant 1."""
    assert plain.stdout == traced.stdout, f"stdout differs:\n{plain.stdout}\n---\n{traced.stdout}"
    assert plain.stderr == traced.stderr, f"stderr differs:\n{plain.stderr}\n---\n{traced.stderr}"
    assert traced.trace is not None
    if plain.exc is None:
        assert traced.trace.error is None, f"trace error {traced.trace.error} but the plain run succeeded"
    else:
        assert traced.trace.error is not None, f"plain run raised {plain.exc!r}, the trace has no error"
        assert traced.trace.error.type == type(plain.exc).__name__
        assert traced.trace.error.message == str(plain.exc)
    assert torch.equal(plain.rng[0], traced.rng[0]), "torch's random stream differs"
    assert plain.rng[1] == traced.rng[1], "Python's random stream differs"
    assert np.array_equal(plain.rng[2], traced.rng[2]), "NumPy's random stream differs"
    keys = [k for k in plain.namespace if not k.startswith("__")]
    assert keys == [k for k in traced.namespace if not k.startswith("__")], "names differ"
    for k in keys:
        assert_same_thing(k, plain.namespace[k], traced.namespace[k])


def _claim_values(summary: Any, like: torch.Tensor) -> torch.Tensor | None:
    if summary is None or summary.values is None:
        return None
    values = summary.values
    return torch.tensor(values, dtype=like.dtype).reshape(like.shape)


def _same_stats(summary: Any, live: torch.Tensor) -> bool:
    """A large tensor is shown by (min, mean, max): min and max are elements (equal exactly), the mean
    is float64 (equal to 1e-9 relative: a sum in another order); True when no stats are claimed."""
    stats = None if summary is None or summary.values is not None else summary.stats
    if stats is None or live.numel() == 0:
        return True
    d = live.detach()
    d = d.abs() if d.is_complex() else d.to(torch.float64)
    lo, hi = float(d.min()), float(d.max())
    mean = float(d.to(torch.float64).mean())
    lo_, mean_, hi_ = (float(v) for v in stats)

    def same(a: float, b: float, rel: float = 0.0) -> bool:
        return (a != a and b != b) or a == b or abs(a - b) <= rel * max(1.0, abs(a))

    return same(lo, lo_) and same(hi, hi_) and same(mean, mean_, 1e-9)


#: saved values whose bytes are scratch memory the kernel never fully writes: they differ from one plain
#: run to the next (the watched run is another run), so their values are not compared, only their state
SCRATCH_SAVED = frozenset({("MkldnnRnnLayerBackward0", "result3")})  # the LSTM's oneDNN workspace


def check_steps(trace: Trace, watcher: Watcher) -> None:
    """Invariants 3 and 2: the steps are the statements that ran, and each tells the truth."""
    steps = list(trace.steps)
    moments = watcher.moments
    if trace.steps_unrecorded == 0 and trace.final is None:
        got = [(s.lineno, s.frame) for s in steps]
        want = [(m.lineno, m.frame) for m in moments]
        assert got == want, _first_difference(got, want, steps)
    before: Moment | None = None
    for step, moment in zip(steps, moments, strict=False):
        assert (step.lineno, step.frame) == (moment.lineno, moment.frame)
        check_claims(step, moment)
        check_mutations(step, before, moment)
        before = moment


def _first_difference(got: list[Any], want: list[Any], steps: list[Step]) -> str:
    for i, (a, b) in enumerate(zip(got, want, strict=False)):
        if a != b:
            return f"step {i}: trace has {a} ({steps[i].code!r}), the program ran {b}\n" \
                   f"trace  {got[max(0, i - 3):i + 4]}\nplain  {want[max(0, i - 3):i + 4]}"
    return f"{len(got)} steps, {len(want)} statements ran\ntrace {got[-5:]}\nplain {want[-5:]}"


def check_graph(step: Step, moment: Moment, where: str) -> None:
    """The nodes a step shows under its names are PyTorch's: names, inputs, leaves, saved values' states."""
    graph = moment.graph
    if graph is None:
        return
    leaf_names = {seen.obj_id: name for name, seen in moment.names.items()}
    todo = []
    for name, seen in moment.names.items():
        info = step.tensors[step.bindings[name]]
        if seen.node is not None and info.grad_fn is not None:
            todo.append((info.grad_fn, seen.node, name))
    pairs: dict[str, int] = {}
    back: dict[int, str] = {}
    while todo:
        nid, key, path = todo.pop()
        if nid in pairs or key in back:
            assert pairs.get(nid) == key and back.get(key) == nid, \
                f"{where}: node {nid} (under {path}) is not the node PyTorch has there"
            continue
        pairs[nid], back[key] = key, nid
        assert nid in step.nodes, f"{where}: node {nid} under {path} is not shown"
        shown, live = step.nodes[nid], graph[key]
        assert shown.name == live.name, f"{where}: {nid} under {path} shown as {shown.name}, PyTorch has {live.name}"
        assert len(shown.inputs) == len(live.inputs), f"{where}: {nid} ({shown.name}) inputs differ"
        for i, (edge, there) in enumerate(zip(shown.inputs, live.inputs, strict=True)):
            assert (edge is None) == (there is None), f"{where}: {nid} ({shown.name}) input {i}: {edge} vs {there}"
            if edge is not None and there is not None:
                assert edge.output_nr == there[1], f"{where}: {nid} ({shown.name}) input {i} output_nr"
                todo.append((edge.node, there[0], f"{path} <- {shown.name}"))
        if live.variable is not None and live.variable in leaf_names:
            leaf = step.bindings[leaf_names[live.variable]]
            assert shown.variable == leaf, f"{where}: {nid} accumulates into {shown.variable}, PyTorch: {leaf}"
        if any(sv.value is not None and sv.value.text == PACKED for sv in shown.saved):
            continue
        by_name = {sv.name: sv for sv in shown.saved}
        for sname, state in live.saved.items():
            sv = by_name.get(sname)
            if state == "stale":
                assert sv is not None and sv.state == STALE, \
                    f"{where}: {nid} ({shown.name}) saved {sname} is stale, shown as {None if sv is None else sv.state}"
            elif sv is not None and state != "error":
                assert sv.state == state, \
                    f"{where}: {nid} ({shown.name}) saved {sname} is {state}, shown as {sv.state}"
                now = None if (shown.name, sname) in SCRATCH_SAVED else live.values.get(sname)
                claimed = None if now is None else _claim_values(sv.value, now)
                if claimed is not None and now is not None and state == "alive":
                    assert same_tensor(claimed, now), \
                        f"{where}: {nid} ({shown.name}) saved {sname} shown as {sv.value.text}, it is {now}"  # type: ignore
                if now is not None and state == "alive":
                    assert _same_stats(sv.value, now), \
                        f"{where}: {nid} ({shown.name}) saved {sname} shown as {sv.value.text}, it is {now}"  # type: ignore


def check_claims(step: Step, moment: Moment) -> None:
    where = f"step {step.index} (line {step.lineno} {step.code!r})"
    names = {n for n in moment.names}
    assert set(step.bindings) == names, \
        f"{where}: names {sorted(set(step.bindings) ^ names)} differ from the program's"
    by_obj: dict[int, str] = {}
    by_id = {seen.obj_id: step.bindings[name] for name, seen in moment.names.items()}
    for name, seen in moment.names.items():
        tid = step.bindings[name]
        other = by_obj.setdefault(seen.obj_id, tid)
        assert other == tid, f"{where}: {name} is the same object as another name but has id {tid}"
        info = step.tensors[tid]
        want_version = 0 if seen.version is None else seen.version
        assert info.version == want_version, f"{where}: {name} version {info.version}, torch says {seen.version}"
        assert tuple(info.shape) == tuple(seen.value.shape), f"{where}: {name} shape"
        assert info.requires_grad == seen.requires_grad, f"{where}: {name}.requires_grad"
        is_leaf, retains, is_param, dtype, output_nr = seen.flags
        refuses = isinstance(seen.grad_fn, Raised)
        assert info.forbidden is refuses, \
            f"{where}: {name} shown as {'' if info.forbidden else 'not '}forbidden in autograd, " \
            f"PyTorch {'refuses' if refuses else 'tells'} its grad_fn"
        if isinstance(is_leaf, Raised):  # PyTorch refuses to tell, and the trace says so (above): False stands
            is_leaf = info.is_leaf
        assert (info.is_leaf, info.retains_grad, info.is_param, info.dtype) == (is_leaf, retains, is_param, dtype), \
            f"{where}: {name} shown as leaf/retains_grad/Parameter/dtype " \
            f"{(info.is_leaf, info.retains_grad, info.is_param, info.dtype)}, PyTorch says {seen.flags}"
        assert info.output_nr == output_nr, \
            f"{where}: {name} shown as output {info.output_nr} of its grad_fn, PyTorch says output {output_nr}"
        if seen.base is not None and seen.base in by_id:
            assert info.base == by_id[seen.base], f"{where}: {name} is a view of {by_id[seen.base]}, shown {info.base}"
        elif seen.base is not None:  # a view of a tensor no name holds: shown as a view of a tensor the step shows
            assert info.base is not None and info.base in step.tensors, \
                f"{where}: {name} is a view of a tensor no name holds, shown as a view of {info.base}"
        else:
            assert info.base is None, f"{where}: {name} is no view, shown as a view of {info.base}"
        got_fn = None if info.grad_fn is None else step.nodes[info.grad_fn].name
        want_fn = None if isinstance(seen.grad_fn, Raised) else seen.grad_fn
        assert got_fn == want_fn, f"{where}: {name}.grad_fn {got_fn}, torch says {want_fn}"
        claimed = _claim_values(info.value, seen.value)
        if claimed is not None:
            assert same_tensor(claimed, seen.value), \
                f"{where}: {name} shown as {info.value.text}, it is {seen.value}"
        assert _same_stats(info.value, seen.value), f"{where}: {name} shown as {info.value.text}, it is {seen.value}"
        if seen.grad is None:
            assert info.grad is None, f"{where}: {name}.grad shown as {info.grad}, it is None"
        else:
            assert info.grad is not None, f"{where}: {name}.grad not shown, it is {seen.grad}"
            claimed = _claim_values(info.grad, seen.grad)
            if claimed is not None:
                assert same_tensor(claimed, seen.grad), \
                    f"{where}: {name}.grad shown as {info.grad.text}, it is {seen.grad}"
            assert _same_stats(info.grad, seen.grad), \
                f"{where}: {name}.grad shown as {info.grad.text}, it is {seen.grad}"
    check_graph(step, moment, where)
    check_views(step, moment, where)
    check_gone(step, moment, where)


def check_gone(step: Step, moment: Moment, where: str) -> None:
    """A tensor a name left, held by no name or shown node, is said gone exactly when it no longer exists."""
    for e in step.events:
        if e.kind not in ("rebind", "unbind") or e.held_by_names or e.held_by_nodes:  # type: ignore[attr-defined]
            continue
        alive = moment.lost.get(e.name)  # type: ignore[attr-defined]
        if alive is not None:
            assert e.held_elsewhere is alive, \
                f"{where}: {e.old} is said {'still held out of sight' if e.held_elsewhere else 'gone'}, " \
                f"it {'still exists' if alive else 'is gone'}"  # type: ignore[attr-defined]


def check_views(step: Step, moment: Moment, where: str) -> None:
    """A tensor said to change "through" another shares its memory with it."""
    by_tid: dict[str, Seen] = {step.bindings[n]: seen for n, seen in moment.names.items()}
    for e in step.events:
        for t, other in getattr(e, "shares", ()):  # "shares memory with", said of a new tensor: it does
            a, b = by_tid.get(t), by_tid.get(other)
            if a is not None and b is not None:
                assert a.storage is not None and a.storage == b.storage, \
                    f"{where}: {t} is said to share memory with {other}, it does not"
        if e.kind == "untracked":  # "made by detach(): shares memory with" is said only of memory it shares
            a, b = by_tid.get(e.tensor), by_tid.get(e.shares_with or "")  # type: ignore[attr-defined]
            if a is not None and b is not None and a.storage is not None:
                assert a.storage == b.storage, \
                    f"{where}: {e.tensor} is said to share memory with {e.shares_with}, it does not"  # type: ignore
            continue
        if e.kind != "mutate" or e.via is None:  # type: ignore[attr-defined]
            continue
        a, b = by_tid.get(e.tensor), by_tid.get(e.via)  # type: ignore[attr-defined]
        if a is not None and b is not None and a.storage is not None:
            assert a.storage == b.storage, \
                f"{where}: {e.tensor} is said to change through {e.via}, but they share no memory"  # type: ignore


#: the largest tensor whose every element a step shows (a larger one is shown by its stats)
SHOWN_WHOLE = 16


def check_mutations(step: Step, before: Moment | None, moment: Moment) -> None:
    """A tensor said to change in place had its version moved by the statement, and its values too when it
    changed along with another (``via``); one said to keep its values kept them; a flag set in place
    (``requires_grad_``, ``detach_``: no version bump) is not said to change in place."""
    where = f"step {step.index} (line {step.lineno} {step.code!r})"
    now_of = {step.bindings[n]: seen for n, seen in moment.names.items()}
    was_of = {} if before is None else {seen.obj_id: seen for seen in before.names.values()}
    for e in step.events:
        if not isinstance(e, Mutate) or e.unseen or e.op == IN_OP_WRITE:
            continue
        said = event_words(step, e)
        if e.version_before == e.version_after or e.values_kept:
            assert "changed in place" not in said, f"{where}: {said!r}, but its version or values did not move"
        now = now_of.get(e.tensor)
        if now is None or now.version is None:
            continue
        assert e.version_after == now.version, f"{where}: {said!r}, PyTorch has version {now.version}"
        was = was_of.get(now.obj_id)
        if was is None or was.version != e.version_before or was.value.shape != now.value.shape \
                or was.value.numel() > SHOWN_WHOLE:
            continue
        same = same_tensor(was.value, now.value)
        if e.values_kept:
            assert same, f"{where}: {said!r}, but its values went from {was.value} to {now.value}"
        elif e.via is not None:
            assert not same, f"{where}: {said!r}, but its values stayed {now.value}"


def check_predictions(trace: Trace) -> None:
    """Invariant 4: a step before the failing ``backward()`` predicts it, and none predicts a success.

    Each step's predictions name roots; for each step whose next statement calls
    ``<name>.backward()``, the prediction for ``name`` exists iff that call raised
    PyTorch's in-place error.
    """
    steps = list(trace.steps)
    for i, step in enumerate(steps[1:], start=1):
        backs = [e for e in step.events if e.kind == "backward"]
        calls = _backward_roots(step.code)
        if not calls:
            continue
        before = steps[i - 1]
        err = next((e for e in step.events if e.kind == "error"), None)
        failed = err is not None and STALE_ERROR in err.message  # type: ignore[union-attr]
        predicted = {p.root for p in before.predictions}
        for root in calls:
            if isinstance(root, tuple):  # ``h.sum().backward()``: the root is made by the statement itself
                _check_made_root(step, before, root, failed, predicted)
                continue
            if root not in before.bindings:
                continue
            if failed:
                assert root in predicted, f"step {step.index} {step.code!r} failed on a stale value, no prediction"
                said = re.search(r"is at version (\d+); expected version (\d+)", err.message)  # type: ignore
                if said is not None:  # the versions PyTorch names are those of one predicted saved value
                    now, then = int(said.group(1)), int(said.group(2))
                    told = {(p.saved_version, p.version) for p in before.predictions if p.root == root}
                    assert (then, now) in told, \
                        f"step {step.index}: PyTorch says version {now}, expected {then}; predicted {sorted(told)}"
            elif err is None or NO_GRADIENT not in err.message:  # type: ignore[union-attr]
                # (a non-scalar root given no gradient fails before the graph runs: the prediction stands)
                assert root not in predicted, \
                    f"step {step.index} {step.code!r} ran fine, but step {before.index} predicted failure"
        del backs


def _check_made_root(step: Step, before: Step, root: tuple[str, bool], failed: bool, predicted: set[str]) -> None:
    """A root the backward statement makes from a named tensor (``h.sum()``, ``(h * w).mean()``).

    Its graph holds the named tensors' graphs, so a failure on a stale value must have been
    predicted for one of them; when the root is a chain of methods of one tensor
    (``h.sum()``, ``h.pow(2).mean()``) that the statement does not change, a success must
    not have been predicted for it either.
    """
    names = [n for n in root[0].split(",") if n in before.bindings]
    if not names:
        return
    if failed:
        assert predicted & set(names), \
            f"step {step.index} {step.code!r} failed on a stale value, no prediction for {', '.join(names)}"
    elif root[1] and not any(e.kind == "error" for e in step.events):
        assert names[0] not in predicted, \
            f"step {step.index} {step.code!r} ran fine, but step {before.index} predicted failure for {names[0]}"


def _method_chain_of(node: ast.AST) -> str | None:
    """``h`` for ``h.sum()``, ``h.pow(2).mean()`` (calls whose arguments name no other tensor)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr[-1:] != "_":
        if any(isinstance(a, ast.Name) for arg in [*node.args, *node.keywords] for a in ast.walk(arg)):
            return None
        node = node.func.value
    return node.id if isinstance(node, ast.Name) else None


def _backward_roots(code: str) -> list[Any]:
    """The roots a statement's backward calls name: ``y`` for ``y.backward(...)``,
    ``torch.autograd.backward(y, ...)`` and ``torch.autograd.grad(y, ...)`` (with any arguments:
    ``inputs=`` and ``autograd.grad`` run only the nodes on the way to their inputs, so a
    stale value elsewhere must not be predicted to fail them). A root the statement makes
    (``h.sum().backward()``) is ``("h,w", exact)``: the names in it, and whether it is a chain
    of methods of the one tensor ``h``."""
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        return []
    out: list[Any] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr == "backward" and isinstance(node.func.value, ast.Name) and node.func.value.id != "autograd":
            out.append(node.func.value.id)
        elif node.func.attr == "backward" and isinstance(node.func.value, (ast.Call, ast.BinOp)) \
                and not node.args and not node.keywords:
            named = [n.id for n in ast.walk(node.func.value) if isinstance(n, ast.Name)]
            out.append((",".join(dict.fromkeys(named)), _method_chain_of(node.func.value) is not None))
        elif node.func.attr in ("backward", "grad") and ast.unparse(node.func.value) in ("torch.autograd", "autograd") \
                and node.args and isinstance(node.args[0], ast.Name):
            out.append(node.args[0].id)
    return out


# ------------------------------------------------------------------- all
def check_fidelity(source: str, max_steps: int = 1000, steps_too: bool = True) -> Trace:
    """Run ``source`` plain, traced and watched; assert invariants 1-4."""
    plain = _run(source, traced=False, max_steps=max_steps)
    traced = _run(source, traced=True, max_steps=max_steps)
    check_same_run(plain, traced)
    assert traced.trace is not None
    if steps_too:
        watcher, exc = run_watched(source)
        assert_same_exception(plain.exc, exc)
        check_steps(traced.trace, watcher)
    check_predictions(traced.trace)
    return traced.trace

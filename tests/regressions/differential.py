"""Differential checks shared by the fuzz test and the regression tests.

A program is run three times, each in a fresh namespace:

1. ``plain``: ``exec`` of the whole source, as the learner would run it;
2. ``traced``: ``gradtrace.trace_code(..., raise_errors=False)``;
3. ``oracle``: each top-level statement ``exec``'d on its own, recording, before
   and after it, which object every name refers to and that object's ``_version``.

The traced run must compute exactly what the plain run computes (values, grads,
versions, names, warnings, the exception), and the trace's bindings and its
bind/rebind/unbind/mutate events must agree with what the oracle saw. Every
expected value comes from PyTorch (the plain and oracle runs), none is typed in.
"""

from __future__ import annotations

import ast
import importlib
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

import gradtrace
from gradtrace.model import Step, Trace

FILENAME = "<fuzz>"


# ------------------------------------------------------------------ running
@dataclass
class Run:
    namespace: dict[str, Any]
    exc: BaseException | None
    warns: list[tuple[str, str, str, int]]
    trace: Trace | None = None


def _warn_list(caught: list[warnings.WarningMessage]) -> list[tuple[str, str, str, int]]:
    """Each warning with where it points: the learner's line in both runs."""
    return [(w.category.__name__, str(w.message), w.filename, w.lineno) for w in caught]


def run_plain(source: str) -> Run:
    ns: dict[str, Any] = {}
    exc: BaseException | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(source, FILENAME, "exec"), ns)
        except Exception as e:  # the program's own failure: compared, not raised
            exc = e
    return Run(ns, exc, _warn_list(caught))


def run_traced(source: str, max_steps: int = 1000) -> Run:
    ns: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = gradtrace.trace_code(source, ns, filename=FILENAME, max_steps=max_steps, raise_errors=False)
    return Run(ns, None, _warn_list(caught), trace)


@dataclass(frozen=True)
class Raised:
    """Reading an attribute raised (e.g. ``grad_fn`` of a no_grad view whose base changed)."""

    type: str
    message: str


def attr(t: torch.Tensor, name: str) -> Any:
    """``getattr(t, name)``, or :class:`Raised` saying how reading it failed."""
    try:
        return getattr(t, name)
    except RuntimeError as e:
        return Raised(type(e).__name__, str(e))


def version(t: torch.Tensor) -> int | None:
    """``t._version``; None for inference tensors, which have no version counter."""
    try:
        return int(t._version)
    except RuntimeError:
        return None


@dataclass
class Slot:
    """What one name refers to at one moment."""

    obj: Any
    is_tensor: bool
    version: int | None
    value: torch.Tensor | None = None
    requires_grad: bool = False
    is_leaf: bool | Raised = True
    grad_fn: str | Raised | None = None


@dataclass
class OracleStep:
    stmt: ast.stmt
    before: dict[str, Slot]
    after: dict[str, Slot]
    exc: BaseException | None
    keep: list[Any] = field(default_factory=list)


def _named(ns: dict[str, Any]) -> list[tuple[str, Any]]:
    """Names as the model's docs spell them: ``x``, ``model.fc.weight``, ``xs[0]``, ``d['w']``."""
    out: list[tuple[str, Any]] = []
    for k, v in ns.items():
        if k.startswith("_"):
            continue
        out.append((k, v))
        if isinstance(v, torch.nn.Module):
            out += [(f"{k}.{p}", t) for p, t in v.named_parameters()]
        elif isinstance(v, (list, tuple)):
            out += [(f"{k}[{i}]", t) for i, t in enumerate(v) if isinstance(t, torch.Tensor)]
        elif isinstance(v, dict):
            out += [(f"{k}[{key!r}]", t) for key, t in v.items()
                    if isinstance(t, torch.Tensor) and isinstance(key, (str, int))]
    return out


def _public(ns: dict[str, Any]) -> dict[str, Slot]:
    out = {}
    for k, v in _named(ns):
        if isinstance(v, torch.Tensor):
            fn = attr(v, "grad_fn")
            out[k] = Slot(
                v, True, version(v), v.detach().clone(), v.requires_grad, attr(v, "is_leaf"),
                fn if fn is None or isinstance(fn, Raised) else fn.name().replace("torch::autograd::", ""),
            )
        else:
            out[k] = Slot(v, False, None)
    return out


def run_oracle(source: str) -> list[OracleStep]:
    """Exec each top-level statement alone; names, identities and versions around it."""
    tree = ast.parse(source)
    ns: dict[str, Any] = {}
    steps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for stmt in tree.body:
            code = compile(ast.Module(body=[stmt], type_ignores=[]), FILENAME, "exec")
            before = _public(ns)
            exc = None
            try:
                exec(code, ns)
            except Exception as e:
                exc = e
            steps.append(OracleStep(stmt, before, _public(ns), exc))
            if exc is not None:
                break
    return steps


# --------------------------------------------------------------- comparing
def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equal values (NaN equal to NaN), dtype, shape, layout."""
    if a.dtype != b.dtype or a.shape != b.shape or a.layout != b.layout or a.device != b.device:
        return False
    if a.device.type == "meta":
        return True
    a, b = a.detach(), b.detach()
    if a.is_complex():
        a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
    if a.is_floating_point():
        nan = torch.isnan(a)
        if not torch.equal(nan, torch.isnan(b)):
            return False
        a, b = a.masked_fill(nan, 0.0), b.masked_fill(nan, 0.0)
        bits = _BITS.get(a.element_size())
        if bits is not None and a.layout == torch.strided:  # -0.0 is not 0.0
            return bool(torch.equal(a.contiguous().view(bits), b.contiguous().view(bits)))
    return bool(torch.equal(a, b))


#: an integer type as wide as a float type, to compare floats bit by bit
_BITS = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _grad(t: torch.Tensor) -> torch.Tensor | None:
    if attr(t, "is_leaf") is True or t.retains_grad:
        return t.grad
    return None


def assert_same_tensor(name: str, a: torch.Tensor, b: torch.Tensor) -> None:
    assert same_tensor(a, b), f"{name}: values differ\nplain  {a}\ntraced {b}"
    assert a.requires_grad == b.requires_grad, name
    assert attr(a, "is_leaf") == attr(b, "is_leaf"), name
    assert a.retains_grad == b.retains_grad, name
    assert version(a) == version(b), f"{name}: version {version(a)} vs {version(b)}"
    fa, fb = attr(a, "grad_fn"), attr(b, "grad_fn")
    if fa is None or isinstance(fa, Raised) or fb is None or isinstance(fb, Raised):
        assert fa == fb, f"{name}: grad_fn {fa} vs {fb}"
    else:  # node classes of a custom Function differ per run: compare names
        assert fa.name() == fb.name(), name
    ga, gb = _grad(a), _grad(b)
    assert (ga is None) == (gb is None), f"{name}.grad: {ga} vs {gb}"
    if ga is not None and gb is not None:
        assert same_tensor(ga, gb), f"{name}.grad differs\nplain  {ga}\ntraced {gb}"


def assert_same_value(name: str, a: Any, b: Any) -> None:
    assert type(a) is type(b), f"{name}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        assert_same_tensor(name, a, b)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), name
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_value(f"{name}[{i}]", x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), name
    elif isinstance(a, (int, float, bool, str, type(None))):
        assert a == b, f"{name}: {a!r} vs {b!r}"


def assert_same_namespace(plain: dict[str, Any], traced: dict[str, Any]) -> None:
    pa = {k for k in plain if not k.startswith("__")}
    pb = {k for k in traced if not k.startswith("__")}
    assert pa == pb, f"names differ: {sorted(pa ^ pb)}"
    for k in sorted(pa):
        assert_same_value(k, plain[k], traced[k])
    # identity structure: two names share an object in one run iff they do in the other
    keys = sorted(pa)
    for i, k in enumerate(keys):
        for k2 in keys[i + 1:]:
            assert (plain[k] is plain[k2]) == (traced[k] is traced[k2]), f"aliasing of {k}, {k2} differs"


def assert_same_exception(a: BaseException | None, b: BaseException | None) -> None:
    assert type(a) is type(b), f"exception {a!r} vs {b!r}"
    if a is not None:
        assert str(a) == str(b), f"message:\n{a}\n{b}"


# ---------------------------------------------------- trace against oracle
def _steps_of(trace: Trace, stmt: ast.stmt) -> list[Step]:
    lo, hi = stmt.lineno, stmt.end_lineno or stmt.lineno
    return [s for s in trace.steps if lo <= s.lineno <= hi and s.frame == "<module>"]


def _tensor_names(slots: dict[str, Slot]) -> set[str]:
    return {k for k, s in slots.items() if s.is_tensor}


def check_trace_against_oracle(trace: Trace, oracle: list[OracleStep]) -> None:
    prev: Step | None = None
    for o in oracle:
        steps = _steps_of(trace, o.stmt)
        where = f"line {o.stmt.lineno}: {ast.unparse(o.stmt)[:80]!r}"
        assert steps, f"no step recorded for {where}"
        compound = isinstance(o.stmt, (ast.For, ast.While, ast.With, ast.If, ast.Try, ast.FunctionDef, ast.ClassDef))
        if not compound:
            assert len(steps) == 1, f"{len(steps)} steps for simple statement {where}"
        last = steps[-1]
        _check_bindings(last, o, where)
        inner = trace.steps[(prev.index + 1 if prev is not None else 0): last.index + 1]  # with called functions
        _check_binding_events(prev, steps, inner, o, compound, where)
        _check_mutations(inner, o, compound or len(inner) > len(steps), where)
        if o.exc is not None:
            errors = [e for s in inner for e in s.events_of("error")]
            assert errors, f"no error event at {where}"
            err = errors[-1]
            assert err.type == type(o.exc).__name__ and err.message == str(o.exc), where  # type: ignore[union-attr]
        else:
            assert not any(s.events_of("error") for s in steps), f"unexpected error event at {where}"
        prev = last


def _check_bindings(step: Step, o: OracleStep, where: str) -> None:
    names = _tensor_names(o.after)
    assert set(step.bindings) == names, f"bindings {sorted(step.bindings)} vs names {sorted(names)} at {where}"
    keys = sorted(names)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            same_obj = o.after[a].obj is o.after[b].obj
            same_id = step.bindings[a] == step.bindings[b]
            assert same_obj == same_id, f"{a} and {b}: same object {same_obj}, same id {same_id} at {where}"
        tid = step.bindings[a]
        info = step.tensors[tid]
        s = o.after[a]
        t = s.value
        assert t is not None
        # an inference tensor has no version counter; the model shows it as version 0 (caveat)
        want = 0 if s.version is None else s.version
        assert info.version == want, f"{a}: trace version {info.version} vs {s.version} at {where}"
        assert tuple(info.shape) == tuple(t.shape), where
        assert info.requires_grad == s.requires_grad, where
        got_fn = None if info.grad_fn is None else step.nodes[info.grad_fn].name
        if isinstance(s.grad_fn, Raised):  # torch cannot say: the trace must not invent one
            assert got_fn is None and not info.is_leaf, f"{a}: unreadable grad_fn drawn as {got_fn} at {where}"
        else:
            assert info.is_leaf == s.is_leaf, where
            assert got_fn == s.grad_fn, f"{a}: grad_fn {got_fn} vs torch {s.grad_fn} at {where}"
        if info.value.values is not None:
            got = torch.tensor(info.value.values, dtype=t.dtype)
            assert same_tensor(got.reshape(t.shape), t), f"{a}: recorded values differ at {where}"


def _check_binding_events(
    prev: Step | None, steps: list[Step], inner: list[Step], o: OracleStep, compound: bool, where: str
) -> None:
    """Module-level names: events of the statement's steps and of the functions it called."""
    before, after = o.before, o.after
    rebound = {
        k for k in _tensor_names(after) & _tensor_names(before) if after[k].obj is not before[k].obj
    }
    bound = _tensor_names(after) - _tensor_names(before)
    unbound = _tensor_names(before) - _tensor_names(after)
    events = [e for s in inner for e in s.events if "()." not in getattr(e, "name", "().")]
    got_rebind = {e.name for e in events if e.kind == "rebind"}  # type: ignore[union-attr]
    got_bind = {e.name for e in events if e.kind == "bind"}  # type: ignore[union-attr]
    got_unbind = {e.name for e in events if e.kind == "unbind"}  # type: ignore[union-attr]
    if compound:  # a loop may rebind a name on every pass: the net effect is a lower bound
        assert rebound <= got_rebind | got_bind, f"rebind {sorted(rebound)} vs {sorted(got_rebind)} at {where}"
        assert bound <= got_bind, f"bind {sorted(bound)} vs {sorted(got_bind)} at {where}"
        assert unbound <= got_unbind, f"unbind {sorted(unbound)} vs {sorted(got_unbind)} at {where}"
        return
    assert got_rebind == rebound, f"rebind events {sorted(got_rebind)}, oracle {sorted(rebound)} at {where}"
    assert got_bind == bound, f"bind events {sorted(got_bind)}, oracle {sorted(bound)} at {where}"
    assert got_unbind == unbound, f"unbind events {sorted(got_unbind)}, oracle {sorted(unbound)} at {where}"
    step = steps[-1]
    for e in events:
        if e.kind == "rebind":
            assert prev is not None and e.old == prev.bindings[e.name], where  # type: ignore[union-attr]
            assert e.new == step.bindings[e.name], where  # type: ignore[union-attr]


def _check_mutations(steps: list[Step], o: OracleStep, compound: bool, where: str) -> None:
    """Names that kept their object: a mutate event iff torch's ``_version`` moved, and an "unseen write"
    event (same version) only where the values changed behind the version counter."""
    kept = [
        k for k in _tensor_names(o.after) & _tensor_names(o.before) if o.after[k].obj is o.before[k].obj
    ]
    # detach_() and requires_grad_() change flags in place and leave _version alone
    events = [e for s in steps for e in s.events if e.kind == "mutate"
              and not (e.op in ("detach_", "requires_grad_") and e.version_before == e.version_after)]  # type: ignore[union-attr]
    unseen = [e for e in events if e.unseen]  # type: ignore[union-attr]
    events = [e for e in events if not e.unseen]  # type: ignore[union-attr]
    last = steps[-1]
    for k in kept:
        v0, v1 = o.before[k].version, o.after[k].version
        tid = last.bindings[k]
        mine = [e for e in events if e.tensor == tid]  # type: ignore[union-attr]
        if v0 == v1:
            assert not mine, f"{k}: mutate event but _version stayed {v0} at {where}"
            before, after = o.before[k].value, o.after[k].value
            if [e for e in unseen if e.tensor == tid] and before is not None and after is not None:  # type: ignore[union-attr]
                assert not torch.equal(before, after), f"{k}: 'unseen write' event but equal values at {where}"
            continue
        assert mine, f"{k}: _version {v0} -> {v1} but no mutate event at {where}"
        assert mine[0].version_before == v0, f"{k}: version_before {mine[0].version_before} vs {v0} at {where}"  # type: ignore[union-attr]
        assert mine[-1].version_after == v1, f"{k}: version_after {mine[-1].version_after} vs {v1} at {where}"  # type: ignore[union-attr]
        if not compound:
            assert len(mine) == 1, where


# ---------------------------------------------------------------- renderers
def landed_renderers() -> list[tuple[str, Any]]:
    """The renderers that exist in this checkout: (name, function of a trace)."""
    out: list[tuple[str, Any]] = []
    candidates = [
        ("gradtrace.render.text", "trace_text", False),
        ("gradtrace.render.json", "trace_json", False),
        ("gradtrace.render.html", "trace_html", False),
        ("gradtrace.render.dot", "step_dot", True),
    ]
    for module, name, per_step in candidates:
        try:
            fn = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        if per_step:
            out.append((name, lambda tr, fn=fn: [fn(s) for s in tr.steps]))
        else:
            out.append((name, fn))
    return out


def check_renderers(trace: Trace) -> None:
    for name, fn in landed_renderers():
        out = fn(trace)
        assert out, f"{name} gave nothing"


# ------------------------------------------------------------------- all
def check_program(source: str, renderers: bool = True, warnings_too: bool = True) -> Trace:
    """Run ``source`` plain, traced and statement by statement; assert they agree."""
    torch.set_grad_enabled(True)  # a failure of an earlier example must not leak into this one
    plain = run_plain(source)
    assert torch.is_grad_enabled(), "the plain run left grad mode off"
    traced = run_traced(source)
    assert torch.is_grad_enabled(), "the traced run left grad mode off"
    assert traced.trace is not None
    trace = traced.trace
    assert_same_namespace(plain.namespace, traced.namespace)
    if warnings_too:  # off only for torch's once-per-process warnings (the plain run used them up)
        assert plain.warns == traced.warns, f"warnings differ:\n{plain.warns}\n{traced.warns}"
    if plain.exc is None:
        assert trace.error is None, f"trace error {trace.error} but plain run succeeded"
    else:
        assert trace.error is not None, f"plain run raised {plain.exc!r}, trace has no error"
        assert trace.error.type == type(plain.exc).__name__
        assert trace.error.message == str(plain.exc)
    oracle = run_oracle(source)
    assert_same_exception(plain.exc, oracle[-1].exc if oracle else None)
    check_trace_against_oracle(trace, oracle)
    if renderers:
        check_renderers(trace)
    return trace


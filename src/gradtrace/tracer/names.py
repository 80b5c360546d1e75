"""The names of every scope, read incrementally (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

After each statement the tracer asks :class:`Names` which tensor each name shows:
the module's names, each running traced call's locals (under its label,
``fib().x``), and what containers show (``model.fc.weight``, ``xs[0]``,
``p.w``). A scope is read again only where it may have changed, and a value read
before is not looked into again; each name's tensor gets its id here.
"""

from __future__ import annotations

import collections
import dis
import inspect
import itertools
import operator
import types
import weakref
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from ..model import Step
from . import safe
from .ids import Ids

MAX_CONTAINER_ITEMS = 64

_Names = dict[str, str]


class _Source:
    """One scope's names (the module's, or one running function's), as last read."""

    __slots__ = ("containers", "entries", "found", "keys", "lasti", "names", "parts", "slots", "values")

    def __init__(self) -> None:
        self.keys: list[Any] | None = None
        #: the values as last read, held without keeping alive those that take a weak reference
        self.values = _Held([])
        self.lasti = -1
        #: (name, value, is a container read again every step) for each name shown (values as :func:`_hold` keeps them)
        self.entries: list[tuple[str, Any, bool]] = []
        self.containers = False
        self.names: dict[str, str] = {}
        #: name -> (value as :func:`_hold` keeps it, its type, its entries) as last read: an unchanged value is not
        #: looked at again
        self.parts: dict[str, tuple[Any, type, list[tuple[str, Any, bool]]]] = {}
        #: each key's entries, in the order of ``keys`` (None: some key is not a plain string)
        self.slots: list[list[tuple[str, Any, bool]]] | None = None
        #: what each container entry held when ``names`` was made (None: make ``names`` again)
        self.found: list[list[tuple[str, torch.Tensor]]] | None = None


class Names:
    """The names of every scope the program runs in, read incrementally (one per trace).

    :meth:`read` gives the bindings after a statement, and the per-scope bindings that
    changed. ``labels`` is the run driver's map of each running traced call to its label
    (``fib()#3``): a frame in it is a scope whose names are shown under that label.
    """

    def __init__(self, globals_ns: dict[str, Any] | None, ids: Ids, labels: dict[types.FrameType, str],
                 foreign: list[str], work: Counter[str]) -> None:
        self.globals_ns = globals_ns
        self.ids = ids
        self.labels = labels
        #: ids of named tensors whose memory torch did not allocate (the tracer's list: appended to here)
        self.foreign = foreign
        self.work = work
        self.globals_src = _Source()
        #: the labelled frames running at the last snapshot (outermost first), their positions, their names
        self.stack: list[types.FrameType] = []
        self.stack_pos: dict[types.FrameType, int] = {}
        self.sources: dict[types.FrameType, _Source] = {}
        #: a paused generator's names, by its frame's id (the frame itself is not kept: that would keep its
        #: locals alive): its code and the names it held. A frame of that id and code that then has all of these
        #: names is that generator resumed (a new call has bound only its arguments).
        self.paused_gens: dict[int, tuple[types.CodeType, dict[str, str]]] = {}
        self.cells: dict[types.CodeType, bool] = {}
        #: id(module) -> its tree as last listed, with its (name, tensor) pairs
        self.modules_seen: dict[int, _ModuleTree] = {}
        #: nothing cached to compare with (the first step, or recording stopped): every name is compared
        self.cold = True

    def release(self) -> None:
        """Recording stopped: drop the frames and values held for the name caches."""
        self.sources.clear()
        self.paused_gens.clear()
        self.stack.clear()
        self.stack_pos.clear()
        self.globals_src = _Source()
        self.modules_seen.clear()
        self.cold = True

    def scopes(self) -> set[str]:
        """The labels of the running calls whose names are shown."""
        labels = self.labels
        return {labels[f] for f in self.stack if f in labels}

    def read(self, frame: types.FrameType | None,
             prev: Step | None) -> tuple[dict[str, str], list[_Names], list[_Names]]:
        """The bindings, and the per-scope bindings that changed: before (old order) and now (new order).

        The module's names are read each step (compared by identity: a statement in any frame
        can rebind a global). A function's names are read when it is the running frame, when it
        ran since it was last read (``f_lasti`` moved: a call made mid-statement) or when its
        code shares cells with other code; otherwise they are as they were. Containers (lists,
        dicts, modules) are read again every step: any code can change them. ``prev``: the step before.
        """
        olds: list[dict[str, str]] = []
        news: list[dict[str, str]] = []
        changed = self._read_globals(olds, news)
        gone = self._leave_popped(self._restack(frame))
        changed = self._read_frames(frame, olds, news) or changed
        olds += gone
        if gone:
            changed = True
        if not changed and prev is not None and not self.cold:
            return prev.bindings, [], []  # type: ignore[return-value]
        bindings: dict[str, str] = {}
        if self.globals_ns is not None:
            bindings.update(self.globals_src.names)
        sources = self.sources
        for f in self.stack:
            bindings.update(sources[f].names)
        if self.cold:  # nothing cached to compare with: compare every name
            self.cold = False
            return bindings, [dict(prev.bindings)] if prev is not None else [], [bindings]
        return bindings, olds, news

    def _read_globals(self, olds: list[_Names], news: list[_Names]) -> bool:
        """The module's names, read again; True (and the names before and now noted) when they changed."""
        if self.globals_ns is None:
            return False
        g = self.globals_src
        before = g.names
        if self._refresh(g, self.globals_ns, "", True, None):
            olds.append(before)
            news.append(g.names)
            return True
        return False

    def _restack(self, frame: types.FrameType | None) -> list[types.FrameType]:
        """Bring the stack of labelled frames to ``frame``'s; the frames that left it (innermost last)."""
        stack, pos = self.stack, self.stack_pos
        labels = self.labels
        fresh = []
        keep = 0
        f = frame
        while f is not None:
            i = pos.get(f)
            if i is not None and not f.f_code.co_flags & _GENERATOR_FLAGS:
                keep = i + 1
                break
            if f in labels:
                fresh.append(f)
            f = f.f_back
        popped = stack[keep:]
        del stack[keep:]
        for p in popped:
            del pos[p]
        for p in reversed(fresh):
            pos[p] = len(stack)
            stack.append(p)
        return popped

    def _leave_popped(self, popped: list[types.FrameType]) -> list[_Names]:
        """The names of the frames that left the stack; a finished call's are dropped, a paused generator's kept."""
        sources, labels = self.sources, self.labels
        gone = []
        for p in popped:
            src = sources.get(p)
            if src is None:
                continue
            gone.append(src.names)
            if p not in labels:
                del sources[p]
                if p.f_code.co_flags & _GENERATOR_FLAGS and src.names:  # paused at a yield (or finished)
                    if len(self.paused_gens) >= _PAUSED_KEPT:
                        del self.paused_gens[next(iter(self.paused_gens))]
                    self.paused_gens[id(p)] = (p.f_code, src.names)
        return gone

    def _read_frames(self, frame: types.FrameType | None, olds: list[_Names], news: list[_Names]) -> bool:
        """Each labelled frame's names, read where they may have changed; True when any did."""
        sources, labels = self.sources, self.labels
        changed = False
        for f in self.stack:
            src = sources.get(f)
            held = None
            if src is None:
                src = sources[f] = _Source()
                paused = self.paused_gens.pop(id(f), None) if self.paused_gens else None
                if paused is not None and paused[0] is f.f_code:
                    held = paused[1]
            read = src.keys is None or f is frame or f.f_lasti != src.lasti or self._shares_cells(f.f_code)
            before = src.names
            if (read or src.containers) and self._refresh(src, None, labels[f] + ".", read, f):
                if held is not None and held.keys() <= src.names.keys():
                    before = held  # a generator resumed: it held these names while paused
                olds.append(before)
                news.append(src.names)
                changed = True
        return changed

    def _module_tensors(self, name: str, module: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
        """``name.param`` and ``name.buffer`` pairs of a module, listed again only when its tree changed."""
        seen = self.modules_seen.get(id(module))
        if seen is not None and seen.module is module and seen.name == name and seen.same():
            return seen.found
        found: list[tuple[str, torch.Tensor]] = []
        _collect_one(name, module, found)
        self.work["module listings"] += 1
        seen = _ModuleTree.of(module, name, found)
        if seen is not None:
            self.modules_seen[id(module)] = seen
        else:
            self.modules_seen.pop(id(module), None)
        return found

    def _forget_modules(self, old: list[Any], new: list[Any]) -> None:
        """Modules a scope named and names no more: their listed trees are dropped, so a model the program
        deletes dies with its weights as without tracing (a module still named elsewhere is listed again)."""
        def modules(entries: list[Any]) -> dict[int, Any]:
            out = {}
            for _name, value, container in entries:
                if container:
                    value = value() if type(value) is _Ref else value
                    if value is not None:
                        out[id(value)] = value
            return out

        kept = modules(new)
        for key in modules(old):
            if key not in kept:
                self.modules_seen.pop(key, None)

    def _shares_cells(self, code: types.CodeType) -> bool:
        """True when code run in another frame can rebind this code's locals (closures, ``nonlocal``;
        on 3.12+ also an inlined comprehension, whose loop rebinds locals within one statement)."""
        found = self.cells.get(code)
        if found is None:
            found = bool(code.co_cellvars or code.co_freevars) or (
                _INLINED is not None and _INLINED in code.co_code[::2])
            self.cells[code] = found
        return found

    def _refresh(self, src: _Source, ns: dict[str, Any] | None, prefix: str, read: bool,
                 frame: types.FrameType | None) -> bool:
        """Bring one scope's names up to date; True when they changed."""
        if read:
            done = self._read_values(src, ns, prefix, frame)
            if done is not None:
                return done
        elif not src.containers:
            return False
        return self._read_containers(src)

    def _read_values(self, src: _Source, ns: dict[str, Any] | None, prefix: str,
                     frame: types.FrameType | None) -> bool | None:
        """Read the scope's names and values again: whether its names changed, or None when only its
        containers are left to read."""
        if frame is not None:
            ns = frame.f_locals
            src.lasti = frame.f_lasti
        self.work["frames"] += 1
        try:
            keys, values = list(ns), list(ns.values())  # type: ignore[arg-type, union-attr]
        except Exception:
            keys, values = [], []
        same_keys = src.keys is not None and len(keys) == len(src.keys) and keys == src.keys
        moved = src.values.moved(values) if same_keys else None
        if moved is not None and not moved:
            return None if src.containers else False
        if moved and _only_plain_values_moved(keys, values, moved, src):
            return self._refresh(src, ns, prefix, False, None)  # the containers, if any
        if moved and src.slots is not None:  # only the values that moved are looked at
            entries, rebound = self._moved_entries(src, keys, values, moved, prefix)
            if rebound and src.found is not None and all(n in src.names for n, _v, _c in rebound) \
                    and not _same_pairs(entries, src.entries):
                src.entries = entries  # the same names, some of them of other tensors
                return self._rebind(src, prefix, rebound)
        else:
            src.values = _Held(values)
            src.keys = keys
            slots: list[list[tuple[str, Any, bool]]] = []
            entries = _entries(ns, prefix, src.parts, slots)
            self.work["names read"] += len(slots)
            src.slots = slots if len(slots) == len(keys) and all(type(k) is str for k in keys) else None
        if not _same_pairs(entries, src.entries):
            if src.entries and self.modules_seen:
                self._forget_modules(src.entries, entries)
            src.entries = entries
            src.containers = any(c for _n, _v, c in entries)
            src.found = None
        elif not src.containers:
            return False  # only names that show no tensor changed (a loop counter)
        return None

    def _moved_entries(self, src: _Source, keys: list[Any], values: list[Any], moved: list[int], prefix: str,
                       ) -> tuple[list[tuple[str, Any, bool]], list[tuple[str, Any, bool]] | None]:
        """The scope's entries with those of the values that moved read again, and those values' entries
        when each shows the names it showed before and no container (else None)."""
        slots = src.slots
        assert slots is not None
        src.values = src.values.update(values, moved)
        parts = src.parts
        rebound: list[tuple[str, Any, bool]] | None = []
        for i in moved:
            name, value = safe.clean(keys[i]), values[i]
            part = _entries_of(name, value, prefix)
            if rebound is not None:
                rebound = rebound + part if _same_names(part, slots[i]) else None
            slots[i] = part
            parts[name] = (_hold(value), type(value), part)
        entries = list(_chain(slots))
        self.work["names read"] += len(moved)
        return entries, rebound

    def _read_containers(self, src: _Source) -> bool:
        """Read the scope's containers again; True when its names changed."""
        found: list[list[tuple[str, torch.Tensor]]] = []
        for name, value, container in src.entries:
            if not container:
                continue
            held: list[tuple[str, torch.Tensor]] = []
            if type(value) is _Ref:
                value = value()
                if value is None:  # gone with its name: the names are read again when the scope's values change
                    found.append(held)
                    continue
            try:
                if safe.is_a(value, torch.nn.Module):
                    held = self._module_tensors(name, value)
                else:
                    _collect_one(name, value, held)
            except Exception:  # a container that cannot be read shows no tensors; the trace goes on
                held = []
            found.append(held)
        old = src.found
        if old is not None and len(old) == len(found) \
                and all(a is b or _same_pairs(a, b) for a, b in zip(old, found, strict=True)):
            return False  # the same names of the same tensors
        src.found = found
        self.work["names made"] += 1
        return self._name_all(src, found)

    def _name_all(self, src: _Source, found: list[list[tuple[str, torch.Tensor]]]) -> bool:
        """The scope's names made again from its entries (``found``: what each container showed)."""
        names: dict[str, str] = {}
        stamp, foreign = self.ids.stamp, self.foreign
        held_by = iter(found)
        for name, value, container in src.entries:
            for n, t in next(held_by) if container else ((name, value() if type(value) is _Ref else value),):
                if t is None:
                    continue
                tid, new = stamp(t)
                names[n] = tid
                if new and _foreign_memory(t):
                    foreign.append(tid)
        if names == src.names:
            return False
        src.names = names
        return True

    def _rebind(self, src: _Source, prefix: str, rebound: list[tuple[str, Any, bool]]) -> bool:
        """The scope's names after ``rebound`` names (each shown before, no container's before or now) took
        other tensors: the names as they were with those changed, when the containers show what they showed
        (else made again). True when they changed."""
        if src.containers:
            found = src.found
            if self._refresh(src, None, prefix, False, None):  # the containers changed: names made again
                return True
            if src.found is not found:  # (made again, and the same as before)
                return False
        names = dict(src.names)
        stamp, foreign = self.ids.stamp, self.foreign
        for n, value, _c in rebound:
            t = value() if type(value) is _Ref else value
            if t is None:  # (held by the namespace: alive)
                continue
            tid, new = stamp(t)
            names[n] = tid
            if new and _foreign_memory(t):
                foreign.append(tid)
        self.work["names rebound"] += len(rebound)
        if names == src.names:
            return False
        src.names = names
        return True


# ------------------------------------------------------------------ helpers
#: names a notebook shell keeps for itself (``Out`` holds every displayed result)
_SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit"})


_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
#: how many paused generators' names are kept for their resumption (the oldest goes first)
_PAUSED_KEPT = 256
#: the opcode of a comprehension inlined in its function (3.12+), whose loop rebinds the function's locals
_INLINED = dis.opmap.get("LOAD_FAST_AND_CLEAR")


def _entries(ns: Any, prefix: str, parts: dict[str, tuple[Any, type, list[tuple[str, Any, bool]]]],
             slots: list[list[tuple[str, Any, bool]]]) -> list[tuple[str, Any, bool]]:
    """The names of a namespace that show tensors: ``(name, value, True for a container)``.

    ``parts`` keeps each name's entries as last read, by value: a value read before (the same object
    of the same type) is not read again; it is brought up to date with the namespace. ``slots`` gets
    each name's entries, in the namespace's order."""
    # every read is defensive (see .safe): a learner's namespace may hold anything
    out: list[tuple[str, Any, bool]] = []
    now: dict[str, tuple[Any, type, list[tuple[str, Any, bool]]]] = {}
    for name, value in safe.name_items(ns):
        hit = parts.get(name)
        if hit is not None and _is_held(hit[0], value) and hit[1] is type(value):
            now[name] = hit
            out += hit[2]
            slots.append(hit[2])
            continue
        part = _entries_of(name, value, prefix)
        now[name] = (_hold(value), type(value), part)
        out += part
        slots.append(part)
    parts.clear()
    parts.update(now)
    return out


def _only_plain_values_moved(keys: list[Any], values: list[Any], moved_at: list[int], src: _Source) -> bool:
    """True when the names whose values changed show no tensor, before or after (a loop counter):
    their entries are brought up to date, and the scope's entries stay as they are."""
    parts = src.parts
    moved = []
    held = src.values
    for i in moved_at:
        key, now = keys[i], values[i]
        if type(key) is not str:
            return False
        hit = parts.get(key)
        if hit is None or hit[2] or safe.is_a(now, _SHOWING) or safe.is_learner_object(now):
            return False
        moved.append((i, key, now))
    whole = False
    for i, key, now in moved:
        parts[key] = (_hold(now), type(now), [])
        whole = whole or not held.put(i, now)
    if whole:  # a value that takes a weak reference moved: hold them all again
        src.values = _Held(values)
    return True


class _Ref(weakref.ref[Any]):
    """A weak reference of the name cache (its own type: a learner's weak reference held as a value is a value)."""

    __slots__ = ()


_deref = weakref.ref.__call__


def _hold(value: Any) -> Any:
    """``value`` as the name cache keeps it: a weak reference where it takes one, else itself.

    A strong reference would keep a rebound value alive until the next step, so its ``__del__`` or
    weak reference finalizer would run inside the tracer, not at the rebinding statement
    (``sys.getrefcount`` would count it too). Values that take no weak reference (numbers, strings,
    tuples, lists, dicts) are kept as they are."""
    return _Ref(value) if type(value).__weakrefoffset__ else value


def _is_held(held: Any, value: Any) -> bool:
    """True when ``held`` (from :func:`_hold`) is ``value``."""
    return held is value or (type(held) is _Ref and value is not None and held() is value)


class _Held:
    """A scope's values as last read, compared with the values now at a few C-level passes.

    Values that take a weak reference are held weakly (see :func:`_hold`), the others as they are.
    (No ``id()``: each call of it is an audit event, and an audit hook may be Python code.)"""

    __slots__ = ("pick_strong", "pick_weak", "pos", "refs", "size", "strong", "strong_at", "weak", "weak_at")

    def __init__(self, values: list[Any]) -> None:
        self.size = len(values)
        self.refs: list[_Ref | None] = [_Ref(v) if type(v).__weakrefoffset__ else None for v in values]
        weak_at = [i for i, r in enumerate(self.refs) if r is not None]
        strong_at = [i for i, r in enumerate(self.refs) if r is None]
        self.weak: list[_Ref] = [r for r in self.refs if r is not None]
        self.strong = [values[i] for i in strong_at]
        #: each value's place in ``weak`` or ``strong``
        self.pos = [0] * len(values)
        for k, i in enumerate(weak_at):
            self.pos[i] = k
        for k, i in enumerate(strong_at):
            self.pos[i] = k
        # (each index twice: one index alone would give the value, not a tuple; the comparisons stop at the end
        # of ``weak`` or ``strong``)
        self.pick_weak = _picker(weak_at)
        self.pick_strong = _picker(strong_at)
        self.weak_at, self.strong_at = weak_at, strong_at

    def same(self, values: list[Any]) -> bool:
        """True when ``values`` are the objects held, in order."""
        if len(values) != self.size or not all(map(operator.is_, self.pick_strong(values), self.strong)):
            return False
        now = self.pick_weak(values)  # (a dead reference gives None: None where one was is a new value)
        return all(map(operator.is_, now, map(_deref, self.weak))) and all(map(operator.is_not, now, _NONES))

    def moved(self, values: list[Any]) -> list[int]:
        """The places (in order) where ``values`` (as many as held) are not the objects held: found at C-level
        passes (a Python loop over a module's names would cost more than the rest of a step)."""
        now = self.pick_strong(values)
        out = list(_compress(self.strong_at, map(operator.is_not, now, self.strong)))
        now = self.pick_weak(values)  # a dead reference gives None: None where one was is a new value
        out += _compress(self.weak_at, map(operator.is_not, now, map(_deref, self.weak)))
        out += _compress(self.weak_at, map(operator.is_, now, _NONES))
        if len(out) > 1:
            out = sorted(set(out))
        return out

    def holds(self, i: int, value: Any) -> bool:
        """True when ``value`` is the ``i``-th value held."""
        ref = self.refs[i]
        return self.strong[self.pos[i]] is value if ref is None else value is not None and ref() is value

    def put(self, i: int, value: Any) -> bool:
        """Hold ``value`` in place of the ``i``-th value when both or neither take a weak reference; False
        otherwise (the values are then held again as a whole)."""
        weak = self.refs[i] is not None
        if weak != bool(type(value).__weakrefoffset__):
            return False
        if weak:
            self.refs[i] = self.weak[self.pos[i]] = _Ref(value)
        else:
            self.strong[self.pos[i]] = value
        return True

    def update(self, values: list[Any], moved: list[int]) -> _Held:
        """This, holding ``values`` (the same number of values) in place of those held, or a new one;
        ``moved``: the places of the values that moved (see :meth:`moved`)."""
        whole = False
        for i in moved:
            whole = whole or not self.put(i, values[i])
        return _Held(values) if whole else self


_NONES = itertools.repeat(None)
_compress = itertools.compress


def _picker(at: list[int]) -> Callable[[list[Any]], Any]:
    return operator.itemgetter(*at, *at) if at else _nothing


def _nothing(_values: list[Any]) -> tuple[()]:
    return ()


#: values that may show tensors (anything else shows none: a number, a string, a function)
_SHOWING = (torch.Tensor, tuple, list, dict, torch.nn.Module)


def _entries_of(name: str, value: Any, prefix: str) -> list[tuple[str, Any, bool]]:
    if name.startswith("_") or (not prefix and name in _SHELL_NAMES):
        return []
    full = prefix + name
    if safe.is_a(value, torch.Tensor):
        return [] if safe.is_lazy(value) else [(full, _hold(value), False)]
    if safe.is_a(value, tuple) and not any(safe.is_learner_object(v) for v in value[:MAX_CONTAINER_ITEMS]):
        found: list[tuple[str, torch.Tensor]] = []  # cannot change: read once
        try:
            _collect_one(full, value, found)
        except Exception:
            return []
        return [(n, _hold(t), False) for n, t in found]
    if safe.is_a(value, (torch.nn.Module, list, tuple, dict)) or safe.is_learner_object(value):
        return [(full, _hold(value), True)]  # (a tuple of objects: their attributes may change)
    return []


def _same_names(a: list[tuple[str, Any, bool]], b: list[tuple[str, Any, bool]]) -> bool:
    """The same names in the same order, none of them a container's."""
    return len(a) == len(b) and all(x[0] == y[0] and not x[2] and not y[2] for x, y in zip(a, b, strict=True))


def _same_pairs(a: list[Any], b: list[Any]) -> bool:
    """The same names of the same objects (by identity: a tensor's ``==`` is not a plain answer)."""
    return len(a) == len(b) and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b, strict=True))


#: how deep the learner's own objects are looked into: ``mlp.layers[0].W`` (an object, a list, an object)
MAX_OBJECT_DEPTH = 3


def _collect_one(name: str, value: Any, out: list[tuple[str, torch.Tensor]], depth: int = 0) -> None:
    """The tensors ``value`` shows under ``name``: itself, a module's parameters and buffers, a list's or
    dict's items, a learner object's attributes (``p.w``; the objects, modules and lists in them too, down to
    :data:`MAX_OBJECT_DEPTH`). A module in an object is listed afresh each time: a listing kept for it
    would keep it alive after the object is gone."""
    if safe.is_a(value, torch.Tensor):
        if not safe.is_lazy(value):
            out.append((name, value))
    elif safe.is_a(value, torch.nn.Module):
        for pname, p in safe.named_parameters(value):
            out.append((f"{name}.{pname}", p))
        for bname, b in safe.named_buffers(value):  # running statistics, register_buffer
            out.append((f"{name}.{bname}", b))
    elif safe.is_a(value, (list, tuple)):
        _collect_items(name, value, out, depth)
    elif safe.is_a(value, dict):
        for i, (key, item) in enumerate(list(value.items())):
            if i >= MAX_CONTAINER_ITEMS:
                break
            if safe.is_a(item, torch.Tensor) and safe.is_a(key, (str, int)) and not safe.is_lazy(item):
                out.append((f"{name}[{safe.safe_repr(key)}]", item))
    elif depth < MAX_OBJECT_DEPTH and safe.is_learner_object(value):
        for attr, item in safe.object_items(value)[:MAX_CONTAINER_ITEMS]:
            if safe.is_a(item, (torch.Tensor, torch.nn.Module, list, tuple, dict)) or safe.is_learner_object(item):
                _collect_one(f"{name}.{safe.clean(attr)}", item, out, depth + 1)


def _collect_items(name: str, value: list[Any] | tuple[Any, ...], out: list[tuple[str, torch.Tensor]],
                   depth: int) -> None:
    """:func:`_collect_one` of a list or tuple: its tensors (a namedtuple's by field name), and the learner's
    objects in it (``layers = [Linear(2, 3), ...]``)."""
    fields = _fields_of(value)
    for i, item in enumerate(list(value[:MAX_CONTAINER_ITEMS])):
        label = f"{name}.{fields[i]}" if i < len(fields) else f"{name}[{i}]"
        if safe.is_a(item, torch.Tensor):
            if not safe.is_lazy(item):
                out.append((label, item))
        elif depth < MAX_OBJECT_DEPTH and safe.is_learner_object(item):
            _collect_one(label, item, out, depth + 1)


def _fields_of(value: Any) -> tuple[str, ...]:
    """A namedtuple's field names (its tensors are named as the learner reads them: ``p.w``); else ``()``.

    Read from the classes' own dicts: no attribute lookup that could run the program's code."""
    if not safe.is_a(value, tuple) or type(value) is tuple:
        return ()
    for klass in type(value).__mro__:
        fields = vars(klass).get("_fields")
        if fields is not None:
            ok = type(fields) is tuple and all(type(f) is str and f.isidentifier() for f in fields)
            return fields if ok else ()
    return ()


_MODULE_LISTING = (torch.nn.Module.named_parameters, torch.nn.Module.named_buffers, torch.nn.Module.named_modules,
                   torch.nn.Module._named_members)
#: the three dicts of a module's ``__dict__`` that ``named_parameters()`` and ``named_buffers()`` list
_TREE_FIELDS = operator.itemgetter("_parameters", "_buffers", "_modules")
_values = dict.values


_LISTING_NAMES = ["named_parameters", "named_buffers", "named_modules", "_named_members"]


def _listing(cls: type) -> tuple[Any, ...]:
    return (cls.named_parameters, cls.named_buffers, cls.named_modules, cls._named_members)  # type: ignore[attr-defined]


class _ModuleTree:
    """A module's tree as listed: its submodules, their parameter, buffer and submodule dicts (in their
    ``__dict__``), and those dicts' keys, values and the values' types (a lazy parameter changes class when it
    gets its shape).

    :meth:`same` tells, in a few C-level passes over these, that ``named_parameters()`` and
    ``named_buffers()`` would list the same as when :attr:`found` was made. A module class that lists
    its own way is never cached (:meth:`of` gives None)."""

    __slots__ = ("classes", "fields", "found", "keys", "listing", "module", "modules", "name", "names", "owners",
                 "types", "values")

    def __init__(self, module: torch.nn.Module, name: str, found: list[tuple[str, torch.Tensor]]) -> None:
        self.module, self.name, self.found = module, name, found
        self.modules: list[Any] = []
        self.classes: list[type] = []
        #: each class four times, and the four methods that list (the base's: checked when listed)
        self.owners: list[type] = []
        self.names: list[str] = []
        self.listing: list[Any] = []
        self.fields: list[Any] = []
        self.keys: list[Any] = []
        self.values: list[Any] = []
        self.types: list[type] = []

    @classmethod
    def of(cls, module: torch.nn.Module, name: str, found: list[tuple[str, torch.Tensor]]) -> _ModuleTree | None:
        tree = cls(module, name, found)
        todo = [module]
        seen: set[int] = set()
        try:
            while todo:
                m = todo.pop()
                if id(m) in seen:
                    continue
                seen.add(id(m))
                tree.modules.append(m)
                todo.extend(v for v in vars(m)["_modules"].values() if v is not None)
            tree.classes = list(dict.fromkeys(map(type, tree.modules)))
            if any(_listing(c) != _MODULE_LISTING for c in tree.classes):
                return None
            tree.owners = [c for c in tree.classes for _ in _LISTING_NAMES]
            tree.names = _LISTING_NAMES * len(tree.classes)
            tree.listing = list(_MODULE_LISTING) * len(tree.classes)
            tree.fields = list(_chain(map(_TREE_FIELDS, map(vars, tree.modules))))
            if not all(type(d) in _PLAIN_DICTS for d in tree.fields):
                return None
            tree.values = list(_chain(map(_values, tree.fields)))
        except Exception:
            return None
        tree.keys = list(_chain(tree.fields))
        tree.types = list(map(type, tree.values))
        return tree

    def same(self) -> bool:
        """True when nothing that the listing depends on changed since (a few C-level passes, no list of
        pairs: each pass stops at the first difference)."""
        try:  # (a __dict__ replaced as a whole shows as its three dicts replaced)
            fields = list(_chain(map(_TREE_FIELDS, map(vars, self.modules))))
        except Exception:
            return False
        if not _all_is(fields, self.fields):  # ``_parameters`` (or another of the three) replaced
            return False
        values = list(_chain(map(_values, fields)))
        # (an entry added or removed changes how many values there are)
        return (type(self.module) is self.classes[0] and _all_is(values, self.values)
                and all(map(operator.is_, _chain(fields), self.keys))
                and all(map(operator.is_, map(type, values), self.types))
                and all(map(operator.is_, map(getattr, self.owners, self.names), self.listing)))


_PLAIN_DICTS = (dict, collections.OrderedDict)
_chain = itertools.chain.from_iterable


def _all_is(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


def _foreign_memory(t: torch.Tensor) -> bool:
    """True when ``t``'s memory belongs to NumPy or a buffer (torch cannot resize it)."""
    try:
        return not t.untyped_storage().resizable()
    except Exception:
        return False

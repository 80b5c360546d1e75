"""What changed between two steps, as events (tracer layer; pure: plain data in, events out).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

The tracer reads the live objects and hands these functions ids and records only:
the names before and after, the tensors' infos before and after (for the ids the
statement touched), the in-place calls it heard and the versions that moved. No
torch here: the events of a step can be computed (and tested) from plain data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..model import UNSEEN_WRITE, Bind, Event, Grad, GradChange, Mutate, Rebind, Summary, TensorInfo, Unbind

#: in-place calls that change a tensor's autograd flags and leave its version alone
FLAG_OPS = frozenset({"detach_", "requires_grad_"})

_Infos = Callable[[str], "TensorInfo | None"]


def _num(xid: str) -> int:
    return int(xid[1:])


_new = object.__new__


def make_mutate(tensor: str, version_before: int, version_after: int, grad_fn_before: str | None,
                grad_fn_after: str | None, stale: tuple[tuple[str, str], ...] = (), via: str | None = None,
                op: str = "", values_kept: bool = False) -> Mutate:
    """``Mutate(...)`` made without the frozen dataclass's per-field ``__setattr__`` (a step may make many):
    the same object the constructor makes (a test compares them). So are the two below."""
    event = _new(Mutate)
    event.__dict__.update(tensor=tensor, version_before=version_before, version_after=version_after,
                          grad_fn_before=grad_fn_before, grad_fn_after=grad_fn_after, stale=stale, via=via, op=op,
                          values_kept=values_kept)
    return event


def make_grad_change(tensor: str, before: Summary | None, after: Summary | None) -> GradChange:
    change = _new(GradChange)
    change.__dict__.update(tensor=tensor, before=before, after=after)
    return change


def make_grad(change: GradChange) -> Grad:
    event = _new(Grad)
    event.__dict__["change"] = change
    return event


def scope_of(name: str) -> str:
    """``fib()#3`` for ``fib()#3.a``, ``f()`` for ``f().xs[0]``, ``""`` for a module-level name."""
    i = name.find("().")
    j = name.find("()#")
    if i < 0 and j < 0:
        return ""
    if j < 0 or 0 <= i < j:
        return name[: i + 2]
    k = j + 3
    while k < len(name) and name[k].isdigit():
        k += 1
    return name[:k]


def binding_events(
    prev: Mapping[str, str], bindings: Mapping[str, str], olds: list[dict[str, str]], news: list[dict[str, str]],
    held_by_nodes: Callable[[str], tuple[str, ...]], live_scopes: Callable[[], set[str]],
) -> list[Event]:
    """Bind, Rebind, Unbind for the scopes whose names changed (``olds``: as they were, ``news``: now).

    ``prev`` and ``bindings`` are all names before and now; ``held_by_nodes(tid)`` the shown nodes
    holding a tensor; ``live_scopes()`` the labels of the functions still running (their names
    that went away were deleted; a returned function's names go with it, silently).
    """
    if not olds and not news:
        return []

    def holders(tid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(n for n, t in bindings.items() if t == tid), held_by_nodes(tid)

    out: list[Event] = []
    for i, scope in enumerate(news):
        own = olds[i] if i < len(olds) else {}  # the scope's names as last read (``news[i]``'s pair)
        for name, tid in scope.items():
            old = prev.get(name)
            if old is None:
                if own.get(name) == tid:  # a generator resumed: its names were held while it was paused
                    continue
                out.append(Bind(name, tid))
            elif old != tid:
                out.append(Rebind(name, old, tid, *holders(old)))
    live: set[str] | None = None
    for scope in olds:
        for name, old in scope.items():
            if name in bindings or prev.get(name) != old:
                continue
            label = scope_of(name)
            if label:
                if live is None:
                    live = live_scopes()
                if label not in live:
                    continue  # the function returned: its names went with it
            out.append(Unbind(name, old, *holders(old)))
    return out


def mutate_events(
    mutated: list[tuple[str, int, int]], direct: dict[str, str], before: _Infos, tensors: Mapping[str, TensorInfo],
    changed: Iterable[str], stale: Callable[[str, int], tuple[tuple[str, str], ...]],
    shares: Callable[[str, str], bool] | None = None, unseen_op: str = UNSEEN_WRITE,
    made_from: Mapping[str, str | None] | None = None,
) -> list[Event]:
    """Mutate events: ``(tid, version before, now)`` for the versions that moved, ``direct`` the tensors the
    statement's in-place calls were made on (id -> the call), ``before(tid)`` a tensor's info at the step
    before, ``tensors`` now, ``changed`` the tensors whose info is new (a value written behind the version
    counter shows there), ``stale(tid, version)`` the saved values the change made stale, ``shares(tid, other)``
    whether two tensors share memory (a change is told as made through ``other`` only then), ``unseen_op`` the
    ``op`` of a change with no version bump (another one while torch is inside an op: see ``IN_OP_WRITE``),
    ``made_from`` the node each tensor the step made had before the step changed it (it has no info at the step
    before)."""
    out: list[Event] = []
    for tid, v0, v1 in mutated:
        info = tensors.get(tid)
        was = before(tid)
        via = None
        if direct and tid not in direct:
            via = next((d for d in direct if shares is None or shares(tid, d)), None)
        out.append(
            make_mutate(
                tid,
                v0,
                v1,
                (made_from or {}).get(tid) if was is None else was.grad_fn,
                None if info is None else info.grad_fn,
                stale(tid, v1),
                via,
                direct.get(tid, direct.get(via, "") if via else ""),
                via is not None and _same_values(was, info),
            )
        )
    done = {tid for tid, _v0, _v1 in mutated}
    for tid, op in direct.items():  # in place on the flags, not the values: no version bump
        was, now = before(tid), tensors.get(tid)
        if tid in done or op not in FLAG_OPS or was is None or now is None:
            continue
        if (was.grad_fn, was.requires_grad) != (now.grad_fn, now.requires_grad):
            out.append(make_mutate(tid, was.version, now.version, was.grad_fn, now.grad_fn, op=op))
            done.add(tid)
    done.update(direct)
    for tid in sorted((x for x in changed if x[0] == "t"), key=_num):
        # new values, same version: .data =, set_, NumPy, an alias
        was, now = before(tid), tensors.get(tid)
        if now is None:
            continue
        if was is None or now is was or tid in done or now.version != was.version or now.value is was.value \
                or now.value == was.value or now.value.text == was.value.text:  # NaN != NaN: equal as shown is equal
            continue
        out.append(make_mutate(tid, was.version, now.version, was.grad_fn, now.grad_fn, op=unseen_op))
    return out


def _same_values(was: TensorInfo | None, now: TensorInfo | None) -> bool:
    """Both infos hold every element (a small tensor) and the elements are the same (NaN equal to NaN)."""
    if was is None or now is None or was.value is None or now.value is None:
        return False
    a, b = was.value.values, now.value.values
    return a is not None and b is not None and _equal(a, b)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b or (a != a and b != b))  # NaN == NaN here: an unchanged NaN is unchanged


def grad_changes(touched: Iterable[str], before: _Infos, tensors: Mapping[str, TensorInfo]) -> list[GradChange]:
    """How ``.grad`` changed for the ``touched`` tensors shown now (id order)."""
    changes = []
    for tid in sorted({x for x in touched if x[0] == "t" and x in tensors}, key=_num):
        info = tensors[tid]
        old = before(tid)
        was = None if old is None else old.grad
        if was is not info.grad and was != info.grad and (old is not None or info.grad is not None):
            changes.append(make_grad_change(tid, was, info.grad))
    return changes

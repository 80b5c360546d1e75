"""The events of a step from plain data (tracer/events.py takes ids and records, never torch objects)."""

from __future__ import annotations

import ast
from pathlib import Path

from gradtrace.model import UNSEEN_WRITE, Bind, GradChange, Mutate, Rebind, Summary, TensorInfo, Unbind
from gradtrace.tracer import events


def _info(tid: str, version: int = 0, value: str = "1.", grad: str | None = None, fn: str | None = None) -> TensorInfo:
    return TensorInfo(tid, (1,), "float32", "cpu", True, fn is None, False, version, fn, None, Summary(value),
                      None if grad is None else Summary(grad))


def test_the_events_module_imports_no_torch() -> None:
    tree = ast.parse(Path(events.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any("torch" in m for m in imported), imported


def test_names_bound_rebound_and_deleted() -> None:
    prev = {"a": "t1", "b": "t2", "f().c": "t3", "g().d": "t4"}
    now = {"a": "t5", "e": "t2"}
    out = events.binding_events(prev, now, [{"a": "t1", "b": "t2"}, {"f().c": "t3"}, {"g().d": "t4"}],
                                [now], lambda tid: ("n1",) if tid == "t2" else (), lambda: {"g()"})
    # f() returned: its names go silently; g() still runs: its name was deleted
    assert out == [Rebind("a", "t1", "t5", (), ()), Bind("e", "t2"), Unbind("b", "t2", ("e",), ("n1",)),
                   Unbind("g().d", "t4", (), ())]


def test_mutations_in_place_through_flags_and_behind_the_counter() -> None:
    before = {"t1": _info("t1", 0), "t2": _info("t2", 3, "2."), "t3": _info("t3", 1, "5.")}
    now = {"t1": _info("t1", 1, "9.", fn="n4"), "t2": _info("t2", 3, "7."), "t3": _info("t3", 1, "5.")}
    out = events.mutate_events([("t1", 0, 1)], {"t1": "mul_"}, before.get, now, ["t3", "t2", "t1"],
                               lambda tid, _v: (("n2", "self"),) if tid == "t1" else ())
    assert out == [Mutate("t1", 0, 1, None, "n4", (("n2", "self"),), None, "mul_"),
                   Mutate("t2", 3, 3, None, None, op=UNSEEN_WRITE)]


def test_grads_that_changed() -> None:
    before = {"t1": _info("t1", grad="1."), "t2": _info("t2", grad="2.")}
    now = {"t1": _info("t1", grad="3."), "t2": _info("t2", grad="2."), "t3": _info("t3", grad="4.")}
    assert events.grad_changes(["t3", "t2", "t1", "n1"], before.get, now) == [
        GradChange("t1", Summary("1."), Summary("3.")), GradChange("t3", None, Summary("4."))]


def test_events_made_fast_are_the_objects_the_constructors_make() -> None:
    from gradtrace.model import Grad

    pairs = [
        (events.make_mutate("t1", 0, 1, None, "n4", (("n2", "self"),), "t2", "mul_"),
         Mutate("t1", 0, 1, None, "n4", (("n2", "self"),), "t2", "mul_")),
        (events.make_mutate("t2", 3, 3, "n1", None, op=UNSEEN_WRITE), Mutate("t2", 3, 3, "n1", None, op=UNSEEN_WRITE)),
        (events.make_grad_change("t1", None, Summary("3.")), GradChange("t1", None, Summary("3."))),
        (events.make_grad(GradChange("t1", Summary("1."), None)), Grad(GradChange("t1", Summary("1."), None))),
    ]
    for fast, made in pairs:
        assert type(fast) is type(made) and fast == made and vars(fast) == vars(made)
        assert repr(fast) == repr(made) and hash(fast) == hash(made)
        assert getattr(fast, "kind", None) == getattr(made, "kind", None)

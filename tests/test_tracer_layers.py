"""Steps share structure (issue 9): a step's tensors and nodes are the step before's plus its changes.

:class:`~gradtrace.tracer.layers.Layered` builds each step's plain mapping on first read; these
tests check it against plain dict copies, the way every step was stored before it.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtrace
from gradtrace.tracer import layers
from gradtrace.tracer.layers import Layered

# each operation: ("put", id number, value) or ("drop", id number); a step ends at ("step",)
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(1, 40), st.integers(0, 5)),
        st.tuples(st.just("drop"), st.integers(1, 40)),
        st.tuples(st.just("step")),
    ),
    max_size=120,
)


def _sorted(d: dict[str, Any]) -> dict[str, Any]:
    return dict(sorted(d.items(), key=lambda kv: int(kv[0][1:])))


@settings(max_examples=200, deadline=None)
@given(_ops, st.randoms(use_true_random=False))
def test_each_layer_reads_as_the_copy_it_replaces(ops: list[tuple[Any, ...]], rnd: Any) -> None:
    live: dict[str, int] = {}
    touched: list[str] = []
    views: list[Layered[int]] = []
    copies: list[dict[str, int]] = []
    prev: Layered[int] | None = None
    for op in [*ops, ("step",)]:
        if op[0] == "put":
            key = f"n{op[1]}"
            live[key] = op[2]
            touched.append(key)
        elif op[0] == "drop":
            key = f"n{op[1]}"
            if live.pop(key, None) is not None:
                touched.append(key)
        else:
            live = _sorted(live)  # as the scene keeps its members: in id order
            prev = Layered.after(prev, live, touched)
            views.append(prev)
            copies.append(dict(live))
            touched = []
    order = list(range(len(views)))
    rnd.shuffle(order)  # read in any order: each builds from the nearest earlier one built
    for i in order:
        assert list(views[i].items()) == list(copies[i].items())
        assert len(views[i]) == len(copies[i])
        assert views[i] == copies[i]


def test_a_layer_pickles_and_prints_as_a_plain_dict() -> None:
    now = {f"n{i}": i for i in range(1, 9) if i != 2}
    first = Layered.after(None, {f"n{i}": i for i in range(1, 8)}, [])
    second = Layered.after(first, now, ["n2", "n8"])
    assert not second.built
    loaded = pickle.loads(pickle.dumps(second))
    assert type(loaded) is dict and list(loaded.items()) == list(now.items())
    assert repr(second) == repr(now)


PROGRAM = """\
import torch
x = torch.ones(2, requires_grad=True)
a = x * 2
b = a.sin()
keep = b
for i in range(6):
    c = b * i
    b = c.exp() if i % 2 else c.cos()
    if i == 3:
        b = keep
del a
d = (b * b).sum()
d.backward()
x.data.mul_(3)
b = None
"""


def _steps(monkeypatch: pytest.MonkeyPatch, copy_all: bool) -> list[tuple[Any, Any]]:
    if copy_all:
        monkeypatch.setattr(layers, "_COPY_SHARE", 0.0)  # every step a plain copy: the old way
    trace = gradtrace.trace_code(PROGRAM, {}, max_steps=10**6)
    monkeypatch.undo()
    return [(list(s.tensors.items()), list(s.nodes.items())) for s in trace.steps]


def test_a_traced_program_shows_the_same_steps_as_with_a_copy_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    layered = _steps(monkeypatch, False)
    copied = _steps(monkeypatch, True)
    assert layered == copied
    assert any(len(nodes) > 3 for _t, nodes in layered)



def test_a_tensor_info_made_fast_is_the_one_the_constructor_makes() -> None:
    import dataclasses

    from gradtrace.model import Summary, TensorInfo
    from gradtrace.tracer.shown import _tensor_info

    fields = {f.name: f"v{i}" for i, f in enumerate(dataclasses.fields(TensorInfo))}
    fields.update(value=Summary("1."), grad=None, shape=(2, 3))
    fast, slow = _tensor_info(**fields), TensorInfo(**fields)
    assert fast == slow and repr(fast) == repr(slow) and hash(fast) == hash(slow)
    assert vars(fast) == vars(slow) and list(vars(fast)) == list(vars(slow))
    assert dataclasses.asdict(fast) == dataclasses.asdict(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.version = 3  # type: ignore[misc]


def test_a_record_changed_fast_is_the_one_replace_makes() -> None:
    import dataclasses

    from gradtrace.model import Edge, NodeInfo, SavedValue, Summary
    from gradtrace.tracer.graph import _with

    saved = SavedValue("self", "t1", Summary("2."), saved_version=0, version=0)
    node = NodeInfo("n1", "MulBackward0", (Edge("n2", 0), None), saved=(saved,), module="m")
    for record, changes in ((saved, {"state": "stale", "version": 1}), (node, {"saved": ()}),
                            (node, {"output": "t3", "value": Summary("1.")})):
        fast, slow = _with(record, **changes), dataclasses.replace(record, **changes)  # type: ignore[arg-type]
        assert fast == slow and repr(fast) == repr(slow) and list(vars(fast)) == list(vars(slow))
        assert fast is not record and vars(record) != vars(fast)

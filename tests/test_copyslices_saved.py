"""What the node inside a ``CopySlices`` saved, as the tracer learns it, checked against PyTorch itself.

An in-place call on a view hides its node (and the values it saved) inside ``CopySlices``.
:func:`gradtrace.tracer.copyslices.hidden_saves` makes the same call on stand-ins to learn which of
the call's tensors that node saved. Each claim is checked here by changing each tensor in place
and running backward plainly: it fails on a stale value iff the tensor was said to be saved.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import gradtrace
from gradtrace.tracer.copyslices import hidden_saves, view_write_before

STALE = "modified by an inplace operation"

#: in-place calls on a view ``a`` with another tensor ``c``: (label, function, args builder)
CALLS: list[tuple[str, Any, Callable[[torch.Tensor, torch.Tensor], tuple[Any, ...]], dict[str, Any]]] = [
    ("mul_ c", torch.Tensor.mul_, lambda a, c: (a, c), {}),
    ("mul_ self", torch.Tensor.mul_, lambda a, _c: (a, a), {}),
    ("mul_ 2", torch.Tensor.mul_, lambda a, _c: (a, 2), {}),
    ("add_ c", torch.Tensor.add_, lambda a, c: (a, c), {"alpha": 3}),
    ("div_ c", torch.Tensor.div_, lambda a, c: (a, c), {}),
    ("sigmoid_", torch.Tensor.sigmoid_, lambda a, _c: (a,), {}),
    ("tanh_", torch.Tensor.tanh_, lambda a, _c: (a,), {}),
    ("exp_", torch.Tensor.exp_, lambda a, _c: (a,), {}),
    ("pow_ 2", torch.Tensor.pow_, lambda a, _c: (a, 2), {}),
    ("pow_ c", torch.Tensor.pow_, lambda a, c: (a, c), {}),
    ("sin_", torch.Tensor.sin_, lambda a, _c: (a,), {}),
    ("clamp_", torch.Tensor.clamp_, lambda a, _c: (a,), {"min": 0.0}),
    ("relu_", torch.relu_, lambda a, _c: (a,), {}),
    ("F.relu inplace", torch.nn.functional.relu, lambda a, _c: (a,), {"inplace": True}),
    ("addcmul_", torch.Tensor.addcmul_, lambda a, c: (a, c, c), {}),
    ("lerp_", torch.Tensor.lerp_, lambda a, c: (a, c, 0.5), {}),
    ("copy_", torch.Tensor.copy_, lambda a, c: (a, c), {}),
    ("masked_fill_", torch.Tensor.masked_fill_, lambda a, c: (a, c > 0, 1.0), {}),
    ("index_put_", torch.Tensor.index_put_, lambda a, c: (a, (torch.tensor([0, 2]),), c[:2]), {}),
    ("index_add_", torch.Tensor.index_add_, lambda a, c: (a, 0, torch.tensor([1, 3]), c[:2]), {}),
    ("__imul__", torch.Tensor.__imul__, lambda a, c: (a, c), {}),
]


def _setup(c_grad: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    w = torch.randn(2, 3, requires_grad=True)
    c = torch.randn(6).abs() + 0.5
    if c_grad:
        c = (c.requires_grad_() * 1)  # a non-leaf: it can be changed in place
    b = w * 2
    return w, b, b.reshape(-1), c


@pytest.mark.parametrize("c_grad", [False, True], ids=["c plain", "c requires grad"])
@pytest.mark.parametrize(("label", "func", "build", "kwargs"), CALLS, ids=[c[0] for c in CALLS])
def test_hidden_saves_match_pytorch(label: str, func: Any, build: Any, kwargs: dict[str, Any], c_grad: bool) -> None:
    # for each tensor of the call: changed in place afterwards, backward fails iff it was said to be saved
    for changed in ("a", "c"):
        w, b, a, c = _setup(c_grad)
        args = build(a, c)
        before = view_write_before(args, kwargs)
        assert before is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(*args, **kwargs)
        told = hidden_saves(func, args, kwargs, before, b.grad_fn)
        assert b.grad_fn.name() == "torch::autograd::CopySlices"
        assert told is not None, label
        inner, found = told
        target = {"a": a, "c": c}[changed]
        with torch.no_grad():
            target.add_(1)
        stale = [(slot, t._version, v) for slot, t, v in found if t._version != v]  # as said: stale values
        try:
            b.sum().backward()
            failed = False
        except RuntimeError as exc:
            assert STALE in str(exc), exc
            failed = True
            now, then = map(int, re.search(r"is at version (\d+); expected version (\d+)", str(exc)).groups())
            assert any((now, then) == (n, v) for _, n, v in stale), f"{label}: PyTorch says {exc}, told {found}"
        assert failed == bool(stale), f"{label}: {inner} said to save {found}; {changed} changed"
        del w


MODULES = [torch.nn.ReLU(inplace=True), torch.nn.ELU(inplace=True), torch.nn.Hardtanh(inplace=True),
           torch.nn.LeakyReLU(0.1, inplace=True), torch.nn.SiLU(inplace=True), torch.nn.Dropout(0.5, inplace=True)]


@pytest.mark.parametrize("module", MODULES, ids=[type(m).__name__ for m in MODULES])
def test_hidden_saves_of_an_inplace_module_match_pytorch(module: torch.nn.Module) -> None:
    # the module's forward is made again on a stand-in; changing the view after it fails backward iff it was saved
    w, b, a, _c = _setup(False)
    before = view_write_before((a,), {})
    assert before is not None
    module(a)
    state = torch.get_rng_state()
    told = hidden_saves(type(module).forward, (a,), {}, before, b.grad_fn, module)
    assert torch.equal(state, torch.get_rng_state())
    assert told is not None
    with torch.no_grad():
        a.add_(1)
    stale = [t for _slot, t, v in told[1] if t._version != v]
    try:
        b.sum().backward()
        failed = False
    except RuntimeError as exc:
        assert STALE in str(exc)
        failed = True
    assert failed == bool(stale), f"{type(module).__name__}: said to save {told}"
    del w


def test_no_stand_in_call_of_a_program_module() -> None:
    ran: list[int] = []

    class MyReLU(torch.nn.ReLU):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            ran.append(1)
            return super().forward(x)

    module = MyReLU(inplace=True)
    _w, b, a, _c = _setup(False)
    before = view_write_before((a,), {})
    assert before is not None
    module(a)
    assert hidden_saves(type(module).forward, (a,), {}, before, b.grad_fn, module) is None
    assert ran == [1]


def test_stand_in_call_draws_nothing_from_the_random_stream() -> None:
    # F.dropout on a view: the stand-in call would draw as many numbers as the program's call
    w, b, a, c = _setup(False)
    args, kwargs = (a, 0.5, True, True), {}
    before = view_write_before(args, kwargs)
    assert before is not None
    torch.nn.functional.dropout(*args)
    state = torch.get_rng_state()
    hidden_saves(torch.nn.functional.dropout, args, kwargs, before, b.grad_fn)
    assert torch.equal(state, torch.get_rng_state())


def test_no_stand_in_call_with_an_argument_that_could_run_program_code() -> None:
    class Number:
        def __float__(self) -> float:
            raise AssertionError("program code ran")

    _w, _b, a, _c = _setup(False)
    assert view_write_before((a, Number()), {}) is None
    assert view_write_before((a, [1, Number()]), {}) is None
    assert view_write_before((a, 2.0), {}) is not None
    assert view_write_before((_b, 2.0), {}) is None  # no view: no CopySlices to hide a node


def test_no_stand_in_call_under_saved_tensor_hooks() -> None:
    # the program's pack hook would see the stand-ins
    packed: list[tuple[int, ...]] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        packed.append(tuple(t.shape))
        return t

    _w, b, a, c = _setup(False)
    before = view_write_before((a, c), {})
    assert before is not None
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        a.mul_(c)
        n = len(packed)
        assert hidden_saves(torch.Tensor.mul_, (a, c), {}, before, b.grad_fn) is None
    assert len(packed) == n


def test_prediction_names_the_node_inside_copyslices() -> None:
    src = ("import torch\nw = torch.randn(2, 3, requires_grad=True)\nb = w * 2\na = b.reshape(-1)\n"
           "c = torch.randn(6)\na.mul_(c)\nc.add_(1)\n")
    trace = gradtrace.trace_code(src, {})
    ns: dict[str, Any] = {}
    exec(compile(src, "<plain>", "exec"), ns)  # the same program plainly: backward fails on c
    with pytest.raises(RuntimeError, match=STALE):
        ns["a"].sum().backward()
    (pred,) = [p for p in trace.last.predictions if p.root == "a"]
    c_id = trace.last.bindings["c"]
    assert pred.tensor == c_id and (pred.saved_version, pred.version) == (0, 1)
    holder = trace.last.nodes[pred.node]
    assert holder.name == "CopySlices" and pred.saved == "MulBackward0.other"
    assert "the MulBackward0 inside CopySlices" in pred.message
    before_change = trace.steps[-2]  # right after a.mul_(c): c saved and still current
    assert not before_change.predictions
    shown = before_change.nodes[pred.node].saved
    assert [(s.name, s.tensor, s.state) for s in shown] == [("MulBackward0.other", c_id, "alive")]


def test_no_stand_in_call_while_the_program_profiles() -> None:
    # the program's profile lists exactly its own ops
    _w, b, a, c = _setup(False)
    before = view_write_before((a, c), {})
    assert before is not None
    with torch.profiler.profile() as prof:
        a.mul_(c)
        assert hidden_saves(torch.Tensor.mul_, (a, c), {}, before, b.grad_fn) is None
    assert [e.name for e in prof.events() if e.name == "aten::zeros"] == []


def test_no_stand_in_bigger_than_the_memory_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    # stand-ins are as big as the call's tensors: past the cap none is made (a kernel never runs out of
    # memory for a prediction), and under it the same call is learned
    import gradtrace.tracer.copyslices as copyslices

    _w, b, a, c = _setup(False)
    before = view_write_before((a, c), {})
    assert before is not None
    a.mul_(c)
    size = a.numel() * a.element_size() + c.numel() * c.element_size()
    monkeypatch.setattr(copyslices, "STAND_IN_BYTES", size)
    assert hidden_saves(torch.Tensor.mul_, (a, c), {}, before, b.grad_fn) is not None
    monkeypatch.setattr(copyslices, "STAND_IN_BYTES", size - 1)
    made: list[int] = []
    real_zeros = torch.zeros
    monkeypatch.setattr(torch, "zeros", lambda *args, **kw: made.append(1) or real_zeros(*args, **kw))
    assert hidden_saves(torch.Tensor.mul_, (a, c), {}, before, b.grad_fn) is None
    assert made == []

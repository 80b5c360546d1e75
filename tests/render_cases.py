"""Hand-made model objects and the golden-file helper shared by the render tests.

Every number here is written into the model objects by hand (they stand for what
the tracer records); the tests check renderers against these objects and against
real traces made by the tracer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradtrace.model import (
    ALIVE,
    FREED,
    STALE,
    Backward,
    Bind,
    Create,
    Edge,
    GradChange,
    Mutate,
    NodeInfo,
    Prediction,
    Rebind,
    SavedValue,
    Step,
    Summary,
    TensorInfo,
    Trace,
)

GOLDEN = Path(__file__).parent / "golden"

PAYLOADS = (
    '"]; a -> b [label="',
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "ctl\x00\x07\x1b[31m\u2028\u202e",
    "n" * 300,
)


def check_golden(request: pytest.FixtureRequest, name: str, text: str) -> None:
    """Compare ``text`` with ``tests/golden/<name>``; rewrite it with ``--overwrite-golden``."""
    path = GOLDEN / name
    if request.config.getoption("--overwrite-golden") or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        if not request.config.getoption("--overwrite-golden"):
            pytest.fail(f"golden file {name} was missing and has been written; check it and re-run")
    assert text == path.read_text(encoding="utf-8")


def scalar(
    tid: str,
    value: float,
    *,
    leaf: bool,
    grad_fn: str | None = None,
    grad: float | None = None,
    version: int = 0,
    retains: bool = False,
) -> TensorInfo:
    return TensorInfo(
        id=tid,
        shape=(),
        dtype="float32",
        device="cpu",
        requires_grad=True,
        is_leaf=leaf,
        retains_grad=retains,
        version=version,
        grad_fn=grad_fn,
        base=None,
        value=Summary(f"{value:g}.", value),
        grad=None if grad is None else Summary(f"{grad:g}.", grad),
    )


def pow_node(nid: str, exponent: int, state: str = ALIVE) -> NodeInfo:
    return NodeInfo(
        id=nid,
        name="PowBackward0",
        inputs=(Edge("n2", 0),),
        attrs=(("exponent", str(exponent)),),
        saved=(SavedValue("self", "t1", Summary("42.", 42.0), state, 0, 0),),
    )


ACC = NodeInfo(id="n2", name="torch::autograd::AccumulateGrad", inputs=(), variable="t1")
ADD = NodeInfo(id="n4", name="AddBackward0", inputs=(Edge("n1", 0), Edge("n3", 0)), attrs=(("alpha", "1"),))


def forum_trace() -> Trace:
    """The forum program, by hand: f = x**2 + x**3 at 42, then f.backward()."""
    t1 = scalar("t1", 42.0, leaf=True)
    t2 = scalar("t2", 1764.0, leaf=False, grad_fn="n1")
    t3 = scalar("t3", 74088.0, leaf=False, grad_fn="n3")
    t4 = scalar("t4", 75852.0, leaf=False, grad_fn="n4")
    n1, n3 = pow_node("n1", 2), pow_node("n3", 3)
    s1 = Step(
        1,
        1,
        "x = torch.tensor(42., requires_grad=True)",
        "<module>",
        {"x": "t1"},
        {"t1": t1},
        {},
        (Create(("t1",), ()), Bind("x", "t1")),
    )
    s2 = Step(
        2,
        2,
        "x2 = x ** 2",
        "<module>",
        {"x": "t1", "x2": "t2"},
        {"t1": t1, "t2": t2},
        {"n1": n1, "n2": ACC},
        (Create(("t2",), ("n1", "n2")), Bind("x2", "t2")),
    )
    s3 = Step(
        3,
        3,
        "x3 = x ** 3",
        "<module>",
        {"x": "t1", "x2": "t2", "x3": "t3"},
        {"t1": t1, "t2": t2, "t3": t3},
        {"n1": n1, "n2": ACC, "n3": n3},
        (Create(("t3",), ("n3",)), Bind("x3", "t3")),
    )
    binds = {"x": "t1", "x2": "t2", "x3": "t3", "f": "t4"}
    s4 = Step(
        4,
        4,
        "f = x2 + x3",
        "<module>",
        binds,
        {"t1": t1, "t2": t2, "t3": t3, "t4": t4},
        {"n1": n1, "n2": ACC, "n3": n3, "n4": ADD},
        (Create(("t4",), ("n4",)), Bind("f", "t4")),
    )
    t1g = scalar("t1", 42.0, leaf=True, grad=5376.0)
    freed = {"n1": pow_node("n1", 2, FREED), "n2": ACC, "n3": pow_node("n3", 3, FREED), "n4": ADD}
    bw = Backward("t4", None, False, (GradChange("t1", None, t1g.grad),), (("n1", "self"), ("n3", "self")))
    s5 = Step(5, 5, "f.backward()", "<module>", binds, {"t1": t1g, "t2": t2, "t3": t3, "t4": t4}, freed, (bw,))
    source = "\n".join(s.code for s in (s1, s2, s3, s4, s5)) + "\n"
    return Trace(source, "forum.py", (s1, s2, s3, s4, s5))


def mutate_trace() -> Trace:
    """x = leaf; y = x * 2; z = y ** 2; y.add_(1) makes z's saved self stale; then x = z."""
    x = scalar("t1", 3.0, leaf=True)
    y0 = scalar("t2", 6.0, leaf=False, grad_fn="n1")
    z = scalar("t3", 36.0, leaf=False, grad_fn="n3")
    mul = NodeInfo(
        "n1",
        "MulBackward0",
        (Edge("n2", 0), None),
        (("other", "2"),),
        (SavedValue("other", None, Summary("2"), ALIVE),),
    )
    acc = NodeInfo("n2", "torch::autograd::AccumulateGrad", (), variable="t1")
    powz = NodeInfo(
        "n3",
        "PowBackward0",
        (Edge("n1", 0),),
        (("exponent", "2"),),
        (SavedValue("self", "t2", Summary("6."), ALIVE, 0, 0),),
    )
    nodes = {"n1": mul, "n2": acc, "n3": powz}
    b = {"x": "t1", "y": "t2", "z": "t3"}
    s1 = Step(
        1,
        1,
        "x = torch.tensor(3., requires_grad=True)",
        "<module>",
        {"x": "t1"},
        {"t1": x},
        {},
        (Create(("t1",), ()), Bind("x", "t1")),
    )
    s2 = Step(
        2,
        2,
        "y = x * 2",
        "<module>",
        {"x": "t1", "y": "t2"},
        {"t1": x, "t2": y0},
        {"n1": mul, "n2": acc},
        (Create(("t2",), ("n1", "n2")), Bind("y", "t2")),
    )
    s3 = Step(
        3,
        3,
        "z = y ** 2",
        "<module>",
        b,
        {"t1": x, "t2": y0, "t3": z},
        nodes,
        (Create(("t3",), ("n3",)), Bind("z", "t3")),
    )
    y1 = TensorInfo("t2", (), "float32", "cpu", True, False, False, 1, "n4", None, Summary("7.", 7.0), None)
    add = NodeInfo("n4", "AddBackward0", (Edge("n1", 0),), (("alpha", "1"),))
    stale = NodeInfo(
        "n3",
        "PowBackward0",
        (Edge("n1", 0),),
        (("exponent", "2"),),
        (SavedValue("self", "t2", Summary("7."), STALE, 0, 1),),
    )
    nodes4 = {"n1": mul, "n2": acc, "n3": stale, "n4": add}
    pred = Prediction(
        "t3",
        "n3",
        "self",
        "t2",
        0,
        1,
        "one of the variables needed for gradient computation has been modified by an inplace operation",
    )
    s4 = Step(
        4,
        4,
        "y.add_(1)",
        "<module>",
        b,
        {"t1": x, "t2": y1, "t3": z},
        nodes4,
        (Mutate("t2", 0, 1, "n1", "n4", (("n3", "self"),), op="add_"), Create((), ("n4",))),
        (pred,),
    )
    b5 = {"x": "t3", "y": "t2", "z": "t3"}
    s5 = Step(
        5,
        5,
        "x = z",
        "<module>",
        b5,
        {"t1": x, "t2": y1, "t3": z},
        nodes4,
        (Rebind("x", "t1", "t3", (), ("n2",)),),
        (pred,),
    )
    source = "\n".join(s.code for s in (s1, s2, s3, s4, s5)) + "\n"
    return Trace(source, "mutate.py", (s1, s2, s3, s4, s5))


def evil_trace() -> Trace:
    """Every payload as a name, a code line, a value text and an op name."""
    tensors, binds, nodes = {}, {}, {}
    for i, p in enumerate(PAYLOADS, start=1):
        tid, nid = f"t{i}", f"n{i}"
        tensors[tid] = TensorInfo(tid, (1,), p, "cpu", True, False, False, 0, nid, None, Summary(p), Summary(p))
        nodes[nid] = NodeInfo(nid, p, (None,), ((p, p),), (SavedValue(p, None, Summary(p)),))
        binds[p] = tid
    code = " ; ".join(PAYLOADS)
    step = Step(
        1,
        1,
        code,
        PAYLOADS[1],
        binds,
        tensors,
        nodes,
        (Create(tuple(tensors), tuple(nodes)),) + tuple(Bind(p, f"t{i}") for i, p in enumerate(PAYLOADS, 1)),
    )
    return Trace(code + "\n", PAYLOADS[2], (step,))

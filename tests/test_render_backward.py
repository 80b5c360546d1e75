"""The film's backward() data: the reverse pass node by node (``flow``) and what it changed (``diff``).

Every number checked here is computed by PyTorch in the test itself.
"""

from __future__ import annotations

import torch

import gradtrace
from gradtrace.model import FREED, Trace
from gradtrace.render.film import film
from gradtrace.render.text import reverse_pass

from programs import FORUM_ORIGINAL, WHATIF1, run_plain


def number(v: float) -> str:
    """How the reverse pass writes an integral float (``5292``)."""
    assert float(v).is_integer()
    return str(int(v))


def backward_step(trace: Trace) -> int:
    return next(i for i, s in enumerate(trace.steps) if s.events_of("backward"))


def forum_parts() -> tuple[float, float, float]:
    """d(x³)/dx, d(x²)/dx and x.grad at x = 42, from torch."""
    x = torch.tensor(42.0, requires_grad=True)
    (cube,) = torch.autograd.grad(x**3, x)
    (square,) = torch.autograd.grad(x**2, x)
    ns, exc = run_plain(FORUM_ORIGINAL)
    assert exc is None
    return cube.item(), square.item(), ns["x"].grad.item()


def test_forum_flow_puts_the_parts_on_the_edges_into_xs_accumulate_grad():
    cube, square, total = forum_parts()
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {})
    i = backward_step(trace)
    step = trace.steps[i]
    x = step.bindings["x"]
    acc = next(n.id for n in step.nodes.values() if n.variable == x)
    flow = film(trace)["steps"][i]["flow"]
    (event,) = step.events_of("backward")
    # in the order the engine ran the nodes, as the tracer recorded it
    assert [s["node"] for s in flow] == ["gt-" + f.node for f in event.flow]  # type: ignore[union-attr]
    into_acc = {dom: text for s in flow for dom, text in s["edges"].items() if dom.endswith(f"-{acc}")}
    assert sorted(into_acc.values()) == sorted([number(cube), number(square)])
    assert all(dom.startswith("gt-e-next-") for dom in into_acc)
    last = flow[-1]
    assert last["node"] == f"gt-{acc}" and last["grads"] == {f"gt-{x}": number(total)}
    assert last["edges"] == {f"gt-e-variable-{acc}-{x}": number(total)}


def test_flow_text_is_the_reverse_pass_with_its_ids_and_arithmetic():
    cube, _, _ = forum_parts()
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {})
    i = backward_step(trace)
    flow = film(trace)["steps"][i]["flow"]
    lines = [line.strip() for line in reverse_pass(trace.steps[i])]
    for sub in flow:
        assert sub["text"].startswith(sub["node"][3:] + " ")  # "n3 PowBackward0: ..." names the node it highlights
        assert all(line in lines for line in sub["text"].split("\n"))
    # the power rule filled in with x = 42, ending in torch's own figure
    assert any(f"(3 · 42²) = {number(cube)}" in sub["text"] for sub in flow)


def test_every_flow_id_is_drawn_in_the_film():
    trace = gradtrace.trace_code(WHATIF1, {})
    f = film(trace)
    i = backward_step(trace)
    visible = set(f["frames"][f["steps"][i]["frame"]]["visible"])
    flow = f["steps"][i]["flow"]
    assert flow
    for sub in flow:
        assert sub["node"] in visible
        assert set(sub["edges"]) <= visible and set(sub["grads"]) <= visible
    assert all(s["flow"] == [] for k, s in enumerate(f["steps"]) if k != i)


def test_whatif1_flow_fills_the_retained_grad_and_the_leaf_grad():
    ns, exc = run_plain(WHATIF1)
    assert exc is None
    trace = gradtrace.trace_code(WHATIF1, {})
    i = backward_step(trace)
    step = trace.steps[i]
    flow = film(trace)["steps"][i]["flow"]
    grads = {dom: text for s in flow for dom, text in s["grads"].items()}
    retained = step.bindings["x"]  # x names x ** 2 here, which retain_grad() keeps
    assert grads[f"gt-{retained}"] == number(ns["x"].grad.item())
    leaf = next(t.id for t in step.tensors.values() if t.is_leaf and t.requires_grad)
    original = ns["x"].grad_fn.next_functions[0][0].variable  # the leaf x named before x = x ** 2
    assert grads[f"gt-{leaf}"] == number(original.grad.item())


def test_diff_names_what_backward_freed_changed_and_kept():
    ns, _ = run_plain(WHATIF1)
    trace = gradtrace.trace_code(WHATIF1, {})
    f = film(trace)
    i = backward_step(trace)
    step = trace.steps[i]
    (entry,) = f["backward"]
    assert entry["step"] == i and entry["before"] == i - 1
    d = entry["diff"]
    freed_nodes = {n.id for n in step.nodes.values() if any(s.state == FREED for s in n.saved)}
    assert freed_nodes
    assert {k for k in d["freed"] if not k.startswith("gt-e-")} == {"gt-" + n for n in freed_nodes}
    for k in d["freed"]:
        if k.startswith("gt-e-"):
            assert k.startswith("gt-e-saved-")
    retained = step.bindings["x"]
    assert d["kept"] == [f"gt-{retained}"]
    before, after = d["grad"][f"gt-{retained}"].split(" → ")
    assert before == "None" and float(after) == ns["x"].grad.item()
    visible = set(f["frames"][f["steps"][i]["frame"]]["visible"])
    assert set(d["freed"]) <= visible and set(d["grad"]) <= visible


def test_a_second_backward_diff_shows_old_and_new_grad():
    src = "import torch\nx = torch.tensor(3., requires_grad=True)\n(x * x).backward()\n(x * x).backward()\n"
    ns, _ = run_plain(src)
    trace = gradtrace.trace_code(src, {})
    f = film(trace)
    first, second = f["backward"]
    x = trace.steps[-1].bindings["x"]
    old, new = second["diff"]["grad"][f"gt-{x}"].split(" → ")
    assert float(new) == ns["x"].grad.item() and float(old) == ns["x"].grad.item() / 2
    assert first["diff"]["grad"][f"gt-{x}"].startswith("None → ")


def test_a_folded_picture_names_only_what_it_draws():
    """A long loop is drawn folded: the walk and the diff point at drawn boxes and arrows only."""
    from gradtrace.render.film import FILM_MAX_NODES

    n = FILM_MAX_NODES + 40
    src = (f"import torch\nh = torch.ones(1, requires_grad=True)\nfor _ in range({n}):\n    h = h * 1.5\n"
           "h.sum().backward()\n")
    trace = gradtrace.trace_code(src, {})
    f = film(trace)
    i = backward_step(trace)
    (event,) = trace.steps[i].events_of("backward")
    assert len(event.flow) > n  # type: ignore[union-attr]  # every node was watched ...
    drawn = set(f["frames"][f["steps"][i]["frame"]]["visible"])
    flow = f["steps"][i]["flow"]
    assert flow and len(flow) < n  # ... the walk visits the drawn ones
    for sub in flow:
        assert sub["node"] in drawn and set(sub["edges"]) <= drawn and set(sub["grads"]) <= drawn
    d = f["backward"][-1]["diff"]
    assert set(d["freed"]) | set(d["grad"]) | set(d["kept"]) <= drawn
    leaf = torch.ones(1, requires_grad=True)
    h = leaf
    for _ in range(n):
        h = h * 1.5
    h.sum().backward()
    (changed,) = d["grad"].values()
    shown = torch.tensor(float(changed.split("→ ")[1].strip("[]")))  # the float32 the text reads back as
    assert changed.startswith("None → ") and torch.equal(shown.reshape(1), leaf.grad)


def test_flow_has_the_ids_and_arithmetic_that_explain_prints():
    x = torch.tensor(42.0, requires_grad=True)
    x2 = x**2
    x3 = x**3
    f = x2 + x3
    walk = str(gradtrace.explain(f))
    trace = gradtrace.trace_code(FORUM_ORIGINAL, {})
    flow = film(trace)["steps"][backward_step(trace)]["flow"]
    sent = 0
    for sub in flow:
        head = sub["text"].split(":")[0]  # "n3 PowBackward0"
        assert head in walk
        for line in sub["text"].split("\n")[1:]:
            if line.startswith("sends to "):
                target, arithmetic = line.removeprefix("sends to ").split(": ", 1)
                assert f"→ {target} (" in walk and arithmetic in walk, (line, walk)
                sent += 1
    assert sent == sum(1 for s in flow for edge in s["edges"] if edge.startswith("gt-e-next-"))

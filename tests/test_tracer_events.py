"""Rebinding vs mutation: the events the tracer records, checked against torch's own state."""

from __future__ import annotations

import torch

import gradtrace

from programs import INPLACE_STALE, run_plain


def traced(source: str):
    ns: dict = {}
    return gradtrace.trace_code("import torch\n" + source, ns, raise_errors=False), ns


def step_at(trace, code: str):
    return next(s for s in trace.steps if s.code == code)


def torch_name(tensor) -> str:
    """The node name as torch gives it, without the ``torch::autograd::`` namespace."""
    return tensor.grad_fn.name().removeprefix("torch::autograd::")


def kinds(step):
    return [e.kind for e in step.events]


def test_rebinding_moves_the_name_and_leaves_the_object():
    trace, ns = traced("x = torch.tensor(2., requires_grad=True)\nold = x\nx = x * 3\n")
    step = step_at(trace, "x = x * 3")
    (rebind,) = step.events_of("rebind")
    assert rebind.old == step.bindings["old"] and rebind.new == step.bindings["x"]
    assert rebind.held_by_names == ("old",)
    assert "mutate" not in kinds(step)
    assert step.tensors[rebind.old].version == ns["old"]._version == 0


def test_add_underscore_on_nonleaf_is_a_mutation_with_swapped_grad_fn():
    trace, ns = traced("a = torch.ones(3, requires_grad=True)\nb = a * 2\nb.add_(1)\n")
    step = step_at(trace, "b.add_(1)")
    (m,) = step.events_of("mutate")
    assert m.tensor == step.bindings["b"]
    assert (m.version_before, m.version_after) == (0, ns["b"]._version)
    assert m.op == "add_"
    before = step.nodes[m.grad_fn_after]
    assert before.name == torch_name(ns["b"])
    assert m.grad_fn_before in {e.node for e in before.inputs if e is not None}
    assert "rebind" not in kinds(step)


def test_augmented_assignment_on_nonleaf_mutates_in_place():
    trace, ns = traced("a = torch.ones(3, requires_grad=True)\nb = a * 2\nb += 1\n")
    step = step_at(trace, "b += 1")
    assert kinds(step).count("mutate") == 1 and "rebind" not in kinds(step)
    assert step.tensors[step.bindings["b"]].version == ns["b"]._version


def test_setitem_is_a_mutation():
    trace, ns = traced("a = torch.ones(3, requires_grad=True)\nb = a * 2\nb[0] = 5.\n")
    (m,) = step_at(trace, "b[0] = 5.").events_of("mutate")
    assert m.op == "__setitem__" and m.version_after == ns["b"]._version
    assert step_at(trace, "b[0] = 5.").nodes[m.grad_fn_after].name == torch_name(ns["b"])


def test_inplace_on_a_view_changes_the_base_through_copyslices():
    trace, ns = traced("a = torch.ones(3, requires_grad=True)\nb = a * 2\nv = b[:2]\nv.mul_(3)\n")
    step = step_at(trace, "v.mul_(3)")
    by_tensor = {e.tensor: e for e in step.events_of("mutate")}
    base, view = step.bindings["b"], step.bindings["v"]
    assert set(by_tensor) == {base, view}
    assert by_tensor[base].via == view
    assert step.nodes[step.tensors[base].grad_fn].name == torch_name(ns["b"]) == "CopySlices"
    assert step.nodes[step.tensors[view].grad_fn].name == torch_name(ns["v"])
    assert step.tensors[view].base == base


def test_detach_then_inplace_bumps_the_shared_version_counter():
    trace, ns = traced("a = torch.ones(3, requires_grad=True)\nb = a * 2\nd = b.detach()\nd.zero_()\n")
    step = step_at(trace, "d = b.detach()")
    (u,) = step.events_of("untracked")
    assert (u.tensor, u.reason, u.shares_with) == (step.bindings["d"], "detach", step.bindings["b"])
    step = step_at(trace, "d.zero_()")
    changed = {e.tensor: e for e in step.events_of("mutate")}
    assert set(changed) == {step.bindings["b"], step.bindings["d"]}
    assert changed[step.bindings["b"]].version_after == ns["b"]._version


def test_del_unbinds_and_says_who_still_holds_the_object():
    trace, _ = traced("a = torch.ones(3, requires_grad=True)\nb = a * 2\ndel a\n")
    step = step_at(trace, "del a")
    (u,) = step.events_of("unbind")
    assert u.name == "a" and u.held_by_names == ()
    assert [step.nodes[n].name for n in u.held_by_nodes] == ["AccumulateGrad"]


def test_no_grad_result_is_untracked():
    trace, ns = traced("a = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    e = a * 2\n")
    step = step_at(trace, "e = a * 2")
    (u,) = step.events_of("untracked")
    assert u.reason == "no_grad" and not ns["e"].requires_grad


def test_stale_saved_value_is_predicted_before_the_failing_backward():
    trace, _ = traced(INPLACE_STALE.split("\n", 1)[1])
    _, exc = run_plain(INPLACE_STALE)
    assert isinstance(exc, RuntimeError) and "modified by an inplace operation" in str(exc)
    mutate_step = step_at(trace, "b.add_(1)")
    assert mutate_step.predictions
    assert {p.root for p in mutate_step.predictions} == {"c"}
    (m,) = mutate_step.events_of("mutate")
    assert m.stale and all(mutate_step.nodes[n].name == "MulBackward0" for n, _ in m.stale)
    failing = trace.steps[-1]
    assert failing.index > mutate_step.index
    assert trace.error.message == str(exc)


def test_backward_frees_saved_values_and_records_grads():
    trace, ns = traced("x = torch.tensor(3., requires_grad=True)\ny = x ** 2\ny.backward()\n")
    step = step_at(trace, "y.backward()")
    (b,) = step.events_of("backward")
    assert b.retain_graph is False
    assert [(step.nodes[n].name, s) for n, s in b.freed] == [("PowBackward0", "self")]
    (change,) = b.grads
    assert change.after.values == ns["x"].grad.item()
    node = step.nodes[b.freed[0][0]]
    assert node.saved[0].state == "freed"


def test_retain_graph_keeps_saved_values_and_second_backward_accumulates():
    src = "x = torch.tensor(3., requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)\ny.backward()\n"
    trace, ns = traced(src)
    first = step_at(trace, "y.backward(retain_graph=True)")
    (b,) = first.events_of("backward")
    assert b.retain_graph and b.freed == ()
    second = trace.steps[-1]
    (b2,) = second.events_of("backward")
    assert b2.grads[0].after.values == ns["x"].grad.item()
    assert b2.grads[0].before.values * 2 == ns["x"].grad.item()


def test_grad_change_without_backward():
    src = "x = torch.tensor(3., requires_grad=True)\n(x * x).backward()\nx.grad.zero_()\nx.grad = None\n"
    trace, _ = traced(src)
    zero = step_at(trace, "x.grad.zero_()")
    (g,) = zero.events_of("grad")
    assert g.change.after.values == 0.0
    none = step_at(trace, "x.grad = None")
    (g,) = none.events_of("grad")
    assert g.change.after is None


def test_function_locals_are_traced_and_scoped():
    src = "def square(t):\n    out = t * t\n    return out\nx = torch.tensor(2., requires_grad=True)\ny = square(x)\n"
    trace, ns = traced(src)
    inner = step_at(trace, "out = t * t")
    assert inner.frame == "square"
    assert inner.bindings["square().t"] == inner.bindings["x"]
    last = trace.steps[-1]
    assert "square().out" not in last.bindings and not last.events_of("unbind")
    assert last.bindings["y"] == inner.bindings["square().out"]


def test_loop_body_is_a_step_per_iteration():
    trace, _ = traced("h = torch.ones(1, requires_grad=True)\nfor i in range(3):\n    h = h * 2\n")
    assert [s.code for s in trace.steps].count("h = h * 2") == 3
    assert len(trace.events("rebind")) == 3


def test_module_parameters_and_containers_are_named():
    src = "lin = torch.nn.Linear(2, 1)\nxs = [torch.ones(2)]\nd = {'w': torch.zeros(1)}\n"
    trace, _ = traced(src)
    names = set(trace.steps[-1].bindings)
    assert {"lin.weight", "lin.bias", "xs[0]", "d['w']"} <= names


def test_step_cap_counts_unrecorded_steps_and_keeps_final_state():
    src = "h = torch.ones(1, requires_grad=True)\nfor i in range(50):\n    h = h * 2\n"
    trace, ns = traced_capped(src, 10)
    assert len(trace.steps) == 10
    full, _ = traced(src)
    assert len(trace.steps) + trace.steps_unrecorded == len(full.steps)
    final = trace.last
    assert final.tensors[final.bindings["h"]].value.values == ns["h"].tolist()


def traced_capped(source, cap):
    ns: dict = {}
    return gradtrace.trace_code("import torch\n" + source, ns, max_steps=cap), ns


def test_dot_ids_are_deterministic():
    a, _ = traced("x = torch.tensor(1., requires_grad=True)\ny = (x * 2).exp()\n")
    b, _ = traced("x = torch.tensor(1., requires_grad=True)\ny = (x * 2).exp()\n")
    assert a.steps == b.steps


def test_trace_of_a_function():
    def f(x):
        y = x * 3
        z = y.sin()
        return z

    x = torch.tensor(0.5, requires_grad=True)
    trace = gradtrace.trace(f, x)
    assert [s.code for s in trace.steps] == ["y = x * 3", "z = y.sin()", "return z"]
    assert trace.steps[-1].bindings["f().x"] == trace.steps[-1].bindings.get("f().x")
    assert trace.steps[-1].tensors[trace.steps[-1].bindings["f().z"]].value.values == f(x).item()


def test_nodes_remember_the_module_that_made_them():
    src = (
        "model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))\n"
        "y = model(torch.ones(4, 2)).sum()\n"
    )
    trace, ns = traced(src)
    nodes = trace.steps[-1].nodes
    by_module = {}
    for n in nodes.values():
        by_module.setdefault(n.module, []).append(n.name)
    assert set(by_module) == {"model.0", "model.1", "model.2", ""}
    assert by_module[""] == [ns["y"].grad_fn.name()]
    relu_name = torch.relu(torch.ones(1, requires_grad=True)).grad_fn.name()
    assert by_module["model.1"] == [relu_name]
    from torch.nn.modules import module as mod

    assert not mod._global_forward_pre_hooks and not mod._global_forward_hooks


def test_what_the_namespace_already_held_is_not_news():
    ns: dict = {"torch": torch}
    exec("w = torch.tensor(2., requires_grad=True)\n(w * w).backward()\n", ns)
    trace = gradtrace.trace_code("y = w * 3\n", ns)
    (step,) = trace.steps
    assert [e.kind for e in step.events] == ["create", "bind"]
    assert step.events_of("bind")[0].name == "y"
    assert step.tensors[step.bindings["w"]].grad.values == ns["w"].grad.item()


def test_backward_flow_records_the_reverse_pass_in_engine_order():
    from programs import WHATIF1

    ns: dict = {}
    trace = gradtrace.trace_code(WHATIF1, ns)
    plain, _ = run_plain(WHATIF1)
    (_, b), = trace.events("backward")
    step = trace.steps[-1]
    names = [step.nodes[f.node].name for f in b.flow]
    assert names[0] == plain["f"].grad_fn.name()
    assert names[-1] == "AccumulateGrad"
    # what enters the leaf's AccumulateGrad is the leaf's .grad; what enters x's node is x.grad
    leaf = step.nodes[b.flow[-1].node].variable
    assert b.flow[-1].grad_in[0].values == step.tensors[leaf].grad.values
    x_node = step.tensors[step.bindings["x"]].grad_fn
    entering = next(f for f in b.flow if f.node == x_node).grad_in[0].values
    assert entering == plain["x"].grad.item()
    assert torch.equal(ns["x"].grad, plain["x"].grad)


def test_only_the_first_backward_calls_of_a_trace_are_watched():
    from gradtrace.tracer.watch import MAX_WATCHED_CALLS

    src = (
        "w = torch.tensor(2., requires_grad=True)\n"
        f"for i in range({MAX_WATCHED_CALLS + 3}):\n"
        "    (w * w).backward()\n"
    )
    trace, ns = traced(src)
    flows = [e.flow for _, e in trace.events("backward")]
    assert len(flows) == MAX_WATCHED_CALLS + 3
    assert all(flows[:MAX_WATCHED_CALLS]) and not any(flows[MAX_WATCHED_CALLS:])
    plain, _ = run_plain("import torch\n" + src)
    assert torch.equal(ns["w"].grad, plain["w"].grad)

"""Big graphs: folding, module groups and the cap on real traces; deep chains; what a Trace keeps alive.

Every count checked here comes from PyTorch (walking ``grad_fn`` directly or
``numel()`` of parameters). No test is timed: timings live in ``benchmarks/``.
"""

from __future__ import annotations

import gc
import importlib
import json
import math
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest
import torch
from torch import nn

import gradtrace
from gradtrace.render.fold import MAX_NODES, fold, folded_dot, folded_text, plan_dot
from gradtrace.render.svg import dot_binary, dot_to_svg
from gradtrace.tracer.summary import summarize

SRC = Path(__file__).resolve().parents[1] / "src"


def torch_names(t: torch.Tensor) -> list[str]:
    """The name of every node behind ``t`` as PyTorch reports it (iterative walk)."""
    seen, out, todo, keep = set(), [], [t.grad_fn], []
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        out.append(node.name())
        todo.extend(n for n, _ in node.next_functions)
    return out


def chain(n: int, body: str = "h = h * 1.0001") -> tuple[gradtrace.Trace, dict]:
    ns: dict = {}
    src = f"import torch\nh = torch.ones(1, requires_grad=True)\nfor _ in range({n}):\n    {body}\n"
    return gradtrace.trace_code(src, ns, max_steps=40), ns


# ------------------------------------------------------------------ folding
def test_a_loop_of_one_op_folds_into_one_block_counted_as_torch_counts():
    trace, ns = chain(3000)
    muls = torch_names(ns["h"]).count("MulBackward0")
    plan = fold(trace.last)
    [block] = plan.blocks
    assert muls == 3000
    assert block.kind == "fold" and block.count == muls and len(block.nodes) == muls
    assert block.label == f"× {muls:,}: MulBackward0"
    assert {trace.last.nodes[n].name for n in block.nodes} == {"MulBackward0"}
    assert f"{muls:,} nodes folded" in folded_dot(trace.last)


def test_a_two_op_loop_body_folds_with_its_pattern_in_forward_order():
    trace, ns = chain(50, "h = torch.sin(h) * 2")
    names = torch_names(ns["h"])
    plan = fold(trace.last)
    [block] = plan.blocks
    assert block.pattern == ("SinBackward0", "MulBackward0")
    assert block.count == names.count("SinBackward0") == names.count("MulBackward0") == 50
    assert "× 50: SinBackward0 → MulBackward0" in folded_text(plan)


def test_short_runs_stay_and_min_repeat_zero_turns_folding_off():
    trace, _ = chain(3)
    assert fold(trace.last).blocks == ()
    trace, _ = chain(30)
    assert fold(trace.last, min_repeat=0).blocks == ()
    assert fold(trace.last, min_repeat=31).blocks == ()
    assert fold(trace.last, min_repeat=30).blocks[0].count == 30


def test_a_node_a_name_points_at_opens_a_block():
    src = "import torch\nh = torch.ones(1, requires_grad=True)\nfor _ in range(10):\n    h = h * 2\n" \
          "mid = h\nfor _ in range(10):\n    h = h * 3\n"
    trace = gradtrace.trace_code(src, {}, max_steps=200)
    step = trace.last
    plan = fold(step)
    mid, mid_fn = step.bindings["mid"], step.tensors[step.bindings["mid"]].grad_fn
    first, second = sorted(plan.blocks, key=lambda b: b.nodes[0] == mid_fn)
    assert second.nodes[0] == mid_fn  # the node the name points at opens a block, never sits inside one
    assert all(mid_fn not in b.nodes[1:] for b in plan.blocks)
    assert (first.count, second.count) == (10, 10)
    assert first.count + second.count == sum(n.name == "MulBackward0" for n in step.nodes.values())
    assert f'id="gt-e-grad_fn-{mid}-{second.key}"' in plan_dot(step, plan)  # the arrow from mid's tensor


# ----------------------------------------------------------------- modules
class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn1(self.conv1(x)) + x)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.layer1 = nn.Sequential(Block(4), Block(4))
        self.layer2 = nn.Sequential(Block(4), Block(4))
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layer2(self.layer1(self.stem(x))).mean(dim=(2, 3)))


NET_SRC = "import torch\ntorch.manual_seed(0)\nnet = Net()\nx = torch.randn(2, 3, 5, 5)\nloss = net(x).sum()\n"


@pytest.fixture(scope="module")
def net_trace():
    ns = {"Net": Net}
    return gradtrace.trace_code(NET_SRC, ns), ns


def test_collapsed_modules_count_their_nodes_and_parameters(net_trace):
    trace, ns = net_trace
    step = trace.last
    plan = fold(step, collapse=2, max_nodes=None)
    blocks = {b.module: b for b in plan.blocks if b.kind == "module"}
    assert set(blocks) == {"net.layer1", "net.layer2"}
    for path, block in blocks.items():
        module = ns["net"].get_submodule(path.split(".", 1)[1])
        assert block.params == sum(p.numel() for p in module.parameters())
        inside = [n for n in step.nodes.values() if n.module.startswith(path + ".") and not n.is_accumulate]
        assert block.count == len(inside) == len(block.nodes)
        assert block.outputs  # the shape that leaves the group is known
    assert plan.clusters == ("net", "net.head", "net.stem")  # depth 2: drawn as clusters, not collapsed
    dot = plan_dot(step, plan)
    assert 'subgraph "cluster_net" {' in dot and "cluster_net.layer1" not in dot
    assert "net.layer1 (" in dot and f"{blocks['net.layer1'].params:,} params" in dot


def test_uncollapsed_modules_are_nested_clusters_named_by_path(net_trace):
    trace, _ = net_trace
    step = trace.last
    plan = fold(step, max_nodes=None)
    assert plan.blocks == ()
    modules = {n.module for n in step.nodes.values() if n.module}
    assert "net.layer1.0.conv1" in modules
    assert set(plan.clusters) >= modules
    dot = plan_dot(step, plan)
    for path in ("net", "net.layer1", "net.layer1.0", "net.layer1.0.conv1"):
        assert f'subgraph "cluster_{path}" {{' in dot
    conv = next(n for n in step.nodes.values() if n.module == "net.layer1.0.conv1")
    cluster = dot.split('subgraph "cluster_net.layer1.0.conv1" {', 1)[1].split("}", 1)[0]
    assert f'"{conv.id}" [' in cluster


@pytest.mark.skipif(dot_binary() is None, reason="no layout binary")
def test_a_graph_over_the_cap_is_collapsed_to_fit_and_says_so(net_trace):
    trace, _ = net_trace
    step = trace.last
    small = 60
    plan = fold(step, max_nodes=small)
    drawn = len(plan.step.nodes) + len(plan.step.tensors) + len(plan.blocks) + len(plan.step.bindings)
    assert drawn <= small
    assert plan.collapse is not None and "max_nodes=60" in plan.message
    assert plan.total == len(step.nodes) + len(step.tensors)
    assert dot_to_svg(plan_dot(step, plan)).lstrip().startswith("<?xml")


def test_the_collapse_note_says_which_modules_its_boxes_hold(net_trace):
    """The note's numbers are the picture's: each box is named by a module that many parts deep and holds
    the nodes of its deeper sub-modules; the module's own nodes stay drawn."""
    trace, _ = net_trace
    step = trace.last
    plan = fold(step, max_nodes=60)
    k = plan.collapse
    boxes = [b for b in plan.blocks if b.kind == "module"]
    assert k is not None and boxes
    for b in boxes:
        assert len(b.module.split(".")) == k
        assert all(step.nodes[n].module.startswith(b.module + ".") for n in b.nodes)
    drawn = {n.module for n in plan.step.nodes.values()}
    assert any(len(m.split(".")) == k for m in drawn)  # a module k parts deep still draws its own nodes
    assert (f"Sub-modules deeper than {k} path parts drawn as one box per module {k} parts deep "
            f"({boxes[0].module})") in plan.message, plan.message


def test_past_the_cap_the_nearest_boxes_stay_and_the_rest_is_counted():
    src = "import torch\nx = torch.ones(3, requires_grad=True)\nys = [x * i for i in range(60)]\n" \
          "total = sum(y.sum() for y in ys)\n"
    step = gradtrace.trace_code(src, {}).last
    plan = fold(step, max_nodes=40, names=False)
    kept = len(plan.step.nodes) + len(plan.step.tensors)
    assert kept + len(plan.hidden) == len(step.nodes) + len(step.tensors)
    assert kept + len(plan.blocks) <= 40 and plan.hidden
    assert step.bindings["total"] in plan.step.tensors
    assert f"{len(plan.hidden):,} more objects not drawn (max_nodes=40)" in plan.message
    assert "max_nodes=None" in folded_dot(step, max_nodes=40, names=False)
    assert MAX_NODES >= 100


def test_step_graph_folds_a_step_over_the_cap_and_draws_a_small_one_as_before():
    from gradtrace.render.dot import step_dot
    from gradtrace.render.graph import step_graph

    trace, ns = chain(500)
    big = step_graph(trace.last)
    assert torch_names(ns["h"]).count("MulBackward0") == 500
    assert "× 500: MulBackward0" in big.text and "× 500: MulBackward0" in big.source
    assert big.source.count("label=<") <= MAX_NODES
    small = trace.steps[5]
    assert step_graph(small).source == step_dot(small)
    assert step_graph(trace.last, max_nodes=None).source == step_dot(trace.last)


# ------------------------------------------------------------- deep graphs
@pytest.mark.slow  # over 10 s on two loaded cores
def test_a_100k_chain_is_traced_drawn_and_freed_without_a_crash():
    code = textwrap.dedent(
        """
        import torch, gradtrace
        from gradtrace.render.fold import fold, plan_dot
        from gradtrace.render.svg import dot_to_svg
        ns = {}
        src = "import torch\\nh = torch.ones(1, requires_grad=True)\\nfor _ in range(100000):\\n    h = h * 1.0001\\n"
        trace = gradtrace.trace_code(src, ns, max_steps=200)
        step = trace.last
        plan = fold(step)
        dot = plan_dot(step, plan)
        muls, todo, seen = 0, [ns["h"].grad_fn], 0
        while todo:
            node = todo.pop()
            if node is None:
                continue
            muls += node.name() == "MulBackward0"
            todo.extend(n for n, _ in node.next_functions)
        del todo, node
        svg = dot_to_svg(dot)  # a layout child process started and done: then the learner frees the chain
        print(muls, plan.blocks[0].count, trace.steps_unrecorded, "× 100,000: MulBackward0" in svg)
        del ns["h"]
        print("freed")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    counts, freed = done.stdout.split("\n")[:2]
    muls, block, unrecorded, labelled = counts.split()
    assert muls == block == "100000" and labelled == "True" and int(unrecorded) > 0
    assert freed == "freed"


@pytest.mark.slow  # over 10 s on two loaded cores
def test_layouts_in_threads_start_children_with_the_usual_stack_limit_and_raise_it_after():
    """gradtrace's own layout children (several at once) get the usual limit; the raised one is back after the last."""
    code = textwrap.dedent(
        """
        import resource, subprocess, sys
        from gradtrace.tracer.stack import ensure_deep_stack
        base = resource.getrlimit(resource.RLIMIT_STACK)[0]
        raised = ensure_deep_stack()
        if base == resource.RLIM_INFINITY or raised == base:
            print("unlimited")
            raise SystemExit
        def child():
            return subprocess.run(["sh", "-c", "ulimit -s"], capture_output=True, text=True).stdout.strip()
        sys.audit("gradtrace.child_start"); sys.audit("gradtrace.child_start")  # two layouts starting
        first = child()
        sys.audit("gradtrace.child_done")  # one has started its child; the other has not yet
        second = child()
        between = resource.getrlimit(resource.RLIMIT_STACK)[0]
        sys.audit("gradtrace.child_done")
        after = resource.getrlimit(resource.RLIMIT_STACK)[0]
        print(first, second, base // 1024, between == base, after == raised)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    if done.stdout.strip() == "unlimited":
        pytest.skip("the stack limit here is unlimited: gradtrace does not raise it")
    first, second, usual, between, after = done.stdout.split()
    assert first == second == usual
    assert between == after == "True"


# ------------------------------------------------------------------ memory
def test_a_trace_holds_no_tensors():
    ns: dict = {}
    src = "import torch\nw = torch.randn(4, 3, requires_grad=True)\nx = torch.randn(5, 4)\ny = (x @ w).tanh()\n" \
          "loss = y.pow(2).mean()\nloss.backward()\nlast = loss * 2\n"
    trace = gradtrace.trace_code(src, ns)
    refs = {k: weakref.ref(v) for k, v in ns.items() if isinstance(v, torch.Tensor)}
    assert set(refs) == {"w", "x", "y", "loss", "last"}
    ns.clear()
    gc.collect()
    assert [k for k, r in refs.items() if r() is not None] == []
    assert trace.grad("w") is not None and len(trace) == 7  # the trace itself is intact


# --------------------------------------------------- caches keep results exact
def test_values_changed_through_data_show_at_the_step_that_changed_them():
    src = "import torch\nw = torch.tensor([1., 2.], requires_grad=True)\n(w * w).sum().backward()\n" \
          "w.data -= 0.1 * w.grad\nw.grad.data.zero_()\nv = w.detach()\nv += 1\n"
    ns: dict = {}
    trace = gradtrace.trace_code(src, ns)
    values = [s.tensors[s.bindings["w"]].value.values for s in trace.steps[1:]]
    grads = [s.tensors[s.bindings["w"]].grad for s in trace.steps[1:]]
    w = torch.tensor([1.0, 2.0]) - 0.1 * torch.tensor([2.0, 4.0])
    assert values[2] == w.tolist() and values[-1] == (w + 1).tolist() == ns["w"].tolist()
    assert grads[2].values == [2.0, 4.0] and grads[3].values == [0.0, 0.0]


def test_a_statement_that_changes_nothing_repeats_the_previous_state():
    src = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 3\nn = 1\nprint(n)\nz = y + 1\n"
    trace = gradtrace.trace_code(src, {})
    before, same, again = trace.steps[2], trace.steps[3], trace.steps[4]
    assert same.events == () and again.events == ()
    assert same.tensors == before.tensors and same.nodes == before.nodes
    assert dict(same.bindings) == dict(before.bindings)
    assert trace.steps[5].events_of("create")


def test_lazy_summaries_read_and_compare_like_plain_ones():
    from gradtrace.model import Summary

    a = summarize(torch.tensor([0.1, -0.0, 3.0]))
    plain = Summary("[0.1, -0., 3.]", a.values)
    assert a == plain and plain == a and a.text == "[0.1, -0., 3.]"
    assert summarize(torch.tensor([0.0, 1.0])) != summarize(torch.tensor([-0.0, 1.0]))
    assert summarize(torch.tensor([1.0])) != summarize(torch.tensor([1], dtype=torch.int64))
    big = summarize(torch.arange(100.0))
    assert big.stats == (0.0, 49.5, 99.0) and big.text == "min 0. mean 49.5 max 99."
    import pickle

    assert type(pickle.loads(pickle.dumps(big))) is Summary


def test_module_paths_count_parameters_as_torch_does():
    net = Net()
    assert sum(p.numel() for p in net.layer1.parameters()) == math.prod((4, 4, 3, 3)) * 2 + 4 * 2 * 2


# ------------------------------------------------- what dot is handed, counted
def _boxes(dot_source: str) -> int:
    """Boxes in a DOT source of gradtrace's: every tensor, node, block, name and note box has class gt-box."""
    return dot_source.count('class="gt-box')


@pytest.fixture
def handed_to_dot(monkeypatch):
    """Every DOT source the layout binary is run on (the real binary still runs)."""
    from gradtrace.render import svg

    seen: list[str] = []
    real = svg._run

    def run(source: str, fmt: str, timeout: float) -> bytes:
        seen.append(source)
        return real(source, fmt, timeout)

    monkeypatch.setattr(svg, "_run", run)
    return seen


BIG_PROGRAMS = {
    "chain": ("import torch\nh = torch.ones(1, requires_grad=True)\nfor _ in range(3000):\n    h = h * 1.0001\n", {}),
    "wide": ("import torch\nx = torch.ones(3, requires_grad=True)\n"
             "total = torch.stack([(x * i).sum() for i in range(600)]).sum()\ntotal.backward()\n", {}),
    "modules": ("import torch\ntorch.manual_seed(0)\nnet = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), "
                "*[Block(4) for _ in range(30)])\nloss = net(torch.randn(1, 3, 4, 4)).sum()\nloss.backward()\n",
                {"Block": Block}),
    "params_only": ("import torch\nnet = torch.nn.Sequential(*[torch.nn.Linear(2, 2) for _ in range(200)])\n", {}),
    "resnet": ("import torch\ntorch.manual_seed(0)\nnet = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), "
               "*[torch.nn.Sequential(*[Block(4) for _ in range(4)]) for _ in range(3)])\n"
               "loss = net(torch.randn(1, 3, 4, 4)).sum()\nloss.backward()\n", {"Block": Block}),
}


@pytest.mark.skipif(dot_binary() is None, reason="no layout binary")
@pytest.mark.parametrize("program", sorted(BIG_PROGRAMS))
def test_no_picture_of_any_step_hands_dot_more_boxes_than_the_limit(program, handed_to_dot):
    from gradtrace.render.film import FILM_MAX_NODES, film
    from gradtrace.render.graph import step_graph

    src, ns = BIG_PROGRAMS[program]
    trace = gradtrace.trace_code(src, dict(ns), max_steps=40)
    steps = [*trace.steps, trace.last]  # the state after the last recorded step too
    assert max(len(s.nodes) + len(s.tensors) + len(s.bindings) for s in steps) > MAX_NODES  # too big to draw whole
    pictures = [step_graph(step).source for step in steps]  # what .svg() hands to dot
    assert max(_boxes(p) for p in pictures) <= MAX_NODES
    assert any("folded" in p or "not drawn" in p for p in pictures)  # the picture says what it left out
    film(trace)  # the stepper: one layout per distinct folded picture
    assert handed_to_dot and max(_boxes(s) for s in handed_to_dot) <= FILM_MAX_NODES
    assert gradtrace.show(torch.ones(1)).source  # nothing else draws through another path


def test_each_block_says_what_it_unfolds_to(net_trace):
    trace, ns = net_trace
    step = trace.last
    plan = fold(step, collapse=2, max_nodes=None)
    unfolds = plan.unfolds()
    assert set(unfolds) == {b.key for b in plan.blocks} == {"mod:net.layer1", "mod:net.layer2"}
    for key, what in unfolds.items():
        prefix = f"{what['module']}."
        inside = [n.id for n in step.nodes.values() if n.module.startswith(prefix) and not n.is_accumulate]
        assert sorted(what["nodes"]) == sorted(inside) and what["open"] == {"collapse": 3}
        opened = fold(step, max_nodes=None, **what["open"])  # one level deeper: the block's modules show
        assert key not in {b.key for b in opened.blocks}
    chain_trace, _ = chain(100)
    [(key, what)] = fold(chain_trace.last).unfolds().items()
    assert what["kind"] == "fold" and len(what["nodes"]) == 100 and fold(chain_trace.last, min_repeat=0).blocks == ()


def test_names_of_a_collapsed_modules_tensors_go_inside_its_box(net_trace):
    trace, _ = net_trace
    step = trace.last
    inner = [n for n in step.bindings if n.startswith(("net.layer1.", "net.layer2."))]
    plan = fold(step, collapse=2, max_nodes=None)
    assert {b.module for b in plan.blocks} == {"net.layer1", "net.layer2"}
    assert not [n for n in plan.step.bindings if n.startswith(("net.layer1.", "net.layer2."))]
    assert "loss" in plan.step.bindings and "net.stem.weight" in plan.step.bindings
    assert inner or not [n for n in step.bindings if n.startswith("net.")]  # names the tracer gave, if any


def test_trace_json_turns_each_record_into_a_row_once(monkeypatch):
    """Steps share the records of unchanged objects: the JSON makes one row per record object, not per step."""
    json_mod = importlib.import_module("gradtrace.render.json")
    calls = {"_tensor": 0, "_node": 0}
    for name in calls:
        real = getattr(json_mod, name)

        def counted(record, _real=real, _name=name):
            calls[_name] += 1
            return _real(record)

        monkeypatch.setattr(json_mod, name, counted)
    src = "import torch\nw = torch.ones(3, requires_grad=True)\nfor i in range(60):\n    y = (w * i).sum()\n" \
          "    y.backward()\n"
    trace = gradtrace.trace_code(src, {})
    steps = [*trace.steps, *([trace.final] if trace.final is not None else [])]
    data = json.loads(json_mod.trace_json(trace))
    tensors = {id(t) for s in steps for t in s.tensors.values()}
    nodes = {id(n) for s in steps for n in s.nodes.values()}
    shown = sum(len(s.tensors) + len(s.nodes) for s in steps)
    assert (calls["_tensor"], calls["_node"]) == (len(tensors), len(nodes))
    assert len(tensors) + len(nodes) < shown / 2
    # every step still names its rows: the row of each tensor is its record as plain data
    for s, d in zip(trace.steps, data["steps"], strict=True):
        for tid, t in s.tensors.items():
            assert data["tensors"][d["tensors"][tid]]["version"] == t.version


# ------------------------------------------------------- unfolding one block
def test_unfolding_one_module_opens_it_one_level_and_leaves_the_others_folded(net_trace):
    from gradtrace.render.fold import unfold

    trace, ns = net_trace
    step = trace.last
    plan = fold(step, collapse=2, max_nodes=None)
    opened = unfold(step, plan, "mod:net.layer1")
    assert opened is not None
    layer2 = next(b for b in plan.blocks if b.key == "mod:net.layer2")
    assert layer2 in opened.blocks  # the other module: folded exactly as before
    inner = {b.module: b for b in opened.blocks if b.module.startswith("net.layer1.")}
    assert set(inner) == {"net.layer1.0", "net.layer1.1"}  # one level deeper: the blocks of the Sequential
    for path, b in inner.items():
        module = ns["net"].get_submodule(path.removeprefix("net."))
        assert b.params == sum(p.numel() for p in module.parameters())
    layer1 = set(next(b for b in plan.blocks if b.key == "mod:net.layer1").nodes)
    drawn = {n for n in opened.step.nodes if n in layer1}
    assert drawn | {n for b in inner.values() for n in b.nodes} == layer1  # every node of it, drawn or in a sub-block
    assert opened.notes[0].startswith("Unfolded module net.layer1 (")
    assert not [n for n in opened.step.bindings if n.startswith("net.layer1.")]  # its sub-modules keep their names


def test_unfolding_a_run_draws_its_nodes_as_torch_made_them():
    from gradtrace.render.fold import unfold

    trace, ns = chain(30)
    step = trace.last
    plan = fold(step)
    [block] = plan.blocks
    opened = unfold(step, plan, block.key)
    assert opened is not None and opened.blocks == ()
    muls = [n.name for n in opened.step.nodes.values() if n.id in set(block.nodes)]
    assert muls == ["MulBackward0"] * torch_names(ns["h"]).count("MulBackward0") == ["MulBackward0"] * 30


def test_an_unfolded_picture_stays_under_the_cap_or_is_not_made():
    from gradtrace.render.fold import _boxes as plan_boxes
    from gradtrace.render.fold import unfold

    src, ns = BIG_PROGRAMS["modules"]
    trace = gradtrace.trace_code(src, dict(ns))
    step = trace.last
    plan = fold(step, collapse=1, max_nodes=60)
    [block] = [b for b in plan.blocks if b.kind == "module"]
    assert unfold(step, plan, block.key) is None  # 30 blocks of 4 nodes each do not fit in 60 boxes
    plan = fold(step, collapse=2, max_nodes=60)  # 31 module blocks
    assert len(plan.blocks) > 1
    for b in plan.blocks:
        opened = unfold(step, plan, b.key)
        assert opened is not None
        assert plan_boxes(opened, True) + 1 <= 60  # with its note box
        assert set(b.nodes) <= set(opened.step.nodes) | set(opened.owner)
        assert {x.key for x in plan.blocks if x.key != b.key} <= {x.key for x in opened.blocks}
        if opened.hidden:
            assert any("not drawn" in n for n in opened.notes)


@pytest.mark.skipif(dot_binary() is None, reason="no layout binary")
def test_a_folded_film_opens_its_folded_boxes_in_views_laid_out_under_the_cap(handed_to_dot, monkeypatch):
    from gradtrace.render import film as film_fn

    film_mod = importlib.import_module("gradtrace.render.film")
    views_mod = importlib.import_module("gradtrace.render.views")
    src, ns = BIG_PROGRAMS["resnet"]
    run_ns = dict(ns)
    trace = gradtrace.trace_code(src, run_ns)
    f = film_fn(trace)
    assert f["views"] and max(_boxes(s) for s in handed_to_dot) <= film_mod.FILM_MAX_NODES
    own = {s["sheet"] for s in f["steps"]}
    block_ops = {n.name() for n in _nodes_of(run_ns["net"][1][0](torch.randn(1, 4, 4, 4, requires_grad=True)))}
    for step in f["steps"]:
        frame = f["frames"][step["frame"]]
        for dom, k in step["unfold"].items():
            view = f["views"][k]
            assert "gt-m-folded" in frame["classes"][dom]  # only folded boxes open
            assert view["label"] == f["details"][step["details"][dom]]["title"]
            assert view["sheet"] not in own and 'id="gt&#45;unfolded"' in f["sheets"][view["sheet"]]
            shown = f["frames"][view["frame"]]
            heads = {f["rows"][r][0][0] for r in shown["texts"].values()}
            # the unfolded block's own ops, as PyTorch names them for one such block run plainly
            assert {op for op in block_ops if not op.endswith("AccumulateGrad")} <= {h.split(" ")[-1] for h in heads}
            folded = [f["rows"][r][0][0] for r in frame["texts"].values()]
            opened = [f["rows"][r][0][0] for r in shown["texts"].values()]
            assert sum(h.endswith("NativeBatchNormBackward0") for h in opened) > sum(
                h.endswith("NativeBatchNormBackward0") for h in folded)  # the block's batch norm, drawn once opened
    views = sum(len(f["sheets"][v]) for v in {v["sheet"] for v in f["views"]})
    own_bytes = sum(len(f["sheets"][s]) for s in own)
    assert views <= max(views_mod.VIEW_BYTES, own_bytes // 2)
    monkeypatch.setattr(views_mod, "VIEW_BYTES", 0)  # only half the film's own sheets: fewer views, never more bytes
    small = film_fn(trace)
    kept = {v["sheet"] for v in small["views"]}
    assert sum(len(small["sheets"][s]) for s in kept) <= own_bytes // 2
    assert len(small["views"]) < len(f["views"])


def _nodes_of(t: torch.Tensor) -> list:
    """The backward nodes behind ``t`` down to (not into) its leaves' AccumulateGrad (iterative walk)."""
    seen, out, todo = set(), [], [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        todo.extend(n for n, _ in node.next_functions)
    return out

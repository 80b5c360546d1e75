"""gradtrace benchmarks: ``python benchmarks/run.py`` (``--quick`` for fewer repetitions).

Prints a Markdown table and writes it to ``benchmarks/RESULTS.md``. Every
comparison is measured side by side in the same run, with the repetitions of
its contenders interleaved (A, B, A, B, ...), and reported as the ratio of
medians: on a shared, noisy machine ratios are what carry over, absolute times
are not. torch runs on one thread. In-process work is timed in CPU seconds of
this process (``process_time``: robust to other load); pictures in CPU seconds of
this process plus its ``dot`` children; the film and fresh Pythons on the wall clock.

a. ``gradtrace.make_dot(loss).source`` vs ``torchviz.make_dot(loss).source``: ResNet-like net, 5000 wide,
   5000 deep, and the real models (``transformers`` GPT-2/BERT; torchvision's resnet18, resnet50,
   mobilenet_v3_small, vit_b_16 where it imports); and after ``backward()``; and a notebook cell's first
   ``make_dot`` (the package's import plus one call, in fresh processes, on the wall clock)
b. tracing (#9's goals): the 100-iteration MLP loop, every step recorded, traced vs plain in fresh processes;
   time per recorded step of an N-op chain at N = 250 vs 4000; the 4000-op chain uncapped; recursion 400 deep;
   bytes a Trace retains per unchanged node per step (tracemalloc); cold start (the first optimizer)
c. scaling: 2N iterations vs N, for the trace and for the film (the rendering of every step)
d. a chain of 100,000 multiplications: trace + folded picture + ``del h`` in a fresh process; torchviz on it
e. the film of a ~600-step trace vs one layout of one step vs laying out every step
f. memory: peak RSS of the MLP loop traced minus plain, each in a fresh process; a Trace holds no tensors
g. any step's picture of big graphs, folded: fold + DOT + layout; ``gradtrace.show`` of a 100,000-op chain
   built by plain code
h. the film's Python per step
i. real models: tracing one training step vs plain, any step's picture, HTML size, peak RSS, torchview
j. the reverse pass explained in numbers at scale: the page (``gradtrace run --html``) of one elementwise op over
   10⁵, 10⁶ and 10⁷ elements and of an MLP step with an L2 term on a 784×256 weight, vs running it plain

Under Python 3.12 (``PYTHONPATH=src python3.12 benchmarks/run.py``) the same rows run; the goals summary
at the top of RESULTS.md puts each Python's last full run side by side. ``--only NAME ...`` runs a few
benchmarks and replaces just their rows in this Python's section.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import torch  # noqa: E402
import workloads  # noqa: E402

import gradtrace  # noqa: E402

torch.set_num_threads(1)
Row = tuple[str, str, str, str]  # benchmark, measured, result, goal


def interleaved(funcs: dict[str, Callable[[], object]], reps: int, clock: Callable[[], float]) -> dict[str, float]:
    """Median time of each function, their repetitions interleaved; one untimed warm-up each."""
    for f in funcs.values():
        f()
    times: dict[str, list[float]] = {k: [] for k in funcs}
    for _ in range(reps):
        for name, f in funcs.items():
            gc.collect()
            t = clock()
            f()
            times[name].append(clock() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def verdict(ratio: float, goal: float) -> str:
    return f"≤ {goal:g}: {'met' if ratio <= goal else 'missed'}"


def _torchviz_dot(var: Any, params: dict[str, Any] | None = None) -> str:
    """torchviz's DOT source; it recurses once per node, so give it room on deep graphs."""
    import torchviz

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return str(torchviz.make_dot(var, params).source)
    finally:
        sys.setrecursionlimit(limit)


def make_dot_graphs(models: dict[str, workloads.RealModel]) -> dict[str, tuple[Any, dict[str, Any] | None]]:
    """The graphs make_dot is timed on: the ResNet-like net, 5000 wide, 5000 deep, and the real models."""
    graphs: dict[str, tuple[Any, dict[str, Any] | None]] = {
        "ResNet-like": (workloads.resnet_loss()[0], None), "wide 5000": (workloads.wide_loss(5000), None),
        "chain 5000": (workloads.chain_loss(5000), None)}
    for name, real in models.items():
        graphs[name] = (real.loss(), dict(real.model.named_parameters()))
    return graphs


def bench_make_dot(reps: int, models: dict[str, workloads.RealModel]) -> list[Row]:
    rows = []
    for name, (var, params) in make_dot_graphs(models).items():
        nodes = workloads.backward_nodes(var)
        k = max(1, 2000 // nodes)  # small graphs: time k calls in a row, so a repetition is not one millisecond

        def ours(v: Any = var, p: Any = params, k: int = k) -> list[str]:
            return [gradtrace.make_dot(v, p).source for _ in range(k)]

        def theirs(v: Any = var, p: Any = params, k: int = k) -> list[str]:
            return [_torchviz_dot(v, p) for _ in range(k)]

        t = interleaved({"gradtrace": ours, "torchviz": theirs}, reps, time.process_time)
        ratio = t["gradtrace"] / t["torchviz"]
        what = f"make_dot(loss).source, {name}, {nodes} nodes: gradtrace {t['gradtrace'] / k * 1e3:.1f} ms, " \
               f"torchviz {t['torchviz'] / k * 1e3:.1f} ms" + (f" (each timed {k} calls in a row)" if k > 1 else "")
        goal = f"≤ 0.7 (stretch 0.3): {'met, stretch met' if ratio <= 0.3 else 'met' if ratio <= 0.7 else 'missed'}"
        rows.append((f"a. make_dot vs torchviz, {name}", what, f"{ratio:.2f}×", goal))
    return rows


def bench_make_dot_after_backward() -> list[Row]:
    import torchviz

    loss, net = workloads.resnet_loss(blocks=2)
    loss.backward()
    try:
        theirs = f"works ({len(torchviz.make_dot(loss, show_saved=True).source)} chars)"
    except RuntimeError as exc:
        theirs = f"raises RuntimeError ({str(exc)[:40]}...)"
    source = gradtrace.make_dot(loss, dict(net.named_parameters()), show_saved=True).source
    freed = source.count("freed")
    return [("a. make_dot after backward()", f"show_saved=True after loss.backward(): torchviz {theirs}; gradtrace "
             f"draws {freed} freed saved tensors", "works", f"works: {'met' if freed else 'missed'}")]


def _spread(values: list[float]) -> str:
    """Median and range of wall times, in ms."""
    return f"{statistics.median(values) * 1e3:.0f} ms ({min(values) * 1e3:.0f}–{max(values) * 1e3:.0f})"


def bench_first_dot(reps: int) -> list[Row]:
    """``import P; P.make_dot(loss, params).source`` in fresh processes, gradtrace and torchviz interleaved.

    torch is imported, the graph built and a full collection run before the clock starts (torch's import leaves
    one due, 0.2–0.3 s here, which otherwise lands on whichever contender allocates first). The ratio is
    gradtrace's import plus call to torchviz's import plus call; the figures also show each call alone
    (torchviz's import pulls setuptools in through ``distutils``, most of its first call).
    """
    rows = []
    for graph, what in (("tiny", "(x * w).sum()"), ("resnet", "ResNet-like net (torch.nn only)")):
        runs: dict[str, list[dict[str, Any]]] = {"gradtrace": [], "torchviz": []}
        for _ in range(reps):
            for kind, got in runs.items():
                data, rc, _ = child("first_dot", kind, graph, timeout=300)
                if rc != 0:
                    return rows + [(f"a. first make_dot, {graph}", f"{kind}: exit {rc}: {data.get('stderr', '')}",
                                    "failed", "≤ 1.5: missed")]
                got.append(data)
        total = {k: [d["import_s"] + d["call_s"] for d in v] for k, v in runs.items()}
        ours, theirs = statistics.median(total["gradtrace"]), statistics.median(total["torchviz"])
        ratio = ours / theirs
        text = (f"{what}, {reps} fresh processes each, interleaved, wall, import + first make_dot(...).source: "
                f"gradtrace {_spread(total['gradtrace'])}, torchviz {_spread(total['torchviz'])}; the call alone: "
                f"gradtrace {_spread([d['call_s'] for d in runs['gradtrace']])}, "
                f"torchviz {_spread([d['call_s'] for d in runs['torchviz']])}")
        rows.append((f"a. first make_dot in a fresh process, {graph}", text, f"{ratio:.2f}×", verdict(ratio, 1.5)))
    return rows


def loop_goal() -> float:
    """#9's bar for the MLP loop: ≤ 2.0× plain on Python 3.12+ (sys.monitoring), ≤ 2.5× on 3.10/3.11."""
    return 2.0 if sys.version_info >= (3, 12) else 2.5


def fresh_medians(kinds: dict[str, list[str]], reps: int, timeout: float) -> tuple[dict[str, float], dict[str, Any]]:
    """Median ``cpu_s`` of each kind of child, fresh processes interleaved (A, B, A, B, ...); and the last data."""
    times: dict[str, list[float]] = {k: [] for k in kinds}
    last: dict[str, Any] = {}
    for _ in range(reps):
        for kind, args in kinds.items():
            data, rc, _ = child(*args, timeout=timeout)
            if rc != 0:
                raise ChildFailed(f"{' '.join(args)}: exit {rc}: {data.get('stderr', '')}")
            times[kind].append(float(data["cpu_s"]))
            last[kind] = data
    return {k: statistics.median(v) for k, v in times.items()}, last


class ChildFailed(RuntimeError):
    """A measurement in a fresh process failed or ran out of time."""


def bench_overhead(reps: int) -> list[Row]:
    goal = loop_goal()
    try:
        t, data = fresh_medians({"plain": ["mlp", "plain"], "traced": ["mlp", "traced"]}, reps, 600)
    except ChildFailed as exc:
        return [("b. MLP loop, every step recorded", str(exc)[:200], "failed", f"≤ {goal:g}: missed")]
    steps = int(data["traced"]["steps"])
    ratio = t["traced"] / t["plain"]
    per_step = (t["traced"] - t["plain"]) / steps * 1e6
    what = f"100 iterations, {steps} steps, {reps} fresh processes each, interleaved, CPU after the same warm-up: " \
           f"plain {t['plain'] * 1e3:.0f} ms, traced {t['traced'] * 1e3:.0f} ms ({per_step:.0f} µs per recorded step)"
    return [("b. MLP loop, every step recorded", what, f"{ratio:.1f}×", verdict(ratio, goal))]


def bench_chain_steps(short: int = 250, long: int = 4000, timeout: float = 300, reps: int = 3) -> list[Row]:
    """Time per recorded step of an N-op chain, every step recorded, at two lengths; and the long one's total.

    Fresh processes, the two lengths interleaved, ``reps`` of each (one only when the long one takes over 30 s).
    """
    smalls: list[float] = []
    bigs: list[dict[str, Any]] = []
    for _ in range(reps):
        small, _, _ = child("uncapped", str(short), timeout=timeout)
        if "cpu_s" not in small:
            return [("b. chain, time per recorded step", f"N = {short} failed: {small.get('stderr', '')}",
                     "failed", "≤ 1.5: missed")]
        smalls.append(float(small["cpu_s"]) / int(small["steps"]) * 1e3)
        big, rc, wall = child("uncapped", str(long), timeout=timeout)
        if rc != 0:
            why = f"not done in {timeout:.0f} s wall" if rc == TIMED_OUT else f"exit {rc}: {big.get('stderr', '')}"
            return [("b. chain, time per recorded step", f"N = {short}: {smalls[0]:.2f} ms/step; N = {long}: {why}",
                     "-", "≤ 1.5: missed"),
                    (f"b. {long}-op chain uncapped", f"every step recorded: {why}", f"> {wall:.0f} s",
                     "< 3 s: missed")]
        bigs.append(big)
        if float(big["cpu_s"]) > 30:
            break
    per_small = statistics.median(smalls)
    per_big = statistics.median(float(b["cpu_s"]) / int(b["steps"]) * 1e3 for b in bigs)
    ratio = per_big / per_small
    total = statistics.median(float(b["cpu_s"]) for b in bigs)
    steps = bigs[0]["steps"]
    return [("b. chain, time per recorded step", f"N-op chain, every step recorded, CPU per step, median of "
             f"{len(bigs)} fresh processes each: N = {short}: {per_small:.3f} ms ({small['steps']} steps), "
             f"N = {long}: {per_big:.3f} ms ({steps} steps)", f"{ratio:.2f}×", verdict(ratio, 1.5)),
            (f"b. {long}-op chain uncapped", f"trace_code, every one of its {steps} steps recorded: "
             f"{total:.2f} s CPU (plain {float(bigs[0]['plain_s']) * 1e3:.0f} ms)", f"{total:.2f} s",
             f"< 3 s: {'met' if total < 3 else 'missed'}")]


def bench_recursion(depth: int = 400, timeout: float = 300) -> list[Row]:
    try:
        t, data = fresh_medians({"plain": ["recursion", "plain", str(depth)],
                                 "traced": ["recursion", "traced", str(depth)]}, 1, timeout)
    except ChildFailed as exc:
        return [(f"b. recursion, depth {depth}", str(exc)[:200], "failed", "< 1 s: missed")]
    traced = t["traced"]
    return [(f"b. recursion, depth {depth}", f"a function calling itself {depth} times, one multiplication per "
             f"call, every one of its {data['traced']['steps']} steps recorded: traced {traced:.2f} s CPU, plain "
             f"{t['plain'] * 1e3:.1f} ms ({traced / t['plain']:.0f}×)", f"{traced:.2f} s",
             f"< 1 s: {'met' if traced < 1 else 'missed'}")]


def bench_still(n: int = 500, short: int = 100, long: int = 300) -> list[Row]:
    data, rc, _ = child("still", str(n), str(short), str(long), timeout=600)
    if rc != 0:
        return [("b. bytes per unchanged node per step", f"exit {rc}: {data.get('stderr', '')}", "failed",
                 "≤ 200 B: missed")]
    extra_bytes = int(data[f"bytes_{long}"]) - int(data[f"bytes_{short}"])
    extra_steps = int(data[f"steps_{long}"]) - int(data[f"steps_{short}"])
    nodes = int(data["nodes"])
    per = extra_bytes / extra_steps / nodes
    return [("b. bytes per unchanged node per step", f"a {n}-op chain ({nodes} nodes) left alive, then a loop whose "
             f"statements leave it as it is: the Trace retains {int(data[f'bytes_{short}']) / 1e6:.2f} MB for "
             f"{data[f'steps_{short}']} steps, {int(data[f'bytes_{long}']) / 1e6:.2f} MB for {data[f'steps_{long}']} "
             f"(tracemalloc): {extra_bytes / extra_steps:.0f} B per extra step", f"{per:.1f} B",
             f"≤ 200 B: {'met' if per <= 200 else 'missed'}")]


def bench_cold(reps: int) -> list[Row]:
    goal = loop_goal()
    try:
        t, _ = fresh_medians({"plain": ["cold", "plain"], "traced": ["cold", "traced"]}, reps, 600)
    except ChildFailed as exc:
        return [("b. cold start", str(exc)[:200], "failed", f"≤ {goal:g} (the loop's bar): missed")]
    ratio = t["traced"] / t["plain"]
    return [("b. cold start", f"the first optimizer of a fresh process (it imports torch._dynamo), {reps} fresh "
             f"processes each, interleaved: plain {t['plain']:.2f} s, traced {t['traced']:.2f} s CPU",
             f"{ratio:.2f}×", f"≤ {goal:g} (the loop's bar): {'met' if ratio <= goal else 'missed'}")]


def bench_scaling(reps: int) -> list[Row]:
    from gradtrace.render.film import film

    small, big = workloads.mlp_source(50), workloads.mlp_source(100)
    t = interleaved({"N": lambda: gradtrace.trace_code(small, {}), "2N": lambda: gradtrace.trace_code(big, {})},
                    reps, time.process_time)
    rows = [("c. scaling, trace", f"MLP loop 100 vs 50 iterations: {t['2N']:.2f} s vs {t['N']:.2f} s CPU",
             f"{t['2N'] / t['N']:.2f}×", verdict(t["2N"] / t["N"], 2.2))]
    tr_small, tr_big = gradtrace.trace_code(small, {}), gradtrace.trace_code(big, {})
    r = interleaved({"N": lambda: film(tr_small), "2N": lambda: film(tr_big)}, max(1, reps // 3),
                    time.perf_counter)
    rows.append(("c. scaling, render (film)", f"film of {len(tr_big)} vs {len(tr_small)} steps: "
                 f"{r['2N']:.2f} s vs {r['N']:.2f} s wall", f"{r['2N'] / r['N']:.2f}×", verdict(r["2N"] / r["N"], 2.2)))
    return rows


TIMED_OUT = -999


def child(*args: str, timeout: float = 600) -> tuple[dict[str, Any], int, float]:
    """Run ``_child.py`` with ``args`` in a fresh Python: its JSON line, its exit code, its wall time."""
    t = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, str(HERE / "_child.py"), *args], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "PYTHONHASHSEED": "0"})
    except subprocess.TimeoutExpired:
        return {"stderr": f"timed out after {timeout:.0f} s"}, TIMED_OUT, time.perf_counter() - t
    wall = time.perf_counter() - t
    lines = done.stdout.strip().splitlines()
    data = json.loads(lines[-1]) if done.returncode == 0 and lines else {"stderr": done.stderr[-300:]}
    if done.returncode < 0:
        import signal

        data["stderr"] = f"killed by {signal.Signals(-done.returncode).name}; its stderr ends: " \
                         f"{' / '.join(done.stderr.strip().splitlines()[-2:])}"
    return data, done.returncode, wall


def bench_chain(n: int) -> list[Row]:
    g, g_rc, g_wall = child("chain", "gradtrace", str(n))
    tv, tv_rc, _ = child("chain", "torchviz", str(n))
    if g_rc == 0:
        total = float(g["trace_s"]) + float(g["render_s"])
        what = (f"{n:,}-op chain: trace {g['trace_s']:.1f} s ({g['recorded']} steps recorded, "
                f"{g['unrecorded']:,} run on), folded picture {g['render_s']:.2f} s "
                f"({'; '.join(map(str, g['blocks']))}), del h {g['free_s']:.2f} s, exit {g_rc}")
        result = f"{total:.1f} s"
        goal = f"≤ 10 s, exit 0: {'met' if total <= 10 and g_rc == 0 else 'missed'}"
    else:
        what, result, goal = f"{n:,}-op chain: exit {g_rc}: {g.get('stderr', '')}", "failed", "≤ 10 s, exit 0: missed"
    tv_text = f"{tv.get('result')} after {float(tv.get('seconds', 0)):.2f} s, exit {tv_rc}"
    picture: list[Row] = []
    if g_rc == 0:
        render = float(g["render_cpu_s"])
        picture = [(f"g. any step's picture, {n:,}-op chain",
                    f"{n:,}-op chain, the state after its last step ({g['nodes']:,} nodes): "
                    f"fold+DOT+layout, CPU s incl. dot ({g['render_s']:.2f} s wall)", f"{render:.2f} s",
                    f"≤ 1 s: {'met' if render <= 1 else 'missed'}")]
    return picture + [("d. 100k chain, gradtrace", what, result, goal),
            ("d. 100k chain, torchviz", f"torchviz.make_dot(h).source on the same chain: {tv_text}", "-", "reported")]


def bench_film() -> list[Row]:
    from gradtrace.render.dot import step_dot
    from gradtrace.render.film import film, film_dot
    from gradtrace.render.fold import fold, plan_dot
    from gradtrace.render.svg import dot_to_svg

    trace = gradtrace.trace_code(workloads.mlp_source(100), {})
    last = trace.steps[-1]
    t = interleaved({"film": lambda: film(trace), "one": lambda: dot_to_svg(step_dot(last))}, 3, time.perf_counter)
    start = time.perf_counter()
    for step in trace.steps:
        dot_to_svg(step_dot(step))
    every = time.perf_counter() - start
    union = film_dot(trace)
    lay = interleaved({"union": lambda: dot_to_svg(union)}, 1, time.perf_counter)["union"]
    ratio = t["film"] / lay
    rows = [("e. film of every step", f"film of {len(trace)} steps {t['film']:.2f} s, of which its one layout "
             f"({union.count('label=<')} boxes) {lay:.2f} s; one step alone {t['one'] * 1e3:.0f} ms; every step "
             f"laid out alone {every:.1f} s ({every / t['film']:.1f}× the film)", f"{ratio:.1f}× its layout",
             f"≈ one layout (≤ 2×): {'met' if ratio <= 2 else 'missed'}")]
    lay_cpu = interleaved({"union": lambda: dot_to_svg(union)}, 1, cpu_with_children)["union"]
    rows.append(("e. layout of the film's one picture", f"the film's single layout ({union.count('label=<')} boxes), "
                 f"CPU s of dot ({lay:.2f} s wall)", f"{lay_cpu:.2f} s",
                 f"≤ 1 s: {'met' if lay_cpu <= 1 else 'missed'}"))
    loss_ns: dict[str, object] = {"ResNetLike": workloads.ResNetLike}
    rsrc = "import torch\ntorch.manual_seed(0)\nnet = ResNetLike()\nx = torch.randn(2, 3, 6, 6)\n" \
           "loss = torch.nn.functional.cross_entropy(net(x), torch.tensor([0, 2]))\n"
    step = gradtrace.trace_code(rsrc, loss_ns).steps[-1]
    plan = fold(step)
    source = plan_dot(step, plan)
    lay = interleaved({"resnet": lambda: dot_to_svg(plan_dot(step, fold(step)))}, 3, cpu_with_children)["resnet"]
    rows.append(("e. layout of one ResNet-like step",
                 f"ResNet-like step ({len(step.nodes)} nodes, {len(step.tensors)} tensors), "
                 f"folded+grouped to {source.count('label=<')} boxes, fold+DOT+layout, CPU s incl. dot", f"{lay:.2f} s",
                 f"≤ 1 s: {'met' if lay <= 1 else 'missed'}"))
    return rows


def bench_memory(reps: int) -> list[Row]:
    peaks: dict[str, list[float]] = {"plain": [], "traced": []}
    for _ in range(reps):
        for kind in peaks:
            data, rc, _ = child("memory", kind)
            if rc == 0:
                peaks[kind].append(float(data["peak_mb"]))
    if not all(peaks.values()):
        return [("f. memory", "a child process failed", "failed", "≤ 50 MB: missed")]
    plain, traced = statistics.median(peaks["plain"]), statistics.median(peaks["traced"])
    rows = [("f. memory, peak RSS", f"MLP loop, fresh processes, peak during the run (after imports): plain "
             f"{plain:.0f} MB, traced {traced:.0f} MB",
             f"{traced - plain:+.1f} MB", f"≤ 50 MB: {'met' if traced - plain <= 50 else 'missed'}")]
    ns: dict[str, Any] = {}
    trace = gradtrace.trace_code(workloads.mlp_source(3), ns)
    refs = [weakref.ref(v) for v in list(ns.values()) if isinstance(v, torch.Tensor)]
    refs += [weakref.ref(p) for p in ns["model"].parameters()]
    ns.clear()
    gc.collect()
    alive = sum(r() is not None for r in refs)
    rows.append(("f. a Trace holds no tensors", f"{len(refs)} traced tensors deleted while the {len(trace)}-step "
                 "Trace is alive", f"{alive} still alive", f"0: {'met' if alive == 0 else 'missed'}"))
    return rows


def cpu_with_children() -> float:
    """CPU seconds of this process and of its finished children (the ``dot`` runs): robust to other load."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _picture_seconds(step: Any) -> tuple[float, int]:
    """CPU time of one step's picture as a notebook shows it (fold + DOT + dot's layout), and its boxes."""
    from gradtrace.render.graph import step_graph

    start = cpu_with_children()
    graph = step_graph(step)
    graph.svg()
    return cpu_with_children() - start, graph.source.count('class="gt-box')


def bench_pictures() -> list[Row]:
    """Every step's picture of big traced programs, each timed alone: the slowest must be ready in 1 s."""
    from gradtrace.render.fold import MAX_NODES

    programs: dict[str, tuple[str, dict[str, Any]]] = {"5000-wide graph": (workloads.wide_source(5000), {}),
                "ResNet-50 layout (width 8)": (workloads.resnet50_source(8), {"ResNet50": workloads.ResNet50}),
                "ResNet-like net": ("import torch\ntorch.manual_seed(0)\nnet = ResNetLike()\n"
                                    "loss = net(torch.randn(2, 3, 6, 6)).sum()\nloss.backward()\n",
                                    {"ResNetLike": workloads.ResNetLike})}
    rows = []
    for name, (source, ns) in programs.items():
        trace = gradtrace.trace_code(source, dict(ns))
        steps = [*trace.steps, trace.last]
        timed = [_picture_seconds(s) for s in steps if s is not None]
        worst, boxes = max(t for t, _ in timed), max(b for _, b in timed)
        size = max(len(s.nodes) + len(s.tensors) for s in steps if s is not None)
        rows.append((f"g. any step's picture, {name}",
                     f"{name}: {len(steps)} steps, up to {size:,} objects, each picture "
                     f"folded to ≤ {boxes} boxes (limit {MAX_NODES}); slowest fold+DOT+layout, CPU s incl. dot",
                     f"{worst:.2f} s", f"≤ 1 s: {'met' if worst <= 1 else 'missed'}"))
    return rows


def bench_show_untraced(n: int = 100_000, reps: int = 3) -> list[Row]:
    """``gradtrace.show(h)`` of an n-op chain built by plain code (no trace): the picture, folded, laid out."""
    from gradtrace.render.graph import step_graph
    from gradtrace.tracer.snapshot import snapshot

    h = torch.ones(1, requires_grad=True)
    for _ in range(n):
        h = h * 1.0001

    def shown() -> None:
        gradtrace.show(h).svg()

    def read_whole() -> None:  # every node read in full first, as show() did before it sketched
        step_graph(snapshot(h)).svg()

    times = interleaved({"show": shown, "whole": read_whole}, reps, cpu_with_children)
    show_s, whole_s = times["show"], times["whole"]
    return [(f"g. show() of an untraced {n:,}-op chain",
             f"gradtrace.show(h).svg() of {n:,} multiplications run plainly: sketch, fold, DOT, layout, CPU s incl. "
             f"dot (every node read in full first: {whole_s:.2f} s, {show_s / whole_s:.2f}×)",
             f"{show_s:.2f} s", f"≤ 1 s: {'met' if show_s <= 1 else 'missed'}")]


def bench_film_python() -> list[Row]:
    """The film's own Python per step (CPU of this process: dot's layout runs in a child and is not counted)."""
    from gradtrace.render.film import film, film_scenes

    trace = gradtrace.trace_code(workloads.mlp_source(100), {})
    t = interleaved({"film": lambda: film(trace), "scenes": lambda: film_scenes(trace)}, 3, time.process_time)
    per_step = t["film"] / len(trace) * 1e3
    scenes = t["scenes"] / len(trace) * 1e3
    goal = "≤ 1 ms: met" if per_step <= 1 else f"≤ 1 ms: missed (building each step's scene alone: {scenes:.2f} ms)"
    return [("h. film Python per step", f"film of the {len(trace)}-step MLP trace: {t['film']:.2f} s CPU in Python",
             f"{per_step:.2f} ms", goal)]


def bench_models(reps: int, models: dict[str, workloads.RealModel], missing: list[str]) -> list[Row]:
    """Real models: tracing a training step, its pictures, its HTML, its memory; torchview where it imports."""
    from gradtrace.render.film import trace_html

    rows: list[Row] = [("i. real models", why, "skipped", "-") for why in missing]
    for name, real in models.items():
        code = compile(real.step, "<plain>", "exec")

        def plain(c: Any = code, r: workloads.RealModel = real) -> None:
            exec(c, r.namespace())

        def traced(r: workloads.RealModel = real) -> None:
            gradtrace.trace_code(r.step, r.namespace())

        t = interleaved({"plain": plain, "traced": traced}, max(3, reps // 2), time.process_time)
        ratio = t["traced"] / t["plain"]
        rows.append((f"i. {name}, tracing one training step", f"zero_grad, forward, backward, step: plain "
                     f"{t['plain'] * 1e3:.0f} ms, traced {t['traced'] * 1e3:.0f} ms CPU", f"{ratio:.1f}×",
                     "reported"))
        trace = gradtrace.trace_code(real.step, real.namespace())
        timed = [_picture_seconds(s) for s in trace.steps]
        worst = max(x for x, _ in timed)
        rows.append((f"i. {name}, any step's picture", f"{len(trace)} steps, up to "
                     f"{max(len(s.nodes) + len(s.tensors) for s in trace.steps):,} objects, ≤ "
                     f"{max(b for _, b in timed)} boxes each; slowest fold+DOT+layout, CPU s incl. dot",
                     f"{worst:.2f} s", f"≤ 1 s: {'met' if worst <= 1 else 'missed'}"))
        start = time.perf_counter()
        page = trace_html(trace)
        html_s = time.perf_counter() - start
        rows.append((f"i. {name}, HTML", f"gradtrace run --html of the step: {len(page) / 1e6:.2f} MB, made in "
                     f"{html_s:.1f} s wall", f"{len(page) / 1e6:.2f} MB", "reported"))
        del trace, page
        peaks: dict[str, float] = {}
        for kind in ("plain", "traced"):
            data, rc, _ = child("model", name, kind)
            if rc == 0:
                peaks[kind] = float(data["peak_mb"])
        if len(peaks) == 2:
            rows.append((f"i. {name}, memory", f"peak RSS of one training step, a fresh process each: plain "
                         f"{peaks['plain']:.0f} MB, traced {peaks['traced']:.0f} MB",
                         f"{peaks['traced'] - peaks['plain']:+.1f} MB", "reported"))
        rows += bench_torchview(name, real, reps)
    return rows


def bench_explain_scale(reps: int, sizes: tuple[int, ...] = (100_000, 1_000_000, 10_000_000)) -> list[Row]:
    """The page of a program whose reverse pass has big gradients made from a few numbers (a sum's, a mean's),
    against the program run plain: the explained arithmetic must not grow with the tensors' size."""
    from gradtrace.render.film import trace_html

    cases = [(f"elementwise op, {n:,} elements", workloads.elementwise_source(n)) for n in sizes]
    cases.append(("MLP step with an L2 term on a 784×256 weight", workloads.l2_mlp_source()))
    rows = []
    for name, source in cases:
        code = compile(source, "<plain>", "exec")
        start = time.process_time()
        trace = gradtrace.trace_code(source, {})
        trace_s = time.process_time() - start
        t = interleaved({"plain": lambda c=code: exec(c, {}), "page": lambda tr=trace: trace_html(tr)},
                        reps, cpu_with_children)
        rows.append((f"j. explain at scale, {name}", f"plain run {t['plain'] * 1e3:.0f} ms, trace "
                     f"{trace_s * 1e3:.0f} ms, page {t['page'] * 1e3:.0f} ms (CPU incl. dot)",
                     f"{t['page'] / t['plain']:.2f}×", "reported"))
        del trace
    return rows


def bench_torchview(name: str, real: workloads.RealModel, reps: int) -> list[Row]:
    """torchview's draw_graph (its own forward under module hooks) vs a forward pass plus gradtrace.make_dot."""
    try:
        import torchview
    except ImportError:
        return [(f"i. {name}, torchview draw_graph", "torchview is not installed (not a gradtrace dependency)",
                 "skipped", "-")] if name in ("GPT-2", "resnet18") else []
    data = real.inputs["ids"] if "ids" in real.inputs else real.inputs["x"]
    params = dict(real.model.named_parameters())

    def ours() -> str:
        return gradtrace.make_dot(real.loss(), params).source

    def theirs() -> str:
        return str(torchview.draw_graph(real.model, input_data=data, device="cpu").visual_graph.source)

    try:
        t = interleaved({"gradtrace": ours, "torchview": theirs}, max(3, reps // 3), time.process_time)
    except Exception as exc:  # noqa: BLE001 - torchview's failure on a model is a finding, not a crash
        return [(f"i. {name}, torchview draw_graph", f"draw_graph fails: {type(exc).__name__}: {str(exc)[:80]}",
                 "fails", "reported")]
    ratio = t["gradtrace"] / t["torchview"]
    return [(f"i. {name}, torchview draw_graph", f"forward + gradtrace.make_dot(loss).source {t['gradtrace'] * 1e3:.0f}"
             f" ms vs torchview.draw_graph(model, input).visual_graph.source (its own forward, depth 3) "
             f"{t['torchview'] * 1e3:.0f} ms CPU", f"{ratio:.2f}×", "reported")]


def environment() -> str:
    from gradtrace.render.svg import layout_engine

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"Python {platform.python_version()}, torch {torch.__version__} (1 thread), layout {layout_engine()}, "
            f"{os.cpu_count()} CPUs, load average {load:.1f} at start")


def table(rows: list[Row]) -> str:
    lines = ["| benchmark | measured | result | goal |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a rough check)")
    parser.add_argument("--chain", type=int, default=100_000, help="length of the chain in (d)")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"), help="where to write the table ('' for nowhere)")
    parser.add_argument("--only", nargs="*", default=[], help="run only these benchmarks (by name)")
    args = parser.parse_args()
    reps = 3 if args.quick else 9
    fresh = 3 if args.quick else 5  # pairs of fresh processes
    env = environment()
    builders, missing = workloads.real_models()
    models = {name: build() for name, build in builders.items()}
    benches: dict[str, Callable[[], list[Row]]] = {
        "make_dot": lambda: bench_make_dot(reps * 2, models), "after_backward": bench_make_dot_after_backward,
        "first_dot": lambda: bench_first_dot(fresh * 2),
        "pictures": bench_pictures, "show_untraced": bench_show_untraced, "film_python": bench_film_python,
        "models": lambda: bench_models(reps, models, missing), "loop": lambda: bench_overhead(fresh),
        "chain_steps": bench_chain_steps, "recursion": bench_recursion, "still": bench_still,
        "cold": lambda: bench_cold(fresh), "scaling": lambda: bench_scaling(reps),
        "chain": lambda: bench_chain(args.chain), "film": bench_film,
        "memory": lambda: bench_memory(max(3, reps // 3)), "explain_scale": lambda: bench_explain_scale(reps // 3)}
    unknown = set(args.only) - set(benches)
    if unknown:
        parser.error(f"unknown benchmark {', '.join(sorted(unknown))}: choose from {', '.join(benches)}")
    rows: list[Row] = []
    started = time.perf_counter()
    for name, bench in benches.items():
        if args.only and name not in args.only:
            continue
        new = bench()
        rows += new
        for row in new:
            print(table([row]).splitlines()[-1], flush=True)
        print(f"[{name}: done at {time.perf_counter() - started:.0f} s]", file=sys.stderr, flush=True)
    section = f"Python {sys.version_info.major}.{sys.version_info.minor}"
    command = " ".join(["python", "benchmarks/run.py", *sys.argv[1:]])
    text = f"## {section}\n\n`{command}`: {env}.\n\n{table(rows)}\n"
    print("\n" + text)
    if args.out:
        out = Path(args.out)
        old = out.read_text(encoding="utf-8") if out.exists() else ""
        if args.only:  # a partial run replaces its own rows in the last full run's section
            text = updated_section(old, section, rows, f"`{command}` re-ran {', '.join(args.only)}: {env}.")
        out.write_text(results_file(old, section, text), encoding="utf-8")


def updated_section(old: str, section: str, rows: list[Row], note: str) -> str:
    """The section of ``old`` for ``section`` with the rows of the same names replaced (new ones added), and a note."""
    head, kept = f"## {section}\n", []
    chunks = {c.split("\n", 1)[0].strip(): c for c in ("\n" + old).split("\n## ")[1:]}
    lines = chunks.get(section, "").splitlines()[1:]
    intro = [line for line in lines if line.strip() and not line.startswith("|")]
    fresh = {r[0]: r for r in rows}
    for line in lines:
        cols = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("|") and len(cols) == 4 and cols[0] not in ("benchmark", "---|---|---|---"):
            kept.append(fresh.pop(cols[0], (cols[0], cols[1], cols[2], cols[3])))
    kept += fresh.values()
    return head + "\n" + "\n\n".join([*intro, note]) + "\n\n" + table(kept) + "\n"


def results_file(old: str, section: str, text: str) -> str:
    """RESULTS.md with this run's section replaced, the goals summary redone over every section, notes kept."""
    parts: dict[str, str] = {}
    for chunk in ("\n" + old).split("\n## ")[1:]:
        parts[chunk.split("\n", 1)[0].strip()] = "## " + chunk.strip() + "\n"
    parts[section] = text
    runs = sorted((k for k in parts if k.startswith("Python ")), key=lambda k: tuple(map(int, k.split()[1].split("."))))
    head = ("# gradtrace benchmarks\n\n`python benchmarks/run.py` rewrites its Python's section below and the goals "
            "summary (`--only NAME ...` replaces just those rows); the notes are written by hand.\n")
    body = [head, summary({k: parts[k] for k in runs})] + [parts[k] for k in runs]
    body += [parts[k] for k in parts if k not in runs and k != "Goals"]
    return "\n".join(body)


def summary(runs: dict[str, str]) -> str:
    """The rows that have a goal, one line each, with each Python's result and verdict side by side."""
    cells: dict[str, dict[str, tuple[str, str, str]]] = {}
    for run, text in runs.items():
        for line in text.splitlines():
            cols = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cols) != 4 or not re.search(r": (met|missed)", cols[3]):
                continue
            bar, _, verdict = cols[3].partition(": ")
            cells.setdefault(cols[0], {})[run] = (cols[2], bar, verdict)
    names = list(runs)
    widest = max(names, key=lambda r: sum(r in by for by in cells.values()), default="")
    order = {cols[0].strip(): i for i, cols in enumerate(line.strip().strip("|").split(" | ")
                                                 for line in runs.get(widest, "").splitlines())}
    cells = dict(sorted(cells.items(), key=lambda kv: order.get(kv[0].strip(), len(order))))
    lines = ["## Goals", "", "| goal | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for goal, by_run in cells.items():
        bars = dict.fromkeys(bar for _, bar, _ in by_run.values())
        row = [f"{goal} ({' / '.join(bars)})"]
        row += [f"{by_run[r][0]}: {by_run[r][2]}" if r in by_run else "-" for r in names]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

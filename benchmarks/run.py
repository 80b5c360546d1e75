"""gradtrace benchmarks: ``python benchmarks/run.py`` (``--quick`` for fewer repetitions).

Prints a Markdown table and writes it to ``benchmarks/RESULTS.md``. Every
comparison is measured side by side in the same run, with the repetitions of
its contenders interleaved (A, B, A, B, ...), and reported as the ratio of
medians: on a shared, noisy machine ratios are what carry over, absolute times
are not. torch runs on one thread. In-process work is timed in CPU seconds of
this process (``process_time``: robust to other load); anything that runs the
``dot`` binary or a fresh Python is timed on the wall clock.

a. ``gradtrace.make_dot(loss).source`` vs ``torchviz.make_dot(loss).source``, ResNet-like net (~1000 nodes)
b. tracing overhead: a 100-iteration MLP training loop, traced vs plain ``exec``
c. scaling: 2N iterations vs N, for the trace and for the film (the rendering of every step)
d. a chain of 100,000 multiplications: trace + folded picture + ``del h`` in a fresh process; torchviz on it
e. the film of a ~600-step trace vs one layout of one step vs laying out every step
f. memory: peak RSS of (b) traced minus plain, each in a fresh process; a Trace holds no tensors
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
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


def bench_make_dot(reps: int) -> list[Row]:
    import torchviz

    loss, _ = workloads.resnet_loss()
    nodes = workloads.backward_nodes(loss)
    t = interleaved(
        {"gradtrace": lambda: gradtrace.make_dot(loss).source, "torchviz": lambda: torchviz.make_dot(loss).source},
        reps, time.process_time,
    )
    ratio = t["gradtrace"] / t["torchviz"]
    what = f"make_dot(loss).source, ResNet-like, {nodes} nodes: gradtrace {t['gradtrace'] * 1e3:.0f} ms, " \
           f"torchviz {t['torchviz'] * 1e3:.0f} ms"
    return [("a. make_dot vs torchviz", what, f"{ratio:.2f}×", verdict(ratio, 0.7))]


def bench_overhead(reps: int) -> list[Row]:
    source = workloads.mlp_source(100)
    code = compile(source, "<plain>", "exec")
    steps = len(gradtrace.trace_code(source, {}))
    t = interleaved({"plain": lambda: exec(code, {}), "traced": lambda: gradtrace.trace_code(source, {})},
                    reps, time.process_time)
    ratio = t["traced"] / t["plain"]
    per_step = (t["traced"] - t["plain"]) / steps * 1e6
    what = f"MLP loop, 100 iterations, {steps} steps: plain {t['plain'] * 1e3:.0f} ms, traced " \
           f"{t['traced'] * 1e3:.0f} ms ({per_step:.0f} µs per recorded step)"
    return [("b. tracing overhead", what, f"{ratio:.1f}×", verdict(ratio, 2.0))]


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


def child(*args: str) -> tuple[dict[str, Any], int, float]:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, str(HERE / "_child.py"), *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = time.perf_counter() - t
    lines = done.stdout.strip().splitlines()
    data = json.loads(lines[-1]) if done.returncode == 0 and lines else {"stderr": done.stderr[-300:]}
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
    return [("d. 100k chain, gradtrace", what, result, goal),
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
    rows.append(("layout of one picture", f"the film's single layout ({union.count('label=<')} boxes)",
                 f"{lay:.2f} s", f"≤ 1 s: {'met' if lay <= 1 else 'missed'}"))
    loss_ns: dict[str, object] = {"ResNetLike": workloads.ResNetLike}
    rsrc = "import torch\ntorch.manual_seed(0)\nnet = ResNetLike()\nx = torch.randn(2, 3, 6, 6)\n" \
           "loss = torch.nn.functional.cross_entropy(net(x), torch.tensor([0, 2]))\n"
    step = gradtrace.trace_code(rsrc, loss_ns).steps[-1]
    plan = fold(step)
    source = plan_dot(step, plan)
    lay = interleaved({"resnet": lambda: dot_to_svg(plan_dot(step, fold(step)))}, 3, time.perf_counter)["resnet"]
    rows.append(("layout of one picture", f"ResNet-like step ({len(step.nodes)} nodes, {len(step.tensors)} tensors), "
                 f"folded+grouped to {source.count('label=<')} boxes, fold+DOT+layout", f"{lay:.2f} s",
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
    args = parser.parse_args()
    reps = 3 if args.quick else 9
    env = environment()
    rows: list[Row] = []
    for bench in (lambda: bench_make_dot(reps * 2), lambda: bench_overhead(reps), lambda: bench_scaling(reps),
                  lambda: bench_chain(args.chain), bench_film, lambda: bench_memory(max(3, reps // 3))):
        rows += bench()
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = f"# gradtrace benchmarks\n\n`python benchmarks/run.py`: {env}.\n\n{table(rows)}\n"
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

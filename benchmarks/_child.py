"""Measurements that need a fresh process; run by ``run.py``, prints one JSON line.

    python benchmarks/_child.py memory plain|traced    peak RSS of the MLP loop, plain or traced
    python benchmarks/_child.py chain gradtrace|torchviz N    the N-op chain: trace + folded picture, or torchviz
    python benchmarks/_child.py model NAME plain|traced    peak RSS of one training step of a real model
    python benchmarks/_child.py mlp plain|traced    CPU seconds of the MLP loop (after the same warm-up)
    python benchmarks/_child.py uncapped N    CPU seconds of tracing an N-op chain, every step recorded
    python benchmarks/_child.py recursion plain|traced DEPTH    CPU seconds of a recursion DEPTH deep
    python benchmarks/_child.py cold plain|traced    CPU seconds of the first optimizer creation
    python benchmarks/_child.py still N K1 K2    bytes a Trace retains: an N-op chain, then K1 or K2 idle steps
    python benchmarks/_child.py first_dot gradtrace|torchviz tiny|resnet    wall seconds of the import and the
        first make_dot(...).source of a fresh process (torch imported, the graph built and gc run before)
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import torch  # noqa: E402
import workloads  # noqa: E402

torch.set_num_threads(1)


def reset_peak() -> bool:
    """Start a new peak-RSS measurement (Linux: writing 5 to clear_refs resets VmHWM)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def memory(kind: str) -> dict[str, object]:
    import gradtrace  # imported by both, so that only the run itself is compared

    source = workloads.mlp_source(100)
    exec(compile(workloads.mlp_source(1), "<warm-up>", "exec"), {})
    reset = reset_peak()
    before = peak_rss_mb()
    if kind == "plain":
        exec(compile(source, "<plain>", "exec"), {})
    else:
        trace = gradtrace.trace_code(source, {})
        assert len(trace) > 0
    return {"kind": kind, "peak_mb": peak_rss_mb(), "before_mb": before, "peak_reset": reset}


def chain_gradtrace(n: int) -> dict[str, object]:
    import gradtrace
    from gradtrace.render.fold import fold, plan_dot
    from gradtrace.render.svg import dot_to_svg

    ns: dict[str, object] = {}
    t0 = time.perf_counter()
    trace = gradtrace.trace_code(workloads.chain_source(n), ns, max_steps=1000)
    t1 = time.perf_counter()
    print(f"traced in {t1 - t0:.1f} s", file=sys.stderr, flush=True)
    step = trace.last
    assert step is not None
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    c1 = time.process_time() + kids.ru_utime + kids.ru_stime
    plan = fold(step)
    svg = dot_to_svg(plan_dot(step, plan))
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    c2 = time.process_time() + kids.ru_utime + kids.ru_stime
    t2 = time.perf_counter()
    print(f"drawn in {t2 - t1:.1f} s; now del h", file=sys.stderr, flush=True)
    del ns["h"]  # frees the 100k-node graph: must not crash
    t3 = time.perf_counter()
    return {
        "trace_s": t1 - t0, "render_s": t2 - t1, "render_cpu_s": c2 - c1, "free_s": t3 - t2, "nodes": len(step.nodes),
        "blocks": [b.label for b in plan.blocks], "svg_chars": len(svg), "recorded": len(trace),
        "unrecorded": trace.steps_unrecorded,
    }


def chain_torchviz(n: int) -> dict[str, object]:
    import torchviz

    h = torch.ones(1, requires_grad=True)
    for _ in range(n):
        h = h * 1.0001
    t0 = time.perf_counter()
    try:
        source = torchviz.make_dot(h).source
        result = f"ok, {source.count('->')} edges"
    except RecursionError as exc:
        result = f"RecursionError: {str(exc)[:60]}"
    t1 = time.perf_counter()
    del h
    return {"result": result, "seconds": t1 - t0}


def model_memory(name: str, kind: str) -> dict[str, object]:
    import gradtrace

    real = workloads.real_models()[0][name]()
    ns = real.namespace(lr=0.01)
    exec(compile(real.step, "<warm-up>", "exec"), dict(ns))  # first-call allocations on both sides
    reset = reset_peak()
    before = peak_rss_mb()
    if kind == "plain":
        exec(compile(real.step, "<plain>", "exec"), ns)
    else:
        trace = gradtrace.trace_code(real.step, ns)
        assert len(trace) > 0
    return {"kind": kind, "peak_mb": peak_rss_mb(), "before_mb": before, "peak_reset": reset}


UNCAPPED = 10**9  # max_steps: record every step


def warm_up() -> None:
    """The same first calls on both sides (torch's lazy imports, the tracer's), so only the timed run differs."""
    import gradtrace

    exec(compile(workloads.mlp_source(1), "<warm-up>", "exec"), {})
    gradtrace.trace_code(workloads.mlp_source(1), {})


def cpu_seconds(kind: str, source: str) -> tuple[float, int]:
    """CPU seconds of running ``source`` plainly or traced (every step recorded), and the steps recorded."""
    import gradtrace

    code = compile(source, "<plain>", "exec")
    gc.collect()
    start = time.process_time()
    if kind == "plain":
        exec(code, {})
        steps = 0
    else:
        steps = len(gradtrace.trace_code(source, {}, max_steps=UNCAPPED))
    return time.process_time() - start, steps


def mlp(kind: str) -> dict[str, object]:
    warm_up()
    seconds, steps = cpu_seconds(kind, workloads.mlp_source(100))
    return {"kind": kind, "cpu_s": seconds, "steps": steps}


def uncapped(n: int) -> dict[str, object]:
    warm_up()
    plain, _ = cpu_seconds("plain", workloads.chain_source(n))
    seconds, steps = cpu_seconds("traced", workloads.chain_source(n))
    return {"n": n, "cpu_s": seconds, "steps": steps, "plain_s": plain}


def recursion(kind: str, depth: int) -> dict[str, object]:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20 * depth))
    warm_up()
    seconds, steps = cpu_seconds(kind, workloads.recursion_source(depth))
    return {"kind": kind, "cpu_s": seconds, "steps": steps}


COLD = "import torch\nmodel = torch.nn.Linear(8, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"


def cold(kind: str) -> dict[str, object]:
    """The first optimizer of a fresh process imports ``torch._dynamo`` (about half a million Python calls)."""
    import gradtrace

    gradtrace.trace_code("a = 1", {})  # the tracer's own first-call work, on both sides
    assert "torch._dynamo" not in sys.modules, "the cold start is not cold: torch._dynamo is already imported"
    seconds, steps = cpu_seconds(kind, COLD)
    return {"kind": kind, "cpu_s": seconds, "steps": steps}


def still(n: int, short: int, long: int) -> dict[str, object]:
    """Bytes the Trace of :func:`workloads.still_source` retains (tracemalloc), for two loop lengths."""
    import tracemalloc

    import gradtrace

    out: dict[str, object] = {"n": n, "nodes": workloads.backward_nodes(workloads.chain_loss(n))}
    gradtrace.trace_code(workloads.still_source(n, 10), {}, max_steps=UNCAPPED)  # caches filled before measuring
    tracemalloc.start()
    for iterations in (short, long):
        gradtrace.trace_code("a = 1", {})  # the module's last trace is now a tiny one
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        ns: dict[str, object] = {}
        trace = gradtrace.trace_code(workloads.still_source(n, iterations), ns, max_steps=UNCAPPED)
        ns.clear()  # the learner's tensors go; what stays is the Trace
        gc.collect()
        out[f"bytes_{iterations}"] = tracemalloc.get_traced_memory()[0] - before
        out[f"steps_{iterations}"] = len(trace)
        del trace
    tracemalloc.stop()
    return out


def first_dot(kind: str, graph: str) -> dict[str, object]:
    """The first ``make_dot`` of a notebook cell: the package's import, then one call, each on the wall clock."""
    if graph == "tiny":
        x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
        var, params = (x * w).sum(), {"x": x, "w": w}
    else:
        var, net = workloads.resnet_loss()
        params = dict(net.named_parameters())
    gc.collect()  # torch's import leaves a full collection due: paid here, not by whichever contender allocates first
    t = time.perf_counter()
    if kind == "gradtrace":
        import gradtrace as package
    else:
        import warnings

        with warnings.catch_warnings():  # torchviz imports distutils' LooseVersion
            warnings.simplefilter("ignore")
            import torchviz as package
    imported = time.perf_counter()
    source = package.make_dot(var, params).source
    done = time.perf_counter()
    return {"import_s": imported - t, "call_s": done - imported, "chars": len(source)}


def main(argv: list[str]) -> None:
    if argv[0] == "memory":
        out = memory(argv[1])
    elif argv[0] == "chain" and argv[1] == "gradtrace":
        out = chain_gradtrace(int(argv[2]))
    elif argv[0] == "chain":
        out = chain_torchviz(int(argv[2]))
    elif argv[0] == "model":
        out = model_memory(argv[1], argv[2])
    elif argv[0] == "mlp":
        out = mlp(argv[1])
    elif argv[0] == "uncapped":
        out = uncapped(int(argv[1]))
    elif argv[0] == "recursion":
        out = recursion(argv[1], int(argv[2]))
    elif argv[0] == "cold":
        out = cold(argv[1])
    elif argv[0] == "first_dot":
        out = first_dot(argv[1], argv[2])
    elif argv[0] == "still":
        out = still(int(argv[1]), int(argv[2]), int(argv[3]))
    else:
        raise SystemExit(__doc__)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])

"""Measurements that need a fresh process; run by ``run.py``, prints one JSON line.

    python benchmarks/_child.py memory plain|traced    peak RSS of the MLP loop, plain or traced
    python benchmarks/_child.py chain gradtrace|torchviz N    the N-op chain: trace + folded picture, or torchviz
    python benchmarks/_child.py model NAME plain|traced    peak RSS of one training step of a real model
"""

from __future__ import annotations

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
    step = trace.last
    assert step is not None
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    c1 = time.process_time() + kids.ru_utime + kids.ru_stime
    plan = fold(step)
    svg = dot_to_svg(plan_dot(step, plan))
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    c2 = time.process_time() + kids.ru_utime + kids.ru_stime
    t2 = time.perf_counter()
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

    model, ids = workloads.transformers_models()[name]
    ns = {"model": model, "ids": ids, "opt": torch.optim.SGD(model.parameters(), lr=0.01)}
    exec(compile(workloads.TRAIN_STEP, "<warm-up>", "exec"), dict(ns))  # first-call allocations on both sides
    reset = reset_peak()
    before = peak_rss_mb()
    if kind == "plain":
        exec(compile(workloads.TRAIN_STEP, "<plain>", "exec"), ns)
    else:
        trace = gradtrace.trace_code(workloads.TRAIN_STEP, ns)
        assert len(trace) > 0
    return {"kind": kind, "peak_mb": peak_rss_mb(), "before_mb": before, "peak_reset": reset}


def main(argv: list[str]) -> None:
    if argv[0] == "memory":
        out = memory(argv[1])
    elif argv[0] == "chain" and argv[1] == "gradtrace":
        out = chain_gradtrace(int(argv[2]))
    elif argv[0] == "chain":
        out = chain_torchviz(int(argv[2]))
    elif argv[0] == "model":
        out = model_memory(argv[1], argv[2])
    else:
        raise SystemExit(__doc__)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])

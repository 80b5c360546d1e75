"""Where a page's time goes: cProfile of the page alone (``trace_html``, as ``gradtrace run --html``), not the tracing.

``python benchmarks/profile_page.py elementwise 1000000`` (one elementwise op over that many elements, summed)
or ``python benchmarks/profile_page.py l2_mlp`` (an MLP step with an L2 term on a 784×256 weight); ``--top N``
rows of the profile, by time spent in each function itself.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import workloads  # noqa: E402

import gradtrace  # noqa: E402
from gradtrace.render.film import trace_html  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=["elementwise", "l2_mlp"])
    parser.add_argument("n", nargs="?", type=int, default=1_000_000, help="elements of the elementwise op")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    source = workloads.elementwise_source(args.n) if args.workload == "elementwise" else workloads.l2_mlp_source()
    trace = gradtrace.trace_code(source, {})
    profile = cProfile.Profile()
    start = time.process_time()
    profile.enable()
    page = trace_html(trace)
    profile.disable()
    print(f"page: {len(page):,} characters, {time.process_time() - start:.3f} s CPU under cProfile")
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()

"""Room on the C stack for freeing deep graphs (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

Once the Python wrappers of a deep graph's nodes exist (and a tracer creates
them all), PyTorch frees that graph recursively: a chain of ~60,000 nodes
overflows the default 8 MiB main-thread stack and kills the process when the
learner deletes the last name. Linux grows the main thread's stack up to the
soft ``RLIMIT_STACK`` checked at the time of growth, so raising the soft limit
(to the hard limit, at most 4 GiB) before tracing makes room for millions of nodes.
"""

from __future__ import annotations

CAP = 4 << 30


def ensure_deep_stack() -> int | None:
    """Raise the soft stack limit; returns the limit in force (None where unknown)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    want = CAP if hard == resource.RLIM_INFINITY else min(hard, CAP)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
            return want
        except (ValueError, OSError):
            return soft
    return soft

"""Room on the C stack for freeing deep graphs (tracer layer).

Place in the pipeline: **tracer** -> model -> explain -> render -> notebook/cli.

Once the Python wrappers of a deep graph's nodes exist (and a tracer creates
them all), PyTorch frees that graph recursively: a chain of ~60,000 nodes
overflows the default 8 MiB main-thread stack and kills the process when the
learner deletes the last name. Linux grows the main thread's stack up to the
soft ``RLIMIT_STACK`` checked at the time of growth, so raising the soft limit
(to the hard limit, at most 4 GiB) makes room for millions of nodes. A trace raises it
once its graph nears what the limit in force can free (:func:`nodes_before_raise`).

Child processes must not inherit the raised limit (a program started by
``subprocess.run`` or ``os.system`` would see ``ulimit -s`` at 4 GiB, and lay
out its memory for it). The limit lives in the process, and ``subprocess``
starts children without running any Python code in them, so the limit is put
back just before any child is started: an audit hook (:func:`sys.addaudithook`)
sees ``subprocess.Popen``, ``os.system``, ``os.exec*``, ``os.posix_spawn`` and
``os.spawn*`` before they start the child. The raised limit comes back at the
next import, ``open``, ``exec``/``compile`` or torch call under the tracer (the
recorder reads its caller's frame), or the next :func:`ensure_deep_stack`,
whichever is first: none of these happens between the audit event and the
start of the child. gradtrace's own layout runs (``dot``, several at once in
threads) are framed by the audit events :data:`CHILD_START` and :data:`CHILD_DONE`:
the raised limit comes back as soon as the last of them has started its child,
and not while another is about to: a script that draws a deep graph and then
deletes it makes no other audit event in between.
"""

from __future__ import annotations

import sys
from typing import Any

CAP = 4 << 30

#: audit events raised just before a new program starts in a child (or in this process)
SPAWN_EVENTS = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile", "pty.spawn",
})
#: raised by gradtrace's renderers before starting a layout child process, and once it has started (and ended)
CHILD_START = "gradtrace.child_start"
CHILD_DONE = "gradtrace.child_done"
#: audit events that mean the program has gone on past starting its child
LATER_EVENTS = frozenset({"import", "open", "exec", "compile", "sys._getframe"})


class _State:
    original: tuple[int, int] | None = None  # the limits found before the first raise
    raised: int | None = None  # the soft limit gradtrace set
    lowered = False  # the original limit is in force for a child being started
    ours = 0  # gradtrace's own layout children being started now (between CHILD_START and CHILD_DONE)
    hooked = False


def ensure_deep_stack() -> int | None:
    """Raise the soft stack limit; returns the limit in force (None where unknown)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if _State.original is None or (not _State.lowered and soft != _State.raised):
        _State.original = (soft, hard)  # first call, or someone set another limit since: that is the base
    want = CAP if hard == resource.RLIM_INFINITY else min(hard, CAP)
    _State.lowered = False
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
        except (ValueError, OSError):
            return soft
        _State.raised = want
        _hook()
        return want
    return soft


#: bytes of C stack that freeing one node of a graph takes, with a wide margin: about 140 measured
#: (a 60,000-node chain fills 8 MiB), and the program's own frames use the same stack
BYTES_PER_NODE = 1024


def nodes_before_raise() -> float:
    """How many backward nodes a trace may read (give Python wrappers) before it must raise the limit.

    The audit hook that keeps children at the usual limit runs on every audit event of the process
    once installed (each ``id()``, each ``frame.f_code``: thousands per traced statement loop), and it
    cannot be removed. So a trace raises the limit only once its graph nears what the limit in force
    can free (8192 nodes with the usual 8 MiB; :func:`ensure_deep_stack` then). Where gradtrace has
    raised it before in this process, it is raised again now (a child may have left it lowered) and
    the answer is infinite, as it is where the limit is already high enough or unknown.
    """
    if _State.hooked:
        ensure_deep_stack()
        return float("inf")
    try:
        import resource
    except ImportError:
        return float("inf")
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    want = CAP if hard == resource.RLIM_INFINITY else min(hard, CAP)
    if soft == resource.RLIM_INFINITY or soft >= want:
        return float("inf")
    return soft // BYTES_PER_NODE


def _hook() -> None:
    if not _State.hooked:
        _State.hooked = True
        sys.addaudithook(_audit)


def _audit(event: str, _args: Any) -> None:
    # runs on every audit event of the process: the common path is two set lookups
    if event in SPAWN_EVENTS:
        if _State.raised is not None and not _State.lowered:
            _lower()
    elif event == CHILD_START:
        _State.ours += 1
    elif event == CHILD_DONE:
        _State.ours = max(0, _State.ours - 1)
        if _State.lowered and not _State.ours:
            _raise_again()
    elif _State.lowered and not _State.ours and event in LATER_EVENTS:
        _raise_again()


def _lower() -> None:
    original = _State.original
    if original is None:
        return
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        if soft != _State.raised:
            return  # the program set its own limit: children get that one
        resource.setrlimit(resource.RLIMIT_STACK, (original[0], hard))
        _State.lowered = True
    except Exception:  # an audit hook must never raise into the program
        pass


def _raise_again() -> None:
    _State.lowered = False
    raised = _State.raised
    if raised is None:
        return
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        if _State.original is not None and soft == _State.original[0]:
            resource.setrlimit(resource.RLIMIT_STACK, (raised, hard))
    except Exception:
        pass

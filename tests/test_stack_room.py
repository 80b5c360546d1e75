"""When a trace raises the stack limit (see ``tracer/stack.py``).

Raising it installs an audit hook that runs on every audit event of the process from then on
(each ``id()`` and ``frame.f_code``: tens of thousands while a training loop is traced), and
an audit hook cannot be removed. So a trace raises the limit only once its graph nears what the
limit in force can free. Each case runs in a child process: the limit and the hook are the
process's. The children lower their own soft limit so that "deep" stays small and quick.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

resource = pytest.importorskip("resource")

PRELUDE = """\
import resource, sys, textwrap
soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
if hard != resource.RLIM_INFINITY and hard < (4 << 20):
    print("skip"); raise SystemExit
resource.setrlimit(resource.RLIMIT_STACK, (2 << 20, hard))  # 2 MiB: a few thousand nodes are "deep"
import torch, gradtrace
from gradtrace.tracer import stack
room = stack.nodes_before_raise()
"""


def _child(body: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], capture_output=True,
                          text=True, timeout=600, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    if done.stdout.strip() == "skip":
        pytest.skip("the hard stack limit here is below 4 MiB")
    return done.stdout.split()


@pytest.mark.slow  # over 10 s on two loaded cores
def test_a_small_graph_leaves_the_limit_and_adds_no_audit_hook() -> None:
    """The benchmark's training loop: a few nodes per step, never near the limit."""
    out = _child("""
        src = '''import torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        x = torch.randn(32, 8)
        y = torch.randn(32, 1)
        for i in range(20):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        '''
        gradtrace.trace_code(textwrap.dedent(src), {})
        print(room < float("inf"), resource.getrlimit(resource.RLIMIT_STACK)[0] == 2 << 20, stack._State.hooked)
    """)
    assert out == ["True", "True", "False"]


@pytest.mark.slow  # over 10 s on two loaded cores
def test_a_deep_chain_raises_the_limit_before_it_is_freed() -> None:
    """A chain past the room, traced step by step, then freed by the learner: no crash."""
    out = _child("""
        n = 20 * int(room)
        ns = {}
        src = f"import torch\\nh = torch.ones(1, requires_grad=True)\\nfor _ in range({n}):\\n    h = h * 1.0001\\n"
        gradtrace.trace_code(src, ns, max_steps=50)  # the rest runs unrecorded; the last step reads it all
        raised = resource.getrlimit(resource.RLIMIT_STACK)[0] > 2 << 20
        del ns["h"]
        print(raised, stack._State.hooked, "freed")
    """)
    assert out == ["True", "True", "freed"]


@pytest.mark.slow  # over 10 s on two loaded cores
def test_a_deep_chain_walked_and_freed_by_the_program_after_recording_stopped() -> None:
    """Past ``max_steps`` nothing is read, so no read can ask for room: the program builds a chain past
    the room, walks its nodes itself (each gets a Python wrapper) and frees it, all unrecorded."""
    out = _child("""
        n = 20 * int(room)
        src = (f"import torch\\nh = torch.ones(1, requires_grad=True)\\nfor _ in range({n}):\\n    h = h.sin()\\n"
               "g = h.grad_fn\\nwhile g is not None and g.next_functions:\\n    g = g.next_functions[0][0]\\n"
               "del h, g\\nfreed = True\\n")
        ns = {}
        gradtrace.trace_code(src, ns, max_steps=50)
        print(ns["freed"], resource.getrlimit(resource.RLIMIT_STACK)[0] > 2 << 20)
    """)
    assert out == ["True", "True"]


@pytest.mark.slow  # over 10 s on two loaded cores
def test_a_deep_chain_read_and_freed_within_one_statement() -> None:
    """Module outputs read as each forward returns (a deep unrolled loop inside one call), the chain freed
    before the statement ends (``.item()``): the limit is raised by the reads themselves."""
    out = _child("""
        n = 20 * int(room)
        class Step(torch.nn.Module):  # the learner's library: its code is not traced, its modules are
            def forward(self, h):
                return h * 1.0001
        class Unrolled(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.step = Step()
            def forward(self, h):
                for _ in range(n):
                    h = self.step(h)
                return h
        ns = {"Unrolled": Unrolled}
        src = "import torch\\nvalue = Unrolled()(torch.ones(1, requires_grad=True)).sum().item()\\n"
        trace = gradtrace.trace_code(src, ns)
        print(resource.getrlimit(resource.RLIMIT_STACK)[0] > 2 << 20, ns["value"] > 1, len(trace.steps) > 0)
    """)
    assert out == ["True", "True", "True"]

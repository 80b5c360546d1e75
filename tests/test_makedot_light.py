"""A notebook cell's first ``make_dot`` imports only what drawing needs: no tracer, no renderer.

Each check runs a fresh Python (this test process has imported everything already) and reads
which gradtrace modules ``import gradtrace; gradtrace.make_dot(...)`` left in ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gradtrace
from gradtrace.makedot import make_dot

SRC = str(Path(gradtrace.__file__).resolve().parents[1])
#: what a plain make_dot needs: the package root, the model its views register into, the gc pause, makedot
LIGHT = {"gradtrace", "gradtrace._gc", "gradtrace.makedot", "gradtrace.model"}

TINY = """
x = torch.randn(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
y = (x * w).sum()
params = {"x": x, "w": w}
"""

RESNET_LIKE = """
from torch import nn

class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))

torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), Block(8), Block(8),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
y = nn.functional.cross_entropy(net(torch.randn(2, 3, 6, 6)), torch.tensor([0, 2]))
params = dict(net.named_parameters())
"""


def loaded_after(build: str, call: str) -> tuple[set[str], str]:
    """The gradtrace modules a fresh Python holds after ``build`` then ``import gradtrace`` and ``call``."""
    code = (f"import json, sys, torch\n{build}\nimport gradtrace\nsource = {call}.source\n"
            "print(json.dumps([m for m in sys.modules if m.split('.')[0] == 'gradtrace']))\n"
            "print(json.dumps(source))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    modules, source = done.stdout.splitlines()[-2:]
    return set(json.loads(modules)), json.loads(source)


@pytest.mark.parametrize("build", [TINY, RESNET_LIKE], ids=["tiny", "resnet-like"])
@pytest.mark.parametrize("call", ["gradtrace.make_dot(y)", "gradtrace.make_dot(y, params)"])
def test_a_first_make_dot_imports_no_tracer_and_no_renderer(build, call):
    modules, source = loaded_after(build, call)
    assert "gradtrace.makedot" in modules  # the list is the real one
    assert modules <= LIGHT, f"make_dot imported {sorted(modules - LIGHT)}"
    assert "AccumulateGrad" in source and "fillcolor=lightblue" in source


def test_saved_values_still_read_through_the_tracer():
    modules, source = loaded_after(TINY, "gradtrace.make_dot(y, params, show_saved=True, show_attrs=True)")
    assert "gradtrace.tracer.graph" in modules  # the detail path is the tracer's reader, imported when asked
    assert "self" in source and "other" in source


def test_a_name_that_needs_cleaning_is_still_cleaned():
    x = torch.tensor([1.0], requires_grad=True)
    source = make_dot((x * 2).sum(), {"tab\tend\x07": x}).source
    assert "tab end\\\\x07" in source  # clean(): a tab as a space, a control character as \\xNN


def test_a_deep_graph_still_gets_room_on_the_c_stack():
    build = ("import resource\nsoft = resource.getrlimit(resource.RLIMIT_STACK)[0]\n"
             "y = torch.ones(1, requires_grad=True)\nfor _ in range(20_000):\n    y = y * 1.0\n")
    code = (f"import torch\n{build}\nimport gradtrace, resource\ngradtrace.make_dot(y)\n"
            "print(soft, resource.getrlimit(resource.RLIMIT_STACK)[0])\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    before, after = (int(v) for v in done.stdout.split())
    if before == -1 or before >= 4 << 30:
        pytest.skip("the soft stack limit is already unlimited or at gradtrace's cap")
    assert after > before

"""The example scripts: the same output under ``gradtrace run`` as under plain ``python``,
and traces that tell what the seeds claim (numbers always computed by PyTorch here).
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from programs import gradtrace_command

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
COMMAND = gradtrace_command()  # the entry point of the Python running the tests
ALL = sorted(p.name for p in EXAMPLES.glob("*.py"))
# Each runs python and gradtrace in subprocesses (10-16 s on two loaded cores): the fast lane keeps one of them.
FAST = {"whatif1.py"}


def run_both(name: str, tmp_path: Path):
    """(plain python result, gradtrace result, the trace's JSON)."""
    script = str(EXAMPLES / name)
    env = dict(os.environ, PYTHONHASHSEED="0")
    plain = subprocess.run([sys.executable, script], capture_output=True, text=True, cwd=tmp_path, env=env,
                           timeout=600, check=False)
    out = tmp_path / "trace.json"
    traced = subprocess.run([*COMMAND, "run", script, "--json", str(out)], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=600, check=False)
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    return plain, traced, data


def learner_stderr(stderr: str) -> str:
    return "".join(ln for ln in stderr.splitlines(keepends=True) if not ln.startswith("gradtrace: "))


def grads_by_torch(name: str) -> dict[str, list | float]:
    """Run the example in this process (plain PyTorch) and read every named tensor's .grad."""
    ns = runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    out = {}
    for key, value in ns.items():
        if isinstance(value, torch.Tensor) and (value.is_leaf or value.retains_grad) and value.grad is not None:
            out[key] = value.grad.tolist()
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            cache[name] = run_both(name, tmp_path_factory.mktemp(name.removesuffix(".py")))
        return cache[name]

    return get


def steps_with(data: dict, kind: str) -> list[tuple[int, dict]]:
    return [(s["index"], e) for s in data["steps"] for e in s["events"] if e["kind"] == kind]


# ---------------------------------------------------------------- differential: python vs gradtrace run
@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in ALL])
def test_same_output_as_python(name, results):
    plain, traced, data = results(name)
    assert traced.returncode == plain.returncode
    assert traced.stdout == plain.stdout
    assert learner_stderr(traced.stderr) == plain.stderr
    assert data is not None  # the trace is written, also when the script fails
    if plain.returncode == 0:
        expected = grads_by_torch(name)
        for key, grad in expected.items():
            assert data["grads"].get(key) == grad, key


# ---------------------------------------------------------------- the forum thread
def _forum() -> float:
    x = torch.tensor(42.0, requires_grad=True)
    (x ** 2 + x ** 3).backward()
    return x.grad.item()


def _whatif1() -> float:
    leaf = torch.tensor(42.0, requires_grad=True)
    x = leaf ** 2
    x.retain_grad()
    (x + x ** 3).backward()
    return x.grad.item()


def _whatif2() -> float:
    leaf = torch.tensor(42.0, requires_grad=True)
    y = leaf ** 2
    x = y ** 3
    x.retain_grad()
    (y + x).backward()
    return x.grad.item()


@pytest.mark.parametrize(
    "name, by_torch, by_hand",
    [
        ("forum_original.py", _forum, 2 * 42 + 3 * 42 ** 2),
        ("whatif1.py", _whatif1, 1 + 3 * (42 ** 2) ** 2),
        ("whatif2.py", _whatif2, 1),
    ],
)
def test_forum_gradients(name, by_torch, by_hand, results):
    _, traced, data = results(name)
    assert traced.returncode == 0
    assert data["grads"]["x"] == by_torch() == by_hand
    assert data["error"] is None


def test_forum_typo():
    assert _forum() == 5376 != 53376  # the forum post's 53376 has one digit too many


@pytest.mark.parametrize("name", ["whatif1.py", "whatif2.py"])
def test_whatifs_rebind_x_and_mutate_nothing(name, results):
    _, _, data = results(name)
    rebinds = [e for _, e in steps_with(data, "rebind") if e["name"] == "x"]
    assert len(rebinds) == 1
    assert rebinds[0]["old"] != rebinds[0]["new"]
    assert steps_with(data, "mutate") == []


def _graph(data: dict) -> list[tuple]:
    last = data["final"] or data["steps"][-1]
    rows = [data["nodes"][i] for i in last["nodes"].values()]
    return sorted((n["id"], n["name"], json.dumps(n["inputs"])) for n in rows)


def test_temp_variables_give_the_original_graph(results):
    _, _, original = results("forum_original.py")
    _, traced, temp = results("temp_variables.py")
    assert traced.returncode == 0
    assert _graph(temp) == _graph(original)
    assert temp["grads"]["temp0"] == _forum()
    assert [e["name"] for _, e in steps_with(temp, "rebind")] == ["x"]


# ---------------------------------------------------------------- the blog
def test_blog_vector_is_float64(results):
    _, _, data = results("blog_vector.py")
    x = torch.from_numpy(__import__("numpy").array([1.0, 2.0, 3.0])).requires_grad_(True)
    (x * x + 4).backward(x)
    assert data["grads"]["x"] == x.grad.tolist()
    last = data["steps"][-1]
    assert data["tensors"][last["tensors"][last["bindings"]["x"]]]["dtype"] == "float64" == str(x.grad.dtype)[6:]


def test_blog_index_and_fixed(results):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x + 2)[0].backward()
    assert results("blog_index.py")[2]["grads"]["x"] == x.grad.tolist()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (2 * x[0] * x[0] + 4 * x[1] * x[1]).backward()
    assert results("blog_fixed.py")[2]["grads"]["x"] == x.grad.tolist()


def test_blog_typo_ends_in_a_clear_error(results):
    plain, traced, data = results("blog_typo.py")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError) as info:
        _ = 2 * x[0] * x[0] + 4 * x[1] * [1]
    assert traced.returncode == 1
    assert data["error"]["type"] == "TypeError"
    assert data["error"]["message"] == str(info.value)
    assert "only integer tensors of a single element can be converted to an index" in str(info.value)
    assert plain.stderr.rstrip().endswith(f"TypeError: {info.value}")


# ---------------------------------------------------------------- in-place change, then a failing backward
def test_inplace_error_is_predicted_then_fails(results):
    plain, traced, data = results("inplace_error.py")
    assert traced.returncode == plain.returncode == 1
    before, after = (int(v) for v in plain.stdout.split())  # the script prints y._version twice
    mutates = steps_with(data, "mutate")
    assert len(mutates) == 1
    mutate_step, event = mutates[0]
    assert (event["version_before"], event["version_after"]) == (before, after)
    assert event["stale"], "the saved y must be marked stale"
    backward_step = next(s["index"] for s in data["steps"] if s["code"].endswith(".backward()"))
    assert mutate_step < backward_step
    predicted = data["steps"][backward_step - 1]["predictions"]
    assert predicted and predicted[0]["saved_version"] == before and predicted[0]["version"] == after
    assert data["error"]["type"] == "RuntimeError"
    assert plain.stderr.rstrip().endswith(data["error"]["message"])

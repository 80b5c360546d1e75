"""Odd input: unusual tensors and autograd features. None may crash the tracer.

Each program runs plain and traced (``check_program``: same values, grads,
versions, names, warnings, exception; bindings and events checked against a
statement-by-statement run). Where the trace cannot show something (values of
a ``meta`` tensor, a large sparse tensor) its summary says so.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from regressions.differential import check_program, run_plain, same_tensor

import gradtrace

SRC = Path(__file__).resolve().parents[1] / "src"


def _info(trace: gradtrace.Trace, name: str):
    last = trace.last
    assert last is not None
    return last.tensors[last.bindings[name]]


DTYPES = {
    "zero_dim": "a = torch.tensor(3.5, requires_grad=True)\nb = a * a\nb.backward()\n",
    "empty": "a = torch.ones(0, 3, requires_grad=True)\nb = a.sum()\nb.backward()\nc = a[:, 1:]\n",
    "integer": "a = torch.arange(6).view(2, 3)\nb = a * 2 + 1\nb[0, 0] = 7\nc = b // 3\n",
    "bool": "a = torch.tensor([True, False, True])\nb = a & ~a\nc = a.sum()\n",
    "complex": (
        "z = torch.tensor([1 + 2j, -1 + 0.5j], requires_grad=True)\n"
        "w = z * z.conj()\nr = w.real.sum()\nr.backward()\n"
    ),
    "float16": "a = torch.linspace(-2, 2, 5, dtype=torch.float16, requires_grad=True)\nb = (a.exp() * 3).sum()\n"
               "b.backward()\n",
    "bfloat16": "a = torch.linspace(-2, 2, 20, dtype=torch.bfloat16, requires_grad=True)\nb = a.tanh()\n"
                "c = b.sum()\nc.backward()\n",
    "nan_inf": (
        "a = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)\n"
        "b = a.log()\nc = 1 / a\nd = (b + c).sum()\nd.backward()\n"
        "e = torch.full((40,), float('nan'))\nf = torch.tensor([float('inf'), -float('inf')])\n"
    ),
    "float64_from_numpy": "import numpy as np\nx = torch.from_numpy(np.array([1., 2., 3.])).requires_grad_()\n"
                          "y = x * x + 4\ny.backward(x)\n",
}


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_dtypes_and_shapes(name: str) -> None:
    check_program("import torch\ntorch.manual_seed(0)\n" + DTYPES[name])


def test_summaries_of_odd_values_are_readable() -> None:
    trace = check_program("import torch\n" + DTYPES["nan_inf"] + DTYPES["empty"] + DTYPES["bfloat16"])
    assert _info(trace, "e").value.stats is not None and "nan" in _info(trace, "e").value.text
    assert "inf" in _info(trace, "f").value.text and "-inf" in _info(trace, "f").value.text
    assert _info(trace, "a").shape == (20,)
    assert _info(trace, "c").value.values == [] or _info(trace, "c").shape == ()


def test_sparse_tensors() -> None:
    source = (
        "import torch\n"
        "i = torch.tensor([[0, 1, 1], [2, 0, 2]])\n"
        "v = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)\n"
        "s = torch.sparse_coo_tensor(i, v, (2, 3))\n"
        "d = s.to_dense()\n"
        "t = torch.sparse.sum(s)\n"
        "t.backward()\n"
        "big = torch.sparse_coo_tensor(torch.tensor([[0, 999]]), torch.tensor([1.0, 2.0]), (1000,))\n"
    )
    trace = gradtrace.trace_code(source, {})
    plain = run_plain(source)
    ns: dict = {}
    gradtrace.trace_code(source, ns)
    assert same_tensor(ns["d"], plain.namespace["d"])
    assert same_tensor(ns["v"].grad, plain.namespace["v"].grad)
    assert "sparse" in _info(trace, "big").value.text and _info(trace, "big").value.values is None
    assert _info(trace, "s").value.values == plain.namespace["d"].tolist()


def test_meta_tensors_say_they_have_no_values() -> None:
    trace = check_program(
        "import torch\n"
        "a = torch.empty(3, 4, device='meta', requires_grad=True)\n"
        "b = (a * 2).sum()\n"
        "b.backward()\n"
    )
    assert "meta" in _info(trace, "a").value.text and _info(trace, "a").value.values is None
    assert _info(trace, "b").device == "meta"


BIG = textwrap.dedent(
    """
    import resource, sys, torch
    import gradtrace
    src = "import torch\\nx = torch.zeros(100_000_000)\\ny = x + 1\\n"
    if sys.argv[1] == "plain":
        exec(src, {})
    else:
        t = gradtrace.trace_code(src, {})
        print(len(t.to_text()), t.last.tensors[t.last.bindings["y"]].value.text)
    print("peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
    """
)


@pytest.mark.slow
def test_a_100_million_element_tensor_is_summarised_without_copies() -> None:
    peaks = {}
    outs = {}
    for how in ("plain", "traced"):
        done = subprocess.run([sys.executable, "-c", BIG, how], capture_output=True, text=True, timeout=300,
                              env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stderr
        outs[how] = done.stdout
        peaks[how] = int(done.stdout.split("peak")[-1])
    # plain holds two 400 MB tensors; a float64 copy for the mean would add 800 MB
    assert peaks["traced"] - peaks["plain"] < 200, peaks
    text_len, summary = outs["traced"].splitlines()[0].split(" ", 1)
    assert int(text_len) < 20_000 and summary.startswith("min 1. mean 1 max 1.")


def test_custom_autograd_function_node_and_saved_tensors() -> None:
    source = (
        "import torch\n"
        "class Cube(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n"
        "        return x ** 3\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        (x,) = ctx.saved_tensors\n"
        "        return 3 * x * x * g\n"
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = Cube.apply(x)\n"
        "s = y.sum()\n"
        "s.backward()\n"
    )
    trace = check_program(source)
    step = next(s for s in trace.steps if s.code.startswith("y = Cube"))
    node = step.nodes[step.tensors[step.bindings["y"]].grad_fn or ""]
    ns: dict = {}
    exec(source.replace("s.backward()\n", ""), ns)
    assert node.name == ns["y"].grad_fn.name()
    assert [s.tensor for s in node.saved] == [step.bindings["x"]]


def test_hooks_registered_by_the_learner_keep_their_effect() -> None:
    check_program(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "x = torch.randn(3, requires_grad=True)\n"
        "h = x.register_hook(lambda g: g * 10)\n"
        "y = x * 2\n"
        "hy = y.register_hook(lambda g: g + 1)\n"
        "model = torch.nn.Linear(3, 2)\n"
        "fh = model.register_forward_hook(lambda m, i, o: o * 0.5)\n"
        "bh = model.register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))\n"
        "out = model(y).sum()\n"
        "out.backward()\n"
        "h.remove()\n"
    )


def test_gradients_of_gradients() -> None:
    check_program(
        "import torch\n"
        "x = torch.tensor([0.5, 1.5], requires_grad=True)\n"
        "y = (x ** 3).sum()\n"
        "(g,) = torch.autograd.grad(y, x, create_graph=True)\n"
        "gg = g.sum()\n"
        "gg.backward()\n"
        "z = (x.sin() * 2).sum()\n"
        "z.backward(create_graph=True)\n"
        "h = x.grad.sum()\n",
        warnings_too=False,  # backward(create_graph=True) warns once per process, in the plain run
    )


def test_torch_func_grad() -> None:
    check_program(
        "import torch\n"
        "from torch.func import grad, vmap\n"
        "f = lambda t: (t.sin() * t).sum()\n"
        "x = torch.tensor([0.1, 0.2, 0.3])\n"
        "g = grad(f)(x)\n"
        "gg = grad(lambda t: grad(f)(t).sum())(x)\n"
        "v = vmap(torch.dot)(torch.ones(2, 3), torch.ones(2, 3))\n"
    )


@pytest.mark.slow
def test_torch_compile_under_tracing() -> None:
    """Caveat, documented. torch.compile works here (the C++ toolchain is present).
    Under tracing, dynamo still compiles, but the trace function and the torch
    function mode break the graph: ``f`` becomes several compiled pieces, each drawn
    as an opaque ``CompiledFunctionBackward`` node (not one node), and dynamo's
    ``torch_dynamo_resume_in_f_at_N`` frames show up as steps. Values and grads
    agree with the plain compiled run within float tolerance (not checked bitwise:
    a different split may fuse differently).
    """
    source = (
        "import torch\n"
        "def f(x):\n"
        "    return torch.sin(x) * 2 + x\n"
        "cf = torch.compile(f)\n"
        "x = torch.linspace(-1, 1, 5, requires_grad=True)\n"
        "y = cf(x)\n"
        "s = y.sum()\n"
        "s.backward()\n"
    )
    plain = run_plain(source)
    ns: dict = {}
    try:
        trace = gradtrace.trace_code(source, ns)
    except Exception as e:  # a missing compiler toolchain must fail the same way plain
        assert plain.exc is not None and type(plain.exc) is type(e)
        return
    assert plain.exc is None
    torch.testing.assert_close(ns["y"], plain.namespace["y"])
    torch.testing.assert_close(ns["x"].grad, plain.namespace["x"].grad)
    last = trace.last
    assert last is not None
    names = {n.name for n in last.nodes.values()}
    assert "CompiledFunctionBackward" in names or "SinBackward0" in names, names
    assert last.tensors[last.bindings["x"]].grad is not None


def test_tensors_created_in_another_thread() -> None:
    check_program(
        "import threading, torch\n"
        "made = []\n"
        "def work():\n"
        "    made.append(torch.ones(3, requires_grad=True) * 2)\n"
        "def spawn():\n"
        "    th = threading.Thread(target=work)\n"
        "    th.start()\n"
        "    th.join()\n"
        "spawn()\n"
        "t = made[0]\n"
        "u = (t * t).sum()\n"
        "u.backward()\n"
    )


def test_anomaly_detection() -> None:
    source = (
        "import torch\n"
        "torch.autograd.set_detect_anomaly(True)\n"
        "x = torch.tensor([0.0, 1.0], requires_grad=True)\n"
        "y = x.sqrt()\n"
        "z = (y * 0).sum()\n"
        "try:\n"
        "    z.backward()\n"
        "    ok = True\n"
        "finally:\n"
        "    torch.autograd.set_detect_anomaly(False)\n"
    )
    plain = run_plain(source)
    assert plain.exc is not None
    ns: dict = {}
    with pytest.raises(type(plain.exc)) as info:
        gradtrace.trace_code(source, ns)
    assert str(info.value) == str(plain.exc)
    assert not torch.is_anomaly_enabled()


def test_inference_mode_and_no_grad() -> None:
    trace = check_program(
        "import torch\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "with torch.inference_mode():\n"
        "    y = x * 2\n"
        "    y.add_(1)\n"
        "with torch.no_grad():\n"
        "    z = x * 3\n"
        "w = x.detach()\n"
        "w.mul_(2)\n"
    )
    reasons = {e.reason for _, e in trace.events("untracked")}  # type: ignore[union-attr]
    assert reasons == {"inference_mode", "no_grad", "detach"}


def test_requires_grad_toggling() -> None:
    check_program(
        "import torch\n"
        "x = torch.ones(3)\n"
        "x.requires_grad_()\n"
        "y = (x * 2).sum()\n"
        "y.backward()\n"
        "x.requires_grad_(False)\n"
        "z = x * 2\n"
        "x.requires_grad = True\n"
        "w = (x * x).sum()\n"
        "w.backward()\n"
    )


def test_module_parameters_are_named_by_their_path() -> None:
    source = (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(3, 2)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x).relu()\n"
        "model = Net()\n"
        "out = model(torch.ones(1, 3)).sum()\n"
        "out.backward()\n"
    )
    plain = run_plain(source)
    trace = gradtrace.trace_code(source, {})
    last = trace.last
    assert last is not None
    params = dict(plain.namespace["model"].named_parameters())
    for pname, p in params.items():
        info = last.tensors[last.bindings[f"model.{pname}"]]
        assert info.is_param and info.shape == tuple(p.shape)
        assert info.grad is not None
        assert same_tensor(torch.tensor(info.grad.values, dtype=p.dtype), p.grad)
    assert "model.fc.weight" in last.bindings


# ---------------------------------------------------------------- objects that cannot be read
# Each program defines one odd object, then does ordinary autograd; the trace must record
# every statement (no "tracer failed"), and the gradient it shows is the one PyTorch computes.
TAIL = (
    "x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\n"
    "y = (x * x * 3).sum()\n"
    "y.backward()\n"
)
ODD = {
    "lazy_linear": (
        "import torch\ntorch.manual_seed(0)\n"
        "m = torch.nn.LazyLinear(2)\n"
        "out = m(torch.ones(1, 3)).sum()\n"
        "out.backward()\n"
    ),
    "non_string_key": "import torch\nglobals()[1] = 'one'\nglobals()[(2, 3)] = torch.ones(2)\n",
    "class_raises": (
        "import torch\n"
        "class Odd:\n"
        "    @property\n"
        "    def __class__(self):\n"
        "        raise RuntimeError('no class')\n"
        "odd = Odd()\n"
    ),
    "repr_and_str_raise": (
        "import torch\n"
        "class Odd(dict):\n"
        "    def __repr__(self):\n"
        "        raise RuntimeError('no repr')\n"
        "    def __str__(self):\n"
        "        raise RuntimeError('no str')\n"
        "class Key(str):\n"
        "    def __repr__(self):\n"
        "        raise RuntimeError('no repr')\n"
        "odd = Odd({Key('k'): torch.zeros(2)})\n"
    ),
    "items_raise": (
        "import torch\n"
        "class Odd(list):\n"
        "    def __getitem__(self, i):\n"
        "        raise RuntimeError('no items')\n"
        "odd = Odd([torch.zeros(2)])\n"
    ),
    "surrogate_name": "import torch\nglobals()['a\\udcff'] = torch.ones(2, requires_grad=True)\n",
}
ODD_STATEMENTS = {  # statements each program runs at module level, TAIL included
    "lazy_linear": 5, "non_string_key": 3, "class_raises": 3, "repr_and_str_raise": 4, "items_raise": 3,
    "surrogate_name": 2,
}
BAD_EXCEPTION = (
    "import torch\n"
    "class Odd(Exception):\n"
    "    def __str__(self):\n"
    "        raise RuntimeError('no str')\n"
    "x = torch.tensor([1.5, -2.0], requires_grad=True)\n"
    "y = (x * x).sum()\n"
    "raise Odd()\n"
)


def _plain_grad(source: str, name: str = "x") -> torch.Tensor:
    ns: dict = {}
    exec(compile(source, "<plain>", "exec"), ns)
    return ns[name].grad


def _shown_grad(trace: gradtrace.Trace, name: str, dtype: torch.dtype) -> torch.Tensor:
    info = _info(trace, name)
    assert info.grad is not None and info.grad.values is not None
    return torch.tensor(info.grad.values, dtype=dtype)


def _no_tracer_failure(caught: list) -> None:
    messages = [str(w.message) for w in caught]
    assert not any("tracer failed" in m or "stopped recording" in m for m in messages), messages


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_objects_do_not_stop_the_trace(name: str) -> None:
    import warnings

    source = ODD[name] + TAIL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = gradtrace.trace_code(source, {})
    _no_tracer_failure(caught)
    assert trace.steps_unrecorded == 0 and len(trace.steps) == ODD_STATEMENTS[name] + 3
    assert same_tensor(_shown_grad(trace, "x", torch.float32), _plain_grad(source))
    text = trace.to_text()
    text.encode("utf-8")  # no lone surrogate reaches the text
    if name == "lazy_linear":
        plain: dict = {}
        exec(compile(source, "<plain>", "exec"), plain)
        for pname, p in plain["m"].named_parameters():
            assert same_tensor(_shown_grad(trace, f"m.{pname}", p.dtype), p.grad)
    if name == "surrogate_name":
        assert "a\\udcff" in trace.last.bindings and "a\\udcff" in text


def test_an_exception_that_cannot_be_printed_keeps_the_trace() -> None:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Exception) as info:
            gradtrace.trace_code(BAD_EXCEPTION, {})
    _no_tracer_failure(caught)
    assert type(info.value).__name__ == "Odd" and info.value.__context__ is None
    trace = gradtrace.last_trace()
    assert trace is not None and trace.error is not None
    assert trace.error.type == "Odd" and trace.error.message.startswith("<unreadable:")
    assert [s.code for s in trace.steps][-3:] == ["x = torch.tensor([1.5, -2.0], requires_grad=True)",
                                                 "y = (x * x).sum()", "raise Odd()"]
    assert "unreadable" in trace.to_text()


def _cli(script: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradtrace", "run", str(script), *args], cwd=script.parent,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**__import__("os").environ, "PYTHONPATH": str(SRC)})


@pytest.mark.parametrize("name", sorted(ODD))
@pytest.mark.slow  # over 10 s on two loaded cores
def test_odd_objects_in_the_command(name: str, tmp_path: Path) -> None:
    import json

    script = tmp_path / "odd.py"
    script.write_text(ODD[name] + TAIL + "print(x.grad.tolist())\n", encoding="utf-8")
    done = _cli(script, "--text", "--json", "t.json", "--html", "t.html")
    assert done.returncode == 0, done.stderr
    assert "please report" not in done.stderr and "tracer failed" not in done.stderr, done.stderr
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert done.stdout.startswith(plain.stdout)
    assert "x.grad" in done.stdout
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert len(data["steps"]) == ODD_STATEMENTS[name] + 4
    assert (tmp_path / "t.html").stat().st_size > 0


@pytest.mark.slow  # over 10 s on two loaded cores
def test_unprintable_exception_in_the_command(tmp_path: Path) -> None:
    script = tmp_path / "odd.py"
    script.write_text(BAD_EXCEPTION, encoding="utf-8")
    done = _cli(script, "--text", "--json", "t.json")
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == plain.returncode == 1
    assert done.stderr.startswith(plain.stderr), done.stderr  # Python's traceback, only one
    assert done.stderr.count("Traceback") == 1
    assert "please report" not in done.stderr and (tmp_path / "t.json").exists()
    assert "raise Odd()" in done.stdout and "unreadable" in done.stdout


@pytest.fixture(scope="module")
def shell():
    pytest.importorskip("IPython")
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython() or get_ipython()  # the process's one test shell, whichever test file started it
    ip.run_line_magic("load_ext", "gradtrace")
    return ip


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_object_in_a_notebook_leaves_later_cells_traced(name: str, shell) -> None:
    import warnings

    shell.user_ns.clear()
    shell.init_user_ns()
    assert shell.run_cell(ODD[name]).success  # defined plainly, earlier in the notebook
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = shell.run_cell("%%gradtrace --no-widget\n" + TAIL)
    assert result.success, result.error_in_exec
    _no_tracer_failure(caught)
    trace = gradtrace.last_trace()
    assert trace is not None and len(trace.steps) == 3 and trace.steps_unrecorded == 0
    plain = _plain_grad(ODD[name] + TAIL)
    assert same_tensor(_shown_grad(trace, "x", torch.float32), plain)
    assert same_tensor(shell.user_ns["x"].grad, plain)

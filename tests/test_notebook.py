"""The notebook layer without a browser: display data, the magic in a real IPython shell, widgets' state.

Numbers come from PyTorch: the same program is run plainly and under ``%%gradtrace``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import torch

import gradtrace
from gradtrace.notebook import assets, settings
from gradtrace.notebook.display import WIDGET_MIME, trace_mimebundle
from gradtrace.notebook.embed import embed_html, film_of, script_json
from gradtrace.notebook.settings import Settings

from programs import WHATIF1, run_plain

pytest.importorskip("IPython")

FORUM = WHATIF1  # the forum's WhatIF(1)


def plain_run(source: str) -> dict:
    """The namespace plain ``exec`` leaves; its exception, if any, raised as plain ``exec`` would."""
    ns, exc = run_plain(source)
    if exc is not None:
        raise exc
    return ns


@pytest.fixture(scope="module")
def forum() -> gradtrace.Trace:
    return gradtrace.trace_code(FORUM)


@pytest.fixture(scope="module")
def shell():
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython() or get_ipython()  # the process's one test shell, whichever test file started it
    ip.run_line_magic("load_ext", "gradtrace")
    return ip


def test_settings_from_env_and_checked(monkeypatch):
    monkeypatch.setenv("GRADTRACE_WIDGET", "ipywidgets")
    assert Settings().widget == "ipywidgets"
    monkeypatch.setenv("GRADTRACE_WIDGET", "nonsense")
    with pytest.warns(UserWarning, match="GRADTRACE_WIDGET"):
        assert Settings().widget == "html"
    with pytest.raises(ValueError, match="must be one of"):
        settings.widget = "react"


def test_bundle_outside_a_kernel_is_text_and_html(forum):
    bundle = forum._repr_mimebundle_()
    assert bundle["text/plain"] == forum.to_text()
    assert WIDGET_MIME not in bundle  # no kernel: no widget
    page = bundle["text/html"]
    assert "<script type='module'>" in page and "export function mount" in _unpacked(page)
    found = re.search(r'<script type="application/json" id="([^"]+)-film" data-gt-film="([^"]+)"[^>]*>(.*?)</script>',
                      page, re.S)
    assert found and found[1] == found[2] and f"id='{found[1]}'" in page  # the film names the element it steps in
    assert isinstance(json.loads(found[3]), str)  # the film travels packed (gzip + base64) as one JSON string
    film = film_of(page)
    assert len(film["steps"]) == len(forum.steps)
    assert "</script" not in page.split("<script type='module'>", 1)[1].rsplit("</script>", 1)[0]


def _loader(page: str) -> str:
    """An embed's loader: the stepper's data (JSON) and the module that reads it, to the end of the fragment."""
    return page[page.index('<script type="application/json" data-gt-stepper='):]


def _unpacked(page: str) -> str:
    """The stepper module an embed carries (the longest base64 text in its loader), unpacked."""
    import base64
    import gzip

    blobs = re.findall(r'"([A-Za-z0-9+/=]{200,})"', _loader(page))
    return max((gzip.decompress(base64.b64decode(b)).decode("utf-8") for b in blobs), key=len)


def test_embed_packs_the_stepper_and_its_css(forum):
    import base64
    import gzip

    page = embed_html(forum)
    loader = _loader(page)
    texts = {gzip.decompress(base64.b64decode(b)).decode("utf-8")
             for b in re.findall(r'"([A-Za-z0-9+/=]{200,})"', loader)}
    assert texts == {assets.widget_esm(), assets.widget_css()}
    assert "DecompressionStream" in loader and _loader(embed_html(forum)) == loader
    assert len(loader) < (len(assets.widget_esm()) + len(assets.widget_css())) / 2  # under half the plain text


def test_embed_loader_is_fixed_code_fed_by_json(forum):
    """The loader module is boot.js as shipped (no data formatted into code); what it loads travels as JSON."""
    page = embed_html(forum)
    module = page.split("<script type='module'>", 1)[1].rsplit("</script>", 1)[0]
    assert module == assets.boot_js()
    found = re.search(r'<script type="application/json" data-gt-stepper="(gradtrace-[0-9a-f]{12})">(.*?)</script>',
                      page, re.S)
    assert found and set(json.loads(found[2])) == {"css", "js"}


def test_bundle_include_exclude(forum):
    assert set(trace_mimebundle(forum, exclude={"text/html"})) == {"text/plain"}
    assert set(trace_mimebundle(forum, include={"text/plain"})) == {"text/plain"}


def test_script_json_cannot_close_its_script():
    text = script_json({"code": "</script><script>alert(1)</script> & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text)["code"].startswith("</script>")


def test_embed_ids_differ_per_display(forum):
    ids = {re.search(r"id='(gt-embed-[^']+)'", embed_html(forum))[1] for _ in range(2)}
    assert len(ids) == 2


def test_one_front_end_shipped_one_way(forum):
    """The widget's ESM, the notebook's static HTML and the standalone page carry the same stepper module."""
    from gradtrace.render.film import trace_html

    esm = assets.widget_esm()
    assert _unpacked(embed_html(forum)) == esm
    assert f'<script type="module">{esm}</script>' in trace_html(forum)
    assert "export function mount" in esm and "export default { render }" in esm
    assert not re.search(r"^import ", esm, re.M), "anywidget cannot resolve a relative import"
    assert esm.count("export default") == 1
    assert ".gt-root" in assets.widget_css() and ".gt-widget" in assets.widget_css()


def test_stepper_widget_holds_the_whole_film(forum):
    pytest.importorskip("anywidget")
    from gradtrace.notebook.display import _film
    from gradtrace.notebook.widget import StepperWidget, stepper_view

    film = _film(forum, "In [1]")
    view = stepper_view(forum, film)
    stepper = view.children[0]
    assert isinstance(stepper, StepperWidget)
    assert stepper.film["title"] == "In [1]" and len(stepper.film["steps"]) == len(forum.steps)
    assert stepper._esm == assets.widget_esm()
    data = stepper._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert data[WIDGET_MIME]["model_id"] == stepper.model_id


def test_plain_fallback_has_one_page_per_step(forum):
    pytest.importorskip("ipywidgets")
    from gradtrace.notebook import show

    view = show(forum, widget="ipywidgets")
    controls, pages = view.children[:2]
    assert len(pages.children) == len(forum.steps)
    assert "<svg" in pages.children[2].value and "PowBackward0" in pages.children[2].value
    play, slider = controls.children
    assert slider.max == play.max == len(forum.steps) - 1


def test_magic_leaves_the_namespace_as_a_plain_run(shell):
    plain = plain_run(FORUM)
    result = shell.run_cell("%%gradtrace --no-widget\n" + FORUM)
    assert result.success
    ns = shell.user_ns
    assert torch.equal(ns["x"].grad, plain["x"].grad)
    assert torch.equal(ns["f"], plain["f"]) and ns["x"].grad_fn.name() == plain["x"].grad_fn.name()
    trace = gradtrace.last_trace()
    assert trace is not None and trace.grad("x") == plain["x"].grad.item()
    assert trace.filename in __import__("linecache").cache  # tracebacks can show the cell's lines


def test_magic_error_shows_trace_then_the_cells_traceback(shell, capsys):
    cell = "y = torch.tensor([1., 2.], requires_grad=True)\nz = (y * 2).sum()\nz.backward()\nz.backward()\n"
    with pytest.raises(RuntimeError) as plain_error:
        plain_run("import torch\n" + cell)
    assert shell.run_cell("import torch").success  # the cell's own notebook imported it (any test order)
    result = shell.run_cell("%%gradtrace --no-widget\n" + cell)
    assert not result.success and type(result.error_in_exec) is type(plain_error.value)
    assert str(result.error_in_exec) == str(plain_error.value)
    trace = gradtrace.last_trace()
    assert trace is not None and trace.error is not None and trace.error.lineno == 4
    frames = []
    tb = result.error_in_exec.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    cell_frames = [i for i, f in enumerate(frames) if f == trace.filename]
    assert cell_frames, frames
    after = frames[cell_frames[0]:]
    assert not any("gradtrace" in f.replace("\\", "/").split("site-packages")[-1] and "/gradtrace/" in f
                   for f in after), after
    assert not any(f.endswith("torch/overrides.py") for f in after)
    assert "stopped by RuntimeError at line 4" in capsys.readouterr().out


def test_magic_options(shell, tmp_path):
    out = tmp_path / "page.html"
    assert shell.run_cell(f"%%gradtrace --max-steps 2 --no-widget --html {out}\na = 1\nb = 2\nc = 3\n").success
    trace = gradtrace.last_trace()
    assert trace is not None and len(trace.steps) == 2 and trace.steps_unrecorded == 1
    assert shell.user_ns["c"] == 3
    if out.exists():  # written when render/html.py is installed
        assert "<html" in out.read_text(encoding="utf-8").lower()


def test_magic_shows_the_last_expression_as_out_like_a_plain_cell(shell):
    plain = plain_run(FORUM)
    result = shell.run_cell("%%gradtrace --no-widget\n" + FORUM + "x.grad\n")
    assert result.success and torch.equal(result.result, plain["x"].grad)
    assert torch.equal(shell.user_ns["_"], plain["x"].grad)
    assert not any(name.startswith("__gradtrace") for name in shell.user_ns)
    quiet = shell.run_cell("%%gradtrace --no-widget\n" + FORUM + "x.grad;\n")
    assert quiet.success and quiet.result is None
    # the shell's own Out cache is not a learner's name
    assert not any(name.startswith("Out") for name in gradtrace.last_trace().steps[-1].bindings)


@pytest.mark.parametrize("inner", [
    "get_ipython().run_cell_magic('gradtrace', '--no-widget', 'inner = 1\\ninner\\n')",
    "get_ipython().run_cell('%%gradtrace --no-widget\\ninner = 1\\ninner\\n')",
])
def test_a_nested_magic_leaves_the_outer_cells_last_value(shell, inner):
    plain = shell.run_cell(f"{inner}\nouter = 2\nouter * 3\n")
    assert plain.success
    del shell.user_ns["inner"], shell.user_ns["outer"]
    result = shell.run_cell(f"%%gradtrace --no-widget\n{inner}\nouter = 2\nouter * 3\n")
    assert result.success, result.error_in_exec  # the outer cell's last statement still runs
    assert result.result == plain.result and shell.user_ns["inner"] == 1 and shell.user_ns["outer"] == 2
    assert not any(name.startswith("__gradtrace") for name in shell.user_ns)


@pytest.mark.parametrize("body", ["a = 1\nb = (\n", "x = 1\n  y = 2\n", "for i in range(3)\n    pass\n",
                                  "!echo hi\nx = )\n"])
def test_a_syntax_error_shows_as_in_a_plain_cell(shell, capsys, body):
    capsys.readouterr()
    plain = shell.run_cell(body)
    plain_out = capsys.readouterr().out
    traced = shell.run_cell("%%gradtrace --no-widget\n" + body)
    traced_out = capsys.readouterr().out
    assert isinstance(plain.error_before_exec, SyntaxError)
    assert type(traced.error_before_exec or traced.error_in_exec) is type(plain.error_before_exec)
    assert "magic.py" not in traced_out and "Traceback" not in traced_out
    assert traced_out == plain_out


@pytest.mark.parametrize("cell", ["x = )\n", "x = (\n", "x = 1\n", "x = 1\n\n"])
def test_a_console_reads_a_gradtrace_cell_as_any_cell_magic(shell, cell):
    assert shell.check_complete("%%gradtrace\n" + cell) == shell.check_complete("%%time\n" + cell)


# ---------------------------------------------------------------- cell scope
WHATIF2 = WHATIF1.replace("x = x ** 2", "y = x ** 2\nx = y ** 3").replace("x3 = x ** 3\n", "").replace(
    "f = x + x3", "f = y + x")


def cell_objects(trace: gradtrace.Trace) -> tuple[set[str], int, int]:
    """Names, tensor count and node count a trace shows over all its steps."""
    names = {n for s in trace.steps for n in s.bindings}
    return names, len({t for s in trace.steps for t in s.tensors}), len({n for s in trace.steps for n in s.nodes})


def plain_objects(source: str) -> tuple[set[str], int, int]:
    """The same counts for ``source`` run alone in a fresh namespace (what the cell itself makes)."""
    alone = gradtrace.trace_code(source, {"torch": torch})
    return cell_objects(alone)


def test_second_cell_shows_only_its_own_objects(shell):
    body1 = FORUM.replace("import torch\n", "")
    body2 = WHATIF2.replace("import torch\n", "")
    assert body2 != body1 and "y = x ** 2" in body2
    shell.run_cell("import torch")
    assert shell.run_cell("%%gradtrace --no-widget\n" + body1).success
    first = gradtrace.last_trace()
    assert shell.run_cell("%%gradtrace --no-widget\n" + body2).success
    second = gradtrace.last_trace()
    assert cell_objects(first) == plain_objects(body1)
    assert cell_objects(second) == plain_objects(body2), "the second cell drew the first cell's objects"
    assert "x3" not in {n for s in second.steps for n in s.bindings}  # WhatIF(1)'s name, left by the first cell
    # the same cell again: the same ids, step by step
    assert shell.run_cell("%%gradtrace --no-widget\n" + body2).success
    again = gradtrace.last_trace()
    assert [s.bindings for s in again.steps] == [s.bindings for s in second.steps]
    assert [sorted(s.tensors) for s in again.steps] == [sorted(s.tensors) for s in second.steps]
    assert [sorted(s.nodes) for s in again.steps] == [sorted(s.nodes) for s in second.steps]


def test_all_shows_the_whole_notebook(shell):
    shell.run_cell("import torch\nleft_over = torch.ones(3, requires_grad=True) * 2\n")
    assert shell.run_cell("%%gradtrace --no-widget\nz = torch.zeros(2)\n").success
    assert "left_over" not in gradtrace.last_trace().last.bindings
    assert shell.run_cell("%%gradtrace --all --no-widget\nz = torch.zeros(2)\n").success
    assert {"left_over", "z"} <= set(gradtrace.last_trace().last.bindings)


def test_cell_shows_what_it_reads_and_what_its_functions_read(shell):
    shell.run_cell("import torch\nw = torch.tensor([1., 2.], requires_grad=True)\nunrelated = torch.ones(4) * 3\n"
                   "def loss(v):\n    return (v * w).sum()\n")
    assert shell.run_cell("%%gradtrace --no-widget\nv = torch.tensor([3., 4.])\nout = loss(v)\nout.backward()\n"
                          ).success
    trace = gradtrace.last_trace()
    shown = set(trace.last.bindings)
    assert {"v", "out", "w"} <= shown and "unrelated" not in shown
    plain_w = torch.tensor([1., 2.], requires_grad=True)
    (torch.tensor([3., 4.]) * plain_w).sum().backward()
    assert trace.grad("w") == plain_w.grad.tolist()
    # a name read before the cell binds it shows from the first step, as the cell found it
    assert shell.run_cell("%%gradtrace --no-widget\nw2 = w * 2\nw = w2.detach()\n").success
    steps = gradtrace.last_trace().steps
    assert "w" in steps[0].bindings and steps[0].bindings["w"] != steps[-1].bindings["w"]


def test_cell_scope_reads_odd_cells_without_failing(shell):
    cells = [
        "g = [torch.ones(1) * k for k in range(3)]\n",
        "def h():\n    global made\n    made = torch.ones(2) + 1\nh()\n",
        "exec('dyn = torch.ones(1) * 5')\n",
        "for i in range(2):\n    acc = torch.ones(1) * i\n",
        "class Box:\n    t = torch.ones(1)\nb = Box()\n",
        "try:\n    raise ValueError('x')\nexcept ValueError as e:\n    err = torch.ones(1)\n",
    ]
    expect = [{"g[0]"}, {"made"}, {"dyn"}, {"acc"}, set(), {"err"}]
    shell.run_cell("import torch\nclass Odd:\n    @property\n    def __class__(self):\n"
                   "        raise RuntimeError('no')\n    def __getattr__(self, name):\n"
                   "        raise RuntimeError('no')\nodd = Odd()\nleft = torch.ones(2)\n")
    cells.append("seen = odd\nmine = torch.zeros(1)\n")
    expect.append({"mine"})
    assert shell.run_cell("%%gradtrace --no-widget\n" + cells[-1]).success
    assert set(gradtrace.last_trace().last.bindings) == {"mine"}, "the odd object made the cell show the notebook"
    for cell, names in zip(cells, expect, strict=True):
        assert shell.run_cell("%%gradtrace --no-widget\n" + cell).success, cell
        assert names <= set(gradtrace.last_trace().last.bindings), (cell, gradtrace.last_trace().last.bindings)


# ---------------------------------------------------------------- --html OUT
def test_html_refuses_to_replace_a_file_it_did_not_write(shell, tmp_path, capsys):
    pytest.importorskip("gradtrace.render.html")
    mine = tmp_path / "lesson.ipynb"
    mine.write_text('{"cells": []}', encoding="utf-8")
    shell.user_ns.pop("refused", None)
    result = shell.run_cell(f"%%gradtrace --no-widget --html {mine}\nrefused = 1\n")
    assert not result.success  # a usage error stops "Run All" as an error does
    said = capsys.readouterr()
    assert mine.read_text(encoding="utf-8") == '{"cells": []}'
    lines = [ln for ln in (said.out + said.err).splitlines() if "not writing" in ln]
    assert len(lines) == 1 and "--force" in lines[0] and str(mine) in lines[0], said
    assert "Traceback" not in said.out + said.err
    assert "refused" not in shell.user_ns, "a usage error must stop before the cell runs"
    # a page gradtrace wrote may be written again; --force replaces anything
    page = tmp_path / "page.html"
    assert shell.run_cell(f"%%gradtrace --no-widget --html {page}\na = 1\n").success
    first = page.read_text(encoding="utf-8")
    assert "<html" in first.lower()
    assert shell.run_cell(f"%%gradtrace --no-widget --html {page}\na = 2\n").success
    assert "a = 2" in page.read_text(encoding="utf-8") and "not writing" not in capsys.readouterr().out
    assert shell.run_cell(f"%%gradtrace --no-widget --html {mine} --force\nrefused = 1\n").success
    assert "<html" in mine.read_text(encoding="utf-8").lower() and shell.user_ns["refused"] == 1
    assert not list(tmp_path.glob("*.tmp"))
    assert not shell.run_cell("%%gradtrace --no-widget --force\nb = 1\n").success
    assert "--force only goes with --html" in "".join(capsys.readouterr())


# ---------------------------------------------------------------- payload
def test_film_svg_stored_once(forum):
    from gradtrace.notebook.display import _film
    from gradtrace.render.film import film as raw_film

    made = _film(forum)
    pictures = [made.get("svg")] + list(made.get("sheets") or [])
    pictures = [p for p in pictures if p]
    assert len(pictures) == len(set(pictures)), "the same picture twice in the film"
    page = trace_mimebundle(forum)["text/html"]
    sheet = raw_film(forum)["sheets"][0]
    # one of the sheet's drawn lines appears once in the film and in the output
    line = script_json(re.search(r' d="[^"]{40,}"', sheet)[0])[1:-1]
    assert script_json(made).count(line) == 1
    assert film_of(page) == made  # the film the output carries, unpacked
    assert page.count(line) == 0  # packed: the picture is not in the output as plain text


# ---------------------------------------------------------------- a real kernel
class Kernel:
    """A real IPython kernel (jupyter_client), sent cells as a front end sends them: with a cell id."""

    def __init__(self) -> None:
        from jupyter_client import KernelManager

        src = str(Path(gradtrace.__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
        env.pop("GRADTRACE_WIDGET", None)
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code: str, cell: str = "setup") -> tuple[str, list[dict]]:
        """Run ``code`` as cell ``cell``: its stdout and its display outputs; fails on an error."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell})
        self.kc.shell_channel.send(msg)
        out, shown, error = [], [], None
        while True:
            reply = self.kc.get_iopub_msg(timeout=300)
            if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            kind, body = reply["msg_type"], reply["content"]
            if kind == "stream":
                out.append(body["text"])
            elif kind in ("display_data", "execute_result"):
                shown.append(body["data"])
            elif kind == "error":
                error = "\n".join(body["traceback"])
            elif kind == "status" and body["execution_state"] == "idle":
                break
        assert error is None, error
        return "".join(out), shown

    def value(self, expr: str) -> Any:
        return json.loads(self.run(f"print(__import__('json').dumps({expr}))")[0].strip().splitlines()[-1])

    def stop(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


CELL = "%%gradtrace\nx = torch.tensor({k}., requires_grad=True)\ny = x ** 2\nz = y * {k}\nz.backward()\n"
#: a bigger cell (a few training steps of a tiny MLP: a film of some size), run again and again
BIG_CELL = ("%%gradtrace\ntorch.manual_seed(0)\nw1 = torch.randn(4, 8, requires_grad=True)\n"
            "w2 = torch.randn(8, 1, requires_grad=True)\ndata = torch.randn(16, 4)\n"
            "for epoch in range(6):\n    h = (data @ w1).relu()\n    loss = (h @ w2).pow(2).mean()\n"
            "    loss.backward()\n    with torch.no_grad():\n        w1 -= 0.1 * w1.grad\n"
            "        w2 -= 0.1 * w2.grad\n    w1.grad = None\n    w2.grad = None\n")
COUNTS = ("[len(__import__('ipywidgets').widgets.widget._instances), "
          "__import__('psutil').Process().memory_info().rss]")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["html", "anywidget"])
def test_kernel_memory_stays_flat_over_cells_and_reruns(mode):
    """50 traced cells and 20 re-runs of one cell in a real kernel: widgets and memory bounded."""
    pytest.importorskip("jupyter_client")
    pytest.importorskip("psutil")
    kernel = Kernel()
    try:
        kernel.run("%load_ext gradtrace\nimport torch, gradtrace, ipywidgets, psutil, gc\n"
                   f"gradtrace.notebook.settings.widget = {mode!r}")
        for k in range(3):  # first-time imports and caches are not growth
            kernel.run(CELL.format(k=k + 100), cell=f"warm-{k}")
        kernel.run("gc.collect()")
        widgets0, rss0 = kernel.value(COUNTS)
        for k in range(50):
            _, shown = kernel.run(CELL.format(k=k + 1), cell=f"cell-{k}")
            assert len(shown) == 1 and "text/html" in shown[0]
            assert (WIDGET_MIME in shown[0]) == (mode == "anywidget")
        kernel.run("gc.collect()")
        widgets1, rss1 = kernel.value(COUNTS)
        steppers = kernel.value("sum(type(w).__name__ == 'StepperWidget' "
                                "for w in ipywidgets.widgets.widget._instances.values())")
        kernel.run(BIG_CELL, cell="again")
        kernel.run("gc.collect()")
        widgets_big, rss_big = kernel.value(COUNTS)
        # what Python keeps of the 20 re-runs' allocations (the process's RSS moves by several MiB either way
        # as the allocator keeps or returns pages: measured +12.4, -0.9, +5.1 MiB for three batches of 20)
        kernel.run("import tracemalloc\ntracemalloc.start()")
        for _ in range(20):
            kernel.run(BIG_CELL, cell="again")
        kernel.run("gc.collect()")
        widgets2, rss2 = kernel.value(COUNTS)
        kept = kernel.value("tracemalloc.get_traced_memory()[0]")
        kernel.run("tracemalloc.stop()")
    finally:
        kernel.stop()
    mib = 1024 * 1024
    print(f"{mode}: widgets {widgets0} -> {widgets1} -> {widgets_big} -> {widgets2}; RSS +{(rss1 - rss0) / mib:.1f} "
          f"MiB over 50 cells, +{(rss2 - rss_big) / mib:.1f} MiB over 20 re-runs, of which Python keeps "
          f"{kept / mib:.1f} MiB")
    per_cell = (widgets1 - widgets0) / 50
    if mode == "html":
        assert widgets0 == widgets1 == widgets_big == widgets2 == 0, (widgets0, widgets1, widgets_big, widgets2)
    else:
        assert steppers == 53, steppers  # one stepper per cell shown, warm-up cells included
        assert per_cell <= 2, f"{per_cell} widgets per cell (a stepper and its layout at most)"
        assert widgets2 == widgets_big, "a re-run cell left its old widgets open"
    # before: +36 MiB for these 20 re-runs (every run's widgets kept the film alive); one run's film and
    # output, the last one's, stay alive as they should (about 1.5 MiB)
    assert kept < 6 * mib, f"20 re-runs of one cell left {kept / mib:.1f} MiB of Python objects alive"
    assert rss1 - rss0 < 24 * mib, f"50 cells grew the kernel by {(rss1 - rss0) / mib:.1f} MiB"


@pytest.mark.slow
def test_quiz_in_a_kernel_shows_the_question_a_note_naming_the_cells_and_a_box():
    """%load_ext gradtrace: a question is two outputs, the question with its note for a saved notebook, then the box."""
    pytest.importorskip("jupyter_client")
    kernel = Kernel()
    try:
        _quiz_outputs(kernel)
    finally:
        kernel.stop()


def _quiz_outputs(kernel: Kernel) -> None:
    kernel.run("import torch\nimport gradtrace\n%load_ext gradtrace", cell="quiz-setup")
    setup = kernel.value("len(In) - 2")  # the set-up cell (value() itself is a cell)
    _out, shown = kernel.run("q = gradtrace.quiz('x = torch.tensor(2., requires_grad=True)\\n(x ** 2).backward()')\nq",
                             cell="quiz-cell")
    this = kernel.value("len(In) - 2")  # the quiz cell (value() itself is a cell)
    assert len(shown) == 2, shown
    question, box = shown
    note = f"run cell [{setup}] (it imports gradtrace), then this cell, [{this}]"
    assert note in question["text/plain"] and note in question["text/html"]
    assert "x ** 2" in question["text/html"] and "data-gt-quiz='gt-quiz-" in question["text/html"]
    assert WIDGET_MIME in box
    uid = re.search(r"data-gt-quiz='(gt-quiz-[0-9a-f]+)'", question["text/html"])[1]
    assert kernel.value(f"[w.uid for w in __import__('ipywidgets').widgets.widget._instances.values() "
                        f"if getattr(w, 'uid', None) == {uid!r}]") == [uid]


def test_the_stepper_names_its_cell_by_the_cells_own_prompt_number(shell):
    """IPython 9 already counts the next cell while one runs (IPython 8 does not): the title is ``In [N]`` of the
    cell that ran, the number IPython itself gives it, under both."""
    from IPython.utils.capture import capture_output

    for _ in range(2):
        with capture_output() as shown:
            result = shell.run_cell("%%gradtrace --no-widget\na = 1\n", store_history=True)
        assert result.success
        pages = [o.data["text/html"] for o in shown.outputs if "text/html" in o.data]
        assert film_of(pages[-1])["title"] == f"%%gradtrace · In [{result.execution_count}]"

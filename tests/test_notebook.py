"""The notebook layer without a browser: display data, the magic in a real IPython shell, widgets' state.

Numbers come from PyTorch: the same program is run plainly and under ``%%gradtrace``.
"""

from __future__ import annotations

import json
import re

import pytest
import torch

import gradtrace
from gradtrace.notebook import assets, settings
from gradtrace.notebook.display import WIDGET_MIME, trace_mimebundle
from gradtrace.notebook.embed import embed_html, script_json
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
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython()
    ip.run_line_magic("load_ext", "gradtrace")
    return ip


def test_settings_from_env_and_checked(monkeypatch):
    monkeypatch.setenv("GRADTRACE_WIDGET", "ipywidgets")
    assert Settings().widget == "ipywidgets"
    monkeypatch.setenv("GRADTRACE_WIDGET", "nonsense")
    with pytest.warns(UserWarning, match="GRADTRACE_WIDGET"):
        assert Settings().widget == "anywidget"
    with pytest.raises(ValueError, match="must be one of"):
        settings.widget = "react"


def test_bundle_outside_a_kernel_is_text_and_html(forum):
    bundle = forum._repr_mimebundle_()
    assert bundle["text/plain"] == forum.to_text()
    assert WIDGET_MIME not in bundle  # no kernel: no widget
    page = bundle["text/html"]
    assert "<script type='module'>" in page and "export function mount" in page
    found = re.search(r'<script type="application/json" id="([^"]+)-film" data-gt-film="([^"]+)"[^>]*>(.*?)</script>',
                      page, re.S)
    assert found and found[1] == found[2] and f"id='{found[1]}'" in page  # the film names the element it steps in
    film = json.loads(found[3])
    assert len(film["steps"]) == len(forum.steps)
    assert "</script" not in page.split("<script type='module'>", 1)[1].rsplit("</script>", 1)[0]


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
    from gradtrace.render.html import trace_html

    esm = assets.widget_esm()
    assert f"<script type='module'>\n{esm}\n</script>" in embed_html(forum)
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

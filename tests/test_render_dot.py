"""DOT and SVG: goldens, determinism, well-formed SVG, learner text kept inert."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from gradtrace.render.dot import graph_dot, step_dot
from gradtrace.render.graph import step_graph
from gradtrace.render.svg import LayoutError, dot_binary, dot_to_svg, layout_engine, svg_inline

from render_cases import check_golden, evil_trace, forum_trace, mutate_trace

SVG = "{http://www.w3.org/2000/svg}"
SVG_TAGS = {"svg", "g", "title", "polygon", "path", "text", "ellipse", "polyline"}


def svg_tree(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def node_titles(root: ET.Element) -> list[str]:
    return [g.findtext(f"{SVG}title") or "" for g in root.iter(f"{SVG}g") if "node" in g.get("class", "").split()]


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def assert_inert(root: ET.Element) -> None:
    """Only plain SVG drawing elements, no event handlers, no links, no foreign markup."""
    for el in root.iter():
        tag = el.tag.replace(SVG, "")
        assert tag in SVG_TAGS, tag
        for attr in el.attrib:
            assert not attr.lower().startswith("on"), attr
            assert "href" not in attr, attr


def test_forum_dot_golden(request):
    check_golden(request, "handmade_forum_step5.dot", step_dot(forum_trace()[4]))


def test_mutate_dot_golden(request):
    check_golden(request, "handmade_mutate_step4.dot", step_dot(mutate_trace()[3]))


def test_dot_is_identical_across_processes():
    code = (
        "import sys; sys.path.insert(0, 'tests'); from render_cases import mutate_trace;"
        "from gradtrace.render.dot import step_dot; print(step_dot(mutate_trace()[4]), end='')"
    )
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout)
    assert len(outs) == 1
    assert outs == {step_dot(mutate_trace()[4])}


def test_svg_carries_nodes_and_names():
    root = svg_tree(dot_to_svg(step_dot(forum_trace()[4])))
    shown = texts(root)
    assert "∅ n1 PowBackward0" in shown and "n2 AccumulateGrad" in shown  # freed by this backward()
    assert {"x", "x2", "x3", "f"} <= set(shown)
    assert "∇ x · t1 leaf v0" in shown  # named first, id second; its .grad changed now
    assert "grad 5376." in shown
    assert "∅ self = t1 (freed)" in shown
    assert sorted(node_titles(root)) == sorted(
        ["name1", "name2", "name3", "name4", "t1", "t2", "t3", "t4"] + ["n1", "n2", "n3", "n4"]
    )


def test_stale_saved_value_is_marked():
    root = svg_tree(dot_to_svg(step_dot(mutate_trace()[3])))
    assert "⚠ self = t2 7. STALE v0→v1" in texts(root)
    stale = [g for g in root.iter(f"{SVG}g") if "gt-m-stale" in g.get("class", "")]
    assert [g.get("id") for g in stale] == ["gt-n3", "gt-e-saved-n3-t2"]


@pytest.mark.parametrize("engine", ["dot", "graphviz-pure"])
def test_payloads_stay_text(monkeypatch, engine):
    monkeypatch.setenv("GRADTRACE_DOT", engine)
    step = evil_trace()[0]
    for source in (step_dot(step), graph_dot(step, show_attrs=True, show_saved=True)):
        root = svg_tree(dot_to_svg(source))
        assert_inert(root)
        titles = node_titles(root)
        assert "a" not in titles and "b" not in titles
        assert set(titles) <= {f"t{i}" for i in range(1, 6)} | {f"n{i}" for i in range(1, 6)} | {
            f"name{i}" for i in range(1, 6)
        }
        shown = "\n".join(texts(root))
        assert "<img src=x onerror=alert(1)>" in shown  # shown as text, not markup
        assert '"]; a -> b [label="' in shown
        assert "\x00" not in shown and "\x1b" not in shown and "\u2028" not in shown
        assert "n" * 300 not in shown


def test_both_engines_are_found(monkeypatch):
    assert layout_engine().startswith("dot (")
    monkeypatch.setenv("GRADTRACE_DOT", "graphviz-pure")
    assert layout_engine().startswith("graphviz-pure (")
    assert "x · t1 leaf v0" in dot_to_svg(step_dot(forum_trace()[0]))


def test_missing_binary_says_what_to_install(monkeypatch):
    monkeypatch.setenv("GRADTRACE_DOT", "/nonexistent/dot")
    assert dot_binary() is None
    with pytest.raises(LayoutError, match="pip install graphviz-pure"):
        dot_to_svg("digraph { a }")
    bundle = step_graph(forum_trace()[1])._repr_mimebundle_()
    assert "image/svg+xml" not in bundle and "x2 -> t2" in bundle["text/plain"]


def test_bad_source_and_timeout_raise_layout_error():
    with pytest.raises(LayoutError, match="syntax error"):
        dot_to_svg("digraph { a -> }")
    big = "digraph {" + " ".join(f"a{i} -> a{i + 1};" for i in range(3000)) + "}"
    with pytest.raises(LayoutError, match="more than"):
        dot_to_svg(big, timeout=0.001)


def test_graph_mimebundle_and_inline_svg():
    step = forum_trace()[4]
    bundle = step_graph(step)._repr_mimebundle_()
    assert bundle["text/plain"].startswith(f"step {step.index + 1}, line 5: f.backward()")  # numbered from 1
    inline = svg_inline(bundle["image/svg+xml"])
    assert inline.startswith("<svg") and "<!--" not in inline
    svg_tree(inline)

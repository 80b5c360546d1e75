"""Damaged saved traces are refused on load with one line, never accepted and then crash a renderer.

Real traces of a few programs are saved, then damaged by seeded mutations (``json_mutants``):
keys deleted, values of the wrong type, negative or huge row numbers, wrong words, deep nests
of lists, the text cut short. Each mutant must either be refused by ``trace_from_json`` with a
one-line :class:`TraceFormatError` (a ``ValueError``), or load into a trace that every renderer
the CLI offers renders (text twin, DOT, SVG, HTML page with its film, JSON round trip).
"""

from __future__ import annotations

import json
import struct
import traceback

import pytest
from json_mutants import mutants

from gradtrace import trace_code
from gradtrace.cli import svg_pictures
from gradtrace.model import Trace
from gradtrace.render import graph_dot, trace_html, trace_text
from gradtrace.render.json import TraceFormatError, trace_dict, trace_from_dict, trace_from_json, trace_json
from gradtrace.render.svg import dot_to_svg

from programs import INPLACE_STALE, SEEDS

#: every event kind, a module, a no_grad block, a detached alias, two roots, a .grad set to None
MIXED = """\
import torch
a = torch.tensor([1., 2.], requires_grad=True)
lin = torch.nn.Linear(2, 1)
b = a * 3
d = b.detach()
with torch.no_grad():
    e = a + 1
p = torch.nn.Parameter(e)
g = (lin(b) ** 2).sum()
h = b.sum()
torch.autograd.backward([g, h])
w = a.grad
a.grad = None
c = b.exp()
del d
b = b * 2
m = a * 2
n = m ** 2
m.add_(1)
n.sum().backward()
"""
#: outputs of one node (unbind), complex numbers, a sparse tensor, a hook and a loop
ODD = """\
import torch
h = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
a, b = (h * 2).unbind(0)
z = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
s = torch.eye(3).to_sparse()
k = (a * b).sum()
k.register_hook(lambda g: g * 2)
for i in range(2):
    k = torch.tanh(k)
k.backward()
q = (z * z.conj()).real.sum()
q.backward()
"""
PROGRAMS = {"forum": SEEDS["forum_original"], "vector": SEEDS["blog_vector"], "whatif2": SEEDS["whatif2"],
            "stale": INPLACE_STALE, "mixed": MIXED, "odd": ODD}
MUTANTS = 480


@pytest.fixture(scope="module")
def documents() -> list[dict]:
    return [trace_dict(trace_code(source, filename=f"{name}.py", raise_errors=False))
            for name, source in PROGRAMS.items()]


def render_all(trace: Trace, svg: bool) -> None:
    """What the CLI and the notebook make of a trace; any exception is a crash."""
    trace_text(trace)
    pictures = list(svg_pictures(trace))
    for step in trace.steps:
        graph_dot(step)
    if svg and pictures:
        dot_to_svg(pictures[-1][1])
    str(trace_html(trace))
    assert trace_from_json(trace_json(trace)) == trace


def refused_in_one_line(text: str) -> bool:
    """True when ``text`` is refused with one line; False when it loads and renders; raises on a crash."""
    try:
        trace = trace_from_json(text)
    except TraceFormatError as exc:
        assert "\n" not in str(exc) and str(exc)
        return True
    render_all(trace, svg=False)
    return False


def test_damaged_documents_are_refused_or_render(documents):
    crashes, refused = [], 0
    for number, text in mutants(documents, MUTANTS):
        try:
            refused += refused_in_one_line(text)
        except Exception as exc:  # noqa: BLE001 - every crash is collected, then shown together
            where = traceback.extract_tb(exc.__traceback__)[-1]
            crashes.append(f"mutant {number}: {type(exc).__name__}: {exc} at {where.filename}:{where.lineno}")
    assert crashes == []
    assert 0 < refused < MUTANTS  # both ways out are taken: the damage is not all in one kind of field


def test_the_documents_themselves_render_with_svg(documents):
    for doc in documents:
        assert not refused_in_one_line(json.dumps(doc))
        render_all(trace_from_dict(doc), svg=True)


def _refusal(doc: object) -> str:
    with pytest.raises(TraceFormatError) as info:
        trace_from_json(doc) if isinstance(doc, (str, bytes)) else trace_from_dict(doc)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_100000_nested_brackets_are_one_line():
    assert "nests too deeply" in _refusal("[" * 100_000 + "]" * 100_000)
    assert "nests too deeply" in _refusal(b'{"schema": "gradtrace.trace", "a": ' + b"[" * 100_000)


def test_deeply_nested_values_are_refused_without_recursion(documents):
    doc = json.loads(json.dumps(documents[0]))
    deep: list = [1.0]
    for _ in range(100_000):
        deep = [deep]
    doc["tensors"][0]["value"]["values"] = deep  # built in Python: no JSON parser stops it first
    assert "nests lists deeper than" in _refusal(doc)


@pytest.mark.parametrize("row", [-1, -2, 10**6])
def test_a_row_number_outside_the_table_is_refused(documents, row):
    doc = json.loads(json.dumps(documents[0]))
    step = doc["steps"][-1]
    tid = next(iter(step["tensors"]))
    step["tensors"][tid] = row
    message = _refusal(json.dumps(doc))
    assert f"is row {row}, outside the table's rows 0 to {len(doc['tensors']) - 1}" in message
    assert f"steps[{len(doc['steps']) - 1}].tensors[{tid!r}]" in message


def test_a_row_of_another_object_is_refused(documents):
    doc = json.loads(json.dumps(documents[0]))
    step = doc["steps"][-1]
    first, second = list(step["nodes"])[:2]
    step["nodes"][first] = step["nodes"][second]
    assert f"the row of {second}" in _refusal(doc)


def test_text_that_is_not_utf8_is_one_line():
    assert "not JSON" in _refusal(b'{"schema": "\xff"}')


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_older_versions_still_load_identically(documents, version):
    for doc in documents:
        old = {**doc, "version": version}
        assert trace_from_dict(old) == trace_from_dict(doc)
        assert trace_json(trace_from_dict(old)) == json.dumps(doc, ensure_ascii=False)


@pytest.mark.xfail(strict=True, raises=struct.error,
                   reason="explain/_arith raises struct.error on a word where a formula needs a number; the "
                          "formulas' guard lets only RuntimeError, ValueError, TypeError and IndexError through")
def test_a_word_where_a_node_attr_holds_a_number_renders(documents):
    doc = json.loads(json.dumps(documents[0]))  # the forum: f = x2 + x3 saves AddBackward0's alpha, "1"
    for row in doc["nodes"]:
        row["attrs"] = [[name, "one" if name == "alpha" else text] for name, text in row["attrs"]]
    trace = trace_from_dict(doc)  # attrs are free text PyTorch wrote: the reader cannot tell a wrong one
    render_all(trace, svg=False)


@pytest.mark.xfail(strict=True, raises=ValueError,
                   reason="explain/reverse sums the gradients a node gets (its hook note) outside the formulas' "
                          "guard: gradients of two lengths raise 'shapes do not broadcast'")
def test_a_gradient_of_the_wrong_length_in_the_reverse_pass_renders(documents):
    doc = json.loads(json.dumps(documents[1]))  # y = x * x + 4: MulBackward0 sends x two gradients, summed
    backward = next(e for s in doc["steps"] for e in s["events"] if e["kind"] == "backward")
    sent = next(f["grad_out"][0] for f in backward["flow"] if len(f["grad_out"]) == 2 and all(f["grad_out"]))
    del sent["values"][-1]  # a flow's gradients have no shape in the document: the reader cannot tell
    render_all(trace_from_dict(doc), svg=False)


def test_ragged_values_are_refused(documents):
    doc = json.loads(json.dumps(documents[1]))  # x = [1., 2., 3.]: its rows hold lists
    row = next(r for r in doc["tensors"] if isinstance(r["value"]["values"], list))
    row["value"]["values"] = [row["value"]["values"], [1.0]]  # a 2 x 3 tensor whose second row lost two
    assert "should hold nested lists of shape (2, 3)" in _refusal(doc)

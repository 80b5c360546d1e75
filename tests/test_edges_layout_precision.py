"""Sparse tensors are shown as sparse, and complex/half numbers with their own dtype's precision.

Every expected figure comes from PyTorch run plainly here: the indices and values a sparse
gradient holds, and how a real tensor of the matching precision is shown by gradtrace.
"""

from __future__ import annotations

import json

import pytest
import torch

import gradtrace
from gradtrace.model import SCHEMA_VERSION
from gradtrace.render.film import trace_html
from gradtrace.render.json import trace_from_json, trace_json
from gradtrace.tracer.summary import format_values

EMBED = (
    "import torch\n"
    "from torch import nn\n"
    "torch.manual_seed(0)\n"
    "emb = nn.Embedding(10, 3, sparse=True)\n"
    "out = emb(torch.tensor([1, 2, 1])).sum()\n"
    "out.backward()\n"
    "g = emb.weight.grad\n"
)


def _plain_embedding_grad() -> torch.Tensor:
    ns: dict = {}
    exec(EMBED, ns)
    grad = ns["g"]
    assert grad.layout == torch.sparse_coo
    return grad


def _last(trace: gradtrace.Trace, name: str):
    last = trace.last
    assert last is not None
    return last.tensors[last.bindings[name]]


def test_a_sparse_gradient_is_shown_with_what_it_stores() -> None:
    plain = _plain_embedding_grad()
    trace = gradtrace.trace_code(EMBED, {})
    weight = _last(trace, "emb.weight")
    assert weight.layout == "strided"
    grad = weight.grad
    assert grad is not None and grad.layout == "sparse_coo"
    stored = f"indices {plain._indices().tolist()} values {format_values(plain._values().tolist(), plain.dtype)}"
    assert grad.text.startswith("sparse_coo shape (10, 3)")
    assert f"{plain._nnz()} of 10 entries stored" in grad.text and stored in grad.text
    assert "not coalesced: a repeated index adds up" in grad.text  # index 1 is stored twice, as PyTorch holds it
    assert grad.values == plain.to_dense().tolist() or grad.values is None
    # the tensor ``g`` itself is sparse: its row names the layout
    g = _last(trace, "g")
    assert g.layout == "sparse_coo" and g.value.layout == "sparse_coo"
    text = trace.to_text()
    row = next(line for line in text.splitlines() if line.strip().startswith("g · "))
    assert "layout sparse_coo" in row and stored in row
    assert f"emb.weight.grad = {grad.text}" in text


def test_the_sparse_layout_survives_json_and_shows_in_the_page() -> None:
    trace = gradtrace.trace_code(EMBED, {})
    doc = json.loads(trace_json(trace))
    assert doc["version"] == SCHEMA_VERSION >= 3
    layouts = {row["grad"]["layout"] for row in doc["tensors"] if row["grad"] and "layout" in row["grad"]}
    assert layouts == {"sparse_coo"}
    assert all("layout" not in row["value"] for row in doc["tensors"] if row["id"] != _last(trace, "g").id)
    back = trace_from_json(trace_json(trace))
    assert _last(back, "emb.weight").grad == _last(trace, "emb.weight").grad
    assert _last(back, "g").layout == "sparse_coo"
    assert back.to_text() == trace.to_text()
    page = str(trace_html(trace))
    assert "float32 sparse_coo (10, 3)" in page  # the box of g: dtype, layout, shape
    assert '["layout", "sparse_coo"]' in page or '["layout","sparse_coo"]' in page  # its detail panel


def test_explain_shows_a_sparse_gradient_as_sparse() -> None:
    plain = _plain_embedding_grad()
    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 3, sparse=True)
    out = emb(torch.tensor([1, 2, 1])).sum()
    w = gradtrace.explain(out)
    assert torch.equal(emb.weight.grad.to_dense(), plain.to_dense())
    text = w.to_text()
    assert f"emb.weight.grad = sparse_coo shape (10, 3), {plain._nnz()} of 10 entries stored" in text
    assert "shape (1, 3)" not in text  # the indices are not read as a shape


def test_a_compressed_sparse_tensor_shows_its_indices() -> None:
    source = "import torch\nc = torch.tensor([[0.0, 2.5], [0.1, 0.0]]).to_sparse_csr()\n"
    ns: dict = {}
    exec(source, ns)
    plain = ns["c"]
    trace = gradtrace.trace_code(source, {})
    c = _last(trace, "c")
    assert c.layout == "sparse_csr"
    assert f"crow_indices {plain.crow_indices().tolist()} col_indices {plain.col_indices().tolist()}" in c.value.text
    assert f"values {format_values(plain.values().tolist(), plain.dtype)}" in c.value.text


PARTS = [(torch.complex64, torch.float32), (torch.complex128, torch.float64), (torch.complex32, torch.float16)]


@pytest.mark.parametrize(("complex_dtype", "part"), PARTS, ids=[str(c) for c, _ in PARTS])
def test_complex_numbers_print_with_the_precision_of_their_parts(complex_dtype, part) -> None:
    source = (
        "import torch\n"
        f"z = torch.tensor([0.1 + 0.2j, 1 / 3 - 0.7j, -2.5 + 0j]).to({complex_dtype!s})\n"
        f"re = z.real.to({part!s}) if z.dtype == torch.complex32 else z.real\n"
        f"im = z.imag.to({part!s}) if z.dtype == torch.complex32 else z.imag\n"
    )
    trace = gradtrace.trace_code(source, {})
    z, re, im = (_last(trace, n) for n in ("z", "re", "im"))
    assert re.dtype == str(part).replace("torch.", "")
    reals = re.value.text.strip("[]").split(", ")
    imags = im.value.text.strip("[]").split(", ")
    expected = ", ".join(f"{r}{'-' if i.startswith('-') else '+'}{i.lstrip('-')}j"
                         for r, i in zip(reals, imags, strict=True))
    assert z.value.text == f"[{expected}]"


def test_a_large_complex_tensor_says_its_stats_are_of_magnitudes() -> None:
    source = "import torch\ntorch.manual_seed(0)\nz = torch.randn(40, dtype=torch.complex64)\nm = z.abs()\n"
    trace = gradtrace.trace_code(source, {})
    z, m = _last(trace, "z"), _last(trace, "m")
    lo, hi = m.value.text.split()[1], m.value.text.split()[-1]
    assert z.value.text.startswith(f"|z| min {lo} ") and z.value.text.endswith(f" max {hi}")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_floats_print_the_shortest_digits_of_their_own_dtype(dtype) -> None:
    source = f"import torch\na = torch.tensor([0.1, 1 / 3, 100.7]).to({dtype!s})\n"
    ns: dict = {}
    exec(source, ns)
    trace = gradtrace.trace_code(source, {})
    shown = _last(trace, "a").value.text.strip("[]").split(", ")
    held = ns["a"].tolist()
    for text, value in zip(shown, held, strict=True):
        assert torch.tensor(float(text), dtype=dtype).item() == value  # reads back to the number held
        digits = text.replace("-", "").replace(".", "").lstrip("0")
        shorter = f"{value:.{max(len(digits) - 1, 1)}g}"
        assert len(digits) == 1 or torch.tensor(float(shorter), dtype=dtype).item() != value  # and no shorter form does

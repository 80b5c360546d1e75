"""make_dot draws the same graph as torchviz on real models: the same boxes, the same arrows.

The models are ``transformers`` GPT-2 and BERT from small configs (the ``bench`` extra) and torchvision's
resnet18, resnet50, mobilenet_v3_small and vit_b_16 (where ``torchvision`` imports), all with random
weights: nothing is downloaded. Each test is skipped, saying why, when its library is absent.

Node names differ (torchviz writes ``id()`` of each object, gradtrace its own ids), so both DOT
sources are read as graphs and compared up to renaming: every node gets a colour from its final label
and fill colour, refined round after round by the colours of its neighbours along each kind of arrow
(colour refinement run on both graphs together). The two graphs must have the same multiset of node
colours and the same multiset of arrows between colours. Two graphs that differ by one box, one arrow,
one label or one fill colour anywhere never pass.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import torch

from gradtrace.makedot import make_dot

torchviz = pytest.importorskip("torchviz", reason="torchviz is not installed: pip install 'gradtrace[test]'")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torchviz imports distutils' LooseVersion

_STATEMENT = re.compile(r'^\t(?P<tail>[^\s\[]+)(?: -> (?P<head>[^\s\[]+))?'
                        r'(?: \[(?P<attrs>(?:"(?:\\.|[^"\\])*"|[^\]"])*)\])?$', re.M | re.S)
_ATTR = re.compile(r'(\w+)=("(?:\\.|[^"\\])*"|[^\s"]+)')

class Graph:
    """The nodes (with their final attributes, later statements overriding as in ``dot``) and the arrows."""

    def __init__(self, source: str) -> None:
        self.nodes: dict[str, dict[str, str]] = {}
        self.edges: list[tuple[str, str, str]] = []  # tail, head, the arrow's attributes
        body = source.split("{", 1)[1].rsplit("}", 1)[0]
        for m in _STATEMENT.finditer(body):
            tail, head, attrs = m["tail"], m["head"], dict(_ATTR.findall(m["attrs"] or ""))
            if tail in ("graph", "node", "edge"):
                continue  # defaults (size, font) are not part of the graph
            if head is None:
                self.nodes.setdefault(tail, {}).update({k: _text(v) for k, v in attrs.items()})
            else:
                self.nodes.setdefault(tail, {})
                self.nodes.setdefault(head, {})
                self.edges.append((tail, head, " ".join(f"{k}={v}" for k, v in sorted(attrs.items()))))
        assert self.nodes, f"no node read from the DOT source:\n{source[:300]}"


def _text(value: str) -> str:
    """A label as shown: torchviz writes ``name<newline> (shape)``, gradtrace ``name\\n(shape)``."""
    text = value[1:-1] if value.startswith('"') else value
    text = text.replace("\n", "\\n").replace("\\n ", "\\n")
    return text[2:] if text.startswith("\\n") else text


def refined(graphs: list[Graph]) -> list[dict[str, int]]:
    """Colour refinement on the graphs together: the colour of each node once no round splits a class."""
    colours = [{n: hash(tuple(sorted(a.items()))) for n, a in g.nodes.items()} for g in graphs]
    classes = len({c for col in colours for c in col.values()})
    for _ in range(sum(len(g.nodes) for g in graphs)):
        new = []
        for g, col in zip(graphs, colours, strict=True):
            around: dict[str, list[tuple[str, str, int]]] = {n: [] for n in g.nodes}
            for tail, head, attrs in g.edges:
                around[tail].append(("out", attrs, col[head]))
                around[head].append(("in", attrs, col[tail]))
            new.append({n: hash((col[n], tuple(sorted(around[n])))) for n in g.nodes})
        count = len({c for col in new for c in col.values()})
        colours = new
        if count == classes:
            break
        classes = count
    return colours


def same_graph(ours: str, theirs: str) -> None:
    a, b = Graph(ours), Graph(theirs)
    assert len(a.nodes) == len(b.nodes) and len(a.edges) == len(b.edges)
    ca, cb = refined([a, b])
    assert Counter(ca.values()) == Counter(cb.values()), "the boxes differ"
    assert Counter((ca[t], ca[h], x) for t, h, x in a.edges) == Counter((cb[t], cb[h], x) for t, h, x in b.edges), \
        "the arrows differ"


# ---------------------------------------------------------------- the comparison can fail
def test_the_comparison_sees_one_label_and_one_arrow_changed():
    x = torch.ones(3, requires_grad=True)
    y = (x * 2 + x.exp()).sum()
    source = make_dot(y).source
    same_graph(source, torchviz.make_dot(y).source)
    with pytest.raises(AssertionError):
        same_graph(source.replace("ExpBackward0", "LogBackward0"), torchviz.make_dot(y).source)
    z = (x * 2 + x.exp().exp()).sum()  # one more box and arrow
    with pytest.raises(AssertionError):
        same_graph(make_dot(z).source, torchviz.make_dot(y).source)
    u = (x.exp() * 2 + x).sum()  # the same boxes, wired differently
    with pytest.raises(AssertionError):
        same_graph(make_dot(u).source, torchviz.make_dot(y).source)


def test_a_tensor_saved_by_two_nodes_is_one_box_as_in_torchviz():
    x = torch.randn(2, 3, requires_grad=True)
    w1, w2 = torch.randn(3, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)
    h = x.exp()
    y = (torch.mm(h, w1) + torch.mm(h, w2)).sum()  # both MmBackward0 save h as "self"
    same_graph(make_dot(y, show_saved=True).source, torchviz.make_dot(y, show_saved=True).source)


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    @staticmethod
    def backward(_ctx, g):
        return g * 2


def _shared_saved_graphs() -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    x = torch.randn(2, 3, requires_grad=True)
    w1, w2 = torch.randn(3, 3, requires_grad=True), torch.randn(2, 4, requires_grad=True)
    h = x.exp()
    return {
        "two names": (torch.mm(h, w1).sum() + torch.mm(w2.t(), h).sum()),  # saved as "self", then as "mat2"
        "one node twice": (h * h).sum(),  # MulBackward0 saves h as "self" and as "other"
        "custom and built-in": (_Scale.apply(h) * h.cos()).sum(),  # ctx.save_for_backward and CosBackward0
        "names, reversed": (torch.mm(w2.t(), h).sum() + torch.mm(h, w1).sum()),
    }


@pytest.mark.parametrize("graph", ["two names", "one node twice", "custom and built-in", "names, reversed"])
def test_a_tensor_saved_under_several_names_is_labelled_as_in_torchviz(graph):
    y = _shared_saved_graphs()[graph]
    same_graph(make_dot(y, show_saved=True).source, torchviz.make_dot(y, show_saved=True).source)


# ---------------------------------------------------------------- the real models
def _transformers() -> Any:
    try:
        import transformers
    except Exception as exc:  # noqa: BLE001 - any broken install is a reason to skip, said plainly
        pytest.skip(f"transformers does not import here ({type(exc).__name__}: {exc}): pip install 'gradtrace[bench]'")
    transformers.logging.set_verbosity_error()
    return transformers


def _torchvision() -> Any:
    try:
        import torchvision
    except Exception as exc:  # noqa: BLE001 - e.g. a CUDA torchvision beside a CPU torch ("torchvision::nms")
        pytest.skip(f"torchvision does not import here ({type(exc).__name__}: {str(exc)[:100]}): its models are "
                    "compared where it does (pip install torchvision matching torch)")
    return torchvision


def gpt2() -> tuple[torch.nn.Module, torch.Tensor]:
    tf = _transformers()
    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=32,
                                             bos_token_id=0, eos_token_id=0))
    ids = torch.randint(0, 100, (2, 8))
    return model, model(ids, labels=ids).loss


def bert() -> tuple[torch.nn.Module, torch.Tensor]:
    tf = _transformers()
    torch.manual_seed(0)
    model = tf.BertForMaskedLM(tf.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                             intermediate_size=64, vocab_size=100, max_position_embeddings=32,
                                             pad_token_id=0))
    ids = torch.randint(0, 100, (2, 8))
    return model, model(ids, labels=ids).loss


def vision(name: str, side: int = 32, **kwargs: Any) -> Callable[[], tuple[torch.nn.Module, torch.Tensor]]:
    def build() -> tuple[torch.nn.Module, torch.Tensor]:
        tv = _torchvision()
        torch.manual_seed(0)
        model = getattr(tv.models, name)(weights=None, num_classes=10, **kwargs)
        out = model(torch.randn(2, 3, side, side))
        return model, torch.nn.functional.cross_entropy(out, torch.tensor([0, 7]))
    return build


MODELS: dict[str, Callable[[], tuple[torch.nn.Module, torch.Tensor]]] = {
    "gpt2": gpt2, "bert": bert, "resnet18": vision("resnet18"), "resnet50": vision("resnet50"),
    "mobilenet_v3_small": vision("mobilenet_v3_small"), "vit_b_16": vision("vit_b_16", image_size=32)}


@pytest.fixture(scope="module", params=list(MODELS))
def model_loss(request: pytest.FixtureRequest) -> tuple[str, torch.nn.Module, torch.Tensor]:
    model, loss = MODELS[request.param]()
    return request.param, model, loss


@pytest.mark.parametrize("kw", [{}, {"show_saved": True}], ids=["default", "show_saved"])
def test_real_model_has_torchviz_nodes_and_edges(model_loss, kw):
    name, model, loss = model_loss
    params = dict(model.named_parameters())
    ours = make_dot(loss, params, **kw).source
    theirs = torchviz.make_dot(loss, params, **kw).source
    same_graph(ours, theirs)
    drawn = Graph(ours)
    labels = Counter(a.get("label") for a in drawn.nodes.values())
    for pname, p in params.items():  # every parameter is one box, named and shaped as torch says
        if p.requires_grad:
            assert labels[f"{pname}\\n({', '.join(map(str, p.shape))})"] == 1, (name, pname)
    functions = sum("fillcolor" not in a for a in drawn.nodes.values())
    seen: set[int] = set()
    todo, keep = [loss.grad_fn], []  # keep the nodes alive so that id() stays theirs during the walk
    while todo:  # the backward nodes, by walking next_functions plainly
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        keep.append(fn)
        todo.extend(n for n, _ in fn.next_functions)
    assert functions == len(seen)


@pytest.mark.parametrize("name", ["gpt2", "resnet18"])
def test_real_model_after_backward_has_torchviz_nodes_and_edges(name):
    model, loss = MODELS[name]()  # its own graph: backward() frees it
    params = dict(model.named_parameters())
    before = make_dot(loss, params).source
    loss.backward()
    after = make_dot(loss, params).source
    same_graph(after, torchviz.make_dot(loss, params).source)
    assert after == before

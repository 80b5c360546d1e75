"""gradtrace.make_dot against torchviz.make_dot on the same graphs, and where torchviz fails.

Both DOT sources are parsed and compared by their node and edge counts (node
names differ: torchviz uses ``id()``, gradtrace the snapshot's ids).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from collections import Counter
from pathlib import Path

import graphviz
import pytest
import torch
from torch import nn

import gradtrace
from gradtrace.makedot import GradGraph, make_dot

torchviz = pytest.importorskip("torchviz")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torchviz imports distutils' LooseVersion

_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|<[^<>]*(?:<[^<>]*>[^<>]*)*>|->|\n|[\[\]=;{},]|[^\s\[\]=;{},"]+')


def parse_dot(source: str) -> tuple[set[str], list[tuple[str, str]]]:
    """The node names and the edges of a DOT source (statements split outside quotes and brackets)."""
    statements: list[list[str]] = []
    current: list[str] = []
    depth = 0
    for tok in _TOKEN.findall(source):
        depth += (tok == "[") - (tok == "]")
        if depth == 0 and tok in ("\n", ";", "{", "}"):
            if current:
                statements.append(current)
            current = []
        elif tok != "\n":
            current.append(tok)
    if current:
        statements.append(current)
    nodes: set[str] = set()
    edges: list[tuple[str, str]] = []
    for stmt in statements:
        stmt = stmt[: stmt.index("[")] if "[" in stmt else stmt
        if not stmt or stmt[0] in ("digraph", "graph", "node", "edge", "strict", "subgraph") or "=" in stmt:
            continue
        ends = [s.strip('"') for s in stmt if s != "->"]
        nodes.update(ends)
        edges += list(zip(ends, ends[1:], strict=False))
    return nodes, edges


_NODE = re.compile(r'^\t(\S+) \[label=("(?:\\.|[^"\\])*"|[^ \]\n]+)', re.M)
_EDGE = re.compile(r"^\t(\S+) -> (\S+)", re.M)


def labelled(source: str) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """A DOT source as the multiset of its boxes' labels and of its arrows' (tail label, head label).

    Node names differ between torchviz (``id()``) and gradtrace (ids), labels do not:
    torchviz writes ``name\\n (shape)`` with a raw newline and a space, gradtrace ``name\\n(shape)``.
    """
    labels: dict[str, str] = {}
    for name, label in _NODE.findall(source):
        text = label.strip('"').replace("\n", "\\n").replace("\\n ", "\\n")
        labels[name] = text[2:] if text.startswith("\\n") else text  # a later statement overrides, as in dot
    edges = Counter((labels[a], labels[b]) for a, b in _EDGE.findall(source))
    return Counter(labels.values()), edges


def counts(dot: graphviz.Digraph) -> tuple[int, int]:
    nodes, edges = parse_dot(dot.source)
    return len(nodes), len(edges)


def same_as_torchviz(var, params=None, **kw) -> tuple[int, int]:
    ours = counts(make_dot(var, params, **kw))
    theirs = counts(torchviz.make_dot(var, params, **kw))
    assert ours == theirs
    return ours


# ---------------------------------------------------------------- graphs
def forum():
    x = torch.tensor(42.0, requires_grad=True)
    return x ** 2 + x ** 3, {"x": x}


class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(h)) + x)


class TinyResNet(nn.Module):
    """A ResNet-like stack written by hand: stem, residual blocks, pooling, linear head."""

    def __init__(self, blocks: int = 60, c: int = 4) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(c) for _ in range(blocks)])
        self.head = nn.Linear(c, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.blocks(torch.relu(self.stem(x)))
        return self.head(h.mean(dim=(2, 3)))


@pytest.fixture(scope="module")
def resnet():
    torch.manual_seed(0)
    net = TinyResNet()
    out = net(torch.randn(2, 3, 6, 6)).sum()
    return net, out


# ---------------------------------------------------------------- same picture as torchviz
@pytest.mark.parametrize(
    "kw", [{}, {"show_attrs": True}, {"show_saved": True}, {"show_attrs": True, "show_saved": True}]
)
def test_forum_graph_matches_torchviz(kw):
    f, params = forum()
    n, e = same_as_torchviz(f, params, **kw)
    # output, AddBackward0, two PowBackward0, AccumulateGrad, leaf x
    assert n == 6


def test_forum_graph_nodes_are_pytorchs():
    f, params = forum()
    src = make_dot(f, params).source
    names = [f.grad_fn.name()] + [fn.name() for fn, _ in f.grad_fn.next_functions]
    for name in names:
        assert name in src
    assert "AccumulateGrad" in src
    assert 'label="x\\n()"' in src


def test_names_are_deterministic_ids():
    a = make_dot(forum()[0]).source
    b = make_dot(forum()[0]).source
    assert a == b
    nodes, _ = parse_dot(a)
    assert all(re.fullmatch(r"[tn]\d+(_s\d+)?", n) for n in nodes)


@pytest.mark.parametrize(
    "build",
    [
        lambda x: (x * x + 2).sum(),
        lambda x: x[0] * x[1],
        lambda x: x.view(2, 1).exp(),  # a view output: its base drawn dark green
        lambda x: (x.tanh(), x.sigmoid()),  # several outputs
        lambda x: torch.stack([x, x * 2]).sum(),
        lambda x: (x.unsqueeze(0) @ torch.ones(2, 3)).relu().sum(),
        lambda x: x,  # a leaf alone
        lambda x: x.detach() * 2,  # no graph at all
        lambda x: (x, x * 3),  # an output that is also a leaf of another output
    ],
)
@pytest.mark.parametrize("kw", [{}, {"show_attrs": True}, {"show_saved": True}])
def test_small_graphs_match_torchviz(build, kw):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    same_as_torchviz(build(x), {"x": x}, **kw)


def test_inplace_copyslices_matches_torchviz():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[0] = y[1] * 5
    same_as_torchviz(y.sum(), {"x": x})


def test_custom_function_saved_tensors_match_torchviz():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 2 * t * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = Square.apply(x * 3).sum()
    same_as_torchviz(out, {"x": x})
    assert "SquareBackward" in make_dot(out).source


def test_resnet_like_net_matches_torchviz(resnet):
    net, out = resnet
    params = dict(net.named_parameters())
    n, e = same_as_torchviz(out, params)
    assert n > 900
    src = make_dot(out, params).source
    # every parameter labelled with its name and shape
    for name, p in params.items():
        shape = "(" + ", ".join(str(s) for s in p.shape) + ")"
        assert f'label="{name}\\n{shape}"' in src


def test_resnet_like_net_with_saved_matches_torchviz(resnet):
    net, out = resnet
    same_as_torchviz(out, dict(net.named_parameters()), show_saved=True, show_attrs=True)


# ---------------------------------------------------------------- where torchviz fails
def test_after_backward_saved_tensors_are_freed():
    f, params = forum()
    before = counts(make_dot(f, params))
    f.backward()
    with pytest.raises(RuntimeError):
        torchviz.make_dot(f, params, show_saved=True)
    assert counts(make_dot(f, params)) == before == counts(torchviz.make_dot(f, params))
    src = make_dot(f, params, show_saved=True, show_attrs=True).source
    pow_nodes = sum(1 for fn, _ in f.grad_fn.next_functions if fn.name() == "PowBackward0")
    assert src.count('"self\\nfreed"') == pow_nodes == 2
    assert "[freed]" in src


def test_resnet_after_backward():
    torch.manual_seed(0)
    net = TinyResNet(blocks=4)
    out = net(torch.randn(2, 3, 6, 6)).sum()
    params = dict(net.named_parameters())
    before = counts(make_dot(out, params))
    out.backward()
    assert counts(make_dot(out, params)) == before
    graph = make_dot(out, params, show_saved=True)
    assert "freed" in graph.source


def _chain(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.ones(1, requires_grad=True)
    h = x
    for _ in range(n):
        h = h * 1.0001
    return x, h


@pytest.mark.slow
def test_deep_chain_100k_where_torchviz_recurses():
    x, h = _chain(100_000)
    with pytest.raises(RecursionError):
        torchviz.make_dot(h)
    n, e = counts(make_dot(h, {"x": x}))
    # output + 100,000 MulBackward0 + AccumulateGrad + leaf; one edge between each pair
    assert (n, e) == (100_003, 100_002)
    del h  # freeing the graph whose nodes were touched must not crash


def test_deep_chain_counts_match_torchviz_where_it_works():
    x, h = _chain(300)
    same_as_torchviz(h, {"x": x})


# ---------------------------------------------------------------- escaping, types, display
@pytest.mark.parametrize("name", ['<b>bold</b>', 'a"b', "back\\slash", "new\nline", "{x}; y -> z", "tab\tend"])
def test_param_names_are_escaped(name):
    x = torch.tensor([1.0], requires_grad=True)
    graph = make_dot((x * 2).sum(), {name: x})
    nodes, edges = parse_dot(graph.source)
    assert len(nodes) == 5 and len(edges) == 4
    if shutil.which("dot"):
        done = subprocess.run(["dot", "-Tsvg"], input=graph.source, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr


def test_returns_a_digraph_with_courier():
    graph = make_dot(forum()[0])
    assert isinstance(graph, graphviz.Digraph) and isinstance(graph, GradGraph)
    assert "fontname=Courier" in graph.source


def test_repr_mimebundle_has_svg_and_text():
    bundle = make_dot(forum()[0])._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
    assert "make_dot" in bundle["text/plain"]


def test_repr_mimebundle_uses_graphviz_pure_without_system_dot(monkeypatch, tmp_path):
    from gradtrace.render.svg import _pure_candidates

    pure = next((c for c in _pure_candidates() if shutil.os.path.isfile(c)), None)
    if pure is None:
        pytest.skip("graphviz-pure is not installed")
    monkeypatch.setenv("PATH", str(tmp_path))  # no system dot on PATH
    monkeypatch.delenv("GRADTRACE_DOT", raising=False)
    bundle = make_dot(forum()[0])._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]


def test_non_tensor_gives_a_clear_error():
    with pytest.raises(TypeError, match="needs a tensor"):
        make_dot([1, 2, 3])


def test_public_api_exports():
    assert gradtrace.make_dot is not None
    f, params = forum()
    assert counts(gradtrace.make_dot(f, params)) == counts(make_dot(f, params))
    shown = gradtrace.show(f)
    bundle = shown._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]
    assert "PowBackward0" in bundle["text/plain"]


# ---------------------------------------------------------------- byte-identical DOT (golden files)
GOLDEN = Path(__file__).resolve().parent / "golden" / "makedot"
_KWS = {"plain": {}, "attrs": {"show_attrs": True}, "saved": {"show_saved": True},
        "both": {"show_attrs": True, "show_saved": True}}


class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        ctx.k = 2
        return t * t

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 2 * t * g


def _no_grad_view():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 2
    with torch.no_grad():
        v = b[:2]
    return (v, b * 3), {"x": x}


def _views_and_saved():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = torch.tensor([0.5, -1.0])  # saved, needs no grad
    h = (x * w).t()
    return (h[0], h.exp(), x * h), {"x": x, "w": w}


def _golden_graphs():
    """name -> a function building (var, params) afresh."""
    def small(build):
        def make():
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            return build(x), {"x": x}
        return make

    def inplace():
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y[0] = y[1] * 5
        return y.sum(), {"x": x}

    def custom():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        return _Square.apply(x * 3).sum(), {"x": x}

    def resnet():
        torch.manual_seed(0)
        net = TinyResNet(blocks=3)
        return net(torch.randn(2, 3, 6, 6)).sum(), dict(net.named_parameters())

    def used(make):
        def after():
            var, params = make()
            (var if isinstance(var, torch.Tensor) else var[0]).sum().backward()
            return var, params
        return after

    def chain():
        x, h = _chain(300)
        return h, {"x": x}

    def escaped():
        x = torch.tensor([1.0], requires_grad=True)
        return (x * 2).sum(), {'<b>"a\\b"</b>\n{x}; y -> z': x}

    def lstm():
        torch.manual_seed(0)
        net = nn.LSTM(3, 4)
        out, _ = net(torch.randn(2, 1, 3))
        return out.sum(), dict(net.named_parameters())

    graphs = {
        "forum": forum,
        "sum": small(lambda x: (x * x + 2).sum()),
        "index": small(lambda x: x[0] * x[1]),
        "view_exp": small(lambda x: x.view(2, 1).exp()),
        "two_outputs": small(lambda x: (x.tanh(), x.sigmoid())),
        "stack": small(lambda x: torch.stack([x, x * 2]).sum()),
        "matmul_relu": small(lambda x: (x.unsqueeze(0) @ torch.ones(2, 3)).relu().sum()),
        "leaf": small(lambda x: x),
        "no_graph": small(lambda x: x.detach() * 2),
        "leaf_and_output": small(lambda x: (x, x * 3)),
        "same_twice": small(lambda x: (x * 2,) * 2),
        "inplace": inplace,
        "custom": custom,
        "resnet": resnet,
        "lstm": lstm,
        "no_grad_view": _no_grad_view,
        "views_and_saved": _views_and_saved,
        "forum_used": used(forum),
        "resnet_used": used(resnet),
        "custom_used": used(custom),
        "chain": chain,
        "escaped": escaped,
    }
    return graphs


@pytest.mark.parametrize("kw", sorted(_KWS))
@pytest.mark.parametrize("graph", sorted(_golden_graphs()))
def test_dot_source_is_unchanged(request, graph, kw):
    """The DOT text is byte for byte the one in tests/golden/makedot/ (``--overwrite-golden`` rewrites it)."""
    var, params = _golden_graphs()[graph]()
    text = make_dot(var, params, **_KWS[kw]).source
    path = GOLDEN / f"{graph}-{kw}.dot"
    if request.config.getoption("--overwrite-golden") or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        if not request.config.getoption("--overwrite-golden"):
            pytest.fail(f"golden file {path.name} was missing and has been written; check it and re-run")
    assert text == path.read_text(encoding="utf-8")


def test_saved_tensor_boxes_show_name_and_shape_as_torchviz(resnet):
    """A saved tensor's box says its name and shape (big ones once showed a min/mean/max summary instead)."""
    net, out = resnet
    from_torch: set[tuple[str, str]] = set()
    todo, seen = [out.grad_fn], set()
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        for attr in dir(fn):
            val = getattr(fn, attr) if attr.startswith("_saved_") else None
            if isinstance(val, torch.Tensor):
                from_torch.add((attr[len("_saved_"):], "(" + ", ".join(str(s) for s in val.shape) + ")"))
        todo.extend(n for n, _ in fn.next_functions)
    src = make_dot(out, dict(net.named_parameters()), show_saved=True).source
    drawn = set(re.findall(r'\[label="(\w+)\\n([^"]*)" fillcolor=orange\]', src))
    assert drawn and drawn <= from_torch


# ---------------------------------------------------------------- real models (the bench extra)
def _transformers_models():
    """GPT-2 and BERT from small configs, random weights (nothing downloaded), and a loss of each."""
    why = "transformers is not installed: pip install 'gradtrace[bench]' to compare on real models"
    transformers = pytest.importorskip("transformers", reason=why)
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (1, 8))
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=32, bos_token_id=0, eos_token_id=0)).eval()
    bert = transformers.BertForMaskedLM(transformers.BertConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=100,
        max_position_embeddings=32, pad_token_id=0)).eval()
    return {"gpt2": (gpt2, gpt2(ids, labels=ids).loss), "bert": (bert, bert(ids, labels=ids).loss)}


@pytest.fixture(scope="module")
def real_models():
    return _transformers_models()


@pytest.mark.parametrize("model", ["gpt2", "bert"])
@pytest.mark.parametrize("kw", [{}, {"show_saved": True}])
def test_real_models_same_boxes_and_arrows_as_torchviz(real_models, model, kw):
    net, loss = real_models[model]
    params = dict(net.named_parameters())
    ours = labelled(make_dot(loss, params, **kw).source)
    theirs = labelled(torchviz.make_dot(loss, params, **kw).source)
    assert ours == theirs
    assert sum(ours[0][f"{name}\\n" + "(" + ", ".join(map(str, p.shape)) + ")"] for name, p in params.items()) \
        == len(params)  # every parameter drawn once, labelled with its name and shape


@pytest.mark.parametrize("model", ["gpt2", "bert"])
def test_real_models_with_attrs_and_after_backward(model):
    net, loss = _transformers_models()[model]  # its own copy: backward() frees the graph
    params = dict(net.named_parameters())
    assert counts(make_dot(loss, params, show_attrs=True)) == counts(torchviz.make_dot(loss, params, show_attrs=True))
    before = labelled(make_dot(loss, params).source)
    loss.backward(retain_graph=False)
    assert labelled(make_dot(loss, params).source) == before  # torchviz draws it too, but not with show_saved
    src = make_dot(loss, params, show_saved=True, show_attrs=True).source
    assert "freed" in src


def test_svg_of_a_huge_graph_warns_and_points_at_show(monkeypatch):
    from gradtrace.makedot import BIG_GRAPH
    from gradtrace.render.svg import LayoutError

    x = torch.ones(3, requires_grad=True)
    wide = torch.stack([(x * i).sum() for i in range(BIG_GRAPH // 4)]).sum()
    graph = make_dot(wide)
    assert len(graph.body) > BIG_GRAPH
    monkeypatch.setenv("GRADTRACE_DOT", "/nonexistent/dot")  # the warning comes before any layout: skip the long one
    with pytest.warns(UserWarning, match=r"gradtrace\.show"), pytest.raises(LayoutError):
        graph.svg()
    small = make_dot(forum()[0])
    with pytest.raises(LayoutError), warnings.catch_warnings():
        warnings.simplefilter("error")  # a small graph: no warning
        small.svg()


def test_a_custom_function_class_is_not_kept_across_calls():
    """Node classes are cached across calls only when they are PyTorch's own (a learner's keeps its namespace)."""
    from gradtrace import makedot

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = _Square.apply(x * 3).sum()
    assert "_SquareBackward" in make_dot(out).source
    assert type(out.grad_fn.next_functions[0][0]) not in makedot._BUILT_IN
    assert type(out.grad_fn) in makedot._BUILT_IN  # SumBackward0: built in

"""The programs the benchmarks run: a ResNet-like net, a small MLP training loop, a long chain.

Each is plain PyTorch, small enough to run on one CPU core; :func:`real_models` adds the real models
of the ``bench`` extra (``transformers``) and of ``torchvision`` where they import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import nn

__all__ = [
    "VISION", "RealModel", "ResNet50", "ResNetLike", "backward_nodes", "chain_loss", "chain_source",
    "elementwise_source", "l2_mlp_source", "mlp_source", "real_models", "recursion_source", "resnet50_source",
    "resnet_loss", "still_source", "wide_loss", "wide_source",
]


class Block(nn.Module):
    """conv-bn-relu-conv-bn, plus the input, then relu (a ResNet basic block)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


class ResNetLike(nn.Module):
    """A stem, ``stages`` stages of ``blocks`` blocks each, pooling and a linear head."""

    def __init__(self, stages: int = 4, blocks: int = 18, channels: int = 4, classes: int = 3) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.layers = nn.ModuleList(nn.Sequential(*(Block(channels) for _ in range(blocks))) for _ in range(stages))
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x.mean(dim=(2, 3)))


def resnet_loss(seed: int = 0, **sizes: int) -> tuple[torch.Tensor, ResNetLike]:
    """The loss of a :class:`ResNetLike` on a small random batch, and the net."""
    torch.manual_seed(seed)
    net = ResNetLike(**sizes)
    x = torch.randn(2, 3, 6, 6)
    return nn.functional.cross_entropy(net(x), torch.tensor([0, 2])), net


def backward_nodes(t: torch.Tensor) -> int:
    """How many distinct backward nodes hang from ``t.grad_fn`` (walked with a loop)."""
    seen: set[int] = set()
    todo = [t.grad_fn]
    keep = []  # hold wrappers so that id() stays unique during the walk
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        todo.extend(n for n, _ in node.next_functions)
    return len(seen)


def mlp_source(iterations: int) -> str:
    """A training loop: Linear(8,16)-ReLU-Linear(16,1), SGD, mse_loss, a 32x8 batch."""
    return f"""\
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, 8)
y = torch.randn(32, 1)
for i in range({iterations}):
    opt.zero_grad()
    pred = model(x)
    loss = torch.nn.functional.mse_loss(pred, y)
    loss.backward()
    opt.step()
"""


def elementwise_source(n: int) -> str:
    """One elementwise op over ``n`` elements, summed, then ``backward()``: the reverse pass explained in numbers
    has a sum's gradient of ``n`` elements made from one number."""
    return f"""\
import torch
torch.manual_seed(0)
x = torch.rand({n}, requires_grad=True)
y = (x * 2).sin().sum()
y.backward()
"""


def l2_mlp_source() -> str:
    """One training step of a 784-256-10 MLP whose loss has an L2 term on its 784x256 weight."""
    return """\
import torch
torch.manual_seed(0)
x = torch.rand(64, 784)
t = torch.randint(0, 10, (64,))
w1 = torch.randn(784, 256, requires_grad=True)
w2 = torch.randn(256, 10, requires_grad=True)
h = (x @ w1).relu()
out = h @ w2
loss = torch.nn.functional.cross_entropy(out, t) + 1e-4 * (w1 ** 2).sum()
loss.backward()
"""


def chain_source(length: int) -> str:
    """One multiplication repeated: a graph ``length`` nodes deep."""
    return f"""\
import torch
h = torch.ones(1, requires_grad=True)
for _ in range({length}):
    h = h * 1.0001
"""


def recursion_source(depth: int) -> str:
    """A function that calls itself ``depth`` times, one multiplication per call (a graph ``depth`` deep)."""
    return f"""\
import torch
def down(h, n):
    if n == 0:
        return h
    return down(h * 1.0001, n - 1)
x = torch.ones(1, requires_grad=True)
y = down(x, {depth})
"""


def still_source(length: int, iterations: int) -> str:
    """A ``length``-op chain, then a loop of ``iterations`` statements that leave its graph as it is."""
    return chain_source(length) + f"for i in range({iterations}):\n    k = i\n"


class Bottleneck(nn.Module):
    """1x1, 3x3, 1x1 convolutions with batch norms, plus a shortcut (torchvision's ResNet-50 block)."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or inplanes != planes * 4:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes * 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet50(nn.Module):
    """torchvision's ResNet-50 layout and module names in plain ``torch.nn`` (``width`` scales the channels)."""

    def __init__(self, width: int = 64, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes, layers = width, []
        for i, blocks in enumerate((3, 4, 6, 3)):
            planes = width * 2**i
            stage = [Bottleneck(inplanes, planes, 1 if i == 0 else 2)]
            stage += [Bottleneck(planes * 4, planes) for _ in range(blocks - 1)]
            layers.append(nn.Sequential(*stage))
            inplanes = planes * 4
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(inplanes, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50_source(width: int = 8) -> str:
    """A program: one ResNet-50-shaped net (``ResNet50`` in its namespace), one loss."""
    return (f"import torch\ntorch.manual_seed(0)\nnet = ResNet50(width={width})\nx = torch.randn(2, 3, 32, 32)\n"
            "loss = torch.nn.functional.cross_entropy(net(x), torch.tensor([0, 2]))\n")


def wide_source(n: int) -> str:
    """A program: one leaf used by ``n`` separate branches, summed at once (a graph ``n`` wide)."""
    return ("import torch\nx = torch.ones(3, requires_grad=True)\n"
            f"total = torch.stack([(x * i).sum() for i in range({n})]).sum()\n")


def wide_loss(n: int) -> torch.Tensor:
    x = torch.ones(3, requires_grad=True)
    return torch.stack([(x * i).sum() for i in range(n)]).sum()


def chain_loss(n: int) -> torch.Tensor:
    h = torch.ones(1, requires_grad=True)
    for _ in range(n):
        h = h * 1.0001
    return h


class RealModel(NamedTuple):
    """A real model, the inputs of one batch, and the line that computes its loss from them."""

    model: nn.Module
    inputs: dict[str, Any]  # the names the loss line uses besides ``model`` (and ``torch``)
    forward: str  # ``loss = ...``, one line

    @property
    def step(self) -> str:
        """One training step, as a learner writes it: zero_grad, forward, backward, step."""
        return f"opt.zero_grad()\n{self.forward}\nloss.backward()\nopt.step()\n"

    def namespace(self, lr: float = 0.0) -> dict[str, Any]:
        """The names :attr:`step` runs in, with a fresh SGD optimizer (lr 0: the weights stay as they are)."""
        return {"torch": torch, **self.inputs, "model": self.model,
                "opt": torch.optim.SGD(self.model.parameters(), lr=lr)}

    def loss(self) -> torch.Tensor:
        """The loss of one forward pass, run plainly."""
        ns: dict[str, Any] = {"torch": torch, **self.inputs, "model": self.model}
        exec(self.forward, ns)
        return ns["loss"]


def _gpt2() -> RealModel:
    import transformers

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_head=2, n_embd=64, vocab_size=100, n_positions=32, bos_token_id=0, eos_token_id=0))
    return RealModel(model, {"ids": torch.randint(0, 100, (2, 16))}, "loss = model(ids, labels=ids).loss")


def _bert() -> RealModel:
    import transformers

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    model = transformers.BertForMaskedLM(transformers.BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, vocab_size=100,
        max_position_embeddings=32, pad_token_id=0))
    return RealModel(model, {"ids": torch.randint(0, 100, (2, 16))}, "loss = model(ids, labels=ids).loss")


#: torchvision models, full architecture with random weights and a 10-class head; the input side (pixels)
#: is small so that a step runs in well under a second on one core (the graph is the full model's).
VISION = {"resnet18": ({}, 64), "resnet50": ({}, 64), "mobilenet_v3_small": ({}, 64),
          "vit_b_16": ({"image_size": 32}, 32)}


def _vision(name: str) -> Callable[[], RealModel]:
    def build() -> RealModel:
        import torchvision

        kwargs, side = VISION[name]
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None, num_classes=10, **kwargs)
        inputs = {"x": torch.randn(2, 3, side, side), "y": torch.tensor([0, 7])}
        return RealModel(model, inputs, "loss = torch.nn.functional.cross_entropy(model(x), y)")
    return build


def real_models() -> tuple[dict[str, Callable[[], RealModel]], list[str]]:
    """The real models whose libraries import here (each built when called), and why the others are absent.

    GPT-2 and BERT come from ``transformers`` (the ``bench`` extra), built from small configs;
    resnet18, resnet50, mobilenet_v3_small and vit_b_16 from ``torchvision``. Random weights: nothing
    is downloaded.
    """
    builders: dict[str, Callable[[], RealModel]] = {}
    missing = []
    try:
        import transformers  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - a broken install says why in the table, it does not stop the run
        missing.append(f"transformers does not import ({type(exc).__name__}: {str(exc)[:80]}): "
                       "pip install 'gradtrace[bench]'")
    else:
        builders.update({"GPT-2": _gpt2, "BERT": _bert})
    try:
        import torchvision  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - e.g. a CUDA torchvision beside a CPU torch: "torchvision::nms"
        missing.append(f"torchvision does not import ({type(exc).__name__}: {str(exc)[:80]})")
    else:
        builders.update({name: _vision(name) for name in VISION})
    return builders, missing

"""The programs the benchmarks run: a ResNet-like net, a small MLP training loop, a long chain.

Each is plain PyTorch (no torchvision), small enough to run on one CPU core.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = [
    "ResNet50", "ResNetLike", "backward_nodes", "chain_loss", "chain_source", "mlp_source", "resnet50_source",
    "resnet_loss", "wide_loss", "wide_source",
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


def chain_source(length: int) -> str:
    """One multiplication repeated: a graph ``length`` nodes deep."""
    return f"""\
import torch
h = torch.ones(1, requires_grad=True)
for _ in range({length}):
    h = h * 1.0001
"""


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


def transformers_models() -> dict[str, tuple[nn.Module, torch.Tensor]]:
    """GPT-2 and BERT from small configs with random weights (nothing downloaded), with a batch of token ids.

    Needs the ``bench`` extra (``transformers``); raises ImportError without it.
    """
    import transformers

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (2, 16))
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_head=2, n_embd=64, vocab_size=100, n_positions=32, bos_token_id=0, eos_token_id=0))
    bert = transformers.BertForMaskedLM(transformers.BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, vocab_size=100,
        max_position_embeddings=32, pad_token_id=0))
    return {"GPT-2": (gpt2, ids), "BERT": (bert, ids)}


#: One training step of a model named ``model`` on token ids named ``ids`` (with ``opt``, an optimizer).
TRAIN_STEP = "opt.zero_grad()\nloss = model(ids, labels=ids).loss\nloss.backward()\nopt.step()\n"

"""The programs the benchmarks run: a ResNet-like net, a small MLP training loop, a long chain.

Each is plain PyTorch (no torchvision), small enough to run on one CPU core.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["ResNetLike", "resnet_loss", "mlp_source", "chain_source", "backward_nodes"]


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

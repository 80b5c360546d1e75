# ruff: noqa
# Module buffers are named, and their in-place updates show.
import torch
from torch import nn
torch.manual_seed(0)
bn = nn.BatchNorm1d(2)
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([1., 1.]))
    def forward(self, x):
        self.scale.mul_(2)
        return x * self.scale
m = Scaled()
x = torch.randn(4, 2)
y = bn(x)
z = m(x)
bn.eval()
y2 = bn(x)

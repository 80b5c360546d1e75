# ruff: noqa
# A saved value written behind the version counter shows its new values (y2's saved result, BatchNorm's running mean).
import torch
from torch import nn
torch.manual_seed(0)
x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp()
y.data.zero_()
bn = nn.BatchNorm1d(2)
out = bn(torch.randn(4, 2))

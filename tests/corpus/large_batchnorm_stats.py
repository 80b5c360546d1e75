# ruff: noqa
# BatchNorm over 20 features: running statistics, saved values and a train/eval switch.
import torch
import torch.nn as nn
torch.manual_seed(0)
bn = nn.BatchNorm1d(20)
x = torch.randn(4, 20, requires_grad=True)
y = bn(x)
y2 = bn(x * 2)
loss = (y * y2).sum()
loss.backward()
bn.eval()
z = bn(x)
print(bn.running_mean.sum(), x.grad.sum(), z.sum())

# ruff: noqa
# A custom Function with mark_dirty on a 24-element tensor and an in-place ReLU in a Sequential.
import torch
import torch.nn as nn
class Halve(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.mark_dirty(t)
        return t.mul_(0.5)
    @staticmethod
    def backward(ctx, g):
        return g * 0.5
torch.manual_seed(0)
x = torch.randn(4, 6, requires_grad=True)
y = x * 3
z = Halve.apply(y)
seq = nn.Sequential(nn.Linear(6, 6), nn.ReLU(inplace=True))
out = seq(z)
out.sum().backward()
print(z.sum(), x.grad.sum())

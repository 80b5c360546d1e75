# ruff: noqa
# A custom Function with mark_dirty.
import torch
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.mark_dirty(t)
        return t.mul_(2)
    @staticmethod
    def backward(ctx, g):
        return g * 2
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
z = Double.apply(y)
s = z.sum()
s.backward()

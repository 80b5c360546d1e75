# ruff: noqa
# A custom Function that saves its input; changing the input afterwards makes backward fail.
import torch
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        ctx.scale = 2.0
        return t * t
    @staticmethod
    def backward(ctx, g):
        t, = ctx.saved_tensors
        return ctx.scale * t * g
x = torch.tensor([1., 2., 3.], requires_grad=True)
a = x * 1
y = Square.apply(a)
s = y.sum()
s.backward(retain_graph=True)
a.add_(1)
s.backward()

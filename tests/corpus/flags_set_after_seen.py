# ruff: noqa
# A tensor the program saw before autograd gave it a grad_fn (a Function's setup_context, a dispatch mode) shows its grad_fn after.
import torch
from torch.autograd.function import once_differentiable
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(t, k):
        return t * k
    @staticmethod
    def setup_context(ctx, inputs, output):
        t, k = inputs
        ctx.k = k
        ctx.save_for_backward(t)
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        t, = ctx.saved_tensors
        return (g * ctx.k if ctx.needs_input_grad[0] else None), None
x = torch.tensor([1., 2.], requires_grad=True)
y = Scale.apply(x, 3.0)
z = y.sum()
z.backward()
from torch.utils._python_dispatch import TorchDispatchMode
class Keep(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out
x2 = torch.tensor([1., 2.], requires_grad=True)
with Keep():
    y2 = x2 * 2
z2 = y2.sum()
z2.backward()

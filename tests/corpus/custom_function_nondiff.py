# ruff: noqa
# A custom Function with mark_non_differentiable, once_differentiable and save_for_backward.
import torch
from torch.autograd.function import once_differentiable
class SortWithIndex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        vals, idx = t.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return vals, idx
    @staticmethod
    @once_differentiable
    def backward(ctx, gv, gi):
        idx, = ctx.saved_tensors
        out = torch.zeros_like(gv)
        out[idx] = gv
        return out
x = torch.tensor([3., 1., 2.], requires_grad=True)
v, i = SortWithIndex.apply(x)
loss = (v * torch.tensor([1., 10., 100.])).sum()
loss.backward()
print(v, i, i.requires_grad, x.grad)

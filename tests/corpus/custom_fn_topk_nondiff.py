# ruff: noqa
# A custom Function returning values and indices, the indices marked non-differentiable.
import torch
class SortDesc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        vals, idx = torch.sort(x, descending=True)
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return vals, idx
    @staticmethod
    def backward(ctx, gvals, gidx):
        idx, = ctx.saved_tensors
        out = torch.zeros_like(gvals)
        out[idx] = gvals
        return out
x = torch.tensor([0.3, 2.0, -1.0], requires_grad=True)
vals, idx = SortDesc.apply(x)
weights = torch.tensor([3., 2., 1.])
loss = (vals * weights).sum()
loss.backward()
print(vals, idx, idx.requires_grad, x.grad)

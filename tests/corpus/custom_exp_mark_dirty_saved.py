# ruff: noqa
# A custom in-place exp: forward writes into its input, marks it dirty and saves the result; changing that result afterwards breaks backward.
import torch

class ExpInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.exp_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        result, = ctx.saved_tensors
        return g * result

a = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
b = a * 1
out = ExpInplace.apply(b)
print(out is b, b._version, out.grad_fn.name())
out.sum().backward()
print(a.grad)
c = a * 1
out2 = ExpInplace.apply(c)
out2.mul_(2)
try:
    out2.sum().backward()
except RuntimeError as e:
    print("failed:", "modified by an inplace operation" in str(e))

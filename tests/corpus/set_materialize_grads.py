# ruff: noqa
# A custom Function with set_materialize_grads(False) and an unused output.
import torch
class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.set_materialize_grads(False)
        return t * 2, t * 3
    @staticmethod
    def backward(ctx, g1, g2):
        out = torch.zeros(2)
        if g1 is not None:
            out = out + 2 * g1
        if g2 is not None:
            out = out + 3 * g2
        return out
x = torch.tensor([1., 2.], requires_grad=True)
a, b = Split.apply(x)
a.sum().backward()
print(x.grad)

# ruff: noqa
# A custom Function with save_for_forward and jvp under forward AD.
import torch
import torch.autograd.forward_ad as fwAD
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_forward(t)
        ctx.save_for_backward(t)
        return t * t
    @staticmethod
    def jvp(ctx, tangent):
        t, = ctx.saved_tensors
        return 2 * t * tangent
    @staticmethod
    def backward(ctx, g):
        t, = ctx.saved_tensors
        return 2 * t * g
x = torch.tensor([1., 2., 3.])
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.ones(3))
    out = Square.apply(d)
    tan = fwAD.unpack_dual(out).tangent.clone()
w = torch.tensor([1., 2.], requires_grad=True)
s = Square.apply(w).sum()
s.backward()
print(tan, w.grad)

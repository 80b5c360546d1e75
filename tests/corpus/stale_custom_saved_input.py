# ruff: noqa
# A custom Function saves its input; the program changes that input afterwards.
import torch
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t ** 3
    @staticmethod
    def backward(ctx, g):
        t, = ctx.saved_tensors
        return 3 * t * t * g
x = torch.tensor([1., 2.], requires_grad=True)
h = x * 1
c = Cube.apply(h)
h.mul_(10)
loss = c.sum()
try:
    loss.backward()
except RuntimeError as e:
    err = str(e)[:30]
h2 = x * 1
c2 = Cube.apply(h2)
loss2 = c2.sum()
loss2.backward()
print(x.grad)

# ruff: noqa
# a.mul_(a) on a view leaves a stale value inside CopySlices, but backward(inputs=[z]) never runs
# that node: it succeeds.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
z = torch.randn(3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
a.mul_(a)
loss = a.sum() + (z * 3).sum()
loss.backward(inputs=[z])
print(z.grad, w.grad)

# ruff: noqa
# autograd.grad toward an input whose path avoids the stale node runs fine.
import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
h = a * 1
y = (h * h).sum() + (b * b).sum()
h.add_(1)
gb, = torch.autograd.grad(y, [b], retain_graph=True)
ga = torch.autograd.grad(y, [a])

# ruff: noqa
# detach_(), requires_grad_() and an in-place op under inference_mode.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.detach_()
z = torch.tensor([3., 4.])
z.requires_grad_()
w = torch.tensor([5., 6.])
with torch.inference_mode():
    w.add_(1)
v = w * 1

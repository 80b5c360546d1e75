# ruff: noqa
# Turning requires_grad off and on again on a leaf between forward passes.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
a = w * 2
w.requires_grad_(False)
b = w * 2
w.requires_grad_(True)
c = w * 2
print(a.requires_grad, b.requires_grad, c.requires_grad)
(a + b + c).sum().backward()
print(w.grad)
w.requires_grad = False
with torch.no_grad():
    w.mul_(10)
print(w)

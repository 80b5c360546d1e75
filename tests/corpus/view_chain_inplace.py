# ruff: noqa
# A chain of views of a non-leaf, changed in place through the last one.
import torch
x = torch.arange(12., requires_grad=True)
y = x.reshape(2, 2, 3) * 1
v = y[0].t().reshape(-1)
w = y[0].t()
w.mul_(2)
s = (y * y).sum()
s.backward()
print(v, w.is_contiguous(), x.grad)

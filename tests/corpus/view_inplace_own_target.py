# ruff: noqa
# An in-place product of a view with itself (a.mul_(a)): the node saves the view's old values,
# which the same call then changes; backward fails on them.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
a.mul_(a)
try:
    a.backward(gradient=torch.ones_like(a))
except RuntimeError as e:
    print("inplace" in str(e))

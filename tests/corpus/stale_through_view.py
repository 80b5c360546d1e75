# ruff: noqa
# A saved tensor changed through a view of it: backward fails, and it is predicted.
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
z = y.pow(2)
v = y[:2]
v.zero_()
s = z.sum()
s.backward()

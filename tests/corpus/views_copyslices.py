# ruff: noqa
# Views and CopySlices.
import torch
x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
y = x * 1
v = y[1:3]
v.mul_(10)
y[0] = 7.
z = y.sum()
z.backward()

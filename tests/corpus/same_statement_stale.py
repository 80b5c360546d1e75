# ruff: noqa
# The save and the in-place change happen in one statement: backward fails, and it is predicted.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp().add_(1)
s = y.sum()
s.backward()

# ruff: noqa
# Second derivatives: create_graph=True, and autograd.grad of a gradient.
import torch
x = torch.tensor([0.5, 1.5], requires_grad=True)
y = (x ** 3).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
h, = torch.autograd.grad(g.sum(), x, create_graph=True)
t, = torch.autograd.grad(h.sum(), x)
z = (x ** 2).sum()
z.backward(create_graph=True)
gx = x.grad
gx.sum().backward()

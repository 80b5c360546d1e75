# ruff: noqa
# backward(inputs=...) and autograd.grad reach only the nodes they need.
import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
h = b * 1
y = (a * 2).sum() + (h * h).sum()
ga, = torch.autograd.grad(y, [a], retain_graph=True)
y.backward(inputs=[b])

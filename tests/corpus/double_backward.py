# ruff: noqa
# create_graph=True: a gradient that is itself differentiated.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = (x ** 3).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
gg = g.sum()
gg.backward()
print(x.grad)
x.grad = None
y2 = (x.sin() * x).sum()
y2.backward(create_graph=True)
first = x.grad
first.sum().backward()
print(x.grad)

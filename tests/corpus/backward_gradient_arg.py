# ruff: noqa
# backward(gradient=v) on a non-scalar output: a vector-Jacobian product.
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x ** 2 + x
try:
    y.backward()
except RuntimeError as e:
    why = str(e)
v = torch.tensor([1., 0.1, 0.01])
y.backward(gradient=v, retain_graph=True)
first = x.grad.clone()
y.backward(torch.ones_like(y))
print(why, first, x.grad)

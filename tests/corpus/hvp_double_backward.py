# ruff: noqa
# A Hessian-vector product by double backward, checked against the full Hessian.
import torch
x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
v = torch.tensor([1.0, 0.0, 2.0])
f = (x ** 3).sum() + x[0] * x[1]
g, = torch.autograd.grad(f, x, create_graph=True)
gv = (g * v).sum()
hv, = torch.autograd.grad(gv, x)
H = torch.autograd.functional.hessian(lambda t: (t ** 3).sum() + t[0] * t[1], x)
print(hv, H @ v)

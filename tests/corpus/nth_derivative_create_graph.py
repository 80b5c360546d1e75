# ruff: noqa
# Higher derivatives by calling autograd.grad again and again with create_graph=True: d^n/dx^n of sin at a point.
import torch
x = torch.tensor(0.5, requires_grad=True)
y = torch.sin(x)
derivs = [y]
for n in range(1, 5):
    (d,) = torch.autograd.grad(derivs[-1], x, create_graph=True)
    derivs.append(d)
    print(n, d.item(), d.grad_fn.name())
print([round(d.item(), 6) for d in derivs])
print(torch.cos(x).item(), -torch.sin(x).item())
f = x ** 4
g1, = torch.autograd.grad(f, x, create_graph=True)
g2, = torch.autograd.grad(g1, x, create_graph=True)
g3, = torch.autograd.grad(g2, x)
print(g1, g2, g3)
print(g3.requires_grad, x.grad)

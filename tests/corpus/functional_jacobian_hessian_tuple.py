# ruff: noqa
# torch.autograd.functional.jacobian and hessian on a function of two inputs; compare with the formula.
import torch
from torch.autograd.functional import jacobian, hessian

def f(x, y):
    return x ** 2 * y + y.sin()

x = torch.tensor([1.0, 2.0])
y = torch.tensor([0.5, -1.0])
J = jacobian(f, (x, y))
print(len(J), J[0], J[1])
print(torch.allclose(J[0], torch.diag(2 * x * y)), torch.allclose(J[1], torch.diag(x ** 2 + y.cos())))

def energy(p):
    return (p[0] ** 2 * p[1] + p[1] ** 3).sum()

p = torch.tensor([1.0, 2.0])
H = hessian(energy, p)
print(H)
print(H[0, 1] == H[1, 0], H.requires_grad)
J2 = jacobian(lambda t: t.exp() * 2, torch.zeros(3), vectorize=True)
print(J2)

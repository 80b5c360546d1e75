# ruff: noqa
# torch.autograd.functional: vjp, jvp, hvp and jacobian(vectorize=True) of a small function, compared with backward().
import torch
from torch.autograd.functional import jacobian, jvp, vjp, hvp

def f(x):
    return torch.stack([x[0] * x[1], x[1].sin(), x.pow(2).sum()])

x = torch.tensor([1.0, 2.0])
v = torch.tensor([1.0, 0.5, -1.0])
out, vj = vjp(f, x, v)
print(out, vj)
out2, jv = jvp(f, x, torch.tensor([1.0, 0.0]))
print(jv)
J = jacobian(f, x, vectorize=True)
print(J, torch.allclose(J.t() @ v, vj))

def energy(x):
    return (x ** 3).sum()

val, hv = hvp(energy, x, torch.ones(2))
print(val, hv)
xr = x.clone().requires_grad_()
f(xr).backward(v)
print(xr.grad, torch.equal(xr.grad, vj))

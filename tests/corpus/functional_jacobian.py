# ruff: noqa
# torch.autograd.functional: jacobian, hessian, vjp.
import torch
from torch.autograd.functional import hessian, jacobian, vjp
def f(t):
    return t.exp() * t.sum()
x = torch.tensor([0.1, 0.2])
j = jacobian(f, x)
hs = hessian(lambda t: (t ** 3).sum(), x)
out, v = vjp(f, x, torch.ones(2))

# ruff: noqa
# torch.autograd.functional: hessian of a two-input function, vhp, hvp and jacobian with vectorize.
import torch
from torch.autograd.functional import hessian, hvp, jacobian, vhp
def f(x, y):
    return (x ** 2 * y).sum() + (x * y.sin()).sum()
x = torch.tensor([1.0, 2.0])
y = torch.tensor([0.5, -0.5])
H = hessian(f, (x, y))
val, vh = vhp(f, (x, y), (torch.ones(2), torch.zeros(2)))
val2, hv = hvp(f, (x, y), (torch.ones(2), torch.zeros(2)))
J = jacobian(lambda t: t.exp() * t, x, vectorize=True)
print(H[0][0], H[0][1], vh, hv, J)

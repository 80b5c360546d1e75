# ruff: noqa
# torch.autograd.functional jacobian, hessian, vjp and jvp.
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp
def f(t):
    return t.sin() * t
x = torch.tensor([0.1, 0.2, 0.3])
J = jacobian(f, x)
H = hessian(lambda t: f(t).sum(), x)
out, v = vjp(f, x, torch.ones(3))
out2, jv = jvp(f, (x,), (torch.ones(3),))
Jc = jacobian(f, x, create_graph=True)

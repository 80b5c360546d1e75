# ruff: noqa
# torch.func jacrev, jacfwd and hessian of a small function.
import torch
from torch.func import jacrev, jacfwd, hessian, vmap, grad
def f(t):
    return (t ** 3).sum() + t.prod()
x = torch.tensor([1., 2., 3.])
J = jacrev(f)(x)
Jf = jacfwd(f)(x)
H = hessian(f)(x)
per_row = vmap(grad(lambda r: (r * r).sum()))(torch.arange(6.).reshape(2, 3))
print(J, Jf, H, per_row)

# ruff: noqa
# torch.func: jacrev, hessian and vmap over grad.
import torch
from torch.func import grad, hessian, jacrev, vmap
def f(t):
    return (t ** 2).sin().sum()
x = torch.tensor([0.1, 0.2, 0.3])
j = jacrev(lambda t: t.exp() * t)(x)
h = hessian(f)(x)
per_row = vmap(grad(f))(torch.stack([x, x * 2]))

# ruff: noqa
# torch.func transforms.
import torch
from torch.func import grad, vmap
def f(t):
    return (t.sin() * t).sum()
x = torch.tensor([0.5, 1.0, 2.0])
g = grad(f)(x)
batched = vmap(lambda r: r * 2)(torch.ones(2, 3))

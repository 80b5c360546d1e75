# ruff: noqa
# Closures and functions calling functions.
import torch
def outer(t):
    acc = t * 1
    def inner(u):
        nonlocal acc
        acc = acc + u
        return acc
    inner(t)
    inner(t * 2)
    return acc
x = torch.tensor([1., 2.], requires_grad=True)
y = outer(x)
y.sum().backward()

# ruff: noqa
# Mutual recursion over tensors.
import torch
def even(n, t):
    if n == 0:
        return t
    u = t * 1.1
    return odd(n - 1, u)
def odd(n, t):
    if n == 0:
        return -t
    u = t + 0.5
    return even(n - 1, u)
x = torch.tensor([1., 2.], requires_grad=True)
y = even(5, x)
y.sum().backward()

# ruff: noqa
# A recursive function building a power by repeated multiplication.
import torch
def power(t, n):
    if n == 0:
        return torch.ones_like(t)
    half = power(t, n // 2)
    out = half * half
    if n % 2:
        out = out * t
    return out
x = torch.tensor([1.5, -0.5], requires_grad=True)
y = power(x, 5)
y.sum().backward()
print(y, x.grad, 5 * x.detach() ** 4)

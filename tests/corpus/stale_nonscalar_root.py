# ruff: noqa
# A stale saved value under a non-scalar root: backward() first fails for want of a gradient,
# then backward(gradient=...) reaches the graph and fails on the stale value.
import torch
a = torch.tensor([[0.5, 1.0], [2.0, -1.0]], requires_grad=True)
b = torch.exp(a)
b[0] = 1.5
c = torch.exp(b)
try:
    c.backward()
except RuntimeError as e:
    first = str(e)[:45]
try:
    c.backward(torch.ones_like(c))
except RuntimeError as e:
    second = "inplace" in str(e)
print(first, second)

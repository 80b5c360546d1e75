# ruff: noqa
# sys.getrefcount of a tensor is what plain Python gives.
import sys
import torch
x = torch.tensor([1., 2.], requires_grad=True)
n0 = sys.getrefcount(x)
y = x * 2
n1 = sys.getrefcount(y)
y.add_(1)
n2 = sys.getrefcount(y)
print(n0, n1, n2)

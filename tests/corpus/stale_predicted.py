# ruff: noqa
# The classic stale saved value: predicted before backward, and backward fails.
import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = a * 1
c = b * b
b.add_(1)
d = c.sum()
d.backward()

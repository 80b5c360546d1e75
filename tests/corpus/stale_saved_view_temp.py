# ruff: noqa
# A temporary view saved by a node goes stale when its named base changes in place.
import torch
a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a * 1
c = b[:2] * b[:2]
b.add_(1)
d = c.sum()
d.backward()

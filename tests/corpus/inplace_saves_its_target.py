# ruff: noqa
# An in-place call whose node saves the very tensor it changes: stale at once, and backward fails.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
a = x * 1
a.mul_(a)
b = x * 3
b.div_(b)
s = a.sum()
s.backward()

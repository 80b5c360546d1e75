# ruff: noqa
# Wrapping a computed tensor in nn.Parameter: the parameter is a new leaf that shares its memory.
import torch
import torch.nn as nn
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
p = nn.Parameter(h)
print(p.is_leaf, p.grad_fn, p.data_ptr() == h.data_ptr())
loss = (p ** 2).sum()
loss.backward()
print(p.grad, x.grad)
with torch.no_grad():
    p.mul_(0.5)
print(h, p)

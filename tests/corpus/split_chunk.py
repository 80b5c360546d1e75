# ruff: noqa
# chunk, split and tuple unpacking of views, and cat back together.
import torch
x = torch.arange(8., requires_grad=True)
y = x * 1
a, b = y.chunk(2)
p, q, r = y.split([3, 3, 2])
try:
    b.add_(10)
except RuntimeError as e:
    err = str(e)[:40]
q = q.clone()
q.mul_(2)
z = torch.cat([a, q * 2, r])
z.sum().backward()

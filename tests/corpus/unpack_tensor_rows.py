# ruff: noqa
# Unpacking a tensor: a, b = t gives views of each row, each with its own grad_fn.
import torch
t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
a, b = t
print(a, b, a._base is t)
loss = (a * b).sum()
loss.backward()
print(t.grad)
p, q = t.detach().clone()
p += 100
print(p, q)

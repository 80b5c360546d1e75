# ruff: noqa
# Pairwise distances with cdist: what is the gradient when two points coincide?
import torch
a = torch.tensor([[0.0, 0.0], [1.0, 1.0]], requires_grad=True)
b = torch.tensor([[0.0, 0.0], [3.0, 4.0]])
d = torch.cdist(a, b)
d.sum().backward()
print(d, a.grad)
a.grad = None
d2 = (a[:, None, :] - b[None, :, :]).norm(dim=-1)
d2.sum().backward()
print(d2, a.grad)

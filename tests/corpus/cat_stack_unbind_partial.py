# ruff: noqa
# Building tensors with cat and stack from parts with and without grad, unbind and split the result, backward through a few pieces.
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0])
c = torch.tensor([5.0], requires_grad=True)
joined = torch.cat([a * 2, b, c ** 2])
print(joined, joined.grad_fn.name())
first, second, third = torch.split(joined, [2, 2, 1])
stacked = torch.stack([a, a * a, a.exp()], dim=0)
rows = stacked.unbind(0)
print(stacked.shape, [r.grad_fn.name() for r in rows])
loss = first.sum() + third.sum() + rows[1].sum()
loss.backward()
print(a.grad, c.grad, b.grad)
parts = [a[i] * (i + 1) for i in range(2)]
v = torch.stack(parts)
v.sum().backward()
print(v, a.grad)

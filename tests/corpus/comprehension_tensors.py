# ruff: noqa
# Tensors built by comprehensions and generator expressions.
import torch
w = torch.tensor([1., -1., 2.], requires_grad=True)
rows = [w * k for k in range(3)]
stacked = torch.stack(rows)
norms = {i: r.norm() for i, r in enumerate(rows) if i > 0}
total = sum(r.sum() for r in rows)
squares = torch.stack([r[j] ** 2 for j, r in enumerate(rows)])
loss = total + squares.sum() + norms[2]
loss.backward()
print(stacked, norms, w.grad)

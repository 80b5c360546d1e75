# ruff: noqa
# In-place through diagonal() and unfold() views of a non-leaf; the base's grad_fn becomes CopySlices.
import torch
x = torch.arange(9.0).reshape(3, 3).requires_grad_()
m = x * 1.0
m.diagonal().mul_(10)
win = m.reshape(-1).unfold(0, 3, 3)
win[1].add_(100)
loss = (m ** 2).sum()
loss.backward()
print(m, m.grad_fn.name(), x.grad)

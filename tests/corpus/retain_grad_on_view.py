# ruff: noqa
# retain_grad on a slice of an intermediate; its .grad is the slice of the full gradient.
import torch
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
h = x ** 2
first = h[:2]
first.retain_grad()
h.retain_grad()
loss = (first * 10).sum() + h.sum()
loss.backward()
print(first.grad, h.grad, x.grad)

# ruff: noqa
# .grad set by hand, zeroed in place, set to None.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
w.grad = torch.tensor([0.5, 0.5])
y = (w * 3).sum()
y.backward()
w.grad.zero_()
w.grad.add_(torch.ones(2))
g = w.grad
w.grad = None

# ruff: noqa
# Swapping two rows of a computed tensor in place with advanced indexing; the gradient follows the swap.
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
h = x * 1
h[[0, 1]] = h[[1, 0]]
print(h, h._version)
w = torch.tensor([[1.0, 1.0], [10.0, 10.0], [100.0, 100.0]])
(h * w).sum().backward()
print(x.grad)

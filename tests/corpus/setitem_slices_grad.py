# ruff: noqa
# Index writes with slices, ellipsis, boolean masks and index tensors on a tensor in the graph.
import torch
x = torch.arange(12.).reshape(3, 4).requires_grad_()
y = x * 1
y[:, 0] = 0.
y[..., -1] *= 2
y[y > 8] = y[y > 8] / 2
y[torch.tensor([0, 2]), 1] += 100
y.sum().backward()
print(y, x.grad)

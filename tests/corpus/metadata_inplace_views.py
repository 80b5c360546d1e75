# ruff: noqa
# Metadata in-place ops on non-leaves: unsqueeze_, t_, transpose_, squeeze_ change shape, not values.
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
y = x * 2
v0 = y._version
y.t_()
shape_t = y.shape
y.unsqueeze_(0)
y.squeeze_(0)
y.transpose_(0, 1)
z = (y * torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])).sum()
z.backward()
print(shape_t, y.shape, y._version - v0, x.grad, y.grad_fn.name())

# ruff: noqa
# In-place changes through views of tensors with more than 16 elements.
import torch
x = torch.arange(48.).reshape(6, 8).requires_grad_()
y = x * 1
row = y[2]
row.mul_(-1)
col = y[:, 3]
col.add_(100)
y.t()[0].zero_()
flat = y.view(-1)
flat[::5] = 7.
loss = (y * y).sum()
loss.backward()
print(loss, x.grad.sum())

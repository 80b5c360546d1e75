# ruff: noqa
# Max pooling over a window with a tie: which element gets the gradient?
import torch
import torch.nn.functional as F
x = torch.tensor([[[1.0, 3.0, 3.0, 2.0, 5.0, 5.0]]], requires_grad=True)
y = F.max_pool1d(x, kernel_size=2)
y.sum().backward()
print(y, x.grad)
x.grad = None
m = x.max()
m.backward()
print(m, x.grad)
x.grad = None
vals, idx = x.max(dim=-1)
vals.sum().backward()
print(idx, x.grad)

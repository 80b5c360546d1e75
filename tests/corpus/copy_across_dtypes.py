# ruff: noqa
# copy_ from float64 and int sources into a float32 non-leaf: the gradient flows back in float64.
import torch
src = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
buf = torch.zeros(3)
h = buf * 1.0
h.copy_(src)
out = (h * torch.tensor([1.0, 2.0, 3.0])).sum()
out.backward()
print(h.dtype, h, src.grad, src.grad.dtype)
ints = torch.tensor([7, 8, 9])
w = torch.zeros(3, requires_grad=True)
t = w + 0
t.copy_(ints)
t.sum().backward()
print(t, w.grad)

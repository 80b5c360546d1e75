# ruff: noqa
# view() on a transposed tensor fails; reshape() copies; contiguous().view() works.
import torch
x = torch.arange(6.0, requires_grad=True)
m = x.view(2, 3)
t = m.t()
print(t.is_contiguous())
try:
    t.view(6)
except RuntimeError as e:
    print("view failed:", "view size is not compatible" in str(e))
r = t.reshape(6)
c = t.contiguous().view(6)
print(r._base is None, torch.equal(r, c))
(r * torch.arange(6.0)).sum().backward()
print(x.grad)

# ruff: noqa
# A saved value changed under no_grad, and one overwritten with out=: both break backward.
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
z = y.sin()
with torch.no_grad():
    y.add_(1)
l1 = z.sum()
try:
    l1.backward()
except RuntimeError:
    pass
a = x * 1
b = a.cos()
torch.mul(x.detach(), 3, out=a.detach())
l2 = b.sum()
try:
    l2.backward()
except RuntimeError:
    pass
print(x.grad)

# ruff: noqa
# resize_ on a tensor that requires grad is refused; on a detached copy it works.
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
try:
    x.resize_(2)
except RuntimeError as e:
    print("leaf:", str(e)[:70])
y = x * 2
try:
    y.resize_(6)
except RuntimeError as e:
    print("nonleaf:", str(e)[:70])
d = y.detach().clone()
d.resize_(2)
d.add_(1)
y.sum().backward()
print(d, y, x.grad)

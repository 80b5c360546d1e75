# ruff: noqa
# An in-place product of a view with c, then c changed: MulBackward0 inside CopySlices saved c,
# backward fails.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
c = torch.randn(6)
a.mul_(c)
c.add_(1)
try:
    a.backward(gradient=torch.ones_like(a))
    print(w.grad)
except RuntimeError as e:
    print("inplace" in str(e))

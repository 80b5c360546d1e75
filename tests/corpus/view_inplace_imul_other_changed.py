# ruff: noqa
# `a *= c` on a view, then c changed: the product's node inside CopySlices saved c, backward
# fails.
import torch
torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
v = torch.randn(2, requires_grad=True)
b = w * 1
c = v * 1
a = b[1:3]
a *= c
c.add_(1)
try:
    b.backward(gradient=torch.ones_like(b))
except RuntimeError as e:
    print("inplace" in str(e))

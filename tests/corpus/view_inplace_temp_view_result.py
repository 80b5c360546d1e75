# ruff: noqa
# sigmoid_ on an unnamed slice saves that slice (its result); changing the base later makes it
# stale, backward fails.
import torch
torch.manual_seed(0)
w = torch.randn(6, requires_grad=True)
b = w * 2
b[0:3].sigmoid_()
b.add_(1)
try:
    b.backward(gradient=torch.ones_like(b))
except RuntimeError as e:
    print("inplace" in str(e))

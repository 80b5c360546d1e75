# ruff: noqa
# An in-place product of a view with a number: the node inside CopySlices saves no tensor,
# backward runs.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
a.mul_(2)
try:
    a.backward(gradient=torch.ones_like(a))
    print(w.grad)
except RuntimeError as e:
    print("inplace" in str(e))

# ruff: noqa
# pow_ on a view saves a copy of the old values (not the view itself): a later change leaves it
# intact, backward runs.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
a.pow_(2)
a.add_(1)
try:
    a.backward(gradient=torch.ones_like(a))
    print(w.grad)
except RuntimeError as e:
    print("inplace" in str(e))

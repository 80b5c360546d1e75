# ruff: noqa
# exp_ on a view saves the view; changing the base changes it too, backward fails.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
a.exp_()
b.mul_(3)
try:
    a.backward(gradient=torch.ones_like(a))
    print(w.grad)
except RuntimeError as e:
    print("inplace" in str(e))

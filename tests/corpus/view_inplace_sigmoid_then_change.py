# ruff: noqa
# sigmoid_ on a view saves its result, the view itself: a later change of it makes that stale,
# backward fails.
import torch
torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
b = w * 2
a = b.reshape(-1)
a.sigmoid_()
a.add_(1)
try:
    a.backward(gradient=torch.ones_like(a))
    print(w.grad)
except RuntimeError as e:
    print("inplace" in str(e))

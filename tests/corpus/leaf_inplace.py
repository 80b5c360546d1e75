# ruff: noqa
# In place on a leaf: an error under grad mode, allowed under no_grad.
import torch
w = torch.tensor([1., 2.], requires_grad=True)
try:
    w.add_(1)
except RuntimeError as e:
    err = str(e)
try:
    w *= 2
except RuntimeError as e:
    err2 = str(e)
with torch.no_grad():
    w.add_(1)
    w *= 2
y = (w * w).sum()
y.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
w.grad.zero_()

# ruff: noqa
# Gradients of a 30-element parameter accumulated over micro-batches, hooks scaling them.
import torch
torch.manual_seed(0)
w = torch.randn(30, requires_grad=True)
w.register_hook(lambda g: g / 4)
for k in range(4):
    xb = torch.randn(30)
    loss = (w * xb).sum() ** 2
    loss.backward()
with torch.no_grad():
    w -= 0.01 * w.grad
w.grad.zero_()
print(w.sum())
